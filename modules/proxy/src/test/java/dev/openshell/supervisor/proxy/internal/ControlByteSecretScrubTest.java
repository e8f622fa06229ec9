package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * A credential value that itself holds a byte that can start a sequence a stateful-encoding decoder drops (ESC, SO,
 * SI, {@code ~}): the gateway configuration accepts such values (only CR, LF and NUL are refused), and
 * {@link DroppedSpelling} may read such a byte of the text as the value's own byte or as the start of a sequence.
 * The value is replaced in every spelling and every chunking, whole and streamed, and what the stream releases or
 * cuts never depends on whether the reflected text is a prefix of the value.
 */
class ControlByteSecretScrubTest {
    private static final String PLACEHOLDER = "openshell:resolve:env:TOKEN";
    /**
     * Sequences an ISO-2022 or HZ decoder or an HTML parser drops from the text (as ISO-8859-1 characters, one per
     * byte): escape sequences, shifts, character references to dropped characters (P18-1), the UTF-8 of U+FFFF, of a
     * surrogate and of a value above U+10FFFF (P18-2).
     */
    private static final String[] DROPPED = {"\u001b(B", "\u001b$B", "\u001b$)C", "\u001b&@", "\u000e", "\u000f",
            "~{", "~}", "~\n", "&#1;", "&#x7F;", "&#xffff;", "&#00001;", "\u00ef\u00bf\u00bf", "\u00ed\u00a0\u0080",
            "\u00f4\u0090\u0080\u0080", "&#" + "0".repeat(27) + "1;", "&#;", "&b;", "\u0000"};
    /** Letters, and the bytes that start or continue sequences; never CR, LF or NUL (refused at load), never x. */
    private static final String ALPHABET = "k9QzR(B${}\u001b\u000e\u000f~&#1;";

    @Provide
    Arbitrary<String> secrets() {
        // ends with Q, which no dropped sequence and no padding holds: a prefix followed by them is never the value
        return Arbitraries.strings().withChars(ALPHABET).ofMinLength(4).ofMaxLength(30).map(s -> "k" + s + "Q");
    }

    @Provide
    Arbitrary<String> filler() {
        return Arbitraries.strings().withChars(" <>[]").ofMaxLength(20);
    }

    /** The reported shapes: each value in each spelling, whole and streamed in every split and byte by byte. */
    @Test
    void eachValueHoldingAControlByteOrTildeIsReplacedInEveryChunking() {
        String[][] cases = {
            // a ~ of the value after an HZ shift: HZ reads "~}" as nothing and "~~" as "~" (k9Q~zR2mW4)
            {"k9Q~zR2mW4", "k9Q~}~~zR2mW4", "k9Q~{~}~~zR2mW4", "k9Q~\n~~zR2mW4", "k9Q~}~zR2mW4", "k9Q~zR2mW4",
                "k9Q~~zR2mW4", "k~{9Q~\n~zR~}2mW4"},
            // ESC of the value after an escape sequence that also starts with ESC
            {"k9\u001bQ7z", "k9\u001b(B\u001bQ7z", "k9\u001b$)C\u001b(B\u001bQ7z", "k9\u001bQ7z", "k9~}\u001bQ7z"},
            // the value holds a whole escape sequence, and more are inserted before and inside it
            {"k9\u001b(BQ7z", "k9\u001b(BQ7z", "k9\u001b(B\u001b(BQ7z", "k9\u001b(B\u001b(B\u001b(BQ7z",
                "k9\u001b(\u000eB\u001b$BQ7z"},
            // SO and SI of the value among inserted SO and SI
            {"k\u000e9\u000fQ", "k\u000e9\u000fQ", "k\u000e\u000e9\u000f\u000fQ", "k\u000f\u000e9\u000e\u000fQ",
                "k~{\u000e~}9\u000f\u001b(BQ"},
            // a value that is nearly all such bytes
            {"~~\u001b\u000e~", "~~\u001b\u000e~", "~~~~\u001b\u000e~~", "~~}~\u001b(B\u001b\u000e\u000e~",
                "~~{~~\u001b~}\u000e\u000f~"},
        };
        for (String[] c : cases) {
            String secret = c[0];
            for (int j = 1; j < c.length; j++) {
                byte[] in = ("<" + c[j] + ">").getBytes(StandardCharsets.ISO_8859_1);
                String want = "<" + PLACEHOLDER + ">";
                String what = printable(secret) + " in " + printable(c[j]);
                assertEquals(want, text(new SecretScrubber(Map.of(secret, PLACEHOLDER)).scrubAll(in)), what);
                assertEquals(want, text(stream(secret, in, List.of(1))), what + ", byte by byte");
                for (int cut = 1; cut < in.length; cut++) {
                    assertEquals(want, text(stream(secret, in, List.of(cut, in.length))), what + ", split at " + cut);
                }
            }
        }
    }

    /**
     * The value's bytes with any runs of dropped sequences between any two of them, and each of its {@code ~} written
     * {@code ~} or {@code ~~}: replaced whole, and streamed in any chunking, by exactly one placeholder.
     */
    @Property(tries = 400)
    void anySpellingOfAValueHoldingControlBytesIsReplacedWholeAndStreamed(
            @ForAll("secrets") String secret, @ForAll("filler") String before, @ForAll("filler") String after,
            @ForAll @Size(max = 8) List<@Size(max = 3) List<@IntRange(min = 0, max = 19) Integer>> runs,
            @ForAll @Size(max = 8) List<Boolean> doubled,
            @ForAll @Size(max = 6) List<@IntRange(min = 1, max = 40) Integer> chunks) {
        byte[] spelled = spelling(secret, runs, doubled);
        byte[] in = concat(List.of(("<" + before).getBytes(StandardCharsets.ISO_8859_1), spelled,
                (after + ">").getBytes(StandardCharsets.ISO_8859_1)));
        String want = "<" + before + PLACEHOLDER + after + ">";
        String what = printable(secret) + " in " + printable(text(spelled));
        SecretScrubber whole = new SecretScrubber(Map.of(secret, PLACEHOLDER));
        assertEquals(want, text(whole.scrubAll(in)), what);
        assertEquals(1, whole.matches(), what);
        assertEquals(want, text(stream(secret, in, chunks)), what + ", chunks " + chunks);
    }

    /**
     * Attacker pass 9 (P11-11) for such values: the same reflected body ({@code guess}, any number and kinds of
     * dropped sequences, padding) under a value it is a prefix of and under a value of the same length it is not a
     * prefix of (the guess's last character changed) is released in writes of the same lengths, cut at the same
     * write or not at all, and never changed.
     */
    @Property(tries = 150)
    void whatIsReleasedOrCutNeverDependsOnTheGuessBeingAPrefix(
            @ForAll("secrets") String secret, @ForAll @IntRange(min = 1, max = 31) int prefix,
            @ForAll @IntRange(min = 0, max = 30_000) int count,
            @ForAll @Size(max = 4) List<@IntRange(min = 0, max = 19) Integer> kinds,
            @ForAll @IntRange(min = 0, max = 1500) int padding,
            @ForAll @Size(max = 6) List<@IntRange(min = 1, max = 9000) Integer> chunks) {
        int k = Math.min(prefix, secret.length() - 1);
        String guess = secret.substring(0, k);
        char last = guess.charAt(k - 1);
        char other = ALPHABET.charAt((ALPHABET.indexOf(last) + 1 + prefix % (ALPHABET.length() - 1))
                % ALPHABET.length());
        String notPrefixed = secret.substring(0, k - 1) + other + secret.substring(k);
        SecretScrubber a = new SecretScrubber(Map.of(secret, PLACEHOLDER));
        SecretScrubber b = new SecretScrubber(Map.of(notPrefixed, PLACEHOLDER));
        Assume.that(a.window() == b.window()); // the same hold for both values: only the prefix differs
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(guess.getBytes(StandardCharsets.ISO_8859_1));
        for (int i = 0; i < count; i++) {
            int kind = kinds.isEmpty() ? 0 : kinds.get(i % kinds.size());
            body.writeBytes(DROPPED[kind].getBytes(StandardCharsets.ISO_8859_1));
        }
        body.writeBytes("x".repeat(padding).getBytes(StandardCharsets.ISO_8859_1));
        byte[] in = body.toByteArray();
        Seen prefixed = writes(a, in, chunks);
        Seen not = writes(b, in, chunks);
        String what = printable(secret) + " guess " + printable(guess);
        assertEquals(not.cutAt(), prefixed.cutAt(), what + ": cut or not cut, at the same write");
        assertEquals(not.writes().size(), prefixed.writes().size(), what);
        for (int i = 0; i < prefixed.writes().size(); i++) {
            assertEquals(not.writes().get(i).length, prefixed.writes().get(i).length, what + ", write " + i);
        }
        byte[] relayed = concat(prefixed.writes());
        assertArrayEquals(Arrays.copyOf(in, relayed.length), relayed, what + ": relayed unchanged");
        assertArrayEquals(relayed, concat(not.writes()), what);
    }

    /** A value's bytes with {@code runs} of dropped sequences between them and some of its {@code ~} doubled. */
    private static byte[] spelling(String secret, List<List<Integer>> runs, List<Boolean> doubled) {
        byte[] raw = secret.getBytes(StandardCharsets.ISO_8859_1);
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int k = 0; k < raw.length; k++) {
            if (k > 0 && !runs.isEmpty()) {
                for (int d : runs.get(k % runs.size())) {
                    b.writeBytes(DROPPED[d].getBytes(StandardCharsets.ISO_8859_1));
                }
            }
            b.write(raw[k]);
            if (raw[k] == '~' && !doubled.isEmpty() && doubled.get(k % doubled.size())) {
                b.write('~');
            }
        }
        return b.toByteArray();
    }

    /** What the sandbox sees of one response: the bytes of each write, and the write that cut it (-1: none). */
    private record Seen(List<byte[]> writes, int cutAt) {
    }

    private static Seen writes(SecretScrubber s, byte[] body, List<Integer> chunks) {
        List<byte[]> writes = new ArrayList<>();
        int at = 0;
        for (int k = 0; at < body.length; k++) {
            int next = Math.min(body.length, at + (chunks.isEmpty() ? body.length : chunks.get(k % chunks.size())));
            try {
                writes.add(s.feed(Arrays.copyOfRange(body, at, next)));
            } catch (UncheckedIOException e) {
                assertTrue(e.getCause() instanceof EventSplits.HeldTooLong, e.toString());
                return new Seen(writes, k);
            }
            at = next;
        }
        writes.add(s.finish());
        return new Seen(writes, -1);
    }

    private static byte[] stream(String secret, byte[] body, List<Integer> chunks) {
        Seen seen = writes(new SecretScrubber(Map.of(secret, PLACEHOLDER)), body, chunks);
        assertEquals(-1, seen.cutAt());
        return concat(seen.writes());
    }

    private static byte[] concat(List<byte[]> parts) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        parts.forEach(b::writeBytes);
        return b.toByteArray();
    }

    private static String text(byte[] b) {
        return new String(b, StandardCharsets.ISO_8859_1);
    }

    private static String printable(String s) {
        return s.replace("\u001b", "<ESC>").replace("\u000e", "<SO>").replace("\u000f", "<SI>").replace("\n", "<LF>");
    }
}
