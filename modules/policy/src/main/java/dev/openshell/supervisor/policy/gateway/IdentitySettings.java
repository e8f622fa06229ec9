package dev.openshell.supervisor.policy.gateway;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * {@code [openshell.supervisor.identity]}: how the supervisor identifies the process behind each connection, for
 * the {@code binaries} of network policies ({@code openshell-l7-semantics.md} section 4).
 *
 * @param mode {@code mode}: {@link Mode#ENFORCE} (the default) or {@link Mode#ENDPOINT_ONLY}
 * @param entrypointPid {@code entrypoint_pid}: the sandbox's entrypoint process, 1 to 4194304, when the supervisor
 *     runs outside the sandbox's network namespace; its namespace's TCP tables and its descendants are searched first
 */
public record IdentitySettings(Mode mode, OptionalLong entrypointPid) {
    /** The largest PID Linux allows ({@code PID_MAX_LIMIT}). */
    public static final long MAX_PID = 4_194_304L;

    /** Whether {@code binaries} scope network policies. */
    public enum Mode {
        /**
         * {@code enforce}: every connection is tied to its process through {@code /proc}; a policy with
         * {@code binaries} admits only matching processes, and denies when the process cannot be identified.
         */
        ENFORCE("enforce"),
        /**
         * {@code endpoint-only}: binary scoping is off. No {@code /proc} lookups; a policy with {@code binaries}
         * admits every process (OpenShell's {@code OPENSHELL_NETWORK_BINARY_IDENTITY=endpoint-only}). Logged as a
         * configuration event at start-up; {@code validate} names each policy that loses its scoping.
         */
        ENDPOINT_ONLY("endpoint-only");

        private final String configName;

        Mode(String configName) {
            this.configName = configName;
        }

        /** {@return the spelling in the configuration file} */
        public String configName() {
            return configName;
        }
    }

    /**
     * Checks the components.
     *
     * @throws NullPointerException if a component is {@code null}
     */
    public IdentitySettings {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(entrypointPid, "entrypointPid");
    }

    /** {@return enforce, no entrypoint: the settings when the table is not written} */
    public static IdentitySettings defaults() {
        return new IdentitySettings(Mode.ENFORCE, OptionalLong.empty());
    }

    /** {@return whether binary scoping is enforced} */
    public boolean enforced() {
        return mode == Mode.ENFORCE;
    }
}
