package dev.openshell.supervisor.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;

import org.junit.jupiter.api.Test;

/** The endpoint key {@code method_override}: refuse by default, evaluate or ignore, REST and WebSocket only. */
class MethodOverrideKeyTest {
    private static MethodOverride mode(String extra, String protocol) {
        return SandboxPolicyLoader.parse("m.yaml", """
                version: 1
                network_policies:
                  p:
                    endpoints:
                      - {host: a.test, port: 443, protocol: %s, enforcement: enforce, access: full%s}
                """.formatted(protocol, extra)).value().networkPolicies().get("p").endpoints().getOnly().l7()
                .orElseThrow().methodOverride();
    }

    @Test
    void refuseUnlessTheEndpointSaysOtherwise() {
        assertEquals(MethodOverride.REFUSE, mode("", "rest"));
        assertEquals(MethodOverride.REFUSE, mode("", "websocket"));
        assertEquals(MethodOverride.REFUSE, mode(", method_override: refuse", "rest"));
        assertEquals(MethodOverride.EVALUATE, mode(", method_override: evaluate", "rest"));
        assertEquals(MethodOverride.IGNORE, mode(", method_override: ignore", "websocket"));
    }

    @Test
    void aWrongValueOrProtocolIsALocatedError() {
        PolicyException e = assertThrows(PolicyException.class, () -> SandboxPolicyLoader.parse("m.yaml", """
                version: 1
                network_policies:
                  p:
                    endpoints:
                      - {host: a.test, port: 443, protocol: rest, enforcement: enforce, access: full,
                         method_override: Evaluate}
                      - {host: b.test, port: 443, protocol: graphql, enforcement: enforce, access: full,
                         method_override: ignore}
                      - {host: c.test, port: 443, method_override: ignore}
                      - {host: d.test, port: 443, protocol: rest, enforcement: enforce, access: full,
                         method_override: [evaluate]}
                """));
        assertEquals(List.of(
                "m.yaml:6:27: error: network_policies.p.endpoints[0].method_override: unknown method_override value"
                        + " 'Evaluate'; expected refuse, evaluate or ignore",
                "m.yaml:8:10: error: network_policies.p.endpoints[1].method_override: method_override applies to"
                        + " protocol: rest and websocket endpoints only",
                "m.yaml:9:35: error: network_policies.p.endpoints[2].method_override: method_override needs an L7"
                        + " protocol on the endpoint (protocol: rest, graphql, json-rpc, mcp or websocket); without"
                        + " one the endpoint is admitted at L4 only and the setting would have no effect",
                "m.yaml:11:27: error: network_policies.p.endpoints[3].method_override: expected a string, found a"
                        + " list"), e.errors().collect(ConfigProblem::describe).castToList());
    }
}
