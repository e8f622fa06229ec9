package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareException;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.GenerationMode;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Whatever charset a body declares, a key it carries is caught: denied, redacted so that no reading of the result
 * holds it, or the body refused as undecodable (a stage failure, so {@code fail_closed} refuses it). Never allowed
 * unchanged. Over every charset name the JDK knows (canonical names and aliases), on {@code text/plain}, JSON and
 * form bodies: a key written in ASCII bytes (what a reader that ignores the declared charset reads), and the key
 * written in the declared charset where it can encode it. A second property mixes both writings at random in bodies
 * declared UTF-16 or UTF-32.
 */
class DeclaredCharsetPropertyTest {
    private static final JsonObject DENY = Json.createObjectBuilder().add("mode", "deny").build();
    private static final String KEY = Samples.ONE_OF_EACH.get("openai_api_key");
    /** The part of the key that no reading may still hold after redaction. */
    private static final String KEY_CORE = KEY.substring(8, 30);
    private static final Set<String> REFUSALS = Set.of(RegexProvider.UNDECODABLE_CODE, RegexProvider.NOT_UTF8_CODE,
            RegexProvider.REDACTION_INCOMPLETE_CODE);
    private static final List<String> MEDIA_TYPES = List.of("text/plain", "application/json",
            "application/x-www-form-urlencoded");

    private final RegexProvider provider = new RegexProvider();

    @Provide
    Arbitrary<String> charsetNames() {
        Set<String> names = new TreeSet<>();
        for (Charset cs : Charset.availableCharsets().values()) {
            names.add(cs.name());
            names.addAll(cs.aliases());
        }
        return Arbitraries.of(names);
    }

    @Provide
    Arbitrary<String> mediaTypes() {
        return Arbitraries.of(MEDIA_TYPES);
    }

    /** {@return the body of a media type carrying {@code key}, with one extra space when {@code odd}} */
    static String body(String mediaType, String key, boolean odd) {
        String pad = odd ? " " : "";
        return switch (mediaType) {
            case "application/json" -> "{\"note\":\"" + key + "\"}" + pad;
            case "application/x-www-form-urlencoded" -> "a=1&note=" + key + pad;
            default -> "note " + key + " end" + pad;
        };
    }

    @Property(generation = GenerationMode.EXHAUSTIVE, tries = 20_000)
    void aKeyIsCaughtWhateverTheDeclaredCharset(@ForAll("charsetNames") String name,
            @ForAll("mediaTypes") String mediaType, @ForAll boolean deny, @ForAll boolean odd) {
        Charset cs = Charset.forName(name);
        String contentType = mediaType + "; charset=" + name;
        String text = body(mediaType, KEY, odd);
        // the key in ASCII bytes, as a reader that ignores the declared charset reads it
        caught(text.getBytes(StandardCharsets.US_ASCII), contentType, deny, cs, "ASCII bytes under " + name);
        // the key written in the declared charset
        if (cs.canEncode() && cs.newEncoder().canEncode(text)) {
            caught(text.getBytes(cs), contentType, deny, cs, "the key in " + name);
        }
    }

    /**
     * One piece of a mixed body: text written in the declared charset (starting at a whole code unit, where a reader
     * of the charset reads it) or as ASCII bytes.
     */
    record Piece(String text, boolean inCharset) {
    }

    @Provide
    Arbitrary<String> wideCharsets() {
        return Arbitraries.of("UTF-16", "UTF-16LE", "UTF-16BE", "UTF-32", "UTF-32LE", "UTF-32BE", "utf-16le",
                "UTF16", "utf-32be");
    }

    @Provide
    Arbitrary<List<Piece>> pieces() {
        Arbitrary<String> filler = Arbitraries.strings().withCharRange('a', 'z').withChars(' ', '=', '&', '"',
                '\u4e2d', '\u6b73', '\u00e9').ofMaxLength(9);
        Arbitrary<String> text = Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(4, filler),
                net.jqwik.api.Tuple.of(1, Arbitraries.just(" " + KEY + " ")));
        return net.jqwik.api.Combinators.combine(text, Arbitraries.of(true, false)).as(Piece::new).list()
                .ofMinSize(1).ofMaxSize(8);
    }

    @Property(tries = 1500)
    void aKeyInEitherWritingOfAWideCharsetBodyIsCaught(@ForAll("wideCharsets") String name,
            @ForAll("mediaTypes") String mediaType, @ForAll("pieces") List<Piece> pieces, @ForAll boolean deny) {
        Charset cs = Charset.forName(name);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        boolean key = false;
        int unit = name.toLowerCase(java.util.Locale.ROOT).contains("32") ? 4 : 2;
        for (Piece p : pieces) {
            while (p.inCharset() && out.size() % unit != 0) {
                out.write(' '); // a reader of the charset reads whole code units from the start
            }
            Charset w = p.inCharset() ? cs : StandardCharsets.ISO_8859_1;
            String t = p.inCharset() ? p.text() : p.text().replaceAll("[^\\x00-\\x7f]", "x");
            out.writeBytes(t.getBytes(w));
            key |= t.contains(KEY);
        }
        byte[] body = out.toByteArray();
        String contentType = mediaType + "; charset=" + name;
        if (key) {
            caught(body, contentType, deny, cs, "mixed " + name);
        } else {
            outcome(body, contentType, deny); // anything but a crash; nothing to find
        }
    }

    private Object outcome(byte[] body, String contentType, boolean deny) {
        try {
            return DecodedBodyTest.evaluate(provider, deny ? DENY : JsonObject.EMPTY_JSON_OBJECT, body,
                    "content-type", contentType);
        } catch (MiddlewareException e) {
            assertTrue(REFUSALS.contains(e.code()), e.code());
            assertFalse(e.getMessage().contains(KEY_CORE), "the refusal does not echo the key");
            return e;
        }
    }

    private void caught(byte[] body, String contentType, boolean deny, Charset cs, String what) {
        Object o = outcome(body, contentType, deny);
        if (o instanceof MiddlewareException) {
            return; // refused: fail_closed answers 403 and forwards nothing
        }
        HttpRequestResult r = (HttpRequestResult) o;
        if (deny) {
            assertEquals(Decision.DENY, r.decision(), what + " is denied");
            assertEquals(RegexProvider.DENY_CODE, r.reasonCode().orElseThrow());
            return;
        }
        assertEquals(Decision.ALLOW, r.decision(), what);
        byte[] out = r.body().orElseThrow(() -> new AssertionError(what + " is allowed unchanged")).toByteArray();
        for (Charset reading : readings(cs)) {
            assertFalse(new String(out, reading).contains(KEY_CORE), what + ": no key in its " + reading
                    + " reading");
        }
    }

    private static List<Charset> readings(Charset declared) {
        List<Charset> out = new ArrayList<>(List.of(StandardCharsets.ISO_8859_1, StandardCharsets.UTF_8));
        out.add(declared);
        return out;
    }
}
