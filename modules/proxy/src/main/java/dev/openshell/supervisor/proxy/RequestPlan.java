package dev.openshell.supervisor.proxy;

import java.util.Objects;
import java.util.Optional;

/**
 * The runtime's plan for one request: made once, by {@link RequestHook#plan}, when the request head is parsed and
 * admitted, and handed back unchanged to {@link RequestHook#evaluate}, {@link RequestHook#uninspectable} and
 * {@link CredentialInjection#inject} for that request only. Nothing about a request is kept anywhere else (no
 * thread-local state), so a policy generation swap between two requests on one keep-alive connection can never mix
 * them: each request is planned, evaluated and injected under the generation of its own plan (RFC 0009,
 * "Registration and delivery": one request, one generation).
 *
 * <p>The proxy reads only the three parts below. An implementation may carry more: the runtime's plan also holds the
 * selected chain, the post-credentials stages and the audit facts of the request, which the proxy never sees (the
 * proxy module stays free of engine and policy types).
 */
public interface RequestPlan {
    /**
     * {@return the number of the policy generation this plan was made under; 0 when the hook has no generations}
     * For logs and tests only: the proxy never compares it.
     */
    long generation();

    /**
     * {@return the admission by the generation of this plan} {@link AdmissionDecision.Denied} when that generation
     * no longer admits the destination (a reload since the L4 check, or a request inside a tunnel admitted at
     * {@code CONNECT} time): the proxy then answers 403 {@code policy_denied} before reading the body or sending
     * anything upstream, and calls neither {@link RequestHook#evaluate} nor {@link CredentialInjection#inject}.
     */
    AdmissionDecision admission();

    /**
     * {@return the chain selection and the body it needs} Ignored when {@link #admission()} is a denial. With
     * {@link ChainSelection.None} the body streams through unbuffered and {@link RequestHook#evaluate} is not called.
     */
    ChainSelection selection();

    /**
     * {@return a refusal decided on the request head, when there is one} The L7 policy of the endpoint decides on the
     * method and request-target before any body byte is read (RFC 0009, "Operation phases and placement": "L7 policy
     * (when protocol set)" comes before the middleware chain): the proxy then answers this refusal, closes the
     * connection (whatever {@link HookResult.Deny#close()} says: the body was not read) and calls neither
     * {@link RequestHook#evaluate} nor {@link CredentialInjection#inject}. Ignored when {@link #admission()} is a
     * denial. The default is none.
     */
    default Optional<HookResult.Deny> refusal() {
        return Optional.empty();
    }

    /**
     * {@return the path to forward in place of the one received, when the hook made the request-target canonical}
     * The L7 policy matches the canonical path ({@code docs/policy-reference.md}, "Request-target canonicalization"),
     * and that path, not the one received, is what middleware sees and what goes upstream, so that the upstream
     * cannot read a different resource than the one the policy allowed. The query is forwarded as received (or as
     * credential injection left it). The default is the path as received.
     */
    default Optional<String> forwardPath() {
        return Optional.empty();
    }

    /**
     * {@return the policy on the client's WebSocket messages after a {@code 101}, when the endpoint inspects them}
     * Present for a WebSocket upgrade to an L7 {@code protocol: websocket} endpoint ({@link WebSocketMessages}). The
     * default is none: the frames are relayed without inspection.
     */
    default Optional<WebSocketMessages> websocketMessages() {
        return Optional.empty();
    }

    /**
     * {@return a plain plan} For hooks without state of their own, and tests.
     *
     * @param generation the generation number, 0 for none
     * @param admission the admission
     * @param selection the chain selection
     * @throws NullPointerException if {@code admission} or {@code selection} is {@code null}
     */
    static RequestPlan of(long generation, AdmissionDecision admission, ChainSelection selection) {
        return new Simple(generation, admission, selection);
    }

    /** The plan of {@link #of}. */
    record Simple(long generation, AdmissionDecision admission, ChainSelection selection) implements RequestPlan {
        /**
         * Checks the parts.
         *
         * @throws NullPointerException if {@code admission} or {@code selection} is {@code null}
         */
        public Simple {
            Objects.requireNonNull(admission, "admission");
            Objects.requireNonNull(selection, "selection");
        }
    }
}
