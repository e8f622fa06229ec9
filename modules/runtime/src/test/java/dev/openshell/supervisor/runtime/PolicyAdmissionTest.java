package dev.openshell.supervisor.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.openshell.supervisor.policy.SandboxPolicy;
import dev.openshell.supervisor.policy.SandboxPolicyLoader;
import dev.openshell.supervisor.proxy.AdmissionDecision;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The policy's {@code allowed_ips} reach the proxy as the very ranges the policy loader parsed. */
class PolicyAdmissionTest {
    private static SandboxPolicy policy(String allowedIps) {
        return SandboxPolicyLoader.parse("policy.yaml", """
                version: 1
                network_policies:
                  db:
                    name: database
                    endpoints:
                      - host: db.internal
                        port: 5432
                        allowed_ips: %s
                """.formatted(allowedIps)).value();
    }

    @Test
    void allowedIpsAreHandedOverWithoutATextRoundTrip() {
        SandboxPolicy p = policy("[10.0.0.0/8, 'fd00::/8']");
        AdmissionDecision.Allowed a = assertInstanceOf(AdmissionDecision.Allowed.class,
                new PolicyAdmission(p).admit("db.internal", 5432));
        var parsed = p.networkPolicies().get("db").endpoints().get(0).allowedIps();
        assertEquals(parsed.castToList(), a.endpoint().allowedIps());
        assertSame(parsed.get(0), a.endpoint().allowedIps().get(0), "the same object, not a re-parse of its text");
    }

    /** The old bridge, CidrBlock.parse(range.toString()), threw on an IPv4-mapped range (a /104 of an IPv4 address). */
    @Test
    void anIpv4MappedRangeNoLongerBreaksAdmission() {
        SandboxPolicy p = policy("['::ffff:10.0.0.0/104']");
        AdmissionDecision.Allowed a = assertInstanceOf(AdmissionDecision.Allowed.class,
                new PolicyAdmission(p).admit("db.internal", 5432));
        assertEquals(List.of("0:0:0:0:0:ffff:a00:0/104"), a.endpoint().allowedIps().stream().map(Object::toString)
                .toList());
    }
}
