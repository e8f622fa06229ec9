package dev.openshell.builtin.regex;

import dev.openshell.middleware.spi.internal.DroppedSequences;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Strict UTF-8 well-formedness (The Unicode Standard, Table 3-7 "Well-Formed UTF-8 Byte Sequences"; RFC 3629 section
 * 4): exactly what the JDK's UTF-8 decoder accepts when malformed input is reported rather than replaced. Rejected:
 * stray continuation bytes, truncated sequences, overlong forms (C0, C1, E0 80-9F, F0 80-8F), UTF-16 surrogates
 * (ED A0-BF) and code points above U+10FFFF (F4 90-BF, F5-FF).
 *
 * <p>Runs of ASCII are checked eight bytes at a time; the body is never decoded or copied. The same pass tells
 * whether the text holds a sequence {@link DroppedText} drops (an ISO 2022 escape, a C0 control, an HZ shift, U+FFFE
 * or U+FFFF), so a body without one is not read a second time for them ({@link #check}); a {@code ~} that starts none
 * (a home directory's {@code ~/}, common in code and shell text) does not count. A character reference to a dropped
 * character ({@code &#1;}) is reported only where it stands next to another such byte: text that holds {@code &#} is
 * read by the markup layer, which reads such a reference as nothing ({@link XmlText}), and an all-ASCII word pays one
 * coarse test for the rest.
 */
final class Utf8 {
    private static final long HIGH_BITS = 0x8080_8080_8080_8080L;

    private Utf8() {
    }

    /**
     * {@return whether the bytes from position 0 to the limit are well-formed UTF-8}
     *
     * @param b the bytes; its position, limit and byte order are not changed
     */
    static boolean isWellFormed(ByteBuffer b) {
        return check(b) != MALFORMED;
    }

    /** {@link #check}: the bytes are not well-formed UTF-8. */
    static final int MALFORMED = -1;
    /** {@link #check}: well-formed, and no sequence {@link DroppedText} drops starts anywhere. */
    static final int NO_SHIFTS = 0;
    /**
     * {@link #check}: well-formed, and a sequence {@link DroppedText} drops starts somewhere
     * ({@link DroppedSequences#lengthInComplete}: an ISO 2022 escape, a C0 control but TAB, LF and CR (NUL in a short run),
     * <code>~{</code>, <code>~}</code>, {@code ~} before a line feed, U+FFFF, ...; a character reference, sometimes).
     */
    static final int SHIFTS = 1;

    /**
     * {@return {@link #MALFORMED}, {@link #NO_SHIFTS} or {@link #SHIFTS}} One pass: an all-ASCII word of eight bytes
     * is passed over after the coarse word test of {@link DroppedSequences#mayStartInWord} (and, where that passes, the
     * exact test of its bytes; a word that holds a byte that may start one is read byte by byte for a sequence that
     * starts there), every other byte is read alone.
     *
     * @param b the bytes; its position, limit and byte order are not changed
     */
    static int check(ByteBuffer b) {
        ByteBuffer bytes = b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int n = bytes.limit();
        int i = 0;
        int shifts = 0;
        while (i < n) {
            if (i + 8 <= n) {
                long w = bytes.getLong(i);
                if ((w & HIGH_BITS) == 0) {
                    if (DroppedSequences.mayStartInWord(w) != 0 && DroppedSequences.holdsShiftInWord(w) != 0) {
                        shifts |= shiftsIn(bytes, i, n);
                    }
                    i += 8;
                    continue;
                }
            }
            int c = bytes.get(i) & 0xff;
            if (c < 0x80) {
                shifts |= shiftAt(bytes, i, n);
                i++;
                continue;
            }
            int need;
            int lo = 0x80;
            int hi = 0xbf;
            if (c >= 0xc2 && c <= 0xdf) {
                need = 1;
            } else if (c >= 0xe0 && c <= 0xef) {
                need = 2;
                if (c == 0xe0) {
                    lo = 0xa0;
                } else if (c == 0xed) {
                    hi = 0x9f;
                }
            } else if (c >= 0xf0 && c <= 0xf4) {
                need = 3;
                if (c == 0xf0) {
                    lo = 0x90;
                } else if (c == 0xf4) {
                    hi = 0x8f;
                }
            } else {
                return MALFORMED; // 80-C1 (continuation or overlong lead) and F5-FF
            }
            if (i + need >= n) {
                return MALFORMED; // truncated
            }
            int second = bytes.get(i + 1) & 0xff;
            if (second < lo || second > hi) {
                return MALFORMED;
            }
            for (int k = 2; k <= need; k++) {
                int cont = bytes.get(i + k) & 0xff;
                if (cont < 0x80 || cont > 0xbf) {
                    return MALFORMED;
                }
            }
            if (need > 1) {
                shifts |= shiftAt(bytes, i, n); // U+FFFE, U+FFFF: libxml2 drops them (P18-2)
            }
            i += need + 1;
        }
        return shifts == 0 ? NO_SHIFTS : SHIFTS;
    }

    /** {@return {@link #SHIFTS} when a sequence {@link DroppedText} drops starts in the word at {@code i}, else 0} */
    private static int shiftsIn(ByteBuffer bytes, int i, int n) {
        int shifts = 0;
        for (int k = i; k < i + 8; k++) {
            shifts |= shiftAt(bytes, k, n);
        }
        return shifts;
    }

    /** {@return {@link #SHIFTS} when a sequence {@link DroppedText} drops starts at {@code i}, else 0} */
    private static int shiftAt(ByteBuffer bytes, int i, int n) {
        return DroppedSequences.mayStart(bytes.get(i)) && DroppedSequences.lengthInComplete(bytes, i, n) > 0 ? SHIFTS
                : 0;
    }
}
