package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.internal.ExtendedCharset;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A charset given as an RFC 2231 extended parameter ({@code charset*}, continuations {@code charset*N} and
 * {@code charset*N*}) is the declared charset (attacker pass 4, finding C1b: Django and Python's {@code email} read
 * it): a body in it is read in it, one next to a different {@code charset} is a repeated parameter, and one that
 * cannot be decoded is undecodable.
 */
class ExtendedCharsetTest {
    private static final JsonObject DENY = Json.createObjectBuilder().add("mode", "deny").build();
    private static final String KEY = DecodedBodyTest.OPENAI;

    private final RegexProvider provider = new RegexProvider();

    @ParameterizedTest
    @ValueSource(strings = {"text/plain; charset*=utf-8''utf-16", "text/plain; charset*=''utf-16le",
        "text/plain; CHARSET*=UTF-8'en'utf%2D16", "text/plain; charset*0=utf; charset*1=-16",
        "text/plain; charset*1=16; charset*0*=utf-8''utf-", "text/plain; charset*=\"utf-8''utf-16\"",
        "text/plain; charset=utf-16; charset*=utf-8''UTF-16"})
    void theExtendedFormIsTheDeclaredCharset(String type) {
        MediaType t = MediaType.parse(type);
        assertNull(t.unclear(), type);
        assertEquals("utf-16", t.charset().toLowerCase(java.util.Locale.ROOT).replace("le", ""), type);
    }

    @ParameterizedTest
    @ValueSource(strings = {"text/plain; charset=utf-8; charset*=utf-8''utf-16",
        "text/plain; charset*=utf-8''utf-16; charset=utf-8", "text/plain; charset*=''utf-8; charset*=''utf-16",
        "text/plain; charset=utf-8; charset*0=utf; charset*1=-16"})
    void anExtendedFormNamingAnotherCharsetIsARepeat(String type) {
        assertEquals(MediaType.REPEATED, MediaType.parse(type).unclear(), type);
    }

    @ParameterizedTest
    @ValueSource(strings = {"text/plain; charset*=utf-16", "text/plain; charset*=utf-8'utf-16",
        "text/plain; charset*=''", "text/plain; charset*=''utf%2", "text/plain; charset*=''utf%zz16",
        "text/plain; charset*=''utf%0016", "text/plain; charset*=''utf%C3%A916",
        "text/plain; charset*=''utf%EF%BC%9116",
        "text/plain; charset*=''utf%\uff11\uff10", "text/plain; charset*0=utf; charset*2=-16",
        "text/plain; charset*1=utf; charset*2=-16", "text/plain; charset*0=utf; charset*0*=''-16",
        "text/plain; charset*01=utf", "text/plain; charset*x=utf-16", "text/plain; charset*=''utf-16; charset*0=x",
        "text/plain; charset*0=\"utf 16\"", "text/plain; charset**=''utf-16"})
    void anExtendedFormThatCannotBeDecodedIsUnclear(String type) {
        MediaType t = MediaType.parse(type);
        assertNotNull(t.unclear(), type);
        assertFalse(t.unclear().contains("utf"), "the value is not echoed");
    }

    /** The attacker's inputs: a key in UTF-16LE without a byte order mark under the extended form. */
    @ParameterizedTest
    @ValueSource(strings = {"text/plain; charset*=utf-8''utf-16", "text/plain; charset*=''utf-16le",
        "text/plain; charset*=''utf-32le", "application/x-www-form-urlencoded; charset*=utf-8''utf-16",
        "text/plain; charset*0=utf; charset*1=-16le", "text/plain; charset=utf-8; charset*=utf-8''utf-16",
        "text/plain; charset*=utf-8''utf-7"})
    void aKeyInTheExtendedCharsetIsCaught(String type) {
        Charset written = type.contains("32") ? Charset.forName("UTF-32LE") : StandardCharsets.UTF_16LE;
        byte[] body = ((type.contains("form") ? "a=" : "note ") + KEY).getBytes(written);
        for (JsonObject config : List.of(DENY, JsonObject.EMPTY_JSON_OBJECT)) {
            HttpRequestResult r;
            try {
                r = DecodedBodyTest.evaluate(provider, config, body, "content-type", type);
            } catch (MiddlewareException e) {
                assertTrue(Set.of(RegexProvider.UNDECODABLE_CODE, RegexProvider.NOT_UTF8_CODE).contains(e.code()),
                        type + ": " + e.code());
                continue; // refused: fail_closed forwards nothing
            }
            if (config == DENY) {
                assertEquals(Decision.DENY, r.decision(), type);
            } else {
                byte[] out = r.body().orElseThrow(() -> new AssertionError(type + " is forwarded unchanged"))
                        .toByteArray();
                assertFalse(new String(out, written).contains(KEY.substring(8)), type);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"text/plain; charset*=''utf-16; charset=utf-8", "text/plain; charset*=utf-16",
        "text/plain; charset*0=utf; charset*2=-16"})
    void anUnclearExtendedFormIsUndecodableInARequestAndInAPart(String type) {
        byte[] body = ("note " + KEY).getBytes(StandardCharsets.UTF_16LE);
        MiddlewareException e = assertThrows(MiddlewareException.class,
                () -> DecodedBodyTest.evaluate(provider, DENY, body, "content-type", type));
        assertEquals(RegexProvider.UNDECODABLE_CODE, e.code());
        byte[] multipart = ("--b0und\r\nContent-Type: " + type + "\r\n\r\nhello\r\n--b0und--\r\n")
                .getBytes(StandardCharsets.UTF_8);
        assertEquals(RegexProvider.UNDECODABLE_CODE, assertThrows(MiddlewareException.class,
                () -> DecodedBodyTest.evaluate(provider, DENY, multipart, "content-type",
                        "multipart/form-data; boundary=b0und")).code(), "a part's");
    }

    @Provide
    Arbitrary<String> names() {
        return Arbitraries.of("utf-16", "UTF-16LE", "utf-32be", "utf-8", "us-ascii", "ISO-8859-15", "windows-1252",
                "utf-7", "x-nobody", "ANSI_X3.4-1968");
    }

    /**
     * Any split of a charset name into continuations, given in any order, each plain or extended (percent-encoding
     * any of its characters, the first with a {@code charset'language'} prefix), reads as that name.
     */
    @Property(tries = 400)
    void continuationsInAnyOrderReadAsTheName(@ForAll("names") String name, @ForAll @IntRange(max = 10_000) int seed) {
        java.util.Random rnd = new java.util.Random(seed);
        List<String> params = new ArrayList<>();
        int at = 0;
        for (int n = 0; at < name.length(); n++) {
            int end = at + 1 + rnd.nextInt(name.length() - at);
            String piece = name.substring(at, end);
            boolean extended = rnd.nextBoolean();
            StringBuilder v = new StringBuilder(extended && n == 0 ? (rnd.nextBoolean() ? "utf-8'en'" : "''") : "");
            for (char c : piece.toCharArray()) {
                v.append(extended && rnd.nextBoolean() ? String.format("%%%02X", (int) c) : String.valueOf(c));
            }
            params.add((rnd.nextBoolean() ? "charset*" : "CHARSET*") + n + (extended ? "*" : "") + "=" + v);
            at = end;
        }
        Collections.shuffle(params, rnd);
        String type = "text/plain; " + String.join("; ", params);
        MediaType t = MediaType.parse(type);
        assertNull(t.unclear(), type);
        assertEquals(name, t.charset(), type);
        assertEquals(MediaType.REPEATED, MediaType.parse(type + "; charset=x" + name).unclear(), type);
    }
}
