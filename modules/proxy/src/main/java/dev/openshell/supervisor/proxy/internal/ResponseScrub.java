package dev.openshell.supervisor.proxy.internal;

import dev.openshell.supervisor.proxy.InjectedCredentials;
import dev.openshell.supervisor.proxy.ProxyRequest;
import dev.openshell.supervisor.proxy.RequestPlan;
import java.util.List;

/**
 * What the response to one credential-bearing request must be scrubbed of, and whom to report to.
 *
 * @param plan the request's plan
 * @param request the request
 * @param injected the injected credential values; not empty
 */
record ResponseScrub(RequestPlan plan, ProxyRequest request, InjectedCredentials injected) {
    /** {@return a new scrubber for one response} */
    SecretScrubber newScrubber() {
        List<SecretScrubber.Secret> secrets = injected.entries().stream()
                .map(e -> new SecretScrubber.Secret(e.name(), e.value(), e.placeholder())).toList();
        return new SecretScrubber(SecretScrubber.compiled(secrets));
    }

    /** {@return the request and credential names only} */
    @Override
    public String toString() {
        return "ResponseScrub[" + request.requestId() + ", " + injected + "]";
    }
}
