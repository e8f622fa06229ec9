package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
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

/**
 * Attacker pass 9, P11-11: the streamed scrub's hold, release and cut must not tell a guess that is a prefix of the
 * secret from one that is not. The sandbox made a bound echo host reflect {@code guess + ESC ( B x100 + padding}: the
 * stream was cut only when {@code guess} was a prefix of the key, so the key came out a character at a time.
 */
class StreamedScrubOracleTest {
    private static final String PLACEHOLDER = "openshell:resolve:env:TOKEN";
    /** Sequences an ISO-2022 or HZ decoder drops from the text. */
    private static final String[] DROPPED = {"\u001b(B", "\u001b$B", "\u001b$)C", "\u001b&@", "\u000e", "\u000f",
            "~{", "~}", "~\n"};

    @Provide
    Arbitrary<String> secrets() {
        return Arbitraries.strings().withChars("abcXYZ0189QzR").ofMinLength(6).ofMaxLength(40).map(s -> "k" + s);
    }

    /** What the sandbox sees of one response: the bytes of each write, and the write that cut it (-1: none). */
    private record Seen(List<byte[]> writes, int cutAt) {
    }

    private static Seen stream(String secret, byte[] body, List<Integer> chunks) {
        SecretScrubber s = new SecretScrubber(Map.of(secret, PLACEHOLDER));
        List<byte[]> writes = new ArrayList<>();
        int at = 0;
        int k = 0;
        while (at < body.length) {
            int size = chunks.isEmpty() ? body.length : chunks.get(k % chunks.size());
            int next = Math.min(body.length, at + size);
            try {
                writes.add(s.feed(Arrays.copyOfRange(body, at, next)));
            } catch (java.io.UncheckedIOException e) {
                assertTrue(e.getCause() instanceof EventSplits.HeldTooLong, e.toString());
                return new Seen(writes, k);
            }
            at = next;
            k++;
        }
        writes.add(s.finish());
        return new Seen(writes, -1);
    }

    private static byte[] body(String guess, int count, List<Integer> kinds, int padding) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(guess.getBytes(StandardCharsets.UTF_8));
        for (int i = 0; i < count; i++) {
            int kind = kinds.isEmpty() ? 0 : kinds.get(i % kinds.size());
            b.writeBytes(DROPPED[kind % DROPPED.length].getBytes(StandardCharsets.ISO_8859_1));
        }
        b.writeBytes("x".repeat(padding).getBytes(StandardCharsets.ISO_8859_1));
        return b.toByteArray();
    }

    /**
     * A guess that is a prefix of the secret and one of the same length that is not (its last character changed)
     * give the same writes of the same lengths, the same cut, and each its own bytes unchanged: any number of
     * sequences (up to far past the held bound), any kinds, any chunking, any padding.
     */
    @Property(tries = 150)
    void aPrefixGuessAndANonPrefixGuessLookTheSame(@ForAll("secrets") String secret,
                                                   @ForAll @IntRange(min = 1, max = 45) int prefix,
                                                   @ForAll @IntRange(min = 0, max = 30_000) int count,
                                                   @ForAll @Size(max = 4) List<@IntRange(min = 0, max = 8) Integer> kinds,
                                                   @ForAll @IntRange(min = 0, max = 1500) int padding,
                                                   @ForAll @Size(max = 6) List<@IntRange(min = 1, max = 9000) Integer>
                                                           chunks) {
        String right = secret.substring(0, Math.min(prefix, secret.length() - 1));
        String wrong = right.substring(0, right.length() - 1) + "#";
        byte[] rightBody = body(right, count, kinds, padding);
        byte[] wrongBody = body(wrong, count, kinds, padding);
        Seen r = stream(secret, rightBody, chunks);
        Seen w = stream(secret, wrongBody, chunks);
        assertEquals(w.cutAt(), r.cutAt(), "cut or not cut, at the same write");
        assertEquals(w.writes().size(), r.writes().size());
        for (int i = 0; i < r.writes().size(); i++) {
            assertEquals(w.writes().get(i).length, r.writes().get(i).length, "write " + i);
        }
        assertArrayEquals(Arrays.copyOf(rightBody, total(r)), concat(r.writes()), "relayed unchanged");
        assertArrayEquals(Arrays.copyOf(wrongBody, total(w)), concat(w.writes()), "relayed unchanged");
    }

    /** The report's case: {@code k} and {@code a} followed by 100 {@code ESC ( B} and 600 bytes, 512-byte chunks. */
    @Test
    void theReportedProbeIsRelayedWholeWhateverTheGuess() {
        String secret = "k9Q7zR2mW4xT8vN1pL6sJ3hF5dG0bCq";
        for (String guess : List.of("k", "a", "k9Q7", "k9Q8", secret.substring(0, 30))) {
            byte[] body = body(guess, 100, List.of(), 600);
            Seen seen = stream(secret, body, List.of(512));
            assertEquals(-1, seen.cutAt(), guess);
            assertArrayEquals(body, concat(seen.writes()), guess);
        }
    }

    /** A value with any number of sequences in its gaps is replaced while streaming, not cut. */
    @Test
    void aValueSplitByManySequencesIsReplacedWhileStreaming() {
        String secret = "k9Q7zR2mW4xT8vN1pL6sJ3hF5dG0bCq";
        String text = "before " + "x".repeat(2000) + "k" + "\u001b(B".repeat(3000) + secret.substring(1) + " after"
                + "y".repeat(5000);
        Seen seen = stream(secret, text.getBytes(StandardCharsets.ISO_8859_1), List.of(100));
        assertEquals(-1, seen.cutAt());
        assertEquals("before " + "x".repeat(2000) + PLACEHOLDER + " after" + "y".repeat(5000),
                new String(concat(seen.writes()), StandardCharsets.ISO_8859_1));
    }

    /**
     * More than 64 KiB of sequences held cut the stream whatever the text: the held bytes are not written, one
     * {@link EventSplits.HeldTooLong} is thrown.
     */
    @Test
    void moreHeldSequencesThanTheBoundCutTheStreamForAnyText() throws IOException {
        for (String text : List.of("k", "a", "")) {
            SecretScrubber s = new SecretScrubber(Map.of("k9Q7zR2mW4xT8vN1", PLACEHOLDER));
            ByteArrayOutputStream sink = new ByteArrayOutputStream();
            SecretScrubber.Scrubbing out = s.scrubbing(sink);
            out.write(("head " + "x".repeat(1000) + text).getBytes(StandardCharsets.ISO_8859_1));
            byte[] flood = "~{".repeat(VisibleWindow.MAX_HELD_SEQUENCE_BYTES / 2 + 1).getBytes(StandardCharsets.US_ASCII);
            assertThrows(EventSplits.HeldTooLong.class, () -> out.write(flood), text);
            String relayed = sink.toString(StandardCharsets.ISO_8859_1);
            assertTrue(relayed.startsWith("head x"), text);
            assertFalse(relayed.contains("~{"), "nothing held is written");
        }
    }

    private static int total(Seen s) {
        return s.writes().stream().mapToInt(b -> b.length).sum();
    }

    private static byte[] concat(List<byte[]> parts) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        parts.forEach(b::writeBytes);
        return b.toByteArray();
    }
}
