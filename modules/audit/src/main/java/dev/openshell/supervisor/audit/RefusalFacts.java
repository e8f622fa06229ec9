package dev.openshell.supervisor.audit;

import dev.openshell.middleware.spi.internal.Syntax;
import java.util.Objects;
import java.util.Optional;

/**
 * The safe facts about one request or connection the supervisor refused, for {@link RefusalAudit}: what kind of rule
 * refused it, the platform code and status the client got, a supervisor-owned detail, the client's address and, when
 * the request got that far, its method and destination. Never a path, query, header value, body or any other byte of
 * request content: a malformed request is described by the rule it broke, not by what it contained.
 *
 * @param category the kind of refusal, one of {@link #CATEGORIES}: {@code network_policy} (L4 policy denial),
 *     {@code ssrf} (blocked or unresolvable destination), {@code framing} (a malformed request, RFC 9112),
 *     {@code limit} (a connection cap, a head or body deadline, the body buffer budget), {@code upstream} (connect,
 *     TLS or response failure towards the upstream), {@code credential} (a credential rule refused the request),
 *     {@code method} ({@code TRACE}, or {@code OPTIONS} answered by the supervisor), {@code interception} (TLS
 *     interception could not be set up) or {@code internal} (a supervisor fault)
 * @param code the platform code the client got (or, for a connection closed unanswered, the reason), e.g.
 *     {@code ssrf_blocked}; {@code [a-z][a-z0-9_]{0,63}}
 * @param cause a finer platform code for the operator, when there is one (for {@code upstream_tls_failed}:
 *     {@code untrusted_certificate}, {@code hostname_mismatch}, {@code certificate_expired},
 *     {@code handshake_failed}); same syntax as {@code code}
 * @param status the HTTP status the client got, or 0 when the connection was closed without an answer
 * @param detail a supervisor-owned explanation (never request content), at most 300 characters are kept
 * @param clientIp the client's IP address as text, when known
 * @param request the method, destination, request ID, admitting policy and process, when the request was read far
 *     enough to know them
 */
public record RefusalFacts(String category, String code, Optional<String> cause, int status, String detail,
                           Optional<String> clientIp, Optional<RequestFacts> request) {
    /** The categories, in the order {@code docs/observability.md} lists them. */
    public static final java.util.List<String> CATEGORIES = java.util.List.of("network_policy", "ssrf", "framing",
            "limit", "upstream", "credential", "method", "interception", "internal");

    /**
     * Checks the parts.
     *
     * @throws NullPointerException if a part is {@code null}
     * @throws IllegalArgumentException if the category is unknown, a code is not a platform code or the status is
     *     neither 0 nor 100 to 599
     */
    public RefusalFacts {
        Objects.requireNonNull(category, "category");
        Objects.requireNonNull(code, "code");
        Objects.requireNonNull(cause, "cause");
        Objects.requireNonNull(detail, "detail");
        Objects.requireNonNull(clientIp, "clientIp");
        Objects.requireNonNull(request, "request");
        if (!CATEGORIES.contains(category)) {
            throw new IllegalArgumentException("unknown refusal category " + category);
        }
        if (!Syntax.isCode(code) || cause.isPresent() && !Syntax.isCode(cause.get())) {
            throw new IllegalArgumentException("not a platform code: " + code + " / " + cause);
        }
        if (status != 0 && (status < 100 || status > 599)) {
            throw new IllegalArgumentException("status " + status + " is neither 0 nor 100..599");
        }
    }
}
