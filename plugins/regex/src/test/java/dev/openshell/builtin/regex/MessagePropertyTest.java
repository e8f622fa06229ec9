package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpRequestResult;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Attacker pass 9, P11-6, as laws over message entities ({@link MessageText}): a key in an encoded word of any header
 * field at any position (split over any number of words, folded or not), in a quoted-printable body with soft breaks
 * anywhere and any choice of escaped characters, or in a base64 body with any line length, is denied; and redacted so
 * that the body, decoded again, holds the placeholder and no key.
 */
class MessagePropertyTest {
    private static final String KEY = MessageBodyTest.KEY;
    private static final JsonObject DENY = Json.createObjectBuilder().add("mode", "deny").build();
    private final RegexProvider provider = new RegexProvider();

    @Provide
    Arbitrary<String> types() {
        return Arbitraries.of("message/rfc822", "message/global", "application/mbox", "multipart/related");
    }

    @Provide
    Arbitrary<List<String>> fields() {
        Arbitrary<String> name = Arbitraries.of("From", "To", "Cc", "Subject", "X-Note", "Comments", "Keywords");
        Arbitrary<String> value = Arbitraries.strings().withCharRange('a', 'z').withChars(' ', '@', '.')
                .ofMinLength(1).ofMaxLength(20);
        return net.jqwik.api.Combinators.combine(name, value).as((n, v) -> n + ": " + v).list().ofMaxSize(6);
    }

    /** {@return the message in a body of that type: as it is, after a {@code From } line, or as a part} */
    private static String wrap(String type, String message) {
        return switch (type) {
            case "application/mbox" -> "From a@x.test Mon Dec  7 06:00:00 2026\n" + message;
            case "multipart/related" -> "--BB\r\nContent-Type: application/json\r\n\r\n{}\r\n--BB\r\n"
                    + "Content-Type: message/rfc822\r\n\r\n" + message + "\r\n--BB--\r\n";
            default -> message;
        };
    }

    private HttpRequestResult run(JsonObject config, String type, String body) {
        String header = type.equals("multipart/related") ? "multipart/related; boundary=BB" : type;
        return DecodedBodyTest.evaluate(provider, config, body.getBytes(StandardCharsets.ISO_8859_1),
                "content-type", header);
    }

    @Property(tries = 300)
    void aKeyInEncodedWordsOfAnyHeaderFieldIsDenied(@ForAll("types") String type,
            @ForAll("fields") List<String> fields, @ForAll @IntRange(min = 0, max = 6) int at,
            @ForAll @IntRange(min = 1, max = 5) int words, @ForAll boolean q, @ForAll boolean folded,
            @ForAll @IntRange(min = 0, max = 1 << 20) int seed) {
        java.util.Random r = new java.util.Random(seed);
        List<Integer> cuts = new ArrayList<>();
        for (int k = 1; k < words; k++) {
            cuts.add(1 + r.nextInt(KEY.length() - 1));
        }
        cuts.add(0);
        cuts.add(KEY.length());
        cuts.sort(null);
        StringBuilder v = new StringBuilder();
        for (int k = 0; k + 1 < cuts.size(); k++) {
            String piece = KEY.substring(cuts.get(k), cuts.get(k + 1));
            if (piece.isEmpty()) {
                continue;
            }
            String charset = r.nextBoolean() ? "utf-8" : "ISO-8859-1";
            v.append(v.isEmpty() ? "" : folded ? "\r\n " : " ").append("=?").append(charset).append('?')
                    .append(q ? "Q?" + MessageBodyTest.qp(piece) : "B?" + MessageBodyTest.b64(piece)).append("?=");
        }
        List<String> all = new ArrayList<>(fields);
        all.add(Math.min(at, all.size()), (at % 2 == 0 ? "Subject" : "X-Secret") + ": " + v);
        String message = String.join("\r\n", all) + "\r\n\r\nhello\r\n";
        HttpRequestResult denied = run(DENY, type, wrap(type, message));
        assertEquals(Decision.DENY, denied.decision(), message);
        String out = redactedText(run(JsonObject.EMPTY_JSON_OBJECT, type, wrap(type, message)));
        assertTrue(out.contains(": [REDACTED:github_token]\r\n"), out);
        assertFalse(out.contains("=?"), out);
    }

    @Property(tries = 300)
    void aKeyInAQuotedPrintableBodyWithSoftBreaksAnywhereIsDenied(@ForAll("types") String type,
            @ForAll @IntRange(min = 0, max = 1 << 20) int seed, @ForAll boolean lf) {
        java.util.Random r = new java.util.Random(seed);
        String text = "note: " + KEY + " end";
        StringBuilder qp = new StringBuilder();
        for (char c : text.toCharArray()) {
            if (r.nextInt(4) == 0) {
                qp.append(r.nextBoolean() ? "=\r\n" : r.nextBoolean() ? "=\n" : "=\rpad\n");
            }
            qp.append(c == ' ' || r.nextBoolean() ? String.format("=%02X", (int) c) : String.valueOf(c));
        }
        String nl = lf ? "\n" : "\r\n";
        String message = "Subject: s" + nl + "Content-Transfer-Encoding: quoted-printable" + nl + nl + qp + nl;
        assertEquals(Decision.DENY, run(DENY, type, wrap(type, message)).decision(), message);
        String out = redactedText(run(JsonObject.EMPTY_JSON_OBJECT, type, wrap(type, message)));
        String decoded = qpDecode(out);
        assertTrue(decoded.contains("note: [REDACTED:github_token] end"), decoded);
        assertFalse(decoded.contains(KEY.substring(4, 20)), decoded);
    }

    @Property(tries = 200)
    void aKeyInABase64BodyOfAnyLineLengthIsDenied(@ForAll("types") String type,
            @ForAll @IntRange(min = 1, max = 120) int line, @ForAll boolean lf) {
        String b64 = Base64.getEncoder().encodeToString(("text " + KEY + " more").getBytes(StandardCharsets.UTF_8));
        String nl = lf ? "\n" : "\r\n";
        StringBuilder body = new StringBuilder();
        for (int i = 0; i < b64.length(); i += line) {
            body.append(b64, i, Math.min(b64.length(), i + line)).append(nl);
        }
        String message = "Subject: s" + nl + "Content-Transfer-Encoding: base64" + nl + nl + body;
        assertEquals(Decision.DENY, run(DENY, type, wrap(type, message)).decision(), message);
        String out = redactedText(run(JsonObject.EMPTY_JSON_OBJECT, type, wrap(type, message)));
        String marker = "Content-Transfer-Encoding: base64" + nl + nl;
        int start = out.indexOf(marker) + marker.length();
        int end = type.equals("multipart/related") ? out.lastIndexOf("--BB--") : out.length();
        String decoded = new String(Base64.getMimeDecoder().decode(out.substring(start, end).strip()),
                StandardCharsets.UTF_8);
        assertEquals("text [REDACTED:github_token] more", decoded);
    }

    private static String redactedText(HttpRequestResult r) {
        assertEquals(Decision.ALLOW, r.decision());
        return new String(r.body().orElseThrow(() -> new AssertionError("nothing was redacted")).toByteArray(),
                StandardCharsets.ISO_8859_1);
    }

    /** Quoted-printable decoded as Python's {@code binascii.a2b_qp} decodes it. */
    private static String qpDecode(String s) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '=' && i + 1 < s.length() && (s.charAt(i + 1) == '\n' || s.charAt(i + 1) == '\r')) {
                int j = s.indexOf('\n', i + 1);
                i = j < 0 ? s.length() : j;
            } else if (c == '=' && i + 2 < s.length() && Character.digit(s.charAt(i + 1), 16) >= 0
                    && Character.digit(s.charAt(i + 2), 16) >= 0) {
                out.write(Integer.parseInt(s.substring(i + 1, i + 3), 16));
                i += 2;
            } else {
                out.write(c);
            }
        }
        return out.toString(StandardCharsets.ISO_8859_1);
    }
}
