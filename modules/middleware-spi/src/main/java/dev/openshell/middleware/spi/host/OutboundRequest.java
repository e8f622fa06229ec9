package dev.openshell.middleware.spi.host;

import static org.apiguardian.api.API.Status.INTERNAL;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import java.util.List;
import java.util.Objects;
import org.apiguardian.api.API;

/**
 * The request as the supervisor will forward it: after the middleware chain and after credential injection, so its
 * headers include credential-bearing ones with real values. Only restricted built-ins in the post-credentials phase
 * ever see it (RFC 0009, "Decisions": "SigV4/request signing").
 *
 * @param target the admitted target; {@code path} and {@code query} are in wire form (percent-encoded as sent)
 * @param headers every end-to-end header in wire order, names as sent (not lowercased), duplicates kept; hop-by-hop
 *     and framing headers ({@code Content-Length}, {@code Transfer-Encoding}) are not included: the supervisor
 *     frames the request itself
 * @param body the final body
 */
@API(status = INTERNAL, since = "0.1")
public record OutboundRequest(HttpRequestTarget target, List<HttpHeader> headers, Body body) {
    /** @throws NullPointerException if any part is {@code null} */
    public OutboundRequest {
        Objects.requireNonNull(target, "target");
        headers = List.copyOf(headers);
        Objects.requireNonNull(body, "body");
    }

    /** {@return a copy with other headers} @param newHeaders the headers */
    public OutboundRequest withHeaders(List<HttpHeader> newHeaders) {
        return new OutboundRequest(target, newHeaders, body);
    }

    /** {@return the target and counts only: header values here may be real credentials} */
    @Override
    public String toString() {
        return "OutboundRequest[" + target + ", " + headers.size() + " headers, " + body + "]";
    }
}
