package dev.openshell.supervisor.policy;

import dev.openshell.middleware.spi.OriginatingProcess;
import java.util.Objects;

/**
 * Who opened a connection, as far as network policy is concerned: the input of
 * {@link NetworkPolicy#admitsCaller(Caller)}, the binary half of "which policies match" (OpenShell matches a network
 * policy when an endpoint admits host and port <em>and</em> its {@code binaries} admit the calling process).
 */
public sealed interface Caller {
    /**
     * The process is known.
     *
     * @param process the process: its executable and its ancestors' are what {@code binaries} match
     */
    record Identified(OriginatingProcess process) implements Caller {
        /** @throws NullPointerException if {@code process} is {@code null} */
        public Identified {
            Objects.requireNonNull(process, "process");
        }
    }

    /**
     * The process could not be identified (another host, not Linux, the peer exited, ambiguous or changed binaries):
     * a policy with {@code binaries} does not admit it.
     *
     * @param reason the safe reason, shown to the client in a denial
     */
    record Unidentified(String reason) implements Caller {
        /** @throws NullPointerException if {@code reason} is {@code null} */
        public Unidentified {
            Objects.requireNonNull(reason, "reason");
        }
    }

    /**
     * Binary scoping is off ({@code endpoint-only} in the gateway configuration): {@code binaries} admit everyone.
     */
    record Unscoped() implements Caller {
    }

    /** {@return the caller of {@code endpoint-only} mode} */
    static Caller unscoped() {
        return new Unscoped();
    }

    /**
     * {@return an identified caller}
     *
     * @param process the process
     */
    static Caller of(OriginatingProcess process) {
        return new Identified(process);
    }
}
