package dev.openshell.middleware.spi.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** The one rule of the ISO 2022 / HZ sequences a decoder drops ({@link Iso2022Sequences}). */
class Iso2022SequencesTest {

    private static ByteBuffer text(String latin1) {
        return ByteBuffer.wrap(latin1.getBytes(StandardCharsets.ISO_8859_1)).asReadOnlyBuffer();
    }

    private static int length(String latin1, int p) {
        ByteBuffer b = text(latin1);
        return Iso2022Sequences.length(b, p, b.limit());
    }

    @Test
    void dropsDesignationsShiftsAndHzSequences() {
        assertEquals(3, length("\u001b(B", 0));
        assertEquals(3, length("\u001b$B", 0));
        assertEquals(4, length("\u001b$)C", 0));
        assertEquals(5, length("\u001b$$$@", 0), "three intermediates");
        assertEquals(1, length("\u001b$$$$@", 0), "four intermediates are no sequence: the ESC alone is dropped");
        assertEquals(1, length("\u001bN", 0), "ESC F: the ESC alone, as libxml2's HTML parser drops it");
        assertEquals(1, length("\u001b(\u0001", 0));
        assertEquals(1, length("\u000e", 0));
        assertEquals(1, length("\u000f", 0));
        assertEquals(2, length("~{", 0));
        assertEquals(2, length("~}", 0));
        assertEquals(2, length("~\n", 0));
        assertEquals(0, length("~~", 0), "HZ's ~~ reads as a ~");
        assertEquals(0, length("a", 0));
    }

    /**
     * Attacker pass 15c, P17c-1: libxml2's HTML parser (Debian's 2.9) drops every C0 control but NUL, TAB, LF and CR
     * from the text it reads, so each is a dropped sequence of one byte.
     */
    @Test
    void dropsTheControlsAnHtmlParserDrops() {
        for (int c = 0; c < 0x20; c++) {
            boolean kept = c == 0 || c == '\t' || c == '\n' || c == '\r';
            String s = (char) c + "x";
            if (c != 0x1b) {
                assertEquals(kept ? 0 : 1, length(s, 0), "control 0x" + Integer.toHexString(c));
            }
            assertEquals(!kept, Iso2022Sequences.mayStart((byte) c), "control 0x" + Integer.toHexString(c));
        }
        assertEquals(0, length("\u007f", 0), "DEL is kept");
        assertEquals(29, Iso2022Sequences.startBytes().length);
    }

    /** The word test flags exactly the bytes that may start a dropped sequence, in any word. */
    @Property(tries = 2000)
    void theWordTestIsExact(@ForAll("words") long w) {
        boolean any = false;
        for (int k = 0; k < Long.BYTES; k++) {
            any |= Iso2022Sequences.mayStart((byte) (w >>> (8 * k)));
        }
        assertEquals(any, Iso2022Sequences.holdsStartInWord(w) != 0);
        if (any) {
            assertEquals(true, Iso2022Sequences.mayStartInWord(w) != 0, "the coarse test lets it through");
        }
    }

    @Provide
    Arbitrary<Long> words() {
        Arbitrary<Byte> b = Arbitraries.oneOf(Arbitraries.bytes(), Arbitraries.of((byte) 0, (byte) 9, (byte) 10,
                (byte) 13, (byte) 1, (byte) 0x1b, (byte) 0x1f, (byte) 0x20, (byte) '~', (byte) 0x7f, (byte) 0x89,
                (byte) 0x8a, (byte) 0xfe, (byte) 'a'));
        return b.list().ofSize(8).map(list -> {
            long w = 0;
            for (int k = 0; k < 8; k++) {
                w |= (list.get(k) & 0xffL) << (8 * k);
            }
            return w;
        });
    }

    @Test
    void aTextEndingInsideASequenceIsUndecidedWhenStreamedAndNoneWhenComplete() {
        for (String s : new String[] {"~", "\u001b", "\u001b(", "\u001b$)"}) {
            assertEquals(-1, length(s, 0), s);
            ByteBuffer b = text(s);
            assertEquals(0, Iso2022Sequences.lengthInComplete(b, 0, b.limit()), s);
            assertEquals(b.limit(), Iso2022Sequences.first(b, b.limit()), s);
        }
    }

    /** The word-at-a-time search finds what a byte-by-byte one finds, wherever the sequence stands. */
    @Property(tries = 500)
    void firstIsTheFirstByteBySequence(@ForAll("texts") String s) {
        ByteBuffer b = text(s);
        int n = b.limit();
        int expected = n;
        for (int i = 0; i < n; i++) {
            if (Iso2022Sequences.lengthInComplete(b, i, n) > 0) {
                expected = i;
                break;
            }
        }
        assertEquals(expected, Iso2022Sequences.first(b, n));
    }

    @Provide
    Arbitrary<String> texts() {
        return Arbitraries.strings().withChars("ab~{}\n\u001b\u000e\u000f($BN@\u0001\t\u000c\r\u0000")
                .ofMaxLength(40);
    }
}
