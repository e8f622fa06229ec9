package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.STABLE;

import jakarta.json.JsonObject;
import java.util.List;
import java.util.Objects;
import org.apiguardian.api.API;

/**
 * One invocation of a stage (RFC 0009, "The middleware contract": {@code HttpRequestEvaluation}).
 *
 * <p>The host builds it from the request as the previous stage left it: the body is the previous stage's accepted
 * body, and the headers are the safe subset (credential-bearing, routing, framing, hop-by-hop and
 * Connection-nominated headers omitted) in wire order with duplicates, after earlier stages' accepted mutations.
 *
 * @param bindingId the selected binding
 * @param phase the phase being evaluated
 * @param context audit context
 * @param config the middleware config from policy, as JSON; at most {@link EnvelopeLimits#MAX_CONFIG_BYTES} encoded
 * @param target the admitted request target
 * @param headers the safe headers, at most {@link EnvelopeLimits#MAX_HEADER_LINES} lines and
 *     {@link EnvelopeLimits#MAX_HEADER_BYTES} encoded
 * @param body the bounded body, at most the binding's limit
 */
@API(status = STABLE, since = "0.1")
public record HttpRequestEvaluation(BindingId bindingId, Phase phase, RequestContext context, JsonObject config,
                                    HttpRequestTarget target, List<HttpHeader> headers, Body body) {
    /** @throws NullPointerException if any part is {@code null} */
    @API(status = STABLE, since = "0.1")
    public HttpRequestEvaluation {
        Objects.requireNonNull(bindingId, "bindingId");
        Objects.requireNonNull(phase, "phase");
        Objects.requireNonNull(context, "context");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(target, "target");
        headers = List.copyOf(headers);
        Objects.requireNonNull(body, "body");
    }

    /** {@return a summary without config values, header values, query or body content} */
    @Override
    public String toString() {
        return "HttpRequestEvaluation[" + bindingId + ", " + phase + ", " + target + ", " + headers.size()
                + " headers, " + body + "]";
    }
}
