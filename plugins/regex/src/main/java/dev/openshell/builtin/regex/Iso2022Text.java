package dev.openshell.builtin.regex;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Text as a decoder of a stateful encoding reads its ASCII (attacker pass 8, P10-6): ISO 2022 escape sequences (ESC
 * 0x1B, one to three intermediate bytes 0x20-0x2F, a final byte 0x30-0x7E: {@code ESC ( B}, {@code ESC $ B},
 * {@code ESC $ ) C}, ...), the ISO-2022-KR shifts SO and SI (0x0E, 0x0F), the HZ shifts <code>~&#123;</code> and
 * <code>~&#125;</code> and the HZ line continuation {@code ~} LF dropped. A server that sniffs an undeclared charset
 * (charset_normalizer: ISO-2022-JP, ISO-2022-KR, HZ) reads {@code ghp_ ESC ( B R8xq...} as the token; this reading
 * has it too. Dropping every such sequence is a superset of what a decoder drops (text shifted into a double-byte set
 * is not ASCII when decoded), so it finds at least what those readers find. The single shifts {@code ESC N} /
 * {@code ESC O} are kept (they change the next character). One linear pass; the way back maps each dropped sequence
 * to no text, so a redaction replaces the sequences inside a match with it.
 */
final class Iso2022Text {
    private static final int MAX_INTERMEDIATES = 3;
    private static final long ESC8 = 0x1b1b1b1b1b1b1b1bL;
    private static final long SO8 = 0x0e0e0e0e0e0e0e0eL;
    private static final long SI8 = 0x0f0f0f0f0f0f0f0fL;
    private static final long TILDE8 = 0x7e7e7e7e7e7e7e7eL;
    private static final long LOWS = 0x7f7f7f7f7f7f7f7fL;
    private static final long HIGHS = 0x8080808080808080L;
    /** Added to a byte's low seven bits: the sum's high bit is clear exactly when the byte is below 0x20. */
    private static final long BELOW_SPACE = 0x6060606060606060L;
    /** Added to a byte's low seven bits: the sum's high bit is set exactly when the byte is above 0x7d. */
    private static final long ABOVE_BRACE = 0x0202020202020202L;

    private Iso2022Text() {
    }

    /**
     * {@return the reading of {@code input} without those sequences, or {@code null} when it holds none}
     *
     * @param input text (UTF-8, or ASCII-compatible)
     */
    static TextView view(ByteBuffer input) {
        int n = input.limit();
        int i = first(input, n);
        if (i >= n) {
            return null;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(n);
        for (int k = 0; k < i; k++) {
            out.write(input.get(k));
        }
        while (i < n) {
            int d = dropped(input, i);
            if (d > 0) {
                i += d;
            } else {
                out.write(input.get(i++));
            }
        }
        return new Dropped(input, ByteBuffer.wrap(out.toByteArray()));
    }

    /**
     * {@return the index of the first sequence a decoder drops, {@code n} for none} The common case holds none of the
     * four bytes that can start one (ESC, SO, SI, {@code ~}): eight bytes are read at a time (little-endian) and
     * passed over by one coarse test ({@link #mayStart}: an ASCII byte below 0x20 or above 0x7d), then, for a word
     * that passes it, the exact test of the four bytes ({@link #holdsStart}); only a word that holds one is read byte
     * by byte. The coarse test costs a third of the exact one, and text rarely holds the bytes it lets through
     * (controls, {@code ~}, DEL); pretty-printed JSON's line feeds and tabs cost the exact test on their words.
     */
    static int first(ByteBuffer in, int n) {
        ByteBuffer input = in.order() == ByteOrder.LITTLE_ENDIAN ? in
                : in.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int i = 0;
        for (; i + Long.BYTES <= n; i += Long.BYTES) {
            long w = input.getLong(i);
            if (mayStart(w) != 0 && holdsStart(w) != 0) {
                for (int k = i; k < i + Long.BYTES; k++) {
                    if (dropped(input, k) > 0) {
                        return k;
                    }
                }
            }
        }
        for (; i < n; i++) {
            if (dropped(input, i) > 0) {
                return i;
            }
        }
        return n;
    }

    /**
     * {@return the high bit of each byte of {@code w} that is ASCII and below 0x20 or above 0x7d} A superset of ESC,
     * SO, SI and {@code ~}, exact per byte: no carry leaves a byte (its low seven bits plus 0x60 or 0x02 stay below
     * 0x100).
     */
    static long mayStart(long w) {
        long x = w & LOWS;
        return (~(x + BELOW_SPACE) | (x + ABOVE_BRACE)) & ~w & HIGHS;
    }

    /** {@return whether the byte {@code c} (0-255) is ESC, SO, SI or {@code ~}: one that can start a sequence} */
    static boolean mayStartAt(int c) {
        return c == 0x1b || c == 0x0e || c == 0x0f || c == '~';
    }

    /** {@return nonzero when a byte of {@code w} is ESC, SO, SI or {@code ~}} */
    static long holdsStart(long w) {
        return zeroByte(w ^ ESC8) | zeroByte(w ^ SO8) | zeroByte(w ^ SI8) | zeroByte(w ^ TILDE8);
    }

    /** {@return nonzero when a byte of {@code x} is zero} */
    private static long zeroByte(long x) {
        return (x - 0x0101010101010101L) & ~x & 0x8080808080808080L;
    }

    /** {@return the length of the sequence a decoder drops at {@code p}, 0 for none} */
    static int dropped(ByteBuffer b, int p) {
        int n = b.limit();
        byte x = b.get(p);
        if (x == 0x0e || x == 0x0f) {
            return 1;
        }
        if (x == '~') {
            if (p + 1 >= n) {
                return 0;
            }
            byte c = b.get(p + 1);
            return c == '{' || c == '}' || c == '\n' ? 2 : 0;
        }
        if (x != 0x1b) {
            return 0;
        }
        for (int q = p + 1; q <= p + MAX_INTERMEDIATES + 1 && q < n; q++) {
            int c = b.get(q) & 0xff;
            if (c >= 0x30 && c <= 0x7e) {
                return q == p + 1 ? 0 : q + 1 - p;
            }
            if (c < 0x20 || c > 0x2f) {
                return 0;
            }
        }
        return 0;
    }

    private static final class Dropped extends TextView.Escaped {
        Dropped(ByteBuffer input, ByteBuffer text) {
            super(input, text);
        }

        @Override
        long unit(int i) {
            int d = dropped(input, i);
            return d > 0 ? unit(d, 0) : unit(1, 1);
        }

        @Override
        byte[] encode(byte[] ascii) {
            return ascii;
        }
    }
}
