package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.openshell.middleware.spi.internal.DroppedSequences;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * The word-at-a-time search of {@link DroppedSequences} equals its byte-at-a-time definition: the coarse word test
 * ({@link DroppedSequences#mayStartInWord}) marks exactly the ASCII bytes below 0x20 or above 0x7d, so it never passes
 * over ESC, SO, SI or {@code ~} (with {@link DroppedSequences#referenceOrUtf8InWord}, not over a reference or the UTF-8
 * of U+FFFF either); and the
 * first dropped sequence is found at the same index as a byte loop finds it, on bytes dense with those, their
 * neighbours, the same bytes with the high bit set, line feeds and tabs, in either byte order of the buffer and at
 * every length (the tail shorter than a word included).
 */
class DroppedFirstPropertyTest {
    @Provide
    Arbitrary<byte[]> bodies() {
        Arbitrary<Byte> near = Arbitraries.of((byte) 0x1b, (byte) 0x0e, (byte) 0x0f, (byte) '~', (byte) '{',
                (byte) '}', (byte) '\n', (byte) '\t', (byte) '(', (byte) '$', (byte) 'B', (byte) 0x9b, (byte) 0x8e,
                (byte) 0x8f, (byte) 0xfe, (byte) 0x7f, (byte) 0x7d, (byte) 0x1f, (byte) 0x20, (byte) 0x00,
                (byte) 0x10, (byte) 0x1c, (byte) 0x0d, (byte) '&', (byte) '#', (byte) 'x', (byte) '1',
                (byte) '0', (byte) ';', (byte) 0xef, (byte) 0xbf, (byte) 0xbe, (byte) 0xed, (byte) 0xa0, (byte) 0xf4,
                (byte) 0x90, (byte) 0x80);
        Arbitrary<Byte> text = Arbitraries.chars().range('a', 'z').with(' ', '.', '"').map(c -> (byte) (char) c);
        Arbitrary<Byte> b = Arbitraries.frequencyOf(Tuple.of(1, near), Tuple.of(1, Arbitraries.bytes()),
                Tuple.of(8, text));
        return b.array(byte[].class).ofMaxSize(70);
    }

    @Property(tries = 3000)
    void theCoarseTestMarksEveryByteBelowSpaceOrAboveBrace(@ForAll long w) {
        long expected = 0;
        for (int j = 0; j < Long.BYTES; j++) {
            int c = (int) (w >>> (8 * j)) & 0xff;
            if (c < 0x20 || (c > 0x7d && c < 0x80)) {
                expected |= 0x80L << (8 * j);
            }
        }
        assertEquals(expected, DroppedSequences.mayStartInWord(w));
    }

    @Property(tries = 3000)
    void theSearchFindsTheFirstDroppedSequenceAsAByteLoopDoes(@ForAll("bodies") byte[] body,
                                                             @ForAll boolean bigEndian) {
        ByteBuffer b = ByteBuffer.wrap(body).order(bigEndian ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN);
        int expected = body.length;
        for (int i = 0; i < body.length; i++) {
            if (DroppedText.dropped(b, i) > 0) {
                expected = i;
                break;
            }
        }
        assertEquals(expected, DroppedSequences.first(b.asReadOnlyBuffer().order(b.order()), body.length));
        assertEquals(expected == body.length, DroppedText.view(b) == null);
    }
}
