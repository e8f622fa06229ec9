package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * The word-at-a-time searches of the scan equal their byte-at-a-time definitions: {@link JsonText#skipTo} with three
 * bytes (the escape-and-markup search) stops at the first 8-byte word that holds one of them, on bytes dense with the
 * three, their neighbours, bytes that differ from them only in the high bit and bytes that borrow in the word test,
 * from every start offset across word edges and at the body's end; and with two bytes (the JSON string, escape, form
 * and markup searches) likewise.
 */
class WordSearchPropertyTest {
    private static final long BACKSLASHES = JsonText.BACKSLASHES;
    private static final long AMPERSANDS = XmlText.AMPERSANDS;
    private static final long LESS_THANS = XmlText.LESS_THANS;

    @Provide
    Arbitrary<byte[]> bodies() {
        Arbitrary<Byte> near = Arbitraries.of((byte) '\\', (byte) '&', (byte) '<', (byte) 0xdc, (byte) 0xa6,
                (byte) 0xbc, (byte) ']', (byte) '[', (byte) '\'', (byte) '%', (byte) '=', (byte) ';', (byte) '+',
                (byte) 0x01, (byte) 0x00, (byte) 0x80, (byte) 0xff, (byte) 0x7f, (byte) '}', (byte) '|');
        Arbitrary<Byte> any = Arbitraries.bytes();
        Arbitrary<Byte> text = Arbitraries.chars().range('a', 'z').with(' ', '\n', '.', ',').map(c -> (byte) (char) c);
        Arbitrary<Byte> b = Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(1, near),
                net.jqwik.api.Tuple.of(1, any), net.jqwik.api.Tuple.of(6, text));
        return b.array(byte[].class).ofMaxSize(80);
    }

    @Property(tries = 3000)
    void theThreeByteSearchStopsAtTheFirstWordHoldingOne(@ForAll("bodies") byte[] body,
                                                         @ForAll @IntRange(max = 16) int from) {
        int j = Math.min(from, body.length);
        ByteBuffer b = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(wordWithOne(body, j), JsonText.skipTo(b, j, body.length, BACKSLASHES, AMPERSANDS, LESS_THANS));
    }

    /** {@return the definition: the start of the first whole word from {@code j} (8 bytes apart) holding a byte} */
    private static int wordWithOne(byte[] body, int j) {
        int k = j;
        while (k + 8 <= body.length) {
            for (int i = k; i < k + 8; i++) {
                if (body[i] == '\\' || body[i] == '&' || body[i] == '<') {
                    return k;
                }
            }
            k += 8;
        }
        return k;
    }

    @Property(tries = 3000)
    void theTwoByteSearchStopsAtTheFirstWordHoldingOne(@ForAll("bodies") byte[] body,
                                                       @ForAll @IntRange(max = 16) int from) {
        int j = Math.min(from, body.length);
        ByteBuffer b = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(wordWithOne(body, j, '\\', '<'), JsonText.skipTo(b, j, body.length, BACKSLASHES, LESS_THANS));
        assertEquals(wordWithOne(body, j, '&', '&'), JsonText.skipTo(b, j, body.length, AMPERSANDS, AMPERSANDS));
    }

    /** {@return the definition with two bytes} */
    private static int wordWithOne(byte[] body, int j, char first, char second) {
        int k = j;
        while (k + 8 <= body.length) {
            for (int i = k; i < k + 8; i++) {
                if (body[i] == first || body[i] == second) {
                    return k;
                }
            }
            k += 8;
        }
        return k;
    }
}
