package dev.openshell.supervisor.proxy.internal;

import dev.openshell.supervisor.proxy.ProxyRefusal;
import java.util.Optional;

/**
 * The proxy refuses a request with a JSON error response and closes the connection. It carries the rule that refused
 * it ({@link ProxyRefusal.Kind}), an optional finer cause for the operator, and whether it was reported already
 * ({@link ProxyCore#report}), so that the session that answers it reports each refusal exactly once.
 */
final class Refusal extends Exception {
    private static final long serialVersionUID = 1L;
    private final int status;
    private final String error;
    private final ProxyRefusal.Kind kind;
    private final transient Optional<String> cause;
    private boolean reported;

    /** A refusal whose kind follows from its code ({@link #kindOf}). */
    Refusal(int status, String error, String detail) {
        this(kindOf(status, error), status, error, Optional.empty(), detail);
    }

    Refusal(ProxyRefusal.Kind kind, int status, String error, Optional<String> cause, String detail) {
        super(detail, null, false, false);
        this.status = status;
        this.error = error;
        this.kind = kind;
        this.cause = cause;
    }

    /**
     * {@return the kind of a refusal code}: the admission codes, the upstream codes, the interception code; any other
     * 4xx is a framing refusal and any other 5xx an internal one
     */
    static ProxyRefusal.Kind kindOf(int status, String error) {
        return switch (error) {
            case "policy_denied" -> ProxyRefusal.Kind.NETWORK_POLICY;
            case "ssrf_blocked", "unresolvable_host" -> ProxyRefusal.Kind.SSRF;
            case "invalid_upstream_response", "upstream_failed", "upstream_tls_failed", "upstream_timeout" ->
                    ProxyRefusal.Kind.UPSTREAM;
            case "tls_interception_unavailable" -> ProxyRefusal.Kind.INTERCEPTION;
            case "connection_limit", "client_connection_limit", "request_head_timeout", "tls_handshake_timeout",
                 "body_buffer_timeout", "body_buffer_busy" -> ProxyRefusal.Kind.LIMIT;
            default -> status < 500 ? ProxyRefusal.Kind.FRAMING : ProxyRefusal.Kind.INTERNAL;
        };
    }

    int status() {
        return status;
    }

    String error() {
        return error;
    }

    String detail() {
        return getMessage();
    }

    ProxyRefusal.Kind kind() {
        return kind;
    }

    Optional<String> cause() {
        return cause;
    }

    /** Marks this refusal as reported (or as the hook's own to report); {@return this} */
    Refusal reported() {
        reported = true;
        return this;
    }

    boolean isReported() {
        return reported;
    }
}
