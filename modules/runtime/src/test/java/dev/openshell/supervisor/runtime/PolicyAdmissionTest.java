package dev.openshell.supervisor.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.host.Secret;
import dev.openshell.supervisor.engine.credentials.Credential;
import dev.openshell.supervisor.engine.credentials.CredentialInjector;
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

    /**
     * A {@code tls: skip} tunnel to a host a credential is bound to is refused: its responses could not be scrubbed
     * of the credential a stateful upstream may have stored (attacker pass: the secret came back through such a
     * tunnel), unless every credential bound there allows unscanned responses.
     */
    @Test
    void aTlsSkipTunnelToACredentialBoundHostIsRefused() {
        SandboxPolicy p = SandboxPolicyLoader.parse("policy.yaml", """
                version: 1
                network_policies:
                  api:
                    endpoints:
                      - { host: api.test, port: 443 }
                      - { host: api.test, port: 8443, tls: skip }
                      - { host: other.test, port: 8443, tls: skip }
                """).value();
        PolicyAdmission admission = new PolicyAdmission(p);
        CredentialInjector strict = new CredentialInjector(List.of(credential(false)));
        AdmissionDecision.Denied d = assertInstanceOf(AdmissionDecision.Denied.class,
                Generation.unscannable(admission.admit("api.test", 8443), "api.test", strict));
        assertTrue(d.reason().contains("tls: skip") && !d.reason().contains("s3cr3t"), d.reason());
        assertInstanceOf(AdmissionDecision.Allowed.class,
                Generation.unscannable(admission.admit("API.test", 443), "API.test", strict), "intercepted: scrubbed");
        assertInstanceOf(AdmissionDecision.Allowed.class,
                Generation.unscannable(admission.admit("other.test", 8443), "other.test", strict), "no credential");
        assertInstanceOf(AdmissionDecision.Allowed.class, Generation.unscannable(admission.admit("api.test", 8443),
                "api.test", new CredentialInjector(List.of(credential(true)))), "allow_unscanned_responses");
        assertInstanceOf(AdmissionDecision.Denied.class, Generation.unscannable(admission.admit("API.TEST", 8443),
                "API.TEST", strict), "the host's case does not matter");
    }

    private static Credential credential(boolean allowUnscanned) {
        return new Credential("KEY", Secret.of("s3cr3t-value-0123456789"), h -> h.equals("api.test"), "[api.test]",
                Credential.Placement.DEFAULT, allowUnscanned);
    }
}
