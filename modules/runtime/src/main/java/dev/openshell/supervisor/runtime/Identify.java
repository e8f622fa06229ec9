package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.audit.ProcessFacts;
import dev.openshell.supervisor.audit.RequestFacts;
import dev.openshell.supervisor.identity.Identification;
import dev.openshell.supervisor.policy.HostPattern;
import dev.openshell.supervisor.proxy.ClientConnection;
import dev.openshell.supervisor.proxy.ConnectionIdentity;
import java.util.Optional;

/**
 * Decides the identity of the process behind a connection, once per connection ({@link ClientConnection#identity}),
 * for the policy steps that need it: binary-scoped admission and L7 routing, and the middleware contract's
 * {@code originating_process} when a stage may be invoked; and at each request checks that the identified process
 * still holds the socket, deciding the identity again when it does not ({@link #revalidate}). Counts each
 * identification; a changed binary is reported then, once, as a High finding; a connection decided again is
 * reported as a Medium finding that names the process it was identified as.
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
        return client.identity(c -> decide(c, host, port));
    }

    /**
     * At the start of a request: when the process a connection was identified as no longer holds its socket (it
     * handed the connection to another process and exited, or its PID now names another process), decides the
     * identity again and reports it. Costs one {@code readlink} and one small read of that process's {@code /proc}
     * entries; nothing for a connection whose identity was never decided.
     *
     * @param client the connection
     * @param host the request's destination (named in the finding)
     * @param port its port
     * @return whether the identity was decided again
     */
    boolean revalidate(ClientConnection client, String host, int port) {
        Optional<ConnectionIdentity> replaced = client.revalidate(identities::holds, c -> decide(c, host, port));
        if (replaced.isEmpty()) {
            return false;
        }
        ConnectionIdentity now = client.identityIfDecided().orElseThrow();
        Optional<ProcessFacts> before = Identities.facts(replaced.get());
        String outcome = now.identification().map(i -> i.identity().isPresent() ? "identified" : i.reason())
                .orElse("unscoped");
        audit.metrics().identification("reidentified");
        LOG.log(System.Logger.Level.WARNING, "connection re-identified: process {0} no longer holds its socket",
                before.map(p -> Long.toString(p.pid())).orElse("?"));
        audit.emit(client, audit.events().connectionReidentified(new RequestFacts("connection", "CONNECT", "http",
                HostPattern.canonicalHost(host), port, Optional.empty(), Identities.facts(now)),
                before.map(ProcessFacts::pid).orElse(0L),
                before.map(ProcessFacts::binary).orElse(""), outcome));
        return true;
    }

    /** Identifies the process behind a connection, counts it, and reports an integrity violation. */
    private ConnectionIdentity decide(ClientConnection c, String host, int port) {
        ConnectionIdentity id = identities.identify(c);
        Optional<Identification.IntegrityViolation> violation = Identities.violation(id);
        audit.metrics().identification(violation.isPresent() ? "integrity_violation"
                : id.process().isPresent() ? "identified" : "unidentified");
        violation.ifPresent(v -> {
            LOG.log(System.Logger.Level.WARNING, "connection refused: {0}", v.reason());
            audit.emit(c, audit.events().binaryIntegrityViolation(new RequestFacts("connection", "CONNECT",
                    "http", HostPattern.canonicalHost(host), port, Optional.empty()), v.pid(), v.binary(),
                    v.trustedSha256(), v.observedSha256()));
        });
        return id;
    }
}
