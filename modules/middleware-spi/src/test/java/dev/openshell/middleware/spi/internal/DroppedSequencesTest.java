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

/** The one rule of the ISO 2022 / HZ sequences a decoder drops ({@link DroppedSequences}). */
class DroppedSequencesTest {

    private static ByteBuffer text(String latin1) {
        return ByteBuffer.wrap(latin1.getBytes(StandardCharsets.ISO_8859_1)).asReadOnlyBuffer();
    }

    private static int length(String latin1, int p) {
        ByteBuffer b = text(latin1);
        return DroppedSequences.length(b, p, b.limit());
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
        for (int c = 1; c < 0x20; c++) {
            boolean kept = c == '\t' || c == '\n' || c == '\r';
            String s = (char) c + "x";
            if (c != 0x1b) {
                assertEquals(kept ? 0 : 1, length(s, 0), "control 0x" + Integer.toHexString(c));
            }
            assertEquals(!kept, DroppedSequences.mayStart((byte) c), "control 0x" + Integer.toHexString(c));
        }
        assertEquals(0, length("\u007f", 0), "DEL is kept");
        assertEquals(34, DroppedSequences.startBytes().length, "29 controls, NUL and ~, &, ED, EF, F4");
    }

    /** The word test flags exactly the bytes that may start a dropped sequence, in any word. */
    @Property(tries = 2000)
    void theWordTestIsExact(@ForAll("words") long w) {
        boolean any = false;
        boolean shift = false;
        for (int k = 0; k < Long.BYTES; k++) {
            byte b = (byte) (w >>> (8 * k));
            any |= DroppedSequences.mayStart(b);
            shift |= DroppedSequences.mayStart(b) && b >= 0 && b != '&';
        }
        assertEquals(any, DroppedSequences.holdsStartInWord(w) != 0);
        assertEquals(shift, DroppedSequences.holdsShiftInWord(w) != 0, "the ASCII starts but & alone");
        if (any) {
            assertEquals(true, (DroppedSequences.mayStartInWord(w) | DroppedSequences.referenceOrUtf8InWord(w)) != 0,
                    "the coarse test lets it through");
        }
    }

    @Provide
    Arbitrary<Long> words() {
        Arbitrary<Byte> b = Arbitraries.oneOf(Arbitraries.bytes(), Arbitraries.of((byte) 0, (byte) 9, (byte) 10,
                (byte) 13, (byte) 1, (byte) 0x1b, (byte) 0x1f, (byte) 0x20, (byte) '~', (byte) 0x7f, (byte) 0x89,
                (byte) 0x8a, (byte) 0xfe, (byte) 'a', (byte) '&', (byte) 0xed, (byte) 0xef, (byte) 0xf4, (byte) 0xa6,
                (byte) 0x6d, (byte) 0x6f, (byte) 0x74, (byte) 0xee));
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
            assertEquals(0, DroppedSequences.lengthInComplete(b, 0, b.limit()), s);
            assertEquals(b.limit(), DroppedSequences.first(b, b.limit()), s);
        }
    }

    /** The word-at-a-time search finds what a byte-by-byte one finds, wherever the sequence stands. */
    @Property(tries = 500)
    void firstIsTheFirstByteBySequence(@ForAll("texts") String s) {
        ByteBuffer b = text(s);
        int n = b.limit();
        int expected = n;
        for (int i = 0; i < n; i++) {
            if (DroppedSequences.lengthInComplete(b, i, n) > 0) {
                expected = i;
                break;
            }
        }
        assertEquals(expected, DroppedSequences.first(b, n));
    }

    @Provide
    Arbitrary<String> texts() {
        return Arbitraries.strings().withChars("ab~{}\n\u001b\u000e\u000f($BN@\u0001\t\u000c\r\u0000&#x1;0f\u00ef"
                + "\u00bf\u00be\u00ed\u00a0\u0080\u00f4\u0090").ofMaxLength(40);
    }

    /**
     * Attacker pass 16, P18-1: a numeric character reference to a character Python's {@code html.unescape} or libxml2
     * drops is a dropped sequence: leading zeros and a missing semicolon as HTML parsers read them, up to
     * {@value DroppedSequences#MAX_REFERENCE} bytes.
     */
    @Test
    void dropsReferencesToCharactersAParserDrops() {
        for (String r : new String[] {"&#1;", "&#x1b;", "&#xb;", "&#X0E;", "&#x7f;", "&#127;", "&#xfdd0;", "&#xFDEF;",
                "&#xffff;", "&#xfffe;", "&#x1ffff;", "&#x10fffe;", "&#0;", "&#xd800;", "&#xdfff;", "&#x110000;",
                "&#99999999999999999999;", "&#x0001;", "&#00001;", "&#12;", "&#x1f;"}) {
            assertEquals(r.length(), length(r + "x", 0), r);
        }
        assertEquals(3, length("&#1x", 0), "no semicolon: the digits end the reference");
        assertEquals(4, length("&#x1g", 0));
        for (String r : new String[] {"&#9;", "&#10;", "&#13;", "&#x20;", "&#65;", "&#x80;", "&#x9f;", "&#xfdcf;",
                "&#xfdf0;", "&#xfffd;", "&#x10000;", "&amp;", "&", "&lt;", "&quot;", "&apos;", "&gt;", "& a;",
                "&1a;", "&a"}) {
            assertEquals(0, DroppedSequences.lengthInComplete(text(r + "x"), 0, r.length() + 1), r);
        }
        String longest = "&#" + "0".repeat(DroppedSequences.MAX_REFERENCE - 4) + "1;";
        assertEquals(DroppedSequences.MAX_REFERENCE, length(longest + "x", 0));
        assertEquals(0, length("&#0" + longest.substring(2) + "x", 0), "longer than the bound: text");
        assertEquals(-1, length("&#00", 0), "a streamed reference may go on");
        assertEquals(-1, length("&", 0));
        assertEquals(0, DroppedSequences.lengthInComplete(text("&#00"), 0, 4));
    }

    /**
     * Attacker pass 17, P19-1 and P19-3: libxml2 reads {@code &#} without digits as a reference to nothing, and its
     * recovering XML parser drops a named reference no DTD declares; both are dropped sequences.
     */
    @Test
    void dropsReferencesWithoutDigitsAndUndeclaredEntities() {
        assertEquals(3, length("&#;x", 0));
        assertEquals(4, length("&#x;x", 0));
        assertEquals(4, length("&#X;x", 0));
        assertEquals(2, length("&#ax", 0), "&# before a non-digit: the two bytes");
        assertEquals(3, length("&#xgx", 0));
        assertEquals(3, length("&a;x", 0));
        assertEquals(6, length("&nbsp;x", 0));
        assertEquals(8, length("&a.b-c1;x", 0));
        assertEquals(0, length("&amp;x", 0), "predefined: a character");
        assertEquals(-1, length("&#", 0));
        assertEquals(-1, length("&abc", 0), "a streamed name may go on");
        assertEquals(0, length("&" + "a".repeat(DroppedSequences.MAX_REFERENCE) + ";", 0), "longer than the bound");
    }

    /** Attacker pass 17, P19-2: libxml2 2.14's recovering XML parser drops NUL; a run longer than the bound is text. */
    @Test
    void dropsShortRunsOfNul() {
        assertEquals(1, length("\u0000x", 0));
        assertEquals(DroppedSequences.MAX_NUL_RUN, length("\u0000".repeat(DroppedSequences.MAX_NUL_RUN) + "x", 0));
        assertEquals(0, length("\u0000".repeat(DroppedSequences.MAX_NUL_RUN + 1) + "x", 0), "a binary body's zeros");
        assertEquals(-1, length("\u0000\u0000", 0));
    }

    /** Attacker pass 16, P18-2: libxml2 drops U+FFFE, U+FFFF, surrogates and values above U+10FFFF read from UTF-8. */
    @Test
    void dropsTheUtf8OfCharactersLibxml2Drops() {
        assertEquals(3, length("\u00ef\u00bf\u00bfx", 0));
        assertEquals(3, length("\u00ef\u00bf\u00bex", 0));
        assertEquals(3, length("\u00ed\u00a0\u0080x", 0));
        assertEquals(3, length("\u00ed\u00bf\u00bfx", 0));
        assertEquals(4, length("\u00f4\u0090\u0080\u0080x", 0));
        assertEquals(0, length("\u00ef\u00bf\u00bdx", 0), "U+FFFD is read");
        assertEquals(0, length("\u00ed\u009f\u00bfx", 0), "U+D7FF is read");
        assertEquals(0, length("\u00f4\u008f\u00bf\u00bfx", 0), "U+10FFFF is read");
        assertEquals(0, length("\u00ef\u00b7\u0090x", 0), "U+FDD0 raw: libxml2 reads it");
        assertEquals(-1, length("\u00ef\u00bf", 0));
    }

    /**
     * The two-byte test passes every start of a dropped sequence, and no {@code &} before a byte that starts no
     * reference.
     */
    @Property(tries = 2000)
    void theTwoByteTestPassesEveryStart(@ForAll("texts") String s) {
        ByteBuffer b = text(s + "#");
        for (int i = 0; i + 1 < b.limit(); i++) {
            if (DroppedSequences.length(b, i, b.limit()) != 0) {
                assertEquals(true, DroppedSequences.mayStart(b.get(i), b.get(i + 1)), s);
            }
            byte next = b.get(i + 1);
            if (b.get(i) == '&' && next != '#' && !Character.isLetter(next) && next != '_' && next != ':') {
                assertEquals(false, DroppedSequences.mayStart(b.get(i), b.get(i + 1)), s);
            }
        }
    }

    /** Only an escape sequence has a shorter reading: libxml2 drops its ESC alone. */
    @Test
    void onlyAnEscapeSequenceHasAShorterReading() {
        assertEquals(1, DroppedSequences.shorter(text("\u001b(B"), 0, 3));
        assertEquals(1, DroppedSequences.shorter(text("\u001bN"), 0, 1));
        assertEquals(4, DroppedSequences.shorter(text("&#1;"), 0, 4));
        assertEquals(2, DroppedSequences.shorter(text("~{"), 0, 2));
    }

    /** The code points a reference to is dropped: Python's invalid code points and libxml2's non-Chars, no other. */
    @Property(tries = 3000)
    void droppedCodePointsAreThoseAParserDrops(@ForAll("codePoints") int cp) {
        boolean python = (cp >= 1 && cp <= 8) || cp == 0xb || (cp >= 0xe && cp <= 0x1f) || cp == 0x7f
                || (cp >= 0xfdd0 && cp <= 0xfdef) || ((cp & 0xffff) >= 0xfffe && cp <= 0x10ffff);
        boolean xmlChar = cp == 9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp <= 0xd7ff)
                || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
        assertEquals(python || !xmlChar, DroppedSequences.droppedCodePoint(cp), Integer.toHexString(cp));
    }

    @Provide
    Arbitrary<Integer> codePoints() {
        return Arbitraries.oneOf(Arbitraries.integers().between(0, 0x110010), Arbitraries.integers().between(0, 0x100),
                Arbitraries.integers().between(0xd7f0, 0xe010), Arbitraries.integers().between(0xfdc0, 0xffff),
                Arbitraries.of(0x1fffe, 0x1ffff, 0x10fffe, 0x10ffff, 0x110000));
    }
}
