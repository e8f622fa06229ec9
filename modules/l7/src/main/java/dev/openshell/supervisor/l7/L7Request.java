package dev.openshell.supervisor.l7;

import dev.openshell.middleware.spi.Body;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * What the L7 decision reads of an HTTP request: the method, the request-target as received, the headers and, for
 * body-aware endpoints (GraphQL, JSON-RPC, MCP), the complete request body with its transfer coding removed.
 *
 * @param method the request method as received (compared case-insensitively by rules)
 * @param target the request-target as received (origin or absolute form); canonicalized by the engine
 * @param headers the header fields, in order
 * @param body the body, read in place (the decision copies none of a body held as one array, up to 1 MiB); empty when
 *     the request has none or the endpoint is not body-aware
 */
public record L7Request(String method, String target, List<Header> headers, Optional<Body> body) {
    /** One header field. @param name the field name @param value the field value */
    public record Header(String name, String value) {
        /** Checks the components. @throws NullPointerException if any is {@code null} */
        public Header {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(value, "value");
        }
    }

    /** Checks and copies the components. @throws NullPointerException if any is {@code null} */
    public L7Request {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(target, "target");
        headers = List.copyOf(headers);
        Objects.requireNonNull(body, "body");
    }

    /** {@return the first value of header {@code name} (case-insensitive)} @param name the field name */
    public Optional<String> header(String name) {
        for (Header h : headers) { // a loop, not a stream: asked several times per request
            if (h.name().equalsIgnoreCase(name)) {
                return Optional.of(h.value());
            }
        }
        return Optional.empty();
    }

    /** {@return whether some value of {@code name}, as a comma-separated list, holds {@code token}} */
    boolean headerHasToken(String name, String token) {
        return headers.stream().filter(h -> h.name().equalsIgnoreCase(name))
                .flatMap(h -> List.of(h.value().split(",")).stream())
                .anyMatch(t -> t.trim().toLowerCase(Locale.ROOT).equals(token));
    }
}
