package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.audit.ProcessFacts;
import dev.openshell.supervisor.identity.Identification;
import dev.openshell.supervisor.identity.IdentityOptions;
import dev.openshell.supervisor.identity.ProcessIdentifier;
import dev.openshell.supervisor.identity.ProcessIdentity;
import dev.openshell.supervisor.policy.Caller;
import dev.openshell.supervisor.policy.gateway.IdentitySettings;
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
     * Identifies the process behind a connection. Call once per connection and keep the answer.
     *
     * @param client the client's address (the accepted socket's remote end)
     * @param local the proxy's address it connected to (the accepted socket's local end)
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
     * What is known about the process behind one connection.
     *
     * @param caller what binary-scoped policies judge
     * @param process the identified process, if any
     * @param violation the integrity violation that refused identification, if any (a High finding)
     */
    record ConnectionIdentity(Caller caller, Optional<ProcessIdentity> process,
                              Optional<Identification.IntegrityViolation> violation) {
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
        }

        /** {@return the process as audit events carry it} */
        Optional<ProcessFacts> facts() {
            return process.map(p -> new ProcessFacts(p.pid(), p.binary(), p.sha256(),
                    p.ancestors().stream().map(ProcessIdentity.Ancestor::binary).toList(),
                    p.ancestors().isEmpty() ? 0 : p.ancestors().get(0).pid()));
        }

        /** {@return the contract's {@code originating_process}} */
        Optional<dev.openshell.middleware.spi.OriginatingProcess> originatingProcess() {
            return process.map(ProcessIdentity::toOriginatingProcess);
        }
    }
}
