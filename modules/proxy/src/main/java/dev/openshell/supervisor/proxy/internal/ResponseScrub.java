package dev.openshell.supervisor.proxy.internal;

import dev.openshell.supervisor.proxy.ExchangeRecord;
import dev.openshell.supervisor.proxy.InjectedCredentials;
import dev.openshell.supervisor.proxy.ProxyRequest;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * What the response to one request must be scrubbed of (the credentials it carried and those bound to its host), and
 * where its records go.
 *
 * @param request the request
 * @param injected the credential values to scrub; not empty
 * @param audit the exchange's audit ({@link Pipeline#audit})
 */
record ResponseScrub(ProxyRequest request, InjectedCredentials injected, Consumer<ExchangeRecord> audit) {
    /**
     * How long, in milliseconds, the upstream of a scrubbed stream (body, events, WebSocket messages) may be silent
     * before the text held back goes to the client ({@link SecretScrubber.Scrubbing#finish}, {@link EventSplits#release},
     * {@link ScrubbedMessages#drain}): a constant, so that when text arrives tells nothing about a secret (attacker
     * pass finding 12). A value split across reads further apart is not joined.
     */
    static final int SILENCE_MILLIS = 200;

    /** {@return a new scrubber for one response} */
    SecretScrubber newScrubber() {
        List<SecretScrubber.Secret> secrets = injected.entries().stream()
                .map(e -> new SecretScrubber.Secret(e.name(), e.value(), e.placeholder())).toList();
        return new SecretScrubber(SecretScrubber.compiled(secrets));
    }

    /** Records a response scrubbed of injected values. */
    void scrubbed(Set<String> credentials, long headerMatches, long bodyMatches) {
        audit.accept(new ExchangeRecord.ResponseScrubbed(request, credentials, headerMatches, bodyMatches));
    }

    /** Records a response whose body could not be scanned. */
    void uninspectable(String code, boolean relayed) {
        audit.accept(new ExchangeRecord.ResponseUninspectable(request, code, relayed));
    }

    /** {@return the request and credential names only} */
    @Override
    public String toString() {
        return "ResponseScrub[" + request.requestId() + ", " + injected + "]";
    }
}
