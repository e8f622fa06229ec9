package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpRequestResult;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Issue 17's law: for random text with keys at random positions, encoded as JSON (with random escape choices),
 * form-urlencoded (with random percent-encoding choices) and re-encoded as UTF-16 or UTF-32, the redacted body is
 * exactly the input with each key's encoded bytes replaced by its placeholder in the body's encoding: it decodes to
 * text without a key, and every other byte is unchanged. (Compressed bodies are decoded by the supervisor before the
 * stage runs; that property is in the engine's tests.)
 */
class DecodedBodyPropertyTest {
    private final RegexProvider provider = new RegexProvider();
    private static final JsonObject DENY = Json.createObjectBuilder().add("mode", "deny").build();

    /** A piece of the text: filler, or a key (by kind). */
    record Piece(String text, String key) {
    }

    /** Filler that cannot form or touch a key: no uppercase letters, no '-' or '_'. */
    @Provide
    Arbitrary<List<Piece>> texts() {
        Arbitrary<Piece> filler = Arbitraries.strings().withCharRange('a', 'z').withCharRange('0', '9')
                .withChars(' ', '\n', '\t', '\r', '"', '\\', '/', '&', '=', '%', '+', '.', ',', ':', '{', '}', '[',
                        '\u0000', '\u001f', '\u00e9', '\u4e2d', '\u2028')
                .ofMaxLength(24).map(s -> new Piece(s, null));
        Arbitrary<Piece> emoji = Arbitraries.of("\uD83D\uDE00", "\uD834\uDD1E").map(s -> new Piece(s, null));
        Arbitrary<Piece> key = Arbitraries.of(Samples.LEGACY_IDS).map(k -> new Piece(Samples.ONE_OF_EACH.get(k), k));
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(5, filler), net.jqwik.api.Tuple.of(1, emoji),
                net.jqwik.api.Tuple.of(2, key)).list().ofMaxSize(12).map(DecodedBodyPropertyTest::separated);
    }

    /** Puts a separator before and after each key, so it is a whole token. */
    private static List<Piece> separated(List<Piece> pieces) {
        List<Piece> out = new ArrayList<>();
        String[] seps = {" ", "\n", "\t", ":", "\"", ",", "="};
        int s = 0;
        for (Piece p : pieces) {
            if (p.key() != null) {
                out.add(new Piece(seps[s++ % seps.length], null));
                out.add(p);
                out.add(new Piece(seps[s++ % seps.length], null));
            } else {
                out.add(p);
            }
        }
        return out;
    }

    private static String plain(List<Piece> pieces, boolean redacted) {
        StringBuilder b = new StringBuilder();
        for (Piece p : pieces) {
            b.append(redacted && p.key() != null ? Samples.placeholder(p.key()) : p.text());
        }
        return b.toString();
    }

    // ------------------------------------------------------------------ encoders with random choices

    private static String jsonEscape(String s, Random r) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            int choice = r.nextInt(4);
            if (Character.isHighSurrogate(c) && i + 1 < s.length()) {
                // a pair is escaped whole or kept whole (a lone raw surrogate is not text)
                b.append(choice == 0 ? String.format("\\u%04x\\u%04x", (int) c, (int) s.charAt(i + 1))
                        : s.substring(i, i + 2));
                i++;
                continue;
            }
            if (choice == 0) {
                b.append(String.format(r.nextBoolean() ? "\\u%04x" : "\\u%04X", (int) c));
                continue;
            }
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\t' -> b.append("\\t");
                case '\r' -> b.append("\\r");
                case '/' -> b.append(choice == 1 ? "\\/" : "/");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.toString();
    }

    private static String formEncode(String s, Random r) {
        StringBuilder b = new StringBuilder();
        for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
            int c = x & 0xff;
            boolean unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '*' || c == '-' || c == '.' || c == '_';
            if (unreserved && r.nextInt(4) != 0) {
                b.append((char) c);
            } else if (c == ' ' && r.nextBoolean()) {
                b.append('+');
            } else {
                b.append('%').append(String.format(r.nextBoolean() ? "%02X" : "%02x", c));
            }
        }
        return b.toString();
    }

    /** The JSON body: {"k":"<pieces>","n":1}, each piece escaped with random choices; keys as they are redacted. */
    private static String[] jsonBodies(List<Piece> pieces, long seed) {
        Random r = new Random(seed);
        StringBuilder in = new StringBuilder("{\"k\":\"");
        StringBuilder out = new StringBuilder("{\"k\":\"");
        for (Piece p : pieces) {
            String e = jsonEscape(p.text(), r);
            in.append(e);
            out.append(p.key() != null ? Samples.placeholder(p.key()) : e);
        }
        in.append("\",\"n\":1}");
        out.append("\",\"n\":1}");
        return new String[] {in.toString(), out.toString()};
    }

    @Property(tries = 400)
    void jsonBodiesAreRedactedExactlyAtTheirKeys(@ForAll("texts") List<Piece> pieces, @ForAll long seed) {
        String[] bodies = jsonBodies(pieces, seed);
        check(bodies[0].getBytes(StandardCharsets.UTF_8), bodies[1].getBytes(StandardCharsets.UTF_8), pieces,
                "application/json");
        JsonObject parsed = Json.createReader(new java.io.StringReader(bodies[1])).readObject();
        assertEquals(plain(pieces, true), parsed.getString("k"), "the redacted JSON decodes to the redacted text");
    }

    @Property(tries = 400)
    void formBodiesAreRedactedExactlyAtTheirKeys(@ForAll("texts") List<Piece> pieces, @ForAll long seed) {
        Random r = new Random(seed);
        StringBuilder in = new StringBuilder("first=1&k=");
        StringBuilder out = new StringBuilder("first=1&k=");
        for (Piece p : pieces) {
            String e = formEncode(p.text(), r);
            in.append(e);
            out.append(p.key() != null ? new String(FormText.encode(ascii(Samples.placeholder(p.key()))),
                    StandardCharsets.US_ASCII) : e);
        }
        in.append("&last=2");
        out.append("&last=2");
        check(ascii(in.toString()), ascii(out.toString()), pieces, "application/x-www-form-urlencoded");
        assertEquals(plain(pieces, true), DecodedBodyTest.form(out.toString()).get("k"));
    }

    @Property(tries = 300)
    void utf16And32JsonBodiesAreRedactedExactlyAtTheirKeys(@ForAll("texts") List<Piece> pieces, @ForAll long seed,
                                                           @ForAll("wide") String charset, @ForAll boolean declared) {
        String[] bodies = jsonBodies(pieces, seed);
        Charset cs = Charset.forName(charset);
        byte[] bom = declared ? new byte[0] : "\uFEFF".getBytes(cs);
        byte[] in = DecodedBodyTest.concat(bom, bodies[0].getBytes(cs));
        byte[] out = DecodedBodyTest.concat(bom, bodies[1].getBytes(cs));
        check(in, out, pieces, declared ? "application/json; charset=" + charset : "application/json");
        JsonObject parsed = Json.createReader(new InputStreamReader(new ByteArrayInputStream(bodies[1]
                .getBytes(cs)), cs)).readObject();
        assertEquals(plain(pieces, true), parsed.getString("k"));
    }

    @Provide
    Arbitrary<String> wide() {
        return Arbitraries.of("UTF-16LE", "UTF-16BE", "UTF-32LE", "UTF-32BE");
    }

    private void check(byte[] in, byte[] expected, List<Piece> pieces, String type) {
        HttpRequestResult r = DecodedBodyTest.evaluate(provider, JsonObject.EMPTY_JSON_OBJECT, in, "content-type",
                type);
        long keys = pieces.stream().filter(p -> p.key() != null).count();
        assertEquals(Decision.ALLOW, r.decision());
        if (keys == 0) {
            assertEquals(HttpRequestResult.allow(), r, "nothing to redact: the body is not replaced");
            return;
        }
        byte[] got = r.body().orElseThrow().toByteArray();
        assertEquals(hex(expected), hex(got), "only each key's bytes are replaced, by its encoded placeholder");
        assertEquals(Long.toString(keys), r.metadata().get("matches"));
        HttpRequestResult d = DecodedBodyTest.evaluate(provider, DENY, in, "content-type", type);
        assertEquals(Decision.DENY, d.decision());
        for (Piece p : pieces) {
            if (p.key() != null) {
                assertFalse(new String(got, StandardCharsets.ISO_8859_1).contains(p.text().substring(0, 12)));
            }
        }
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static String hex(byte[] b) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte x : b) {
            out.writeBytes(x >= 0x20 && x < 0x7f && x != '%' ? new byte[] {x}
                    : String.format("%%%02X", x & 0xff).getBytes(StandardCharsets.US_ASCII));
        }
        return out.toString(StandardCharsets.US_ASCII);
    }
}
