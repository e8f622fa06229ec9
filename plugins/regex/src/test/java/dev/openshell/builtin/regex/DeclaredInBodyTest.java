package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareException;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A charset a request body declares in itself (attacker passes 9 and 10, P11-7, P12-3): the UTF-7 signature, an HTML
 * {@code <meta>} anywhere or an XML declaration naming a charset the scan cannot read makes the body undecodable in deny and redact mode, as
 * a declared {@code charset} parameter does; a readable one is read as before.
 */
class DeclaredInBodyTest {
    private static final JsonObject DENY = Json.createObjectBuilder().add("mode", "deny").build();
    private final RegexProvider provider = new RegexProvider();

    /** {@return the text in UTF-7 (RFC 2152): one base64 run} */
    static String utf7(String s) {
        return "+" + Base64.getEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.UTF_16BE)) + "-";
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static final String KEY7 = utf7(DecodedBodyTest.OPENAI);

    @ParameterizedTest
    @ValueSource(strings = {"sig|", "sig|application/octet-stream", "sig|text/plain", "sig|application/json",
        "meta|text/html", "meta|text/html; charset=utf-8", "meta|", "equiv|text/html; charset=iso-8859-1",
        "xml|application/xml", "xml|text/plain", "metau7|text/html", "metaUTF7|text/html"})
    void aBodyDeclaringAnUnreadableCharsetInItselfIsUndecodable(String shape) {
        String kind = shape.substring(0, shape.indexOf('|'));
        String type = shape.substring(shape.indexOf('|') + 1);
        String body = switch (kind) {
            case "sig" -> "+/v8-Your key: " + KEY7;
            case "meta" -> "<html><head><meta charset=\"utf-7\"></head><body>" + KEY7 + "</body></html>";
            case "metau7" -> "<html><head><META CharSet = 'u7'></head><body>" + KEY7 + "</body></html>";
            case "metaUTF7" -> "<!doctype html>" + " ".repeat(900) + "<meta charset=UTF7>" + KEY7;
            case "equiv" -> "<html><meta http-equiv=\"Content-Type\" content=\"text/html; charset=UTF-7\">" + KEY7;
            default -> "<?xml version=\"1.0\" encoding=\"UTF-7\"?><a>" + KEY7 + "</a>";
        };
        String[] headers = type.isEmpty() ? new String[0] : new String[] {"content-type", type};
        for (JsonObject config : new JsonObject[] {DENY, JsonObject.EMPTY_JSON_OBJECT}) {
            MiddlewareException e = assertThrows(MiddlewareException.class,
                    () -> DecodedBodyTest.evaluate(provider, config, ascii(body), headers), shape);
            assertEquals("body_undecodable", e.code(), shape);
            assertFalse(e.getMessage().toLowerCase().contains("utf-7"), "the name is not echoed");
        }
    }

    @Test
    void aReadableCharsetDeclaredInTheBodyIsReadAsBefore() {
        byte[] body = ascii("<html><meta charset=\"iso-8859-1\"><body>" + DecodedBodyTest.OPENAI + "</body>");
        HttpRequestResult r = DecodedBodyTest.evaluate(provider, DENY, body, "content-type", "text/html");
        assertEquals(Decision.DENY, r.decision());
        assertEquals("request body contains secrets: openai_api_key", r.reason());
    }

    @Test
    void markupInsideAJsonStringIsNotADeclaration() {
        byte[] body = ascii("{\"html\":\"<meta charset=iso-2022-jp>\",\"k\":\"" + DecodedBodyTest.OPENAI + "\"}");
        HttpRequestResult r = DecodedBodyTest.evaluate(provider, DENY, body, "content-type", "application/json");
        assertEquals(Decision.DENY, r.decision());
    }

    /** Attacker pass 10, P12-3: a {@code <meta>} anywhere in the body counts, whatever comes before it. */
    @ParameterizedTest
    @ValueSource(ints = {1_000, 1_100, 5_000, 100_000})
    void aDeclarationPastTheFirstKilobyteIsReadToo(int pad) {
        byte[] body = ascii("<html><head><!--" + "a".repeat(pad) + "--><meta charset=\"utf-7\"></head><body>"
                + KEY7);
        for (String type : new String[] {"text/html", "text/plain", "application/octet-stream"}) {
            MiddlewareException e = assertThrows(MiddlewareException.class,
                    () -> DecodedBodyTest.evaluate(provider, DENY, body, "content-type", type), type);
            assertEquals("body_undecodable", e.code(), type);
        }
    }

    /** Attacker pass 12, P14-4: a charset in another parameter of Content-Type, which w3lib and node-fetch take. */
    @ParameterizedTest
    @ValueSource(strings = {"text/html; x-charset=utf-7", "text/html; xcharset=utf-7; charset=utf-8",
        "text/html; a=\"charset=utf-7\"; charset=utf-8"})
    void aCharsetInAnotherParameterCounts(String type) {
        byte[] body = ascii("<p>" + KEY7 + "</p>");
        MiddlewareException e = assertThrows(MiddlewareException.class,
                () -> DecodedBodyTest.evaluate(provider, DENY, body, "content-type", type), type);
        assertEquals("body_undecodable", e.code(), type);
    }

    /**
     * A body without {@code <} is read for its signature only (the search for escapes and markup tells); a body with
     * one is read whole, wherever the {@code <} stands, including after a byte order mark and in a body whose bytes are
     * not UTF-8 (the declaration's refusal comes first, as before: {@code body_undecodable}, not
     * {@code body_not_utf8}).
     */
    @ParameterizedTest
    @ValueSource(strings = {"sig-no-lt", "bom-meta", "late-lt", "malformed-meta", "malformed-sig", "escape-then-meta",
        "markup-then-meta"})
    void theShortcutForBodiesWithoutALessThanMissesNoDeclaration(String kind) {
        byte[] body = switch (kind) {
            case "sig-no-lt" -> ascii("+/v8 " + "plain words ".repeat(500) + KEY7);
            case "bom-meta" -> concat(new byte[] {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF},
                    ascii("x".repeat(3_000) + "<meta charset=utf-7>" + KEY7));
            case "late-lt" -> ascii("a & b \\ c ".repeat(2_000) + "<meta charset=utf-7>" + KEY7);
            case "malformed-meta" -> concat(ascii("<meta charset=utf-7>" + KEY7), new byte[] {(byte) 0xFF, 'x'});
            case "malformed-sig" -> concat(ascii("+/v8-" + KEY7), new byte[] {(byte) 0xC0, (byte) 0x80});
            case "escape-then-meta" -> ascii("\\u0041 and &#65; " + "y".repeat(100) + "<meta charset=utf-7>" + KEY7);
            default -> ascii("<![CDATA[x]]> \\n " + "<meta charset=utf-7>" + KEY7);
        };
        MiddlewareException e = assertThrows(MiddlewareException.class,
                () -> DecodedBodyTest.evaluate(provider, DENY, body, "content-type", "text/plain"), kind);
        assertEquals("body_undecodable", e.code(), kind);
    }

    /**
     * A {@code ~} that starts no HZ shift ({@code ~/} of a home directory) leaves a body read as it is; one that does
     * ({@code ~{}) still adds the reading without the shifts, in which a key split by it is found.
     */
    @Test
    void aTildeIsReadAsAnHzShiftOnlyWhereItStartsOne() {
        byte[] plain = ascii("cd ~/projects && make\n key " + DecodedBodyTest.OPENAI);
        assertEquals(Decision.DENY, DecodedBodyTest.evaluate(provider, DENY, plain, "content-type", "text/plain")
                .decision());
        String k = DecodedBodyTest.OPENAI;
        byte[] split = ascii("cd ~/x; key " + k.substring(0, 10) + "~{~}" + k.substring(10));
        HttpRequestResult r = DecodedBodyTest.evaluate(provider, DENY, split, "content-type", "text/plain");
        assertEquals(Decision.DENY, r.decision());
        assertEquals("request body contains secrets: openai_api_key", r.reason());
    }

    /**
     * Attacker pass 15, P17-1: {@code <meta charset="JAVA">} and a token written as {@code \\uXXXX} escapes after one
     * more backslash: the JSON reading takes {@code \\\\} as one backslash and reads no token, GNU libiconv's JAVA
     * decoder (lxml from PyPI) decodes every escape. The name is a declaration of a charset the scan cannot read; so
     * are ICU's (attacker pass 15b: libxml2's fallback on Debian; {@code x-utf-7}, {@code utf-07}, SCSU).
     */
    @ParameterizedTest
    @ValueSource(strings = {"JAVA", "java", "C99", "UCS-2-INTERNAL", "x-utf-7", "utf-07", "windows-065000", "SCSU",
        "ibm-1212"})
    void aCharsetOnlyLibiconvOrIcuReadsIsUndecodable(String name) {
        StringBuilder escaped = new StringBuilder("\\");
        for (char c : DecodedBodyTest.OPENAI.toCharArray()) {
            escaped.append(String.format("\\u%04x", (int) c));
        }
        byte[] body = ascii("<html><head><meta charset=\"" + name + "\"></head><body>" + escaped + "</body></html>");
        for (String type : new String[] {"text/html", "text/plain", "application/xhtml+xml"}) {
            MiddlewareException e = assertThrows(MiddlewareException.class,
                    () -> DecodedBodyTest.evaluate(provider, DENY, body, "content-type", type), type);
            assertEquals("body_undecodable", e.code(), type);
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
