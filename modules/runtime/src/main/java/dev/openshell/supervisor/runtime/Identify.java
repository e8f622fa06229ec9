package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.audit.RequestFacts;
import dev.openshell.supervisor.policy.HostPattern;
import dev.openshell.supervisor.proxy.ClientConnection;
import dev.openshell.supervisor.proxy.ConnectionIdentity;
import java.util.Optional;

/**
 * Decides the identity of the process behind a connection, once per connection ({@link ClientConnection#identity}),
 * for the policy steps that need it: binary-scoped admission and L7 routing, and the middleware contract's
 * {@code originating_process} when a stage may be invoked. Counts each identification; a changed binary is reported
 * then, once, as a High finding.
 *
 * @param identities the supervisor's process identification
 * @param audit where findings go
 */
record Identify(Identities identities, ExchangeAudit audit) {
    private static final System.Logger LOG = System.getLogger(Identify.class.getName());

    /**
     * {@return the identity of the process behind {@code client}, decided on the first call for that connection}
     *
     * @param client the connection
     * @param host the destination that asked first (named in an integrity finding)
     * @param port its port
     */
    ConnectionIdentity of(ClientConnection client, String host, int port) {
        return client.identity(c -> {
            ConnectionIdentity id = identities.identify(c);
            Optional<dev.openshell.supervisor.identity.Identification.IntegrityViolation> violation =
                    Identities.violation(id);
            audit.metrics().identification(violation.isPresent() ? "integrity_violation"
                    : id.process().isPresent() ? "identified" : "unidentified");
            violation.ifPresent(v -> {
                LOG.log(System.Logger.Level.WARNING, "connection refused: {0}", v.reason());
                audit.emit(c, audit.events().binaryIntegrityViolation(new RequestFacts("connection", "CONNECT",
                        "http", HostPattern.canonicalHost(host), port, Optional.empty()), v.pid(), v.binary(),
                        v.trustedSha256(), v.observedSha256()));
            });
            return id;
        });
    }
}
