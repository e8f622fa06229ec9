package dev.openshell.supervisor.proxy;

import java.util.Objects;

/** The answer of the admission step ({@link PolicySteps.Admit}): the L4 network policy's verdict for a host and port. */
public sealed interface AdmissionDecision {
    /**
     * The destination is allowed.
     *
     * @param endpoint the facts of the endpoint that matched
     */
    record Allowed(EndpointFacts endpoint) implements AdmissionDecision {
        /**
         * Checks the parts.
         *
         * @throws NullPointerException if {@code endpoint} is {@code null}
         */
        public Allowed {
            Objects.requireNonNull(endpoint, "endpoint");
        }
    }

    /**
     * The destination is not allowed; the client gets 403.
     *
     * @param reason a short safe reason shown to the client, for example {@code no network policy allows this host
     *     and port}; it must not quote request content
     */
    record Denied(String reason) implements AdmissionDecision {
        /**
         * Checks the parts.
         *
         * @throws NullPointerException if {@code reason} is {@code null}
         */
        public Denied {
            Objects.requireNonNull(reason, "reason");
        }
    }

    /**
     * {@return an allowance}
     *
     * @param endpoint the matching endpoint's facts
     */
    static AdmissionDecision allow(EndpointFacts endpoint) {
        return new Allowed(endpoint);
    }

    /**
     * {@return a denial}
     *
     * @param reason the safe reason
     */
    static AdmissionDecision deny(String reason) {
        return new Denied(reason);
    }
}
