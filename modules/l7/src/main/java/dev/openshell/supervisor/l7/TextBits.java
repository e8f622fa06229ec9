package dev.openshell.supervisor.l7;

import dev.openshell.middleware.spi.Body;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * What the JSON {@code _method} check ({@link OverrideForms}) needs to know of a body before it parses it, in one pass
 * over its bytes: whether a byte is not ASCII, whether a byte is 0, and whether the bytes may name a {@code _method}
 * member ({@link #METHOD}). A {@link Body} is read in place in chunks ({@link #of(Body, int)}), so a body of 1 MiB or
 * of many segments is neither copied whole nor joined into one array.
 */
final class TextBits {
    /** Bit: a byte is not ASCII. */
    static final int NOT_ASCII = 1;
    /** Bit: a byte is 0. */
    static final int NUL = 2;
    /**
     * Bit: the bytes hold {@code method} in any case of its ASCII letters, or a backslash before {@code u} or
     * {@code U}: the same as asking it of the decoded UTF-8 text lowercased, since no character but these ASCII
     * letters lowercases to one of {@code m e t h o d u} and no byte of a multi-byte character is ASCII.
     */
    static final int METHOD = 4;
    /** The bytes of one chunk {@link #of(Body)} reads (the last {@link #OVERLAP} of them read again with the next). */
    static final int CHUNK_BYTES = 16 * 1024;
    /** The bytes a chunk repeats of the one before: one less than {@code method}, the longest pattern. */
    static final int OVERLAP = 5;

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class,
            ByteOrder.LITTLE_ENDIAN);
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGHS = 0x8080808080808080L;
    private static final long CASE = 0x2020202020202020L;
    private static final long H = 0x6868686868686868L;
    private static final long BACKSLASH = 0x5c5c5c5c5c5c5c5cL;
    private static final int STEP = 4 * Long.BYTES;

    private TextBits() {
    }

    /** {@return {@link #of(Body, int)} in chunks of {@link #CHUNK_BYTES}} @param body the body */
    static int of(Body body) {
        return of(body, CHUNK_BYTES);
    }

    /**
     * {@return the bits of a body, read in chunks of {@code chunk} bytes copied into one small array}: each chunk but
     * the first starts with the last {@link #OVERLAP} bytes of the one before, so a pattern across a chunk's end is
     * whole in the next, and the bits of the chunks together are those of the whole body
     *
     * @param body the body
     * @param chunk the bytes read per chunk, at least 1 (a smaller body is read in one chunk of its own size)
     */
    static int of(Body body, int chunk) {
        int step = Math.min(chunk, body.size()); // a small body takes an array of its own size, not a whole chunk
        if (step == 0) {
            return 0;
        }
        byte[] window = new byte[OVERLAP + step];
        int bits = 0;
        int carry = 0;
        try (InputStream in = body.newInputStream()) {
            int n;
            while ((n = in.readNBytes(window, carry, step)) > 0) {
                int length = carry + n;
                bits |= of(window, length, (bits & METHOD) != 0); // once found, not looked for again
                carry = Math.min(OVERLAP, length);
                System.arraycopy(window, length - carry, window, 0, carry);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a body's stream reads memory and never throws
        }
        return bits;
    }

    /**
     * {@return the bits of {@code b[0, n)}}, 32 bytes per step: a step tests its four words for a not-ASCII byte, a
     * zero byte and an {@code h}, {@code H} or backslash; only a step holding one of those three is looked at word by
     * word for the pair {@code ho} (the middle of {@code method}, in any case) or a backslash before {@code u}, and
     * only such a word byte by byte. English text holds few of either pair, where a single letter such as {@code m} is
     * in every other word.
     *
     * @param b the bytes
     * @param n how many of them to read, from 0
     */
    static int of(byte[] b, int n) {
        return of(b, n, false);
    }

    /** {@return {@link #of(byte[], int)}, with {@link #METHOD} set and not looked for when {@code method} holds} */
    private static int of(byte[] b, int n, boolean found) {
        long high = 0;
        long zero = 0;
        boolean method = found;
        int i = 0;
        for (; i + STEP + 1 <= n; i += STEP) {
            long w = (long) LONGS.get(b, i);
            long x = (long) LONGS.get(b, i + 8);
            long y = (long) LONGS.get(b, i + 16);
            long z = (long) LONGS.get(b, i + 24);
            high |= w | x | y | z;
            zero |= (w - ONES) & ~w | (x - ONES) & ~x | (y - ONES) & ~y | (z - ONES) & ~z;
            if (!method) {
                long fw = firsts(w);
                long fx = firsts(x);
                long fy = firsts(y);
                long fz = firsts(z);
                if (((fw | fx | fy | fz) & HIGHS) != 0) {
                    method = inWord(b, i, fw, n) || inWord(b, i + 8, fx, n) || inWord(b, i + 16, fy, n)
                            || inWord(b, i + 24, fz, n);
                }
            }
        }
        boolean nul = (zero & HIGHS) != 0;
        for (int p = i; p < n; p++) {
            high |= b[p];
            nul |= b[p] == 0;
        }
        // the rest: every start whose h or backslash lies at i or later
        for (int p = Math.max(0, i - 3); p < n && !method; p++) {
            method = startsHere(b, p, n);
        }
        return ((high & HIGHS) != 0 ? NOT_ASCII : 0) | (nul ? NUL : 0) | (method ? METHOD : 0);
    }

    /**
     * {@return whether a pattern's {@code h} or backslash lies in the word at {@code j}}
     *
     * @param first the word's {@link #firsts}: only a word it marks is tested for the pairs, and only a word with a
     *     pair byte by byte
     */
    private static boolean inWord(byte[] b, int j, long first, int n) {
        // byte k of the second word is b[j + k + 1]: a pair is marked at the byte of its first character
        if ((first & HIGHS) == 0 || pairs((long) LONGS.get(b, j), (long) LONGS.get(b, j + 1)) == 0) {
            return false;
        }
        for (int p = j; p < j + Long.BYTES; p++) {
            if (startsHere(b, p - 3, n) || startsHere(b, p, n)) { // the h of method, or the backslash
                return true;
            }
        }
        return false;
    }

    /** {@return whether {@code method} (any case) or a backslash and {@code u} (any case) starts at {@code s}} */
    private static boolean startsHere(byte[] b, int s, int n) {
        if (s < 0) {
            return false;
        }
        int c = b[s] | 0x20; // ASCII letters to lowercase; other bytes never compare equal below
        if (c == 'm' && s + 6 <= n && (b[s + 1] | 0x20) == 'e' && (b[s + 2] | 0x20) == 't'
                && (b[s + 3] | 0x20) == 'h' && (b[s + 4] | 0x20) == 'o' && (b[s + 5] | 0x20) == 'd') {
            return true;
        }
        return b[s] == '\\' && s + 1 < n && (b[s + 1] | 0x20) == 'u';
    }

    /**
     * {@return a mask with the high bit set at least at each byte of {@code w} that is {@code h} or {@code H} before
     * an {@code o} or {@code O}, or a backslash before {@code u} or {@code U} ({@code next}: the word one byte on)};
     * 0 when there is none. A word has a zero byte exactly when {@code (w - 0x0101..01) & ~w & 0x8080..80} is not 0,
     * and every zero byte is marked (bytes above one may be marked too: they are then read byte by byte)
     */
    private static long pairs(long w, long next) {
        long lower = w | CASE;
        long nextLower = next | CASE;
        long ho = zeros(lower ^ H) & zeros(nextLower ^ 0x6f6f6f6f6f6f6f6fL);
        long bu = zeros(w ^ BACKSLASH) & zeros(nextLower ^ 0x7575757575757575L);
        return ho | bu;
    }

    /**
     * {@return a word whose high bits (the rest is noise) mark at least each byte of {@code w} that is {@code h},
     * {@code H} or a backslash}: without a mark in it, {@link #pairs} of {@code w} is 0 for every next word, since each
     * of its two terms is one of these masks and another
     */
    private static long firsts(long w) {
        long h = (w | CASE) ^ H;
        long s = w ^ BACKSLASH;
        return (h - ONES) & ~h | (s - ONES) & ~s;
    }

    private static long zeros(long v) {
        return (v - ONES) & ~v & HIGHS;
    }
}
