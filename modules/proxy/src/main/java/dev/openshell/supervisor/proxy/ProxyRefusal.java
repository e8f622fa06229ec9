package dev.openshell.supervisor.proxy;

import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * A request or connection the proxy refused by one of its own rules ({@link ExchangeRecord.Refused}): the rule that
 * refused it, what the client got, a proxy-owned detail and as much of the request as was read safely (never a path,
 * query, header value or body byte). Refusals a policy step decides itself (an L7 or middleware denial, a credential
 * refusal) are that step's to record and do not come here.
 *
 * @param kind which rule refused it
 * @param status the HTTP status the client got; 0 when the connection was closed without an answer
 * @param code the platform code the client got (the {@code error} member of the JSON answer), or the reason of an
 *     unanswered close ({@code connection_limit}, {@code client_connection_limit})
 * @param cause a finer code for the operator, when there is one ({@link UpstreamCause} for upstream failures)
 * @param detail the proxy-owned detail the client got (for an unanswered close, why it was closed)
 * @param client the client connection
 * @param method the request method, when the head was read (a token; whether to name it is the auditor's choice)
 * @param destination the destination, when the request target was read and checked
 * @param requestId the proxy's request ID, when one was assigned
 */
public record ProxyRefusal(Kind kind, int status, String code, Optional<String> cause, String detail,
                           ClientConnection client, Optional<String> method, Optional<Destination> destination,
                           Optional<String> requestId) {
    /** Which rule refused a request. */
    public enum Kind {
        /** L4 network policy: {@code policy_denied}. */
        NETWORK_POLICY,
        /** SSRF protection: {@code ssrf_blocked}, {@code unresolvable_host}. */
        SSRF,
        /** HTTP/1.1 framing and request syntax (RFC 9112): malformed heads, targets, Host, framing, Expect. */
        FRAMING,
        /** A resource limit: connection caps, head and body deadlines, the body buffer budget. */
        LIMIT,
        /** The upstream: connect, TLS, timeout, or a malformed response ({@link UpstreamCause}). */
        UPSTREAM,
        /** TLS interception could not be set up for a CONNECT. */
        INTERCEPTION,
        /** A supervisor fault (a hook failed): answered 500. */
        INTERNAL;

        /** {@return the category word events and metrics use, e.g. {@code network_policy}} */
        public String category() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * A destination as far as the proxy checked it.
     *
     * @param scheme {@code http} or {@code https}
     * @param host the host as the request named it (a checked DNS name or IP literal)
     * @param port the port, 1 to 65535
     */
    public record Destination(String scheme, String host, int port) {
        /** @throws NullPointerException if a part is {@code null} */
        public Destination {
            Objects.requireNonNull(scheme, "scheme");
            Objects.requireNonNull(host, "host");
        }
    }

    /** Why a connection or TLS handshake with the upstream failed, as far as the JDK's exception tells. */
    public enum UpstreamCause {
        /** The upstream's certificate chain does not lead to a trusted CA (system trust or upstream_ca_bundle). */
        UNTRUSTED_CERTIFICATE,
        /** The certificate is valid but does not name the host the request went to. */
        HOSTNAME_MISMATCH,
        /** A certificate of the chain has expired or is not yet valid. */
        CERTIFICATE_EXPIRED,
        /** The TLS handshake failed otherwise (protocol version, cipher suites, an alert from the upstream). */
        HANDSHAKE_FAILED,
        /** The upstream refused the TCP connection. */
        CONNECTION_REFUSED,
        /** No route to the upstream, or the network is unreachable. */
        UNREACHABLE,
        /** Connecting, the handshake or the response took longer than allowed. */
        TIMEOUT,
        /** The connection was reset or closed before a complete response. */
        CONNECTION_CLOSED,
        /** The upstream's response was malformed. */
        INVALID_RESPONSE;

        /** {@return the code, e.g. {@code hostname_mismatch}} */
        public String code() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * Checks the parts.
     *
     * @throws NullPointerException if a part is {@code null}
     */
    public ProxyRefusal {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(code, "code");
        Objects.requireNonNull(cause, "cause");
        Objects.requireNonNull(detail, "detail");
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(requestId, "requestId");
    }
}
