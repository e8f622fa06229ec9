package dev.openshell.middleware.spi.internal;

import static org.apiguardian.api.API.Status.INTERNAL;

import java.nio.ByteBuffer;
import org.apiguardian.api.API;

/**
 * The sequences a decoder of a stateful encoding (ISO-2022-JP/-KR/-CN, HZ) drops from the text it reads: the one rule
 * of the response scrub ({@code Iso2022Spelling}: a secret with such sequences between its bytes) and of the
 * {@code openshell/regex} body reading without them ({@code Iso2022Text}; attacker pass 8, P10-4 and P10-6):
 * <ul>
 *   <li>an ECMA-35 / ISO 2022 escape sequence: ESC (0x1B), one to {@value #MAX_INTERMEDIATES} intermediate bytes
 *       0x20-0x2F, one final byte 0x30-0x7E (designations such as {@code ESC ( B}, {@code ESC $ B},
 *       {@code ESC $ ) C}, {@code ESC & @}); {@code ESC F} alone (the single shifts {@code ESC N} / {@code ESC O},
 *       ...) is not dropped, it changes the next character;</li>
 *   <li>SO (0x0E) and SI (0x0F), the ISO-2022-KR shifts;</li>
 *   <li>the HZ shifts <code>~&#123;</code> and <code>~&#125;</code> and the HZ line continuation {@code ~} LF
 *       (RFC 1843). ({@code ~~}, HZ's spelling of a {@code ~}, is not dropped: it reads as one {@code ~}; a caller
 *       matching a {@code ~} handles it.)</li>
 *   <li>every other C0 control but NUL, TAB, LF and CR (0x01-0x08, 0x0B, 0x0C, 0x10-0x1F), and an ESC that starts
 *       no escape sequence ({@code ESC F} included): libxml2's HTML parser drops them from the text it reads (Debian's
 *       2.9, so its python3-lxml, xmllint, PHP's DOM; attacker pass 15c, P17c-1), so a secret with one between its
 *       bytes reads whole there.</li>
 * </ul>
 * Dropping every such sequence is a superset of what a decoder drops (text shifted into a double-byte set is not
 * ASCII when decoded). Offsets are absolute indexes of the buffer, up to an exclusive end {@code n} (at most its
 * limit); the buffer's position and byte order are ignored and never changed. Static methods only; never throws for
 * offsets {@code 0 <= p < n <= limit}.
 */
@API(status = INTERNAL, since = "0.2")
public final class Iso2022Sequences {
    /** The most intermediate bytes of an escape sequence (ISO-2022 designations use one or two). */
    public static final int MAX_INTERMEDIATES = 3;
    /** The longest dropped sequence, in bytes: ESC, the intermediates, the final byte. */
    public static final int MAX_SEQUENCE = MAX_INTERMEDIATES + 2;
    private static final byte ESC = 0x1b;
    /** The C0 controls an HTML parser keeps (NUL aside): TAB, LF and CR, one bit each by value. */
    private static final long KEPT_CONTROLS = 1L << '\t' | 1L << '\n' | 1L << '\r';
    private static final long TAB8 = 0x0909090909090909L;
    private static final long LF8 = 0x0a0a0a0a0a0a0a0aL;
    private static final long CR8 = 0x0d0d0d0d0d0d0d0dL;
    private static final long TILDE8 = 0x7e7e7e7e7e7e7e7eL;
    private static final long LOWS = 0x7f7f7f7f7f7f7f7fL;
    private static final long HIGHS = 0x8080808080808080L;
    /** Added to a byte's low seven bits: the sum's high bit is clear exactly when the byte is below 0x20. */
    private static final long BELOW_SPACE = 0x6060606060606060L;
    /** Added to a byte's low seven bits: the sum's high bit is set exactly when the byte is above 0x7d. */
    private static final long ABOVE_BRACE = 0x0202020202020202L;

    private Iso2022Sequences() {
    }

    /** {@return the bytes that may start a dropped sequence ({@link #mayStart}), in a new array} */
    public static int[] startBytes() {
        int[] out = new int[29];
        int k = 0;
        for (int c = 1; c < 0x20; c++) {
            if (mayStart((byte) c)) {
                out[k++] = c;
            }
        }
        out[k] = '~';
        return out;
    }

    /**
     * {@return whether {@code b} may start a dropped sequence: a C0 control but NUL, TAB, LF and CR (ESC, SO and SI
     * among them), or {@code ~}}
     *
     * @param b a byte
     */
    public static boolean mayStart(byte b) {
        return b == '~' || droppedControl(b);
    }

    /**
     * {@return whether {@code b} is a C0 control an HTML parser drops alone: any but NUL, TAB, LF and CR (ESC, SO and
     * SI among them)} Each is a dropped sequence of one byte by itself ({@link #length}), an ESC too where it starts no
     * escape sequence; a reading that drops only these is libxml2's.
     *
     * @param b a byte
     */
    public static boolean droppedControl(byte b) {
        return b > 0 && b < ' ' && (KEPT_CONTROLS & 1L << b) == 0;
    }

    /**
     * {@return the length in bytes of the sequence a decoder drops at {@code p}: 0 for none, -1 when {@code n} comes
     * before the sequence can be told (a streamed text may go on)}
     *
     * @param b the text
     * @param p where to look, {@code 0 <= p < n}
     * @param n the end of the text, at most {@code b.limit()}
     */
    public static int length(ByteBuffer b, int p, int n) {
        byte x = b.get(p);
        if (x == '~') {
            if (p + 1 >= n) {
                return -1;
            }
            byte c = b.get(p + 1);
            return c == '{' || c == '}' || c == '\n' ? 2 : 0;
        }
        if (x != ESC) {
            return droppedControl(x) ? 1 : 0; // SO, SI and the other C0 controls an HTML parser drops
        }
        for (int q = p + 1; q <= p + MAX_INTERMEDIATES + 1; q++) {
            if (q >= n) {
                return -1;
            }
            int c = b.get(q) & 0xff;
            if (c >= 0x30 && c <= 0x7e) {
                // ESC F (a single shift, ...): the ESC alone, as libxml2 drops it; a decoder's shifted next character
                // is not ASCII, so keeping F is a superset
                return q == p + 1 ? 1 : q + 1 - p;
            }
            if (c < 0x20 || c > 0x2f) {
                return 1; // the ESC alone
            }
        }
        return 1; // too many intermediates: the ESC alone
    }

    /** {@return the length of the sequence dropped at {@code p} of a complete text ending at {@code n}, 0 for none} */
    public static int lengthInComplete(ByteBuffer b, int p, int n) {
        return Math.max(0, length(b, p, n));
    }

    /**
     * {@return the index of the first sequence a decoder drops in the complete text {@code [0, n)}, {@code n} for
     * none} The common case holds none of the bytes that can start one ({@link #mayStart}): eight bytes are
     * read at a time and passed over by one coarse test ({@link #mayStartInWord}: an ASCII byte below 0x20 or above
     * 0x7d), then, for a word that passes it, the exact test of the four bytes ({@link #holdsStartInWord}); only a
     * word that holds one is read byte by byte. The coarse test costs a third of the exact one, and text rarely holds
     * the bytes it lets through (controls, {@code ~}, DEL). One linear pass; either byte order of the buffer.
     *
     * @param b the text
     * @param n its end, at most {@code b.limit()}
     */
    public static int first(ByteBuffer b, int n) {
        int i = 0;
        for (; i + Long.BYTES <= n; i += Long.BYTES) {
            long w = b.getLong(i);
            if (mayStartInWord(w) != 0 && holdsStartInWord(w) != 0) {
                for (int k = i; k < i + Long.BYTES; k++) {
                    if (length(b, k, n) > 0) {
                        return k;
                    }
                }
            }
        }
        for (; i < n; i++) {
            if (length(b, i, n) > 0) {
                return i;
            }
        }
        return n;
    }

    /**
     * {@return the high bit of each byte of {@code w} that is ASCII and below 0x20 or above 0x7d} A superset of ESC,
     * SO, SI and {@code ~}, exact per byte (no carry leaves a byte: its low seven bits plus 0x60 or 0x02 stay below
     * 0x100), so the byte order the word was read in does not matter.
     *
     * @param w eight bytes
     */
    public static long mayStartInWord(long w) {
        long x = w & LOWS;
        return (~(x + BELOW_SPACE) | (x + ABOVE_BRACE)) & ~w & HIGHS;
    }

    /**
     * {@return nonzero when a byte of {@code w} may start a dropped sequence ({@link #mayStart}): the high bit of each
     * such byte, exact per byte} Below 0x20 but NUL, TAB, LF and CR, or {@code ~}.
     *
     * @param w eight bytes
     */
    public static long holdsStartInWord(long w) {
        long x = w & LOWS;
        long controls = ~(x + BELOW_SPACE) & ~(equal(x, 0) | equal(x, TAB8) | equal(x, LF8) | equal(x, CR8));
        return (controls | equal(x, TILDE8)) & ~w & HIGHS;
    }

    /**
     * {@return the high bit of each byte of {@code x} (high bits clear) equal to the byte repeated in {@code c}},
     * exact per byte: no carry leaves a byte
     */
    private static long equal(long x, long c) {
        long t = x ^ c;
        return ~((t + LOWS) | t) & HIGHS;
    }
}
