package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/** The streaming secret scrubber: no chunking and no encoding of the secret lets it through. */
class SecretScrubberTest {
    private static final String PLACEHOLDER = "openshell:resolve:env:TOKEN";

    @Provide
    Arbitrary<String> secrets() {
        // letters, digits and characters every encoding treats specially; never the filler characters below
        return Arbitraries.strings().withChars("abcXYZ0189/+=&\"\\%é").ofMinLength(6).ofMaxLength(40)
                .map(s -> "k" + s);
    }

    @Provide
    Arbitrary<String> filler() {
        return Arbitraries.strings().withChars(" <>\n[]").ofMaxLength(30);
    }

    private static byte[] stream(SecretScrubber s, byte[] all, List<Integer> cuts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int at = 0;
        for (int c : cuts) {
            int next = Math.min(all.length, at + c);
            byte[] chunk = java.util.Arrays.copyOfRange(all, at, next);
            out.writeBytes(s.feed(chunk));
            at = next;
        }
        out.writeBytes(s.feed(java.util.Arrays.copyOfRange(all, at, all.length)));
        out.writeBytes(s.finish());
        return out.toByteArray();
    }

    @Property(tries = 200)
    void noChunkingAndNoEncodingLetsTheSecretThrough(@ForAll("secrets") String secret,
                                                     @ForAll("filler") String before,
                                                     @ForAll("filler") String after,
                                                     @ForAll @IntRange(min = 0, max = 20) int formIndex,
                                                     @ForAll @Size(max = 12) List<@IntRange(min = 0, max = 9) Integer>
                                                             cuts) {
        List<String> forms = SecretScrubber.forms(secret);
        String form = forms.get(formIndex % forms.size());
        byte[] input = (before + form + after + form).getBytes(StandardCharsets.UTF_8);
        byte[] out = stream(new SecretScrubber(Map.of(secret, PLACEHOLDER)), input, cuts);
        String text = new String(out, StandardCharsets.UTF_8);
        for (String f : forms) {
            assertFalse(text.contains(f), () -> "form leaked");
        }
        assertEquals(before + PLACEHOLDER + after + PLACEHOLDER, text);
        assertEquals(text, new String(new SecretScrubber(Map.of(secret, PLACEHOLDER)).scrubAll(input),
                StandardCharsets.UTF_8), "chunking does not change the result");
    }

    @Property(tries = 200)
    void textWithoutTheSecretPassesUnchanged(@ForAll("filler") String text,
                                             @ForAll @Size(max = 8) List<@IntRange(min = 0, max = 9) Integer> cuts) {
        byte[] in = text.getBytes(StandardCharsets.UTF_8);
        assertEquals(text, new String(stream(new SecretScrubber(Map.of("k-secret-1", PLACEHOLDER)), in, cuts),
                StandardCharsets.UTF_8));
    }

    @Test
    void findsTheSecretInsideBasicCredentialsAndCountsMatches() {
        String secret = "s3cret/+value";
        SecretScrubber s = new SecretScrubber(Map.of(secret, PLACEHOLDER));
        for (String user : List.of("a", "ab", "abc")) {
            String basic = Base64.getEncoder().encodeToString((user + ":" + secret)
                    .getBytes(StandardCharsets.UTF_8));
            String out = new String(s.scrubAll(basic.getBytes(StandardCharsets.US_ASCII)), StandardCharsets.UTF_8);
            assertTrue(out.contains(PLACEHOLDER), "alignment of user '" + user + "': " + out);
        }
        assertEquals(3, s.matches());
        assertTrue(s.window() >= SecretScrubber.percent(secret.getBytes(StandardCharsets.UTF_8), true).length());
    }
}
