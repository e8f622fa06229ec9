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

    @Property(tries = 200)
    void theStreamingSideAgreesWithTheWholeTextForSeveralSecrets(@ForAll("secrets") String a,
                                                                 @ForAll("secrets") String b,
                                                                 @ForAll("filler") String filler,
                                                                 @ForAll @IntRange(min = 0, max = 40) int formA,
                                                                 @ForAll @IntRange(min = 0, max = 40) int formB,
                                                                 @ForAll @Size(max = 12) List<@IntRange(min = 1,
                                                                         max = 9) Integer> cuts) throws Exception {
        List<String> fa = SecretScrubber.forms(a);
        List<String> fb = SecretScrubber.forms(b);
        byte[] input = (filler + fa.get(formA % fa.size()) + filler + fb.get(formB % fb.size()) + filler)
                .getBytes(StandardCharsets.UTF_8);
        List<SecretScrubber.Secret> secrets = a.equals(b) ? List.of(new SecretScrubber.Secret("A", a, "<A>"))
                : List.of(new SecretScrubber.Secret("A", a, "<A>"), new SecretScrubber.Secret("B", b, "<B>"));
        SecretScrubber s = new SecretScrubber(secrets);
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        SecretScrubber.Scrubbing out = s.scrubbing(sink);
        int at = 0;
        for (int c : cuts) {
            int next = Math.min(input.length, at + c);
            out.write(input, at, next - at);
            at = next;
        }
        out.write(input, at, input.length - at);
        out.finish();
        String text = sink.toString(StandardCharsets.UTF_8);
        assertEquals(new String(new SecretScrubber(secrets).scrubAll(input), StandardCharsets.UTF_8), text);
        assertFalse(text.contains(a) || text.contains(b), "no secret survives");
        assertTrue(s.matches() >= 2 || a.contains(b) || b.contains(a), "both found");
    }

    @Test
    void onlyATailThatCouldStartASecretIsHeldBack() {
        SecretScrubber s = new SecretScrubber(Map.of("k-secret-1", PLACEHOLDER));
        assertEquals("data: hello\n\n", new String(s.feed("data: hello\n\n".getBytes(StandardCharsets.UTF_8)),
                StandardCharsets.UTF_8), "a paused stream (server-sent events) is not delayed");
        assertEquals("data: ", new String(s.feed("data: k-sec".getBytes(StandardCharsets.UTF_8)),
                StandardCharsets.UTF_8), "a possible start of the secret waits for the next bytes");
        assertEquals(PLACEHOLDER + "!", new String(s.feed("ret-1!".getBytes(StandardCharsets.UTF_8)),
                StandardCharsets.UTF_8));
        assertEquals("k-se", new String(s.feed("k-se".getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8)
                .isEmpty() ? new String(s.finish(), StandardCharsets.UTF_8) : "held bytes leaked early",
                "at the end of the stream the held tail is written as it was");
        assertEquals(java.util.Set.of(PLACEHOLDER), s.matchedNames());
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
