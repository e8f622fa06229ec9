package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareException;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * XML bodies without a {@code charset} parameter are read in the encoding an XML parser detects (XML 1.0 Appendix F,
 * RFC 7303 section 3): a byte order mark, else the first four bytes of {@code <?xm} (or {@code <} for UTF-32) in
 * UTF-16 or UTF-32, else UTF-8. Keys in such bodies are denied and redacted in their own encoding; a declaration that
 * contradicts the detected encoding, or an encoding the scan cannot read, is undecodable.
 */
class XmlEncodingTest {
    private static final String KEY = DecodedBodyTest.OPENAI;
    private static final String PLACEHOLDER = "[REDACTED:openai_api_key]";
    private static final JsonObject DENY = Json.createObjectBuilder().add("mode", "deny").build();
    private final RegexProvider provider = new RegexProvider();

    private HttpRequestResult run(JsonObject config, byte[] body, String type) {
        return DecodedBodyTest.evaluate(provider, config, body, "content-type", type);
    }

    private static String xml(String declaration, String content) {
        return (declaration == null ? "" : "<?xml version=\"1.0\"" + declaration + "?>") + "<a>" + content + "</a>";
    }

    private static String declaration(String encoding) {
        return encoding.equals("-") ? "" : " encoding=\"" + encoding + "\"";
    }

    /** Each Appendix F form without a byte order mark, with and without an {@code encoding} declaration. */
    @ParameterizedTest
    @CsvSource({"UTF-16LE, UTF-16", "UTF-16LE, UTF-16LE", "UTF-16LE, -", "UTF-16BE, UTF-16", "UTF-16BE, UTF-16BE",
        "UTF-16BE, -", "UTF-32LE, UTF-32LE", "UTF-32LE, UTF-32", "UTF-32LE, -", "UTF-32BE, UTF-32BE",
        "UTF-32BE, UTF-32", "UTF-32BE, -"})
    void xmlInUtf16OrUtf32WithoutAByteOrderMarkIsReadInIt(String charset, String encoding) {
        Charset cs = Charset.forName(charset);
        String decl = declaration(encoding);
        byte[] body = xml(decl, "x " + KEY + " y").getBytes(cs);
        for (String type : new String[] {"application/xml", "text/xml", "application/soap+xml"}) {
            HttpRequestResult denied = run(DENY, body, type);
            assertEquals(Decision.DENY, denied.decision(), charset + " " + encoding + " " + type);
            assertEquals(RegexProvider.DENY_CODE, denied.reasonCode().orElseThrow());
            HttpRequestResult r = run(JsonObject.EMPTY_JSON_OBJECT, body, type);
            assertEquals(Decision.ALLOW, r.decision());
            byte[] out = r.body().orElseThrow(() -> new AssertionError("nothing redacted")).toByteArray();
            assertArrayEquals(xml(decl, "x " + PLACEHOLDER + " y").getBytes(cs), out, "written back in " + charset);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"UTF-16LE", "UTF-16BE", "UTF-32LE", "UTF-32BE"})
    void xmlWithAByteOrderMarkIsReadInItsEncoding(String charset) {
        Charset cs = Charset.forName(charset);
        byte[] bom = "\uFEFF".getBytes(cs);
        byte[] body = DecodedBodyTest.concat(bom, xml(null, KEY).getBytes(cs));
        assertEquals(Decision.DENY, run(DENY, body, "application/xml").decision());
        byte[] out = run(JsonObject.EMPTY_JSON_OBJECT, body, "application/xml").body().orElseThrow().toByteArray();
        assertArrayEquals(DecodedBodyTest.concat(bom, xml(null, PLACEHOLDER).getBytes(cs)), out);
    }

    /** A declaration or a charset parameter that names another encoding than the first bytes show. */
    @ParameterizedTest
    @CsvSource({"UTF-16LE, UTF-8,", "UTF-16LE, UTF-16BE,", "UTF-16BE, UTF-16LE,", "UTF-16LE, ISO-8859-1,",
        "UTF-32LE, UTF-16,", "UTF-32BE, UTF-32LE,", "UTF-16LE, UTF-7,", "UTF-16LE, -, utf-8", "UTF-16LE, -, utf-16",
        "UTF-16BE, -, iso-8859-1", "UTF-32LE, -, utf-32be", "UTF-16LE, UTF-16, utf-8"})
    void aContradictingOrUnreadableEncodingIsUndecodable(String charset, String encoding, String parameter) {
        byte[] body = xml(declaration(encoding), "x " + KEY).getBytes(Charset.forName(charset));
        String type = "application/xml" + (parameter == null ? "" : "; charset=" + parameter);
        for (JsonObject config : new JsonObject[] {DENY, JsonObject.EMPTY_JSON_OBJECT}) {
            MiddlewareException e = assertThrows(MiddlewareException.class, () -> run(config, body, type),
                    charset + " " + encoding + " " + type);
            assertEquals(RegexProvider.UNDECODABLE_CODE, e.code());
            assertFalse(e.getMessage().contains("sk-"), e.getMessage());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"UTF-16LE", "UTF-16BE", "UTF-32LE", "UTF-32BE"})
    void theMatchingCharsetParameterReadsTheSame(String charset) {
        byte[] body = xml("", KEY).getBytes(Charset.forName(charset));
        assertEquals(Decision.DENY, run(DENY, body, "application/xml; charset=" + charset).decision());
    }

    @org.junit.jupiter.api.Test
    void unreadableFamiliesAreUndecodable() {
        byte[][] bodies = {
            "<a>x</a>".getBytes(StandardCharsets.UTF_16LE), // the NUL pattern without <?: not XML in UTF-8
            {0, 0, '<', 0, 0, 0, 'a', 0}, // UCS-4, unusual octet order 2143
            {0, '<', 0, 0, 0, 'a', 0, 0}, // UCS-4, unusual octet order 3412
            {0x4c, 0x6f, (byte) 0xa7, (byte) 0x94, 0x40}, // EBCDIC "<?xm"
            // ASCII markup after a UTF-16 or UTF-32 mark: not XML in the marked encoding, read otherwise by a reader
            // that ignores the mark
            {(byte) 0xfe, (byte) 0xff, '<', 'a', '>', 'x', '<', '/', 'a', '>'},
            {(byte) 0xff, (byte) 0xfe, '<', 'a', '>', 'x', '<', '/', 'a', '>'},
            {(byte) 0xff, (byte) 0xfe, 0, 0, '<', 'a', '>', 'x', '<', '/', 'a', '>'},
        };
        for (byte[] body : bodies) {
            MiddlewareException e = assertThrows(MiddlewareException.class, () -> run(DENY, body, "application/xml"));
            assertEquals(RegexProvider.UNDECODABLE_CODE, e.code());
        }
    }

    @org.junit.jupiter.api.Test
    void utf8XmlIsReadAsBefore() {
        for (String text : new String[] {xml("", "x " + KEY), xml(" encoding=\"UTF-8\"", KEY), xml(null, KEY),
            "  " + xml(null, KEY), "<?xml-stylesheet href=\"a\"?>" + xml(null, KEY)}) {
            byte[] body = text.getBytes(StandardCharsets.UTF_8);
            assertEquals(Decision.DENY, run(DENY, body, "application/xml").decision(), text);
            String out = new String(run(JsonObject.EMPTY_JSON_OBJECT, body, "application/xml").body().orElseThrow()
                    .toByteArray(), StandardCharsets.UTF_8);
            assertEquals(text.replace(KEY, PLACEHOLDER), out);
        }
        byte[] clean = xml("", "caf\u00e9").getBytes(StandardCharsets.UTF_8);
        assertEquals(Decision.ALLOW, run(DENY, clean, "application/xml").decision());
        assertTrue(run(JsonObject.EMPTY_JSON_OBJECT, clean, "application/xml").body().isEmpty());
        // UTF-16 text under a non-XML type keeps the declared-charset rule (UTF-8 without one); its ASCII is still
        // found, the reading without dropped sequences dropping each NUL (attacker pass 17, P19-2)
        byte[] plain = ("x " + KEY).getBytes(StandardCharsets.UTF_16LE);
        assertEquals(Decision.DENY, run(DENY, plain, "text/plain").decision());
    }
}
