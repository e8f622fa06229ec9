package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.internal.HeaderParameters;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A key hidden in a multipart part header's parameters, written as receivers decode them (attacker pass 8, P8-1):
 * denied in deny mode; in redact mode the parameter's values are replaced whole and nothing decodes to the key.
 */
class PartHeaderParamsTest {
    static final String KEY = DecodedBodyTest.OPENAI;
    private static final JsonObject DENY = Json.createObjectBuilder().add("mode", "deny").build();
    private final RegexProvider provider = new RegexProvider();

    static String pct(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            s.append(String.format("%%%02X", x & 0xff));
        }
        return s.toString();
    }

    static List<String> dispositions() {
        byte[] u8 = KEY.getBytes(StandardCharsets.UTF_8);
        return List.of(
                "form-data; name=\"f\"; filename*=UTF-8''" + pct(u8),
                "form-data; name=\"f\"; filename*=UTF-16LE''" + pct(KEY.getBytes(StandardCharsets.UTF_16LE)),
                "form-data; name=\"f\"; filename*=IBM037''" + pct(KEY.getBytes(Charset.forName("IBM037"))),
                "form-data; name=\"f\"; filename*0=\"" + KEY.substring(0, 17) + "\"; filename*1=\""
                        + KEY.substring(17) + "\"",
                "form-data; name=\"f\"; filename*0*=UTF-8''" + pct(KEY.substring(0, 9).getBytes(StandardCharsets.UTF_8))
                        + "; filename*1*=" + pct(KEY.substring(9).getBytes(StandardCharsets.UTF_8)),
                "form-data; name*=UTF-8''" + pct(u8),
                "form-data; name=\"f\"; filename=\"=?utf-8?B?" + Base64.getEncoder().encodeToString(u8) + "?=\"",
                "form-data; name=\"f\"; filename=\"=?utf-8?Q?" + pct(u8).replace('%', '=') + "?=\"",
                "form-data; name=\"f\"; filename=\"" + KEY.replaceAll("(.)", "\\\\$1") + "\"",
                "form-data; name=\"f\";\r\n filename*0=\"" + KEY.substring(0, 17) + "\";\r\n\tfilename*1=\""
                        + KEY.substring(17) + "\"");
    }

    private static byte[] body(String disposition) {
        return ("--b0und\r\nContent-Disposition: " + disposition + "\r\nContent-Type: text/plain\r\n\r\nhello\r\n"
                + "--b0und--\r\n").getBytes(StandardCharsets.ISO_8859_1);
    }

    private HttpRequestResult run(JsonObject config, byte[] body) {
        return DecodedBodyTest.evaluate(provider, config, body, "content-type",
                "multipart/form-data; boundary=b0und");
    }

    @Test
    void deniedInDenyMode() {
        for (String d : dispositions()) {
            HttpRequestResult r = run(DENY, body(d));
            assertEquals(Decision.DENY, r.decision(), d);
            assertEquals("secret_detected", r.reasonCode().orElseThrow(), d);
        }
    }

    @Test
    void redactedWholeInRedactMode() {
        for (String d : dispositions()) {
            HttpRequestResult r = run(JsonObject.EMPTY_JSON_OBJECT, body(d));
            assertEquals(Decision.ALLOW, r.decision(), d);
            String out = new String(r.body().orElseThrow(() -> new AssertionError("not redacted: " + d))
                    .toByteArray(), StandardCharsets.ISO_8859_1);
            assertFalse(out.contains(KEY.substring(8)), out);
            String field = out.substring(out.indexOf(':') + 1, out.indexOf("\r\nContent-Type")).replace("\r\n", "");
            HeaderParameters.readings(field, false).byName().values().forEach(list -> list.forEach(
                    v -> assertFalse(v.contains(KEY.substring(8)), () -> d + " -> " + out)));
            assertEquals(Decision.ALLOW, run(DENY, out.getBytes(StandardCharsets.ISO_8859_1)).decision(), out);
        }
    }

    @Test
    void cleanEncodedParametersPass() {
        HttpRequestResult r = run(DENY,
                body("form-data; name*0=\"a\"; name*1=\"b\"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf"));
        assertEquals(Decision.ALLOW, r.decision());
    }

    /**
     * A part header parameter or encoded word in a charset that cannot be decoded (attacker pass 7, P9-4 / P9-6:
     * UTF-7, unicode_escape, which Python's email reads; an unknown name) is not scanned as UTF-8 and passed: the part
     * is undecodable, the stage fails with {@code body_undecodable} (its on_error refuses under fail_closed, audited).
     */
    @Test
    void aParameterInACharsetThatCannotBeDecodedFailsTheStage() {
        for (String d : List.of("form-data; name=\"f\"; filename*=UTF-7''+AHMAawAt-",
                "form-data; name=\"f\"; filename*=unicode_escape''%5Cu0073k",
                "form-data; name*=x-unknown''abc", "form-data; name=\"f\"; filename*0*=utf_7''x; filename*1=y",
                "form-data; name=\"=?UTF-7?B?K0FITUFhd0F0LQ==?=\"",
                "form-data; name=\"f\"; filename=\"=?raw_unicode_escape?Q?x?=\"")) {
            for (JsonObject config : List.of(DENY, JsonObject.EMPTY_JSON_OBJECT)) {
                MiddlewareException e = assertThrows(MiddlewareException.class, () -> run(config, body(d)), d);
                assertEquals(RegexProvider.UNDECODABLE_CODE, e.code(), d);
                assertTrue(e.getMessage().contains("charset that cannot be decoded"), e::getMessage);
            }
        }
        assertEquals(Decision.ALLOW, run(DENY, body("form-data; name=\"f\"; filename*=Shift_JIS''%82%A0")).decision());
    }

    /**
     * Attacker pass 8, P10-3: a token in a part header parameter in ISO-2022-JP-2 / ISO-2022-KR with an escape the
     * JDK rejects (Python's codecs accept it and read the token) fails the stage as undecodable, not passed.
     */
    @Test
    void escapesTheCharsetRejectsFailTheStage() {
        String rest = "R8xq2LmT5vW9zK3nB7cF1hJ4pD6sG0aYeU2i";
        for (String d : List.of("form-data; name=\"f\"; filename*=iso-2022-jp-2''ghp_%1B%2E%41" + rest,
                "form-data; name=\"f\"; filename*=iso-2022-jp-2''ghp_%1B%24%41%1B%28%42" + rest,
                "form-data; name=\"f\"; filename*=iso-2022-kr''%1B%24%29%43ghp_%1B%28%42" + rest)) {
            MiddlewareException e = assertThrows(MiddlewareException.class, () -> run(DENY, body(d)), d);
            assertEquals(RegexProvider.UNDECODABLE_CODE, e.code(), d);
        }
        assertEquals(Decision.ALLOW, run(DENY, body("form-data; name=\"f\"; filename*=iso-2022-jp''"
                + "%1B%24%42%46%7C%4B%5C%1B%28%42.txt")).decision());
        assertEquals(Decision.DENY, run(DENY, body("form-data; name=\"f\"; filename*=iso-2022-jp''ghp_%1B%28%42"
                + rest)).decision());
    }
}
