package dev.openshell.supervisor.l7;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    @Property(tries = 500)
    void theSafeFormIsBoundedAndPrintable(@ForAll String name) {
        String s = AuditNames.safe(name);
        assertTrue(s.length() <= AuditNames.MAX_CHARS + 13, s);
        assertTrue(s.chars().allMatch(c -> c >= 0x21 && c <= 0x7E), s);
    }
}
