package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The scan that reads only around the runs {@link RunGate} finds equals the scan that reads every byte the exact way
 * ({@link SecretScanner#scanEveryByte}): the same counts, the same checksum results and the same spans, for the
 * default entries and for every entry, on texts made of the catalog's samples (found and not), assignments of every
 * operator, {@code Bearer} and PEM headers, short and long runs with and without {@code -}, and the delimiters the
 * gate's word test leaves out or keeps.
 */
class RunGatePropertyTest {
    private static final List<String> SAMPLES = CatalogSamples.ALL.stream().map(CatalogSamples.Sample::text).toList();
    private static final List<String> PIECES = List.of(" ", "\n", ", ", ",", "\"", "'", "(", ")", "-", "--", "-----",
            "=", ": ", " = ", "\": \"", "', '", "\", \"", "=>", ":=", "||", "?=", ">", "<", ";", ".", "_", "/", "\\n",
            "\\u0073", "\t", "Bearer ", "Basic ", "Authorization: Bearer ", "-----BEGIN ",
            "-----BEGIN RSA PRIVATE KEY-----\n", "\n-----END RSA PRIVATE KEY-----", "api_key", "token", "secret",
            "password", "client_secret", "x-api-key: ", "xoxb-", "glcbt-", "sk-", "ghp_", "AKIA", "eyJ", "é", "\u00a0",
            "\u0000");

    @Provide
    Arbitrary<String> texts() {
        Arbitrary<String> word = Arbitraries.strings().withCharRange('a', 'z').withCharRange('A', 'Z')
                .withCharRange('0', '9').withChars("_-./+=~:$%@!").ofMinLength(1).ofMaxLength(40);
        Arbitrary<String> piece = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(4, Arbitraries.of(SAMPLES)),
                net.jqwik.api.Tuple.of(5, Arbitraries.of(PIECES)),
                net.jqwik.api.Tuple.of(5, word),
                net.jqwik.api.Tuple.of(1, Arbitraries.strings().ascii().ofMaxLength(12)));
        return piece.list().ofMaxSize(30).map(l -> String.join("", l));
    }

    @Property(tries = 1500)
    void theGatedScanEqualsReadingEveryByte(@ForAll("texts") String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        for (Selection selection : List.of(Selection.defaults(), Selection.everything())) {
            for (ByteBuffer buffer : List.of(ByteBuffer.wrap(bytes), ByteBuffer.wrap(bytes).asReadOnlyBuffer())) {
                Scan gated = SecretScanner.scan(buffer, selection, true);
                Scan every = SecretScanner.scanEveryByte(buffer, selection);
                assertArrayEquals(every.counts(), gated.counts(), text);
                assertArrayEquals(every.unverified(), gated.unverified(), text);
                assertEquals(every.spanInts(), gated.spanInts(), text);
                assertArrayEquals(Arrays.copyOf(every.spans(), every.spanInts()),
                        Arrays.copyOf(gated.spans(), gated.spanInts()), text);
            }
        }
    }

    @Property(tries = 1500)
    void theWindowedRunFinderEqualsReadingEveryByte(@ForAll("texts") String text,
                                                    @ForAll @net.jqwik.api.constraints.IntRange(max = 40) int from) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        int start = Math.min(from, bytes.length);
        for (Selection selection : List.of(Selection.defaults(), Selection.everything())) {
            RunGate gate = selection.gate();
            ByteBuffer words = RunGate.littleEndian(ByteBuffer.wrap(bytes).asReadOnlyBuffer());
            for (int k = start; k <= bytes.length; k++) {
                assertEquals(runByBytes(gate, bytes, k), gate.nextRun(words, k), text + " from " + k);
            }
        }
    }

    /**
     * {@return whether a prefix anchored on a dash may stand at the dash at {@code i}, by the bytes next to it and
     * one further, as the exact reading tests it}
     */
    private static boolean dashMayAnchor(byte[] text, int i) {
        Prefilter prefilter = Catalog.get().prefilter();
        int previous = i > 0 ? text[i - 1] & 0xff : 0;
        int far = i > 1 ? text[i - 2] & 0xff : -1;
        if (prefilter.anchored(false, '-', previous) != null && prefilter.admits(false, '-', previous, far)) {
            return true;
        }
        int next = i + 1 < text.length ? text[i + 1] & 0xff : -1;
        int further = i + 2 < text.length ? text[i + 2] & 0xff : -1;
        return next >= 0 && prefilter.anchored(true, '-', next) != null
                && prefilter.admits(true, '-', next, further);
    }

    /**
     * The definition {@link RunGate#nextRun} implements: the first run of {@link RunGate#least()} or holding a dash
     * that may anchor a prefix,
     * a byte at a time over the words' test's characters.
     */
    private static long runByBytes(RunGate gate, byte[] text, int from) {
        int start = from;
        for (int k = from; k < text.length; k++) {
            int c = text[k] & 0xff;
            boolean token = c > 0x20 && c < 0x80 && (gate.isToken(c) || ",\"'()".indexOf(c) < 0);
            if (!token) {
                start = k + 1;
            } else if (k + 1 - start >= gate.least() || (c == '-' && dashMayAnchor(text, k))) {
                int end = k + 1;
                while (end < text.length && (text[end] & 0xff) > 0x20 && (text[end] & 0xff) < 0x80
                        && (gate.isToken(text[end] & 0xff) || ",\"'()".indexOf(text[end]) < 0)) {
                    end++;
                }
                return (long) start << 32 | end;
            }
        }
        return -1;
    }

    @Property(tries = 40)
    void everySampleIsFoundAfterAnyPaddingAsWhenEveryByteIsRead(@ForAll("texts") String padding) {
        for (String sample : SAMPLES) {
            byte[] bytes = (padding + sample + padding).getBytes(StandardCharsets.UTF_8);
            ByteBuffer buffer = ByteBuffer.wrap(bytes).asReadOnlyBuffer();
            Scan gated = SecretScanner.scan(buffer, Selection.everything(), true);
            Scan every = SecretScanner.scanEveryByte(buffer, Selection.everything());
            assertArrayEquals(every.counts(), gated.counts(), sample);
            assertArrayEquals(Arrays.copyOf(every.spans(), every.spanInts()),
                    Arrays.copyOf(gated.spans(), gated.spanInts()), sample);
        }
    }
}
