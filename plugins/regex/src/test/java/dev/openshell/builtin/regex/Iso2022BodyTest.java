package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpRequestResult;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Attacker pass 8, P10-6: a body without a declared charset in which ISO 2022 escapes, SO/SI or HZ shifts split a
 * token; a receiver that sniffs the charset reads the token, so the body is also read without those sequences.
 */
class Iso2022BodyTest {
    private static final String TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    private static final JsonObject DENY = Json.createObjectBuilder().add("mode", "deny").build();
    private static final String[] SPLITS = {"\u001b(B", "\u001b$B\u001b(B", "\u000e\u000f", "~{~}", "~\n",
            "\u001b$)C\u000e\u000f"};

    private static byte[] body(String split) {
        String t = "\u001b$B$3$l\u001b(B " + TOKEN.substring(0, 4) + split + TOKEN.substring(4, 20) + split
                + TOKEN.substring(20) + " end";
        return t.getBytes(StandardCharsets.ISO_8859_1);
    }

    @Test
    void aTokenSplitByIso2022OrHzSequencesIsDeniedAndRedacted() {
        RegexProvider provider = new RegexProvider();
        for (String split : SPLITS) {
            for (String type : new String[] {"application/octet-stream", "text/plain", null}) {
                String[] headers = type == null ? new String[0] : new String[] {"content-type", type};
                HttpRequestResult denied = DecodedBodyTest.evaluate(provider, DENY, body(split), headers);
                assertEquals(Decision.DENY, denied.decision(), type + " " + split.length());
                assertEquals("request body contains secrets: github_token", denied.reason());
                HttpRequestResult redacted = DecodedBodyTest.evaluate(provider, JsonObject.EMPTY_JSON_OBJECT,
                        body(split), headers);
                assertEquals(Decision.ALLOW, redacted.decision());
                String out = new String(redacted.body().orElseThrow().toByteArray(), StandardCharsets.ISO_8859_1);
                String dropped = out.replaceAll("\u001b[\\x20-\\x2f]{1,3}[\\x30-\\x7e]|[\u000e\u000f]|~[{}\n]", "");
                assertFalse(dropped.contains("0123456789abcdef"), out);
                assertFalse(dropped.contains("ghp_"), out);
            }
        }
    }

    @Test
    void textWithoutSuchSequencesHasNoSecondReading() {
        assertEquals(null, Iso2022Text.view(java.nio.ByteBuffer.wrap("plain ~ text ~x \u001bN".getBytes(
                StandardCharsets.ISO_8859_1))));
    }
}
