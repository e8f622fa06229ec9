package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.audit.ProcessFacts;
import dev.openshell.supervisor.identity.Identification;
import dev.openshell.supervisor.identity.IdentityOptions;
import dev.openshell.supervisor.identity.ProcessIdentifier;
import dev.openshell.supervisor.identity.ProcessIdentity;
import dev.openshell.supervisor.policy.Caller;
import dev.openshell.supervisor.policy.gateway.IdentitySettings;
import dev.openshell.middleware.spi.OriginatingProcess;
import dev.openshell.supervisor.proxy.ClientConnection;
import dev.openshell.supervisor.proxy.ConnectionIdentity;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
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
     * Identifies the process behind a connection. Called once per connection, through
     * {@link ClientConnection#identity}, and again when its identity no longer holds
     * ({@link ClientConnection#revalidate}). The first time, reads of {@code /proc} that started after the connection
     * was taken up serve it ({@link ProcessIdentifier#identify(InetSocketAddress, InetSocketAddress, long)}: a burst
     * of new connections shares them); when decided again, only reads that start now.
     *
     * @param connection the connection
     * @return the connection's identity
     */
    ConnectionIdentity identify(ClientConnection connection) {
        if (identifier.isEmpty()) {
            return ConnectionIdentity.UNSCOPED;
        }
        if (connection.client().isEmpty() || connection.local().isEmpty()) {
            return UNKNOWN;
        }
        long since = connection.identityIfDecided().isEmpty() ? connection.openedNanos() : System.nanoTime();
        return identified(identifier.get().identify(connection.client().get(), connection.local().get(), since));
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
        return identified(identifier.get().identify(client, local));
    }

    private static ConnectionIdentity identified(Identification id) {
        Optional<OriginatingProcess> process = id.identity().map(ProcessIdentity::toOriginatingProcess);
        return new ConnectionIdentity(Optional.of(id), process, process.flatMap(Identities::fitted));
    }

    /**
     * {@return the PID of the process behind a connection, for fairness between the processes of one client address}
     * The identity's process when the connection was identified already, else the cheap lookup
     * ({@link ProcessIdentifier#owner}: no executable or hash read, the connection's identity left undecided); empty
     * with {@code endpoint-only}, or when no process is found.
     *
     * @param connection the connection
     */
    java.util.OptionalLong owner(ClientConnection connection) {
        if (identifier.isEmpty() || connection.client().isEmpty() || connection.local().isEmpty()) {
            return java.util.OptionalLong.empty();
        }
        Optional<ProcessIdentity> decided = connection.identityIfDecided().flatMap(ConnectionIdentity::identification)
                .flatMap(Identification::identity);
        if (decided.isPresent()) {
            return java.util.OptionalLong.of(decided.get().pid());
        }
        return identifier.get().owner(connection.client().get(), connection.local().get());
    }

    /**
     * {@return whether a connection's identity still holds: the identified process still holds the socket it was
     * identified by ({@link ProcessIdentifier#stillHolds}: its own {@code /proc} entries only)} An identity without
     * a process, or without where it held the socket, has nothing to check.
     *
     * @param id the connection's identity
     */
    boolean holds(ConnectionIdentity id) {
        if (identifier.isEmpty()) {
            return true;
        }
        return id.identification().filter(Identification.Identified.class::isInstance)
                .flatMap(i -> ((Identification.Identified) i).hold())
                .map(h -> identifier.get().stillHolds(h)).orElse(true);
    }

    /** The identity of a connection the proxy could not describe (no socket addresses). */
    static final ConnectionIdentity UNKNOWN = new ConnectionIdentity(Optional.of(new Identification.Unidentified(
            Identification.Cause.NO_SOCKET, PolicyAdmission.NO_IDENTITY.reason())), Optional.empty(),
            Optional.empty());

    /** {@return what binary-scoped policies judge of a connection's identity} @param id the identity */
    static Caller caller(ConnectionIdentity id) {
        if (id.identification().isEmpty()) {
            return Caller.unscoped();
        }
        return id.process().<Caller>map(Caller::of)
                .orElseGet(() -> new Caller.Unidentified(id.identification().get().reason()));
    }

    /** {@return the integrity violation that refused identification, if any (a High finding)} @param id the identity */
    static Optional<Identification.IntegrityViolation> violation(ConnectionIdentity id) {
        return id.identification().filter(Identification.IntegrityViolation.class::isInstance)
                .map(Identification.IntegrityViolation.class::cast);
    }

    /** {@return the process as audit events carry it ({@code actor.process}), if identified} @param id the identity */
    static Optional<ProcessFacts> facts(ConnectionIdentity id) {
        return id.identification().flatMap(Identification::identity).map(p -> new ProcessFacts(p.pid(), p.binary(),
                p.sha256(), p.ancestors().stream().map(ProcessIdentity.Ancestor::binary).toList(),
                p.ancestors().isEmpty() ? 0 : p.ancestors().get(0).pid()));
    }

    /** Most encoded bytes the originating process may take in the request context (4 KiB in all). */
    static final int PROCESS_BUDGET_BYTES = 3072;

    /**
     * {@return the contract's {@code originating_process}, fitted into the 4 KiB request context} Ancestors are
     * dropped from the oldest end while the process would take more than {@value #PROCESS_BUDGET_BYTES} bytes
     * encoded, and a binary path longer than half of that leaves the field unset (it is optional).
     *
     * @param p the process, unabridged
     */
    static Optional<OriginatingProcess> fitted(OriginatingProcess p) {
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
        return Optional.of(new OriginatingProcess(p.binary(), p.pid(), kept));
    }

    /** {@return an upper bound of a string field's encoded size: tag, length varint, UTF-8 bytes} */
    private static int encoded(String s) {
        return 4 + s.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
    }
}
