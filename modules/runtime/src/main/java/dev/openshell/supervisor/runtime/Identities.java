package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.audit.ProcessFacts;
import dev.openshell.supervisor.identity.Identification;
import dev.openshell.supervisor.identity.IdentityOptions;
import dev.openshell.supervisor.identity.ProcessIdentifier;
import dev.openshell.supervisor.identity.ProcessIdentity;
import dev.openshell.supervisor.policy.Caller;
import dev.openshell.supervisor.policy.gateway.IdentitySettings;
import dev.openshell.supervisor.proxy.ClientConnection;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Process identity for the running supervisor ({@code [openshell.supervisor.identity]}): turns a client connection
 * into the {@link Caller} that binary-scoped network policies judge, the {@code originating_process} of the middleware
 * contract and the OCSF actor. With {@code endpoint-only} nothing is looked up and every caller is
 * {@link Caller.Unscoped}. The supervisor's own process is never searched as a socket owner.
 */
final class Identities {
    private final IdentitySettings settings;
    private final Optional<ProcessIdentifier> identifier;

    private Identities(IdentitySettings settings, Optional<ProcessIdentifier> identifier) {
        this.settings = settings;
        this.identifier = identifier;
    }

    /**
     * {@return the identities for these settings}
     *
     * @param settings the gateway's identity settings
     */
    static Identities create(IdentitySettings settings) {
        if (!settings.enforced()) {
            return new Identities(settings, Optional.empty());
        }
        IdentityOptions options = IdentityOptions.defaults()
                .withExcluded(Set.of(ProcessHandle.current().pid()));
        if (settings.entrypointPid().isPresent()) {
            options = options.withEntrypoint(settings.entrypointPid().getAsLong());
        }
        return new Identities(settings, Optional.of(ProcessIdentifier.create(options)));
    }

    /** {@return whether this platform can identify processes (Linux with a readable {@code /proc/net/tcp})} */
    static boolean platformSupported() {
        return System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux")
                && Files.isReadable(Path.of("/proc/net/tcp"));
    }

    /** {@return the settings} */
    IdentitySettings settings() {
        return settings;
    }

    /**
     * Identifies the process behind a connection. Call once per connection and keep the answer
     * ({@link ClientConnection#attachment}).
     *
     * @param connection the connection
     * @return the connection's identity
     */
    ConnectionIdentity identify(ClientConnection connection) {
        if (identifier.isEmpty()) {
            return ConnectionIdentity.UNSCOPED;
        }
        if (connection.client().isEmpty() || connection.local().isEmpty()) {
            return ConnectionIdentity.UNKNOWN;
        }
        return identify(connection.client().get(), connection.local().get());
    }

    /**
     * Identifies the process behind a connection given by its addresses.
     *
     * @param client the client's address
     * @param local the proxy's address
     * @return the connection's identity
     */
    ConnectionIdentity identify(InetSocketAddress client, InetSocketAddress local) {
        if (identifier.isEmpty()) {
            return ConnectionIdentity.UNSCOPED;
        }
        Identification id = identifier.get().identify(client, local);
        return switch (id) {
            case Identification.Identified i -> new ConnectionIdentity(
                    Caller.of(i.process().toOriginatingProcess()), Optional.of(i.process()), Optional.empty());
            case Identification.IntegrityViolation v -> new ConnectionIdentity(new Caller.Unidentified(v.reason()),
                    Optional.empty(), Optional.of(v));
            case Identification.Unidentified u -> new ConnectionIdentity(new Caller.Unidentified(u.reason()),
                    Optional.empty(), Optional.empty());
        };
    }

    /**
     * What is known about the process behind one connection. The process as audit events carry it and as the
     * contract's request context carries it are derived once, when the connection is identified, not per request.
     *
     * @param caller what binary-scoped policies judge
     * @param process the identified process, if any
     * @param violation the integrity violation that refused identification, if any (a High finding)
     * @param facts the process as audit events carry it ({@code actor.process})
     * @param originatingProcess the contract's {@code originating_process}, fitted into the 4 KiB request context:
     *     ancestors are dropped from the oldest end while the process would take more than
     *     {@value #PROCESS_BUDGET_BYTES} bytes encoded, and a binary path longer than half of that leaves the field
     *     unset (it is optional)
     */
    record ConnectionIdentity(Caller caller, Optional<ProcessIdentity> process,
                              Optional<Identification.IntegrityViolation> violation, Optional<ProcessFacts> facts,
                              Optional<dev.openshell.middleware.spi.OriginatingProcess> originatingProcess) {
        /** The identity of every connection in {@code endpoint-only} mode. */
        static final ConnectionIdentity UNSCOPED = new ConnectionIdentity(Caller.unscoped(), Optional.empty(),
                Optional.empty());
        /** The identity of a connection the proxy could not describe (no socket addresses). */
        static final ConnectionIdentity UNKNOWN = new ConnectionIdentity(PolicyAdmission.NO_IDENTITY,
                Optional.empty(), Optional.empty());

        ConnectionIdentity {
            Objects.requireNonNull(caller, "caller");
            Objects.requireNonNull(process, "process");
            Objects.requireNonNull(violation, "violation");
            Objects.requireNonNull(facts, "facts");
            Objects.requireNonNull(originatingProcess, "originatingProcess");
        }

        /**
         * The identity of a connection, with the two views of its process derived.
         *
         * @param caller what binary-scoped policies judge
         * @param process the identified process, if any
         * @param violation the integrity violation that refused identification, if any
         */
        ConnectionIdentity(Caller caller, Optional<ProcessIdentity> process,
                           Optional<Identification.IntegrityViolation> violation) {
            this(caller, process, violation, process.map(ConnectionIdentity::auditFacts),
                    process.flatMap(p -> fitted(p.toOriginatingProcess())));
        }

        private static ProcessFacts auditFacts(ProcessIdentity p) {
            return new ProcessFacts(p.pid(), p.binary(), p.sha256(),
                    p.ancestors().stream().map(ProcessIdentity.Ancestor::binary).toList(),
                    p.ancestors().isEmpty() ? 0 : p.ancestors().get(0).pid());
        }

        /** Most encoded bytes the originating process may take in the request context (4 KiB in all). */
        static final int PROCESS_BUDGET_BYTES = 3072;

        static Optional<dev.openshell.middleware.spi.OriginatingProcess> fitted(
                dev.openshell.middleware.spi.OriginatingProcess p) {
            int used = encoded(p.binary()) + 16; // the pid, the tags and the message's own length
            if (used > PROCESS_BUDGET_BYTES / 2) {
                return Optional.empty();
            }
            java.util.List<String> kept = new java.util.ArrayList<>();
            for (String a : p.ancestors()) {
                used += encoded(a);
                if (used > PROCESS_BUDGET_BYTES) {
                    break;
                }
                kept.add(a);
            }
            return Optional.of(new dev.openshell.middleware.spi.OriginatingProcess(p.binary(), p.pid(), kept));
        }

        /** {@return an upper bound of a string field's encoded size: tag, length varint, UTF-8 bytes} */
        private static int encoded(String s) {
            return 4 + s.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        }
    }
}
