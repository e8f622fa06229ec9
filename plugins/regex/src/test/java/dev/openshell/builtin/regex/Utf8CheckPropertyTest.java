package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.internal.DroppedSequences;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * {@link Utf8#check} judges well-formedness as the JDK's strict decoder does and, for well-formed bytes, says
 * {@link Utf8#SHIFTS} exactly when a sequence {@link DroppedText} drops starts somewhere (so {@link BodyDecoder}
 * skips the {@link DroppedText} reading only where it would find nothing): bytes mixing ASCII text, the four bytes
 * that start one alone and in sequences whole and cut ({@code ~{}, {@code ~/}, ESC with intermediates), two- to
 * four-byte characters and arbitrary bytes, so they fall in all-ASCII words, in words with a non-ASCII byte, across
 * words and in the tail shorter than a word.
 */
class Utf8CheckPropertyTest {
    @Provide
    Arbitrary<byte[]> bodies() {
        Arbitrary<byte[]> ascii = Arbitraries.chars().range('a', 'z').with(' ', '"', '\n', '\t', '}', (char) 0x7f)
                .map(c -> new byte[] {(byte) (char) c});
        Arbitrary<byte[]> shift = Arbitraries.of("\u001b", "\u000e", "\u000f", "~", "~{", "~}", "~~", "~\n", "~/",
                "\u001b$B", "\u001b(J", "\u001b$", "\u001bN", "\u001b(\u00e9", "&#1;", "&#x7f", "&#65;", "&",
                "\uffff", "\ufffe", "\ufffd")
                .map(t -> t.getBytes(StandardCharsets.UTF_8));
        Arbitrary<byte[]> wide = Arbitraries.of("\u00e9", "\u20ac", "\ud83d\ude00", "\u0430")
                .map(s -> s.getBytes(StandardCharsets.UTF_8));
        Arbitrary<byte[]> any = Arbitraries.bytes().map(b -> new byte[] {b});
        Arbitrary<byte[]> piece = Arbitraries.frequencyOf(Tuple.of(12, ascii), Tuple.of(1, shift), Tuple.of(2, wide),
                Tuple.of(1, any));
        return piece.list().ofMaxSize(40).map(list -> {
            int n = list.stream().mapToInt(p -> p.length).sum();
            byte[] out = new byte[n];
            int o = 0;
            for (byte[] p : list) {
                System.arraycopy(p, 0, out, o, p.length);
                o += p.length;
            }
            return out;
        });
    }

    /** The expectation when the only dropped sequences are character references: either answer. */
    private static final int REFERENCE_ONLY = 99;

    @Property(tries = 5000)
    void theCheckAgreesWithTheJdkAndFindsEveryDroppedSequence(@ForAll("bodies") byte[] body) {
        int expected;
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(body));
            expected = Utf8.NO_SHIFTS;
            for (int i = 0; i < body.length; i++) {
                if (DroppedSequences.lengthInComplete(ByteBuffer.wrap(body), i, body.length) > 0) {
                    // a reference is reported only where the word test looks (the markup layer reads it anyway)
                    expected = body[i] != '&' || expected == Utf8.SHIFTS ? Utf8.SHIFTS : REFERENCE_ONLY;
                }
            }
        } catch (CharacterCodingException e) {
            expected = Utf8.MALFORMED;
        }
        int got = Utf8.check(ByteBuffer.wrap(body).asReadOnlyBuffer());
        if (expected == REFERENCE_ONLY) {
            assertTrue(got == Utf8.SHIFTS || got == Utf8.NO_SHIFTS, "" + got);
        } else {
            assertEquals(expected, got);
        }
    }
}
