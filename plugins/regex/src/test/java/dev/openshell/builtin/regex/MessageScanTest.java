package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.Operation;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.middleware.spi.WebSocketMessage;
import dev.openshell.middleware.spi.WebSocketMessageResult;
import dev.openshell.middleware.spi.WebSocketPreflight;
import dev.openshell.middleware.spi.WebSocketPreflightDecision;
import dev.openshell.middleware.spi.WebSocketSession;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code openshell/regex} on WebSocket text messages ({@link MessageScan}). */
class MessageScanTest {
    private static final String KEY = DecodedBodyTest.OPENAI;

    private static WebSocketSession open(String mode, Phase phase) {
        RegexProvider p = new RegexProvider();
        WebSocketSession s = p.openWebSocketSession(new BindingId(RegexProvider.BINDING_ID), phase);
        JsonObject config = Json.createObjectBuilder().add("mode", mode).build();
        WebSocketPreflightDecision d = s.preflight(new WebSocketPreflight(new BindingId(RegexProvider.BINDING_ID),
                "s-1", phase, RequestContext.of("s-1"), config,
                new HttpRequestTarget("https", "api.test", 443, "GET", "/ws", ""), List.of()));
        assertEquals(WebSocketPreflightDecision.Action.INSPECT, d.action());
        return s;
    }

    @Test
    void theManifestAdvertisesBothDirections() {
        assertEquals(List.of(Phase.PRE_CREDENTIALS, Phase.PRE_RETURN), new RegexProvider().manifest().bindings()
                .stream().filter(b -> b.operation() == Operation.WEBSOCKET_MESSAGE).map(b -> b.phase()).toList());
    }

    @Test
    void aKeyHiddenByAJsonEscapeIsRedactedAndTheJsonStaysValid() {
        String escaped = "\\u0073" + KEY.substring(1); // "sk-..." with its first letter as a JSON escape
        WebSocketMessageResult r = open("redact", Phase.PRE_CREDENTIALS)
                .message(new WebSocketMessage(4, "{\"type\":\"input\",\"text\":\"" + escaped + "\"}"));
        assertEquals(4, r.sequence());
        assertEquals(Decision.ALLOW, r.decision());
        String out = r.replacementText().orElseThrow();
        assertFalse(out.contains(KEY.substring(1)), out);
        assertTrue(out.contains("[REDACTED:"), out);
        Json.createReader(new java.io.StringReader(out)).readObject();
        assertFalse(r.toString().contains(KEY.substring(1)), "never the value in a result's text form");
    }

    @Test
    void aKeyInCharacterReferencesOrSplitCdataIsRedactedInAMessage() {
        String refs = "<m>" + MarkupBodyTest.hexRefs(KEY) + "</m>";
        WebSocketMessageResult r = open("redact", Phase.PRE_RETURN).message(new WebSocketMessage(1, refs));
        assertEquals("<m>" + MarkupBodyTest.PLACEHOLDER + "</m>", r.replacementText().orElseThrow());
        String cdata = "<m><![CDATA[" + KEY.substring(0, 9) + "]]><![CDATA[" + KEY.substring(9) + "]]></m>";
        assertEquals(Decision.DENY, open("deny", Phase.PRE_CREDENTIALS).message(new WebSocketMessage(2, cdata))
                .decision());
    }

    @Test
    void denyModeDeniesAMessageAndPlainTextIsScannedToo() {
        WebSocketMessageResult r = open("deny", Phase.PRE_RETURN).message(new WebSocketMessage(1, "key " + KEY));
        assertEquals(Decision.DENY, r.decision());
        assertEquals(RegexProvider.DENY_CODE, r.reasonCode());
        assertEquals(Decision.ALLOW, open("deny", Phase.PRE_RETURN).message(new WebSocketMessage(2, "hello"))
                .decision());
    }

    @Test
    void aKeyHiddenByAnEscapeInLooselyFormedJsonIsFoundInEveryMode() {
        String escaped = "\\u0073" + KEY.substring(1);
        for (String text : List.of("{\"a\":\"" + escaped + "\",\"b\":NaN}", "{\"a\":\"" + escaped + "\",}",
                "// note\n{'a': \"" + escaped + "\"}", "plain text with " + escaped + " in it")) {
            assertEquals(Decision.DENY, open("deny", Phase.PRE_RETURN).message(new WebSocketMessage(1, text))
                    .decision(), text);
            WebSocketMessageResult r = open("redact", Phase.PRE_CREDENTIALS).message(new WebSocketMessage(1, text));
            assertEquals(Decision.ALLOW, r.decision(), text);
            String out = r.replacementText().orElseThrow();
            assertFalse(out.contains(KEY.substring(1)), out);
            assertFalse(out.contains(escaped), out);
            assertTrue(out.contains("[REDACTED:"), out);
        }
    }

    @Test
    void aBackslashThatStartsNoEscapeStaysAndAMessageWithoutAKeyIsLeftAlone() {
        String text = "{\"path\":\"C:\\new\\x\", \"n\": NaN, \"odd\": \"\\q \\u12\"}";
        WebSocketMessageResult r = open("redact", Phase.PRE_CREDENTIALS).message(new WebSocketMessage(1, text));
        assertEquals(Decision.ALLOW, r.decision());
        assertTrue(r.replacementText().isEmpty(), "nothing replaced");
    }
}
