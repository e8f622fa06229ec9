package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * {@link TokenChecks#placeholder}: a token body made half or more of stretches that repeat with a short period, all
 * but a few characters, is a placeholder ({@code ghp_xxxx...}); a body drawn at random from a token alphabet never is,
 * whatever its alphabet and length, nor is one padded before or after with a repeated unit.
 */
class PlaceholderPropertyTest {
    private static boolean placeholder(String body) {
        ByteBuffer b = ByteBuffer.wrap(body.getBytes(StandardCharsets.US_ASCII));
        return TokenChecks.placeholder(b, 0, b.limit());
    }

    /** Bodies drawn uniformly at random (jqwik's own strings favour edge cases such as one repeated character). */
    @Provide
    Arbitrary<String> randomBodies() {
        String[] alphabets = {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "0123456789abcdef",
            "0123456789"};
        return Arbitraries.randomValue(r -> {
            String alphabet = alphabets[r.nextInt(alphabets.length)];
            int n = 16 + r.nextInt(alphabet.length() == 10 ? 48 : 184);
            StringBuilder b = new StringBuilder(n);
            for (int i = 0; i < n; i++) {
                b.append(alphabet.charAt(r.nextInt(alphabet.length())));
            }
            return b.toString();
        });
    }

    @Property(tries = 3000)
    void aRandomBodyIsNoPlaceholder(@ForAll("randomBodies") String body) {
        assertFalse(placeholder(body), body);
    }

    @Property(tries = 2000)
    void aRandomBodyPaddedWithARepeatedUnitIsNoPlaceholder(@ForAll("randomBodies") String key,
            @ForAll @IntRange(min = 1, max = 8) int period, @ForAll @IntRange(min = 8, max = 400) int repeats,
            @ForAll boolean before) {
        String unit = "xX1-_.aZ".substring(0, period);
        String pad = unit.repeat(repeats);
        String body = before ? pad + key : key + pad;
        assertFalse(placeholder(body), "a real token padded is still found: " + body);
    }

    @Property(tries = 2000)
    void aBodyHalfMadeOfARepeatedUnitIsOne(@ForAll("randomBodies") String noise,
            @ForAll @IntRange(min = 1, max = 8) int period, @ForAll @IntRange(min = 9, max = 30) int repeats) {
        String unit = noise.substring(0, period);
        String stretch = unit.repeat(repeats + 1).substring(0, period + Math.max(repeats, 8));
        String rest = noise.substring(0, Math.min(Math.min(noise.length(), stretch.length()),
                TokenChecks.PLACEHOLDER_REST));
        assertTrue(placeholder(rest + stretch), rest + stretch);
        assertTrue(placeholder(stretch + "-" + rest), "separators are left out: " + stretch + "-" + rest);
    }

    @Example
    void documentedPlaceholders() {
        for (String body : new String[] {"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "XXXXXXXXXXXXXXXX",
            "XXXXXXXXXXX-XXXXXXXX", "IOSFODNN7EXAMPLEEXAMPLEEXAMPLE", "12312312312312312312",
            "XXXXXXXXXX_YOUR_TOKEN_XXXXXXXXXXXX"}) {
            assertTrue(placeholder(body), body);
        }
        for (String body : new String[] {"IOSFODNN7EXAMPLE", "5000000001:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
            "aaaaaaaa", "R8xq2LmT5vW9zK3nB7cF1hJ4pD6sG0aYeU2i", "0000000012345678",
            "R8xq2LmT5vW9zK3nB7cF" + "x".repeat(40), "XXXXXXXXXX_PUT_YOUR_TOKEN_HERE_XXXXXXXXXXXX"}) {
            assertFalse(placeholder(body), body);
        }
    }
}
