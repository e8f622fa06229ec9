package dev.openshell.supervisor.policy.gateway;

import dev.openshell.middleware.spi.net.IpRange;
import dev.openshell.supervisor.policy.HostPattern;
import dev.openshell.supervisor.policy.internal.Texts;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Objects;

/**
 * The network address of an external middleware service (RFC 0009, "Registration and delivery": {@code grpc_endpoint}):
 * {@code https://host:port}, or {@code http://host:port} for the phase 1 plaintext exception. The port defaults to
 * 443 for https and 80 for http. Nothing but scheme, host and port is allowed.
 *
 * @param scheme {@code https} or {@code http}
 * @param host a DNS name or IP literal, lowercase (IPv6 without brackets)
 * @param port 1 to 65535
 */
public record GrpcEndpoint(String scheme, String host, int port) {
    /**
     * Checks the components.
     *
     * @throws IllegalArgumentException if a part is invalid
     */
    public GrpcEndpoint {
        Objects.requireNonNull(scheme, "scheme");
        Objects.requireNonNull(host, "host");
        if (!scheme.equals("https") && !scheme.equals("http")) {
            throw new IllegalArgumentException("scheme must be https or http");
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException("host must not be empty");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is outside 1..65535");
        }
    }

    /**
     * Parses an endpoint URL.
     *
     * @param text the URL as written
     * @return the endpoint
     * @throws IllegalArgumentException with the message {@code invalid gRPC endpoint '<text>': <reason>}
     */
    public static GrpcEndpoint parse(String text) {
        Objects.requireNonNull(text, "gRPC endpoint");
        URI uri;
        try {
            uri = new URI(text);
        } catch (URISyntaxException e) {
            throw invalid(text, "it is not a URL; write it as https://host:port");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("https") && !scheme.equals("http")) {
            throw invalid(text, "write it as https://host:port (or http://host:port with allow_insecure = true)");
        }
        if (uri.getRawUserInfo() != null || uri.getRawQuery() != null || uri.getRawFragment() != null
                || (uri.getRawPath() != null && !uri.getRawPath().isEmpty() && !uri.getRawPath().equals("/"))) {
            throw invalid(text, "only scheme, host and port are allowed (no user, path, query or fragment)");
        }
        String host = uri.getHost();
        if (host == null || host.isEmpty()) {
            throw invalid(text, "it has no host (or the host is not a valid DNS name or IP address)");
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
            if (IpRange.parseAddress(host) == null) {
                throw invalid(text, "the part in brackets is not an IPv6 address");
            }
        } else if (!HostPattern.isValid(host) || !HostPattern.parse(host).isLiteral()) {
            throw invalid(text, "the host is not a valid DNS name or IP address");
        }
        int port = uri.getPort();
        if (port == -1) {
            if (text.matches("(?i)https?://[^/]*:/?")) {
                throw invalid(text, "the port is empty");
            }
            port = scheme.equals("https") ? 443 : 80;
        }
        if (port < 1 || port > 65535) {
            throw invalid(text, "the port must be a number from 1 to 65535");
        }
        return new GrpcEndpoint(scheme, host.toLowerCase(Locale.ROOT), port);
    }

    private static IllegalArgumentException invalid(String text, String reason) {
        return new IllegalArgumentException("invalid gRPC endpoint " + Texts.quote(text) + ": " + reason);
    }

    /** {@return whether the endpoint is plaintext {@code http}: unencrypted and unauthenticated} */
    public boolean plaintext() {
        return scheme.equals("http");
    }

    /** {@return {@code host:port}, with an IPv6 host in brackets} */
    public String authority() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    /** {@return the endpoint as a URL} */
    @Override
    public String toString() {
        return scheme + "://" + authority();
    }
}
