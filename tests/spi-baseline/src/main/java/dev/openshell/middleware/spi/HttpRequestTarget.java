package dev.openshell.middleware.spi;

import java.util.Objects;

/**
 * The admitted request target (RFC 0009, "The middleware contract": {@code HttpRequestTarget}); together at most
 * {@link EnvelopeLimits#MAX_TARGET_BYTES} (32 KiB) encoded.
 *
 * @param scheme {@code http} or {@code https} (the scheme the supervisor forwards with)
 * @param host the admitted host, lowercase, without a trailing dot; an IPv6 literal without brackets
 * @param port the admitted port, 1 to 65535
 * @param method the request method, as sent
 * @param path the path, starting with {@code /}
 * @param query the raw query string without {@code ?}, possibly empty; it may carry secrets: never log it
 */
public record HttpRequestTarget(String scheme, String host, int port, String method, String path, String query) {
    /**
     * @throws NullPointerException if any part is {@code null}
     * @throws IllegalArgumentException if {@code port} is outside 1..65535
     */
    public HttpRequestTarget {
        Objects.requireNonNull(scheme, "scheme");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(query, "query");
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is outside 1..65535");
        }
    }

    /** {@return everything but the query, which may carry secrets} */
    @Override
    public String toString() {
        return "HttpRequestTarget[" + method + " " + scheme + "://" + host + ":" + port + path
                + (query.isEmpty() ? "" : "?<" + query.length() + " chars>") + "]";
    }
}
