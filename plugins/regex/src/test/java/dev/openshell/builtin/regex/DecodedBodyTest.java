package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.io.StringReader;
import java.net.URLDecoder;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The body as its upstream reads it: each input of issue 17, in redact and deny mode, and what is undecodable. */
class DecodedBodyTest {
    private static final BindingId ID = new BindingId("openshell/regex");
    static final String OPENAI = "sk-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7cF0iL";
    static final String AWS = "AKIAIOSFODNN7EXAMPLE";
    private static final JsonObject DENY = Json.createObjectBuilder().add("mode", "deny").build();

    private final RegexProvider provider = new RegexProvider();

    static HttpRequestResult evaluate(RegexProvider p, JsonObject config, byte[] body, String... headers) {
        List<HttpHeader> list = new ArrayList<>();
        for (int i = 0; i < headers.length; i += 2) {
            list.add(new HttpHeader(headers[i], headers[i + 1]));
        }
        return p.evaluate(new HttpRequestEvaluation(ID, Phase.PRE_CREDENTIALS, RequestContext.of("r"), config,
                new HttpRequestTarget("https", "api.example.com", 443, "POST", "/v1", ""), list, Body.of(body)));
    }

    private HttpRequestResult redact(byte[] body, String... headers) {
        return evaluate(provider, JsonObject.EMPTY_JSON_OBJECT, body, headers);
    }

    private HttpRequestResult deny(byte[] body, String... headers) {
        return evaluate(provider, DENY, body, headers);
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] redacted(HttpRequestResult r) {
        assertEquals(Decision.ALLOW, r.decision());
        return r.body().orElseThrow(() -> new AssertionError("nothing was redacted")).toByteArray();
    }

    private static JsonObject json(byte[] body, Charset charset) {
        return Json.createReader(new InputStreamReader(new ByteArrayInputStream(body), charset)).readObject();
    }

    private static void deniedFor(HttpRequestResult r, String... kinds) {
        assertEquals(Decision.DENY, r.decision());
        assertEquals("secret_detected", r.reasonCode().orElseThrow());
        assertEquals("request body contains secrets: " + String.join(", ", kinds), r.reason());
    }

    private static void holdsNoKey(byte[] body, Charset charset) {
        String text = new String(body, charset);
        assertFalse(text.contains(OPENAI.substring(8)), "OpenAI key bytes survive");
        assertFalse(text.contains("IOSFODNN7"), "AWS key bytes survive");
    }

    // ------------------------------------------------------------------ JSON escapes

    /** The first input: a pasted {@code .env} file, keys at the start of lines inside a JSON string. */
    @ParameterizedTest
    @ValueSource(strings = {"\\n", "\\t", "\\r\\n", "\\u000a", "\\u0009", "\\f", "\\b", "\\/"})
    void aKeyAfterAnEscapeInsideAJsonStringIsAToken(String escape) {
        String body = "{\"content\":\"my keys:" + escape + OPENAI + escape + AWS + "\"}";
        for (String type : new String[] {"application/json", "application/json; charset=utf-8", "text/plain", null}) {
            String[] headers = type == null ? new String[0] : new String[] {"content-type", type};
            HttpRequestResult r = redact(utf8(body), headers);
            byte[] out = redacted(r);
            assertEquals("{\"content\":\"my keys:" + escape + "[REDACTED:openai_api_key]" + escape
                    + "[REDACTED:aws_access_key_id]\"}", new String(out, StandardCharsets.UTF_8), type);
            assertEquals(List.of(new Finding("secret.openai_api_key", "OpenAI API key", 1, "", "high"),
                    new Finding("secret.aws_access_key_id", "AWS access key ID", 1, "", "high")), r.findings());
            json(out, StandardCharsets.UTF_8); // still JSON
            deniedFor(deny(utf8(body), headers), "openai_api_key", "aws_access_key_id");
        }
    }

    @Test
    void unicodeEscapesAreDecodedAndTheWholeEscapedKeyIsReplaced() {
        String escaped = "\\u0073k-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7cF0iL";
        StringBuilder all = new StringBuilder();
        for (char c : AWS.toCharArray()) {
            all.append(String.format("\\u%04X", (int) c));
        }
        String body = "{\"a\":\"caf\\u00e9 " + escaped + "\",\"b\":[\"" + all + "\"],\"\\u0041KIAIOSFODNN7EXAMPLE\":1}";
        byte[] out = redacted(redact(utf8(body), "content-type", "application/json"));
        assertEquals("{\"a\":\"caf\\u00e9 [REDACTED:openai_api_key]\",\"b\":[\"[REDACTED:aws_access_key_id]\"],"
                + "\"[REDACTED:aws_access_key_id]\":1}", new String(out, StandardCharsets.UTF_8),
                "the untouched escape \\u00e9 is kept as it was");
        JsonObject parsed = json(out, StandardCharsets.UTF_8);
        assertEquals("caf\u00e9 [REDACTED:openai_api_key]", parsed.getString("a"));
        deniedFor(deny(utf8(body), "content-type", "application/json"), "openai_api_key", "aws_access_key_id");
    }

    /** Not a JSON document (NaN, a trailing comma, a comment), so read as text: its escapes are read decoded too. */
    @ParameterizedTest
    @ValueSource(strings = {"{\"a\":\"%s\",\"b\":NaN}", "{\"a\":\"%s\",}", "// c\n{\"a\":\"%s\"}", "note: %s."})
    void aKeyHiddenByAnEscapeInTextThatIsNotJsonIsFound(String shape) {
        String escaped = "\\u0073k-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7cF0\\u0069L";
        String body = shape.formatted(escaped);
        for (String type : new String[] {"text/plain", "text/plain; charset=utf-8", null}) {
            String[] headers = type == null ? new String[0] : new String[] {"content-type", type};
            deniedFor(deny(utf8(body), headers), "openai_api_key");
            String out = new String(redacted(redact(utf8(body), headers)), StandardCharsets.UTF_8);
            assertEquals(shape.formatted("[REDACTED:openai_api_key]"), out, type);
        }
    }

    @Test
    void aPemBlockWithEscapedNewlinesIsRedactedAsOneBlock() {
        String pem = Samples.PEM.replace("\n", "\\n");
        String body = "{\"key\":\"" + pem + "\\n\",\"n\":2}";
        byte[] out = redacted(redact(utf8(body), "content-type", "application/json"));
        assertEquals("{\"key\":\"[REDACTED:private_key]\\n\",\"n\":2}", new String(out, StandardCharsets.UTF_8));
    }

    @Test
    void anEscapedQuoteNextToAKeyEndsTheTokenAndStaysEscaped() {
        String body = "{\"q\":\"say \\\"" + AWS + "\\\" now\"}";
        byte[] out = redacted(redact(utf8(body), "content-type", "application/json"));
        assertEquals("say \"[REDACTED:aws_access_key_id]\" now", json(out, StandardCharsets.UTF_8).getString("q"));
    }

    @Test
    void ndjsonLinesAreEachDecoded() {
        String body = "{\"a\":\"x\\n" + AWS + "\"}\n{\"b\":\"\\u0073k-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7cF0iL\"}\n";
        byte[] out = redacted(redact(utf8(body), "content-type", "application/x-ndjson"));
        assertEquals("{\"a\":\"x\\n[REDACTED:aws_access_key_id]\"}\n{\"b\":\"[REDACTED:openai_api_key]\"}\n",
                new String(out, StandardCharsets.UTF_8));
    }

    // ------------------------------------------------------------------ forms

    @Test
    void formFieldsAreReadPercentDecodedAndRedactedPercentEncoded() {
        String body = "text=line1%0Ask-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7cF0iL&other=a+b&%41KIAIOSFODNN7EXAMPL%45=1";
        String[] type = {"content-type", "application/x-www-form-urlencoded"};
        HttpRequestResult r = redact(utf8(body), type);
        String out = new String(redacted(r), StandardCharsets.US_ASCII);
        assertEquals("text=line1%0A%5BREDACTED%3Aopenai_api_key%5D&other=a+b&%5BREDACTED%3Aaws_access_key_id%5D=1",
                out);
        Map<String, String> fields = form(out);
        assertEquals("line1\n[REDACTED:openai_api_key]", fields.get("text"));
        assertEquals("a b", fields.get("other"));
        assertEquals("1", fields.get("[REDACTED:aws_access_key_id]"));
        deniedFor(deny(utf8(body), type), "openai_api_key", "aws_access_key_id");
        deniedFor(deny(utf8("text=%73k-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7cF0iL"), type), "openai_api_key");
    }

    static Map<String, String> form(String body) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String pair : body.split("&")) {
            int eq = pair.indexOf('=');
            fields.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                    URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
        }
        return fields;
    }

    @Test
    void formFieldsThatAreNotUtf8AreUndecodable() {
        MiddlewareException e = assertThrows(MiddlewareException.class, () -> redact(utf8("a=%C3%28"),
                "content-type", "application/x-www-form-urlencoded"));
        assertEquals("body_not_utf8", e.code());
        assertEquals(HttpRequestResult.allow(), redact(utf8("a=%E9t%E9"), "content-type",
                "application/x-www-form-urlencoded; charset=iso-8859-1"));
    }

    // ------------------------------------------------------------------ charsets

    @ParameterizedTest
    @ValueSource(strings = {"UTF-16LE", "UTF-16BE", "UTF-32LE", "UTF-32BE"})
    void utf16And32BodiesAreTranscodedByTheirDeclaredCharset(String charset) {
        Charset cs = Charset.forName(charset);
        String text = "{\"content\":\"caf\u00e9 \uD83D\uDE00 my keys:\\n" + OPENAI + "\\n" + AWS + "\"}";
        byte[] body = text.getBytes(cs);
        String[] type = {"content-type", "application/json; charset=" + charset.toLowerCase()};
        byte[] out = redacted(redact(body, type));
        assertArrayEquals(("{\"content\":\"caf\u00e9 \uD83D\uDE00 my keys:\\n[REDACTED:openai_api_key]\\n"
                + "[REDACTED:aws_access_key_id]\"}").getBytes(cs), out);
        holdsNoKey(out, cs);
        json(out, cs);
        deniedFor(deny(body, type), "openai_api_key", "aws_access_key_id");
        // the same without a declared charset: the NUL pattern of JSON text shows the encoding (RFC 4627 section 3)
        deniedFor(deny(body, "content-type", "application/json"), "openai_api_key", "aws_access_key_id");
        // without a media type the reader may detect the encoding or read the bytes as they are: undecodable
        assertEquals("body_undecodable", assertThrows(MiddlewareException.class, () -> deny(body)).code());
    }

    @ParameterizedTest
    @ValueSource(strings = {"UTF-16LE", "UTF-16BE", "UTF-32LE", "UTF-32BE", "UTF-8"})
    void inJsonAByteOrderMarkShowsTheEncodingAndIsKept(String charset) {
        Charset cs = Charset.forName(charset);
        byte[] bom = "\uFEFF".getBytes(cs);
        byte[] body = concat(bom, ("{\"content\":\"plain text " + AWS + " end\"}").getBytes(cs));
        for (String type : new String[] {"application/json", "application/json; charset=utf-8"}) {
            byte[] out = redacted(redact(body, "content-type", type));
            assertArrayEquals(concat(bom, "{\"content\":\"plain text [REDACTED:aws_access_key_id] end\"}"
                    .getBytes(cs)), out, type);
            deniedFor(deny(body, "content-type", type), "aws_access_key_id");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"UTF-16LE", "UTF-16BE", "UTF-32LE", "UTF-32BE", "UTF-8"})
    void elsewhereAByteOrderMarkCountsOnlyWhereTheDeclaredCharsetHonoursIt(String charset) {
        Charset cs = Charset.forName(charset);
        byte[] bom = "\uFEFF".getBytes(cs);
        byte[] body = concat(bom, ("plain text " + AWS + " end").getBytes(cs));
        byte[] redactedBody = concat(bom, "plain text [REDACTED:aws_access_key_id] end".getBytes(cs));
        // the mark of the declared encoding itself (UTF-8 by default) reads the same with or without it
        String own = "text/plain; charset=" + charset.toLowerCase(java.util.Locale.ROOT);
        assertArrayEquals(redactedBody, redacted(redact(body, "content-type", own)), own);
        deniedFor(deny(body, "content-type", own), "aws_access_key_id");
        // UTF-16 and UTF-32 without a byte order in the name take it from the mark (RFC 2781 section 3.3)
        if (!charset.equals("UTF-8")) {
            String unordered = "text/plain; charset=" + charset.substring(0, 6).toLowerCase(java.util.Locale.ROOT);
            assertArrayEquals(redactedBody, redacted(redact(body, "content-type", unordered)), unordered);
        }
        if (charset.equals("UTF-8")) {
            for (String type : new String[] {"text/plain", "application/x-www-form-urlencoded", "application/xml"}) {
                assertArrayEquals(redactedBody, redacted(redact(body, "content-type", type)), type);
            }
            assertArrayEquals(redactedBody, redacted(redact(body)), "no media type");
            return;
        }
        // an XML reader without a declared charset follows the mark (XML 1.0 Appendix F), but this text is no XML
        // document (it starts with neither markup nor white space; marked XML is read in XmlEncodingTest): undecodable,
        // as is any other mark that would change the reading, whatever the scan would find
        for (String type : new String[] {"application/xml", "text/plain", "text/plain; charset=utf-8",
            "application/xml; charset=utf-8",
            "application/x-www-form-urlencoded", "text/plain; charset=iso-8859-1"}) {
            MiddlewareException e = assertThrows(MiddlewareException.class, () -> deny(body, "content-type", type),
                    type);
            assertEquals("body_undecodable", e.code(), type);
            assertFalse(e.getMessage().contains("AKIA"), "no content in the message");
        }
        assertEquals("body_undecodable", assertThrows(MiddlewareException.class, () -> deny(body)).code());
    }

    @Test
    void aFormBodyThatStartsWithAUtf16MarkIsUndecodable() {
        // issue 39 item 1: a form parser reads note = the key; a UTF-16LE reading would see CJK characters
        byte[] body = concat(new byte[] {(byte) 0xff, (byte) 0xfe}, utf8("&note=" + OPENAI));
        for (String type : new String[] {"application/x-www-form-urlencoded",
            "application/x-www-form-urlencoded; charset=utf-8"}) {
            assertEquals("body_undecodable", assertThrows(MiddlewareException.class,
                    () -> redact(body, "content-type", type)).code(), type);
            assertEquals("body_undecodable", assertThrows(MiddlewareException.class,
                    () -> deny(body, "content-type", type)).code(), type);
        }
        byte[] be = concat(new byte[] {(byte) 0xfe, (byte) 0xff}, utf8("&note=" + OPENAI + "x"));
        assertEquals("body_undecodable", assertThrows(MiddlewareException.class,
                () -> deny(be, "content-type", "application/x-www-form-urlencoded")).code());
        // a declared UTF-16LE form whose mark is UTF-16BE: the two readings differ
        assertEquals("body_undecodable", assertThrows(MiddlewareException.class,
                () -> deny(concat(new byte[] {(byte) 0xfe, (byte) 0xff}, "a=b".getBytes(StandardCharsets.UTF_16LE)),
                        "content-type", "text/plain; charset=utf-16le")).code());
    }

    @Test
    void aMultipartPartFollowsTheSameByteOrderMarkRule() {
        byte[] part = concat(new byte[] {(byte) 0xff, (byte) 0xfe}, utf8("x " + OPENAI + " y"));
        byte[] body = concat(concat(utf8("--b0und\r\nContent-Disposition: form-data; name=\"a\"\r\n"
                + "Content-Type: text/plain\r\n\r\n"), part), utf8("\r\n--b0und--\r\n"));
        assertEquals("body_undecodable", assertThrows(MiddlewareException.class,
                () -> deny(body, "content-type", "multipart/form-data; boundary=b0und")).code());
    }

    @ParameterizedTest
    @ValueSource(strings = {"application/json; charset=\"utf-8\"; charset=utf-7",
        "application/json; charset=utf-8; charset=utf-8", "application/json; Charset=utf-8; charset=utf-7",
        "text/plain; charset=utf-8; CHARSET=\"utf-8\"", "application/x-www-form-urlencoded; a=1; a=2",
        "multipart/form-data; boundary=b0und; boundary=other"})
    void aRepeatedMediaTypeParameterIsUndecodable(String type) {
        // issue 39 item 2 (RFC 6838 section 4.3): readers disagree on which one counts
        byte[] body = utf8("{\"content\":\"+AHM-k-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7cF0iL\"}");
        MiddlewareException e = assertThrows(MiddlewareException.class, () -> deny(body, "content-type", type));
        assertEquals("body_undecodable", e.code(), type);
        assertFalse(e.getMessage().contains("utf-7"), "the value is not echoed");
        byte[] multipart = utf8("--b0und\r\nContent-Type: " + type + "\r\n\r\nhello\r\n--b0und--\r\n");
        assertEquals("body_undecodable", assertThrows(MiddlewareException.class,
                () -> deny(multipart, "content-type", "multipart/form-data; boundary=b0und")).code(), "a part's");
    }

    @Test
    void singleByteCharsetsAreReadAsTheirBytes() {
        byte[] body = concat(new byte[] {(byte) 0xe9, ' '}, utf8(AWS));
        byte[] out = redacted(redact(body, "content-type", "text/plain; charset=windows-1252"));
        assertArrayEquals(concat(new byte[] {(byte) 0xe9, ' '}, utf8("[REDACTED:aws_access_key_id]")), out);
    }

    @ParameterizedTest
    @ValueSource(strings = {"shift_jis", "gbk", "iso-2022-jp", "utf-7", "x-unknown", "ebcdic-cp-us"})
    void otherCharsetsAreUndecodable(String charset) {
        MiddlewareException e = assertThrows(MiddlewareException.class,
                () -> redact(utf8("hello"), "content-type", "text/plain; charset=\"" + charset + "\""));
        assertEquals("body_undecodable", e.code());
        assertFalse(e.getMessage().contains(charset), "the value is not echoed");
    }

    /** The attacker's inputs: ASCII bytes under a charset that reads them as CJK characters; many readers ignore it. */
    @Test
    void asciiBytesUnderAWideCharsetAreReadAsTheyAreToo() {
        byte[] form = ascii("&note=" + OPENAI);
        String formType = "application/x-www-form-urlencoded; charset=UTF-16LE";
        deniedFor(deny(form, "content-type", formType), "openai_api_key");
        assertArrayEquals(ascii("&note=[REDACTED:openai_api_key]_"), redacted(redact(form, "content-type",
                formType)), "padded to whole UTF-16 units");
        byte[] text = ascii("k " + OPENAI);
        deniedFor(deny(text, "content-type", "text/plain; charset=utf-16"), "openai_api_key");
        byte[] out = redacted(redact(text, "content-type", "text/plain; charset=utf-16"));
        assertArrayEquals(ascii("k [REDACTED:openai_api_key]_"), out);
        // percent-encoded in the form's byte reading: written back percent-encoded
        byte[] escaped = ascii("note=sk%2Dproj%2D" + OPENAI.substring(8) + "&");
        deniedFor(deny(escaped, "content-type", formType), "openai_api_key");
        assertArrayEquals(ascii("note=%5BREDACTED%3Aopenai_api_key%5D_&"), redacted(redact(escaped, "content-type",
                formType)));
        // UTF-32 cannot read ASCII bytes: undecodable, as before
        assertEquals("body_undecodable", assertThrows(MiddlewareException.class,
                () -> deny(ascii("k " + OPENAI + "xx"), "content-type", "text/plain; charset=utf-32le")).code());
    }

    @Test
    void bothReadingsOfAUtf16BodyAreRedacted() {
        // a key in UTF-16LE, then one in ASCII bytes, under charset=utf-16le
        byte[] body = concat(("a " + AWS + " b ").getBytes(StandardCharsets.UTF_16LE), ascii(" " + OPENAI + " "));
        HttpRequestResult r = redact(body, "content-type", "text/plain; charset=utf-16le");
        assertEquals("2", r.metadata().get("matches"));
        byte[] out = redacted(r);
        holdsNoKey(out, StandardCharsets.UTF_16LE);
        holdsNoKey(out, StandardCharsets.ISO_8859_1);
        assertTrue(new String(out, StandardCharsets.UTF_16LE).startsWith("a [REDACTED:aws_access_key_id] b "));
        assertTrue(new String(out, StandardCharsets.ISO_8859_1).endsWith(" [REDACTED:openai_api_key]_ "));
        // a UTF-16 body without a key in either reading is left alone
        assertTrue(redact(("plain \u4e2d text").getBytes(StandardCharsets.UTF_16LE), "content-type",
                "text/plain; charset=utf-16le").body().isEmpty());
    }

    /**
     * {@code charset=utf-16} without a byte order mark: RFC 2781 reads it big-endian, Python's and .NET's decoders
     * little-endian; both orders are read (the attacker's input: a key in UTF-16LE without a mark).
     */
    @Test
    void utf16DeclaredWithoutAMarkIsReadInBothByteOrders() {
        for (String charset : List.of("utf-16", "UTF16")) {
            String type = "text/plain; charset=" + charset;
            byte[] le = ("k " + OPENAI + " x").getBytes(StandardCharsets.UTF_16LE);
            deniedFor(deny(le, "content-type", type), "openai_api_key");
            byte[] out = redacted(redact(le, "content-type", type));
            assertEquals("k [REDACTED:openai_api_key] x", new String(out, StandardCharsets.UTF_16LE));
            holdsNoKey(out, StandardCharsets.UTF_16BE);
            byte[] be = ("k " + AWS + " x").getBytes(StandardCharsets.UTF_16BE);
            assertEquals("k [REDACTED:aws_access_key_id] x",
                    new String(redacted(redact(be, "content-type", type)), StandardCharsets.UTF_16BE));
        }
        // big-endian text whose little-endian reading holds unpaired surrogates (U+00DF is DF00 read backwards):
        // read leniently in that order, so the text passes
        assertTrue(redact("Gr\u00fc\u00dfe".getBytes(StandardCharsets.UTF_16BE), "content-type",
                "text/plain; charset=utf-16").body().isEmpty());
        // JSON that is not JSON in the declared reading is refused whatever the other order reads
        byte[] json = ("{\"k\":\"" + OPENAI + "\"}").getBytes(StandardCharsets.UTF_16LE);
        assertEquals("body_undecodable", assertThrows(MiddlewareException.class,
                () -> deny(json, "content-type", "application/json; charset=utf-16")).code());
        // in a form-data part
        byte[] mp = multipart("b", part("Content-Disposition: form-data; name=\"u\"\r\nContent-Type: text/plain; "
                + "charset=utf-16", ("x " + AWS).getBytes(StandardCharsets.UTF_16LE)));
        deniedFor(deny(mp, "content-type", "multipart/form-data; boundary=b"), "aws_access_key_id");
        // an explicit byte order is one reading: UTF-16BE text of a key read little-endian is no key
        assertTrue(redact(("k " + AWS).getBytes(StandardCharsets.UTF_16LE), "content-type",
                "text/plain; charset=utf-16be").body().isEmpty());
    }

    /** The net under a redaction with two readings: a result that still shows a key, or no longer decodes, fails. */
    @Test
    void aRedactionThatLeavesAKeyOrNoLongerDecodesFailsTheStage() throws Exception {
        Selection all = RegexConfig.parse(JsonObject.EMPTY_JSON_OBJECT).selection();
        List<HttpHeader> utf16 = List.of(new HttpHeader("content-type", "text/plain; charset=utf-16le"));
        RegexProvider.verify(utf16, ascii("k [REDACTED:openai_api_key]_"), all, true); // clean: no failure
        for (byte[] left : List.of(ascii("k " + OPENAI), ascii("odd"))) {
            MiddlewareException e = assertThrows(MiddlewareException.class,
                    () -> RegexProvider.verify(utf16, left, all, true));
            assertEquals(RegexProvider.REDACTION_INCOMPLETE_CODE, e.code());
            assertFalse(e.getMessage().contains(OPENAI.substring(8)), "the message names the rule only");
        }
    }

    @Test
    void malformedUtf16IsUndecodable() {
        assertEquals("body_undecodable", assertThrows(MiddlewareException.class,
                () -> redact(new byte[] {'a', 0, 'b'}, "content-type", "text/plain; charset=utf-16le")).code());
        assertEquals("body_undecodable", assertThrows(MiddlewareException.class,
                () -> redact(new byte[] {0, (byte) 0xd8, 'a', 0}, "content-type", "text/plain; charset=utf-16le"))
                .code());
    }

    // ------------------------------------------------------------------ multipart

    @Test
    void eachMultipartPartIsReadByItsOwnHeaders() {
        String b = "XyZ-b0undary";
        byte[] body = multipart(b,
                part("Content-Disposition: form-data; name=\"text\"", utf8("plain " + AWS)),
                part("Content-Disposition: form-data; name=\"json\"\r\nContent-Type: application/json",
                        utf8("{\"c\":\"keys:\\n" + OPENAI + "\"}")),
                part("Content-Disposition: form-data; name=\"b64\"\r\nContent-Transfer-Encoding: base64",
                        utf8(Base64.getMimeEncoder().encodeToString(utf8("key " + AWS + " in base64")))),
                part("Content-Disposition: form-data; name=\"qp\"\r\nContent-Transfer-Encoding: quoted-printable",
                        utf8("=73k-proj-Ab3dE6gH9jK2mN5=\r\npQ8sT1vW4yZ7cF0iL caf=C3=A9")),
                part("Content-Disposition: form-data; name=\"u16\"\r\nContent-Type: text/plain; charset=utf-16le",
                        ("x " + AWS).getBytes(StandardCharsets.UTF_16LE)),
                part("Content-Disposition: form-data; name=\"clean\"", utf8("nothing here")));
        String[] type = {"content-type", "multipart/form-data; boundary=\"" + b + "\""};
        HttpRequestResult r = redact(body, type);
        byte[] out = redacted(r);
        byte[] expected = multipart(b,
                part("Content-Disposition: form-data; name=\"text\"", utf8("plain [REDACTED:aws_access_key_id]")),
                part("Content-Disposition: form-data; name=\"json\"\r\nContent-Type: application/json",
                        utf8("{\"c\":\"keys:\\n[REDACTED:openai_api_key]\"}")),
                part("Content-Disposition: form-data; name=\"b64\"\r\nContent-Transfer-Encoding: base64",
                        utf8(Base64.getMimeEncoder().encodeToString(
                                utf8("key [REDACTED:aws_access_key_id] in base64")))),
                part("Content-Disposition: form-data; name=\"qp\"\r\nContent-Transfer-Encoding: quoted-printable",
                        utf8("[REDACTED:openai_api_key] caf=C3=A9")),
                part("Content-Disposition: form-data; name=\"u16\"\r\nContent-Type: text/plain; charset=utf-16le",
                        "x [REDACTED:aws_access_key_id]".getBytes(StandardCharsets.UTF_16LE)),
                part("Content-Disposition: form-data; name=\"clean\"", utf8("nothing here")));
        assertEquals(new String(expected, StandardCharsets.ISO_8859_1), new String(out, StandardCharsets.ISO_8859_1));
        assertEquals(List.of(new Finding("secret.openai_api_key", "OpenAI API key", 2, "", "high"),
                new Finding("secret.aws_access_key_id", "AWS access key ID", 3, "", "high")), r.findings());
        deniedFor(deny(body, type), "openai_api_key", "aws_access_key_id");
    }

    @Test
    void aMultipartPartThatDoesNotDecodeMakesTheBodyUndecodable() {
        String b = "bb";
        String[] type = {"content-type", "multipart/form-data; boundary=bb"};
        byte[] png = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', (byte) 0xff, (byte) 0xfe, 0};
        assertEquals("body_not_utf8", assertThrows(MiddlewareException.class, () -> redact(multipart(b,
                part("Content-Type: image/png", png)), type)).code());
        assertEquals("body_undecodable", assertThrows(MiddlewareException.class, () -> redact(multipart(b,
                part("Content-Transfer-Encoding: x-uuencode", utf8("begin 644"))), type)).code());
        assertEquals("body_undecodable", assertThrows(MiddlewareException.class, () -> redact(multipart(b,
                part("Content-Type: application/json", utf8("{\"a\":'single'}"))), type)).code());
        assertEquals("body_undecodable", assertThrows(MiddlewareException.class, () -> redact(
                utf8("--bb\r\n\r\nno closing delimiter " + AWS), type)).code());
        assertEquals("body_undecodable", assertThrows(MiddlewareException.class, () -> redact(
                utf8("--bb\r\n\r\nx\r\n--bb--"), "content-type", "multipart/form-data")).code());
    }

    static byte[] part(String headers, byte[] content) {
        return concat(utf8(headers + "\r\n\r\n"), content);
    }

    static byte[] multipart(String boundary, byte[]... parts) {
        byte[] out = utf8("preamble\r\n");
        for (byte[] p : parts) {
            out = concat(out, utf8("--" + boundary + "\r\n"), p, utf8("\r\n"));
        }
        return concat(out, utf8("--" + boundary + "--\r\nepilogue"));
    }

    static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int o = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, o, p.length);
            o += p.length;
        }
        return out;
    }

    // ------------------------------------------------------------------ undecodable

    @Test
    void aBodyDeclaredAsJsonThatIsNotJsonIsUndecodable() {
        for (String body : new String[] {"{\"a\":1,}", "{'a':1}", "{\"a\":\"\\x41\"}", "{\"a\":1} {", "// c\n{}",
            "{\"a\":\"unterminated", "[1,2", "nul"}) {
            MiddlewareException e = assertThrows(MiddlewareException.class,
                    () -> redact(utf8(body), "content-type", "application/json"), body);
            assertEquals("body_undecodable", e.code(), body);
        }
        // the same text without a JSON media type is plain text
        assertEquals(HttpRequestResult.allow(), redact(utf8("{'a':1}"), "content-type", "text/plain"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"gzip", "deflate", "br", "x-custom", "gzip, identity"})
    void aContentCodingNobodyDecodedIsUndecodable(String coding) {
        MiddlewareException e = assertThrows(MiddlewareException.class,
                () -> redact(utf8("{}"), "content-encoding", coding, "content-type", "application/json"));
        assertEquals("body_undecodable", e.code());
        assertEquals(HttpRequestResult.allow(), redact(utf8("{}"), "content-encoding", "identity"));
    }

    @Test
    void twoDifferentContentTypesAreUndecodable() {
        assertEquals("body_undecodable", assertThrows(MiddlewareException.class, () -> redact(utf8("a=b"),
                "content-type", "text/plain", "content-type", "application/x-www-form-urlencoded")).code());
    }

    @Test
    void plainTextWithLiteralEscapesBreaksTokensThere() {
        byte[] out = redacted(redact(utf8("export A=1\\n" + AWS + "\\t" + OPENAI), "content-type", "text/plain"));
        assertEquals("export A=1\\n[REDACTED:aws_access_key_id]\\t[REDACTED:openai_api_key]",
                new String(out, StandardCharsets.UTF_8));
    }

    @Test
    void bodiesWithoutSecretsAreAllowedUntouchedWhateverTheirEncoding() {
        assertEquals(HttpRequestResult.allow(), redact(utf8("{\"a\":\"x\\ny\\u00e9\"}"), "content-type",
                "application/json"));
        assertEquals(HttpRequestResult.allow(), redact(utf8("a=b%20c&d=e+f"), "content-type",
                "application/x-www-form-urlencoded"));
        assertTrue(redact("{\"a\":\"b\"}".getBytes(StandardCharsets.UTF_16LE), "content-type",
                "application/json; charset=utf-16le").body().isEmpty());
    }
}
