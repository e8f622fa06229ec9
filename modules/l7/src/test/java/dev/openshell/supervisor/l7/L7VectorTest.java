package dev.openshell.supervisor.l7;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.supervisor.l7.L7Vectors.Concrete;
import dev.openshell.supervisor.l7.L7Vectors.Vector;
import dev.openshell.supervisor.policy.Caller;
import dev.openshell.supervisor.policy.NetworkEndpoint;
import dev.openshell.supervisor.policy.PolicyException;
import dev.openshell.supervisor.policy.SandboxPolicy;

import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Every vector of {@code tests/data/conformance/l7/l7-vectors.tsv} through the real policy loader and the decision
 * engine. Rows whose expectation a decision of this supervisor overrides say so here, each with the decision.
 */
class L7VectorTest {
    /** Rows whose policy this supervisor refuses to load (the expectation of OpenShell's raw data is moot). */
    static final Map<Integer, String> LOAD_ERRORS = Map.of(
            39, "decision 4: an allow rule without path is a load error (OpenShell: inert rule)",
            40, "decision 4: a rule path that cannot match an absolute path (*) is a load error",
            44, "decision 4: an unknown access value is a load error (OpenShell: warning, denies everything)",
            45, "decision 3: only enforce and audit are accepted (OpenShell: a misspelling means audit)",
            89, "decision 4: WEBSOCKET_TEXT rules on a GraphQL websocket endpoint are a load error (OpenShell"
                    + " validation too; the row is raw Rego data)",
            109, "JSON-RPC methods match exactly; a glob other than * is a load error (OpenShell MOD:739-746 too)",
            110, "JSON-RPC methods match exactly; a glob other than * is a load error (OpenShell MOD:739-746 too)");

    @TestFactory
    Stream<DynamicTest> everyVector() {
        return L7Vectors.all().stream().map(v -> DynamicTest.dynamicTest(v.toString(), () -> check(v)));
    }

    private static void check(Vector v) {
        if (LOAD_ERRORS.containsKey(v.line())) {
            PolicyException e = assertThrows(PolicyException.class, () -> L7Vectors.load(v), LOAD_ERRORS.get(
                    v.line()));
            assertFalse(e.errors().isEmpty());
            assertTrue(e.errors().allSatisfy(p -> p.location().hasLine()), e::getMessage);
            return;
        }
        SandboxPolicy policy;
        try {
            policy = L7Vectors.load(v).value();
        } catch (PolicyException e) {
            throw new AssertionError(v + ": the policy does not load: " + e.getMessage(), e);
        }
        L7Engine engine = new L7Engine(policy);
        Caller caller = L7Vectors.caller(v);
        if (v.protocol().equals("binary")) {
            // which policies match, by binary (the running supervisor's L4 admission): NetworkPolicy.admitsCaller
            NetworkEndpoint only = policy.networkPolicies().valuesView().getAny().endpoints().getFirst();
            String host = only.host().orElseThrow().source();
            int port = only.ports().get(0);
            boolean admitted = policy.networkPolicies().valuesView().anySatisfy(p -> p.admitsCaller(caller)
                    && p.endpoints().anySatisfy(ep -> ep.admits(host, port)));
            assertEquals(v.expected(), admitted ? "allow" : "deny", v::toString);
            return;
        }
        Concrete c = L7Vectors.concrete(v);
        if (policy.networkPolicies().valuesView().noneSatisfy(p -> p.admitsCaller(caller)
                && p.endpoints().anySatisfy(ep -> ep.admits(c.host(), c.port())))) {
            // no policy admits this binary: refused at L4 (403 policy_denied), before any L7 rule
            assertEquals("deny", v.expected(), v::toString);
            return;
        }
        if (v.protocol().equals("l4") || v.protocol().equals("sql")) {
            // No L7 decision: the endpoint is admitted at L4 and never inspected (sql: audit passthrough).
            assertEquals(Optional.empty(), engine.decide(c.host(), c.port(), c.http()), v::toString);
            return;
        }
        L7Decision d;
        if (c.text().isPresent()) {
            L7Engine.Route route = L7Engine.route(engine.governing(c.host(), c.port(), p -> p.admitsCaller(caller)),
                    "GET", c.http().target())
                    .orElseThrow(() -> new AssertionError(v + ": no L7 endpoint governs the host"));
            L7Decision upgrade = L7Engine.decide(route, c.http());
            assertNotEquals(L7Decision.Outcome.DENY, upgrade.outcome(), () -> v + ": upgrade " + upgrade);
            d = L7Engine.decideText(route, c.text().get());
        } else {
            Optional<L7Decision> decided = L7Engine.route(engine.governing(c.host(), c.port(),
                    p -> p.admitsCaller(caller)), c.http().method(), c.http().target())
                    .map(r -> L7Engine.decide(r, c.http()));
            if (decided.isEmpty()) {
                // no endpoint admits the host and port at all: refused at L4, before any L7 rule
                assertTrue(policy.networkPolicies().valuesView().flatCollect(p -> p.endpoints())
                        .noneSatisfy(ep -> ep.admits(c.host(), c.port())), v::toString);
                assertEquals("deny", v.expected(), v::toString);
                return;
            }
            d = decided.get();
        }
        String expected = v.expected();
        L7Decision decided = d;
        assertEquals(expected, d.outcome().label(), () -> v + ": " + decided);
        assertEquals(d.engine(), L7Decision.engineFor(d.protocol()));
    }
}
