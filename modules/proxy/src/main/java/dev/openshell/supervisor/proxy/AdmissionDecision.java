package dev.openshell.supervisor.proxy;

import java.util.Objects;

/** The answer of {@link NetworkAdmission}: the L4 network policy's verdict for a host and port. */
public sealed interface AdmissionDecision {
    /**
     * The destination is allowed.
     *
     * @param endpoint the facts of the endpoint that matched
     * @param generation the number of the policy generation that decided, 0 when admission is not versioned; the
     *     proxy hands it to {@link RequestHook#plan} in {@link ProxyRequest#admissionGeneration()} so the hook can
     *     tell whether the generation serving the request is the one that admitted it
     */
    record Allowed(EndpointFacts endpoint, long generation) implements AdmissionDecision {
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
        return new Allowed(endpoint, 0);
    }

    /**
     * {@return an allowance by a numbered policy generation}
     *
     * @param endpoint the matching endpoint's facts
     * @param generation the generation number
     */
    static AdmissionDecision allow(EndpointFacts endpoint, long generation) {
        return new Allowed(endpoint, generation);
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
