package dev.openshell.supervisor.identity;

import java.util.Objects;
import java.util.Optional;

/**
 * The answer of {@link ProcessIdentifier#identify}: the process behind a connection, or why it is not known.
 * Every case but {@link Identified} means that a policy scoped by {@code binaries} must deny (OpenShell's L4
 * "cannot identify" denials, {@code openshell-l7-semantics.md} section 4).
 */
public sealed interface Identification {
    /** {@return the identity, when there is one} */
    Optional<ProcessIdentity> identity();

    /**
     * {@return a short, safe reason for a refusal: no addresses, no command lines; empty for {@link Identified}}
     */
    String reason();

    /** Why a connection could not be tied to a process. */
    enum Cause {
        /** Not Linux, or no {@code /proc}: identity binding is not available at all. */
        UNSUPPORTED_PLATFORM,
        /** The configured entrypoint process is not running, so its network namespace cannot be read. */
        ENTRYPOINT_NOT_RUNNING,
        /**
         * No TCP socket with the client's address and the proxy's address in the network namespace: the client is on
         * another host or in another namespace, or it closed the connection already.
         */
        NO_SOCKET,
        /** The socket exists but no readable process holds it (the peer exited, or its {@code /proc} is closed). */
        NO_OWNER,
        /** Several processes hold the socket and do not run the same program. */
        AMBIGUOUS_OWNERS,
        /** {@code /proc} could not be read, or a binary could not be hashed. */
        UNREADABLE
    }

    /**
     * The process is known.
     *
     * @param process the process
     * @param hold where it held the client socket, for the per-request check ({@link ProcessIdentifier#stillHolds});
     *     empty when not recorded (such an identity is never re-checked)
     */
    record Identified(ProcessIdentity process, Optional<SocketHold> hold) implements Identification {
        /** @throws NullPointerException if a part is {@code null} */
        public Identified {
            Objects.requireNonNull(process, "process");
            Objects.requireNonNull(hold, "hold");
        }

        /**
         * A process known without where it held the socket.
         *
         * @param process the process
         */
        public Identified(ProcessIdentity process) {
            this(process, Optional.empty());
        }

        @Override
        public Optional<ProcessIdentity> identity() {
            return Optional.of(process);
        }

        @Override
        public String reason() {
            return "";
        }
    }

    /**
     * The process is not known.
     *
     * @param cause the kind of failure
     * @param reason the safe reason, for example {@code failed to resolve peer binary: no process holds the client
     *     socket (it exited)}
     */
    record Unidentified(Cause cause, String reason) implements Identification {
        /** @throws NullPointerException if a part is {@code null} */
        public Unidentified {
            Objects.requireNonNull(cause, "cause");
            Objects.requireNonNull(reason, "reason");
        }

        @Override
        public Optional<ProcessIdentity> identity() {
            return Optional.empty();
        }
    }

    /**
     * A binary of the process or of one of its ancestors is not the one first seen at that path (trust on first use):
     * always a denial, reported as a High finding.
     *
     * @param pid the process whose executable changed (the client or an ancestor)
     * @param binary the executable's path
     * @param trustedSha256 the hash first seen at that path
     * @param observedSha256 the hash now
     */
    record IntegrityViolation(long pid, String binary, String trustedSha256, String observedSha256)
            implements Identification {
        /** @throws NullPointerException if a part is {@code null} */
        public IntegrityViolation {
            Objects.requireNonNull(binary, "binary");
            Objects.requireNonNull(trustedSha256, "trustedSha256");
            Objects.requireNonNull(observedSha256, "observedSha256");
        }

        @Override
        public Optional<ProcessIdentity> identity() {
            return Optional.empty();
        }

        @Override
        public String reason() {
            return "binary integrity violation: " + binary + " changed since it was first seen (SHA-256 "
                    + trustedSha256.substring(0, 12) + "... now " + observedSha256.substring(0, 12) + "...)";
        }
    }
}
