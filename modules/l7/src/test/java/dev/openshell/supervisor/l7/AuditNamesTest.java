package dev.openshell.supervisor.l7;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.internal.AuditNames;
import dev.openshell.supervisor.l7.L7Decision.Outcome;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/** Agent-controlled names in audit text (attacker pass 3, A1): bounded, printable, key-shaped runs redacted. */
class AuditNamesTest {
    @Test
    void ordinaryNamesAreUnchanged() {
        for (String n : new String[] {"tools/call", "github.create_issue", "getUser2", "read_status", "initialize",
            "reports.delete", "deleteRepository"}) {
            assertEquals(n, AuditNames.safe(n));
        }
    }

    @Test
    void keyShapedRunsAreRedacted() {
        assertEquals("[redacted]", AuditNames.safe("AKIAQWERTYUIOPASDF02"));
        assertEquals("sk-proj-[redacted]", AuditNames.safe("sk-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF"));
        assertEquals("ghp_[redacted]", AuditNames.safe("ghp_0123456789abcdefghijABCDEFGHIJ012345"));
        assertEquals("a?b", AuditNames.safe("a\nb"));
        assertEquals("x".repeat(64) + "...", AuditNames.safe("x".repeat(200)));
    }

    @Test
    void theReportsDenialCarriesNoKey() {
        L7Decision d = L7EngineTest.decide(L7EngineTest.engine(CaseFoldedKeysTest.ENDPOINTS), "POST", "/mcp",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"AKIAQWERTYUIOPASDF02\"}}");
        assertEquals(Outcome.DENY, d.outcome());
        assertFalse((d.reason() + d.rule() + d.detail()).contains("AKIAQWERTYUIOPASDF02"), d.toString());
        assertTrue(d.reason().contains("tools/call[[redacted]]"), d.reason());
    }

    /** A custom HTTP method token is the agent's choice too (attacker pass 4, A1b): REST, JSON-RPC and MCP denials. */
    @Test
    void aCustomMethodInADenialIsInItsSafeForm() {
        L7Engine engine = L7EngineTest.engine(CaseFoldedKeysTest.ENDPOINTS + """
                  r:
                    endpoints:
                      - {host: api.test, port: 443, path: /public/**, protocol: rest, enforcement: enforce,
                         rules: [{allow: {method: GET, path: /public/**}}],
                         deny_rules: [{method: "*", path: /public/secret}]}
                """);
        for (String path : new String[] {"/public/x", "/public/secret", "/rpc", "/mcp"}) {
            L7Decision d = L7EngineTest.decide(engine, "AKIAQWERTYUIOP0017ZX", path, null);
            assertEquals(Outcome.DENY, d.outcome(), path);
            assertFalse((d.reason() + d.rule() + d.detail()).contains("AKIAQWERTYUIOP0017ZX"), d.toString());
            assertTrue(d.reason().startsWith("[redacted] " + path), d.reason());
        }
        L7Decision propfind = L7EngineTest.decide(engine, "PROPFIND", "/public/x", null);
        assertEquals("PROPFIND /public/x", propfind.rule().orElseThrow());
    }

    @Property(tries = 500)
    void theSafeFormIsBoundedAndPrintable(@ForAll String name) {
        String s = AuditNames.safe(name);
        assertTrue(s.length() <= AuditNames.MAX_CHARS + 13, s);
        assertTrue(s.chars().allMatch(c -> c >= 0x21 && c <= 0x7E), s);
    }
}
