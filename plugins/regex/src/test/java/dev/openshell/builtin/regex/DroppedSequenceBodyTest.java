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
 * token; a receiver that sniffs the charset reads the token, so the body is also read without those sequences. Attacker
 * pass 15c, P17c-1: so is a token split by a C0 control (but TAB, LF, CR) or a lone ESC, which libxml2's HTML parser
 * drops.
 */
class DroppedSequenceBodyTest {
    private static final String TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    private static final JsonObject DENY = Json.createObjectBuilder().add("mode", "deny").build();
    private static final String[] SPLITS = {"\u001b(B", "\u001b$B\u001b(B", "\u000e\u000f", "~{~}", "~\n",
        "\u001b$)C\u000e\u000f", "\u0001", "\u000b\u000c", "\u001f", "\u001b", "\u0008\u001b"};

    /**
     * A lone ESC before bytes an escape sequence would take ({@code sk ESC -proj-}): an ISO 2022 decoder drops
     * {@code ESC - p}, libxml2's HTML parser only the ESC, and reads the key whole.
     */
    @Test
    void aKeySplitByALoneEscBeforeAnIntermediateIsFound() {
        String key = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z";
        byte[] body = ("key sk\u001b" + key.substring(2) + " end").getBytes(StandardCharsets.ISO_8859_1);
        RegexProvider provider = new RegexProvider();
        HttpRequestResult denied = DecodedBodyTest.evaluate(provider, DENY, body, "content-type", "text/html");
        assertEquals(Decision.DENY, denied.decision());
        HttpRequestResult redacted = DecodedBodyTest.evaluate(provider, JsonObject.EMPTY_JSON_OBJECT, body,
                "content-type", "text/html");
        String out = new String(redacted.body().orElseThrow().toByteArray(), StandardCharsets.ISO_8859_1);
        assertFalse(out.replace("\u001b", "").contains("proj-Ab3dEf6h"), out);
    }

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
                String dropped = out.replaceAll("\u001b[\\x20-\\x2f]{1,3}[\\x30-\\x7e]|[\\x01-\\x08\\x0b\\x0c\\x0e-\\x1f]"
                        + "|~[{}\n]", "");
                assertFalse(dropped.contains("0123456789abcdef"), out);
                assertFalse(dropped.contains("ghp_"), out);
            }
        }
    }

    /**
     * Attacker pass 16, P18-2: libxml2 drops U+FFFE and U+FFFF read from UTF-8, so a token split by one is found in
     * every type, a request's and a response's, and redacted whole.
     */
    @Test
    void aTokenSplitByTheUtf8OfANoncharacterLibxml2DropsIsFound() {
        RegexProvider provider = new RegexProvider();
        for (String nonchar : new String[] {"\uffff", "\ufffe", "\uffff\ufffe"}) {
            String split = TOKEN.substring(0, 10) + nonchar + TOKEN.substring(10);
            for (String[] typed : new String[][] {{"<p>", "</p>", "text/html"}, {"<a>", "</a>", "application/xml"},
                {"", "", "text/plain"}, {"{\"a\":\"", "\"}", "application/json"}, {"x=", "", null}}) {
                byte[] body = (typed[0] + split + typed[1]).getBytes(StandardCharsets.UTF_8);
                String[] headers = typed[2] == null ? new String[0] : new String[] {"content-type", typed[2]};
                assertEquals(Decision.DENY, DecodedBodyTest.evaluate(provider, DENY, body, headers).decision(),
                        typed[2]);
                HttpRequestResult redacted = DecodedBodyTest.evaluate(provider, JsonObject.EMPTY_JSON_OBJECT, body,
                        headers);
                String out = new String(redacted.body().orElseThrow().toByteArray(), StandardCharsets.UTF_8);
                assertFalse(out.replaceAll("[\uffff\ufffe]", "").contains(TOKEN.substring(4, 20)), out);
            }
        }
        for (String split : new String[] {"\u0001", "\uffff", "&#1;", "\u001b"}) { // in UTF-16 and UTF-32 too
            String html = "<p>" + TOKEN.substring(0, 10) + split + TOKEN.substring(10) + "</p>";
            for (String charset : new String[] {"utf-16le", "utf-16be", "utf-32le"}) {
                byte[] body = html.getBytes(java.nio.charset.Charset.forName(charset));
                assertEquals(Decision.DENY, DecodedBodyTest.evaluate(provider, DENY, body, "content-type",
                        "text/html; charset=" + charset).decision(), charset);
            }
        }
        byte[] kept = ("<p>" + TOKEN.substring(0, 10) + "\ufffd" + TOKEN.substring(10) + "</p>")
                .getBytes(StandardCharsets.UTF_8);
        assertEquals(Decision.ALLOW, DecodedBodyTest.evaluate(provider, DENY, kept, "content-type", "text/html")
                .decision(), "U+FFFD is read: no token");
    }

    /** Attacker pass 17, P19-2: libxml2 2.14's recovering XML parser (lxml's wheels) drops NUL from text. */
    @Test
    void aTokenSplitByNulIsFound() {
        RegexProvider provider = new RegexProvider();
        for (String nul : new String[] {"\u0000", "\u0000\u0000\u0000", "\u0000\u0001\u0000"}) {
            for (String type : new String[] {"application/xml", "text/xml", "text/html", "text/plain"}) {
                byte[] body = ("<a>" + TOKEN.substring(0, 10) + nul + TOKEN.substring(10) + "</a>")
                        .getBytes(StandardCharsets.UTF_8);
                assertEquals(Decision.DENY, DecodedBodyTest.evaluate(provider, DENY, body, "content-type", type)
                        .decision(), type);
            }
        }
    }

    @Test
    void textWithoutSuchSequencesHasNoSecondReading() {
        assertEquals(null, DroppedText.view(java.nio.ByteBuffer.wrap("plain ~ text ~x\ttab\r\n \u007f".getBytes(
                StandardCharsets.ISO_8859_1))));
    }
}
