package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;

/**
 * The search of text that is neither JSON nor YAML for a valid JSON string escape and for {@code &#} or
 * {@code <![CDATA[} ({@link BodyDecoder}: what makes the text worth its escaped and markup readings), made inside the
 * run finder's windows ({@link RunGate#nextRun(ByteBuffer, int, EscapeSearch)}) so that the text is read once. Each
 * window the run finder reads is also tested for a backslash, {@code &} and {@code <} (three compares on the same
 * word); the bytes it passes over without a window (the rest of a run found from a window, the text the exact reading
 * covers, the last bytes) are searched here eight bytes at a time. Every position of the text is tested once or more,
 * and each flagged byte the exact way ({@link JsonText#validEscape}, {@link XmlText#markupAt}), so {@link #holds()} is
 * what {@link BodyDecoder#escapedOrMarkedUp} gives for the whole text (a property test compares the two).
 *
 * <p>One per scan; not thread-safe.
 */
final class EscapeSearch {
    /** {@link #holds()} bit: a valid JSON string escape. */
    static final int ESCAPE = 1;
    /** {@link #holds()} bit: {@code &#} or {@code <![CDATA[}. */
    static final int MARKUP = 2;
    private static final long HIGHS = 0x8080_8080_8080_8080L;
    private static final long LOWS = 0x7F7F_7F7F_7F7F_7F7FL;

    /** Every position before it has been tested. */
    private int checked;
    private int holds;

    /** {@return {@link #ESCAPE} and {@link #MARKUP} for what the positions tested so far hold} */
    int holds() {
        return holds;
    }

    /** {@return the position before which every position has been tested} */
    int checked() {
        return checked;
    }

    /** Records that every position before {@code to} has been tested. @param to a position */
    void checkedTo(int to) {
        if (to > checked) {
            checked = to;
        }
    }

    /**
     * Tests every position from {@link #checked()} to {@code to} (exclusive) not yet tested, and records them tested.
     *
     * @param littleEndian the text in little-endian byte order
     * @param to a position, at most the text's limit
     */
    void upTo(ByteBuffer littleEndian, int to) {
        if (to > checked) {
            range(littleEndian, checked, to);
            checked = to;
        }
    }

    /**
     * {@return the high bit of each byte of {@code x} (a word with its high bits cleared) that is a backslash,
     * {@code &} or {@code <} in its low seven bits} A non-ASCII byte may be flagged too; {@link #window} tests the
     * byte itself.
     */
    static long marks(long x) {
        return ~(((x ^ JsonText.BACKSLASHES) + LOWS) & ((x ^ XmlText.AMPERSANDS) + LOWS)
                & ((x ^ XmlText.LESS_THANS) + LOWS)) & HIGHS;
    }

    /**
     * Tests the flagged bytes of the window at {@code k}.
     *
     * @param text the text
     * @param k the window's first position
     * @param marks {@link #marks} of the window
     */
    void window(ByteBuffer text, int k, long marks) {
        for (long m = marks; m != 0; m &= m - 1) {
            test(text, k + (Long.numberOfTrailingZeros(m) >>> 3));
        }
    }

    /**
     * Tests the positions {@code from} (inclusive) to {@code to} (exclusive), eight bytes at a time ({@link #marks},
     * the last word's bytes at or after {@code to} masked off; the text's last bytes one at a time); does not record
     * them tested.
     */
    void range(ByteBuffer littleEndian, int from, int to) {
        int limit = littleEndian.limit();
        int i = from;
        while (i < to && holds != (ESCAPE | MARKUP)) {
            if (i + Long.BYTES > limit) {
                for (; i < to; i++) {
                    test(littleEndian, i);
                }
                return;
            }
            long m = marks(littleEndian.getLong(i) & LOWS);
            if (to - i < Long.BYTES) {
                m &= (1L << ((to - i) << 3)) - 1;
            }
            if (m != 0) {
                window(littleEndian, i, m);
            }
            i += Long.BYTES;
        }
    }

    private void test(ByteBuffer text, int i) {
        byte c = text.get(i);
        if (c == '\\') {
            if (JsonText.validEscape(text, i) > 0) {
                holds |= ESCAPE;
            }
        } else if ((c == '&' || c == '<') && XmlText.markupAt(text, i)) {
            holds |= MARKUP;
        }
    }
}
