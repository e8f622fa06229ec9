package dev.openshell.supervisor.proxy;

import java.util.Objects;

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
