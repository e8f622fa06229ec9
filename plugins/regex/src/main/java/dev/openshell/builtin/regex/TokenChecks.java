package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.util.zip.CRC32;

/** Checks on a matched token's characters: Shannon entropy and the checksums of {@link Rule.Checksum}. Stateless. */
final class TokenChecks {
    private static final String BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    private static final int CHECKSUM_CHARS = 6;

    private TokenChecks() {
    }

    /**
     * {@return the Shannon entropy of the bytes {@code [start, end)}, in bits per byte; 0 for an empty range}
     *
     * @param text the text
     * @param start the first byte
     * @param end the end, exclusive
     */
    static double entropy(ByteBuffer text, int start, int end) {
        int n = end - start;
        if (n <= 0) {
            return 0;
        }
        int[] counts = new int[256];
        for (int i = start; i < end; i++) {
            counts[text.get(i) & 0xff]++;
        }
        double bits = 0;
        for (int c : counts) {
            if (c > 0) {
                double p = (double) c / n;
                bits -= p * Math.log(p);
            }
        }
        return bits / Math.log(2);
    }

    /**
     * {@return whether the token body {@code [start, end)} carries a valid checksum of the scheme}
     *
     * @param scheme the scheme
     * @param text the text
     * @param start the first character after the prefix
     * @param end the end of the token
     */
    static boolean valid(Rule.Checksum scheme, ByteBuffer text, int start, int end) {
        return switch (scheme) {
            case CRC32_BASE62 -> crc32Base62(text, start, end);
        };
    }

    private static boolean crc32Base62(ByteBuffer text, int start, int end) {
        int payload = end - start - CHECKSUM_CHARS;
        if (payload <= 0) {
            return false;
        }
        CRC32 crc = new CRC32();
        for (int i = start; i < start + payload; i++) {
            crc.update(text.get(i));
        }
        String expected = base62(crc.getValue(), CHECKSUM_CHARS);
        for (int k = 0; k < CHECKSUM_CHARS; k++) {
            if (text.get(start + payload + k) != expected.charAt(k)) {
                return false;
            }
        }
        return true;
    }

    /** {@return {@code value} in base 62, left-padded with {@code 0} to {@code width} characters} */
    static String base62(long value, int width) {
        char[] out = new char[width];
        long v = value;
        for (int k = width - 1; k >= 0; k--) {
            out[k] = BASE62.charAt((int) (v % 62));
            v /= 62;
        }
        return new String(out);
    }
}
