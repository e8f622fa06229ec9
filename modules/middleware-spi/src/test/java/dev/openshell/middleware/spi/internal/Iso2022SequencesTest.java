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
        assertEquals(0, length("\u001b$$$$@", 0), "four intermediates are not a sequence");
        assertEquals(0, length("\u001bN", 0), "a single shift changes the next character, it is not dropped");
        assertEquals(0, length("\u001b(\u0001", 0));
        assertEquals(1, length("\u000e", 0));
        assertEquals(1, length("\u000f", 0));
        assertEquals(2, length("~{", 0));
        assertEquals(2, length("~}", 0));
        assertEquals(2, length("~\n", 0));
        assertEquals(0, length("~~", 0), "HZ's ~~ reads as a ~");
        assertEquals(0, length("a", 0));
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
        return Arbitraries.strings().withChars("ab~{}\n\u001b\u000e\u000f($BN@").ofMaxLength(40);
    }
}
