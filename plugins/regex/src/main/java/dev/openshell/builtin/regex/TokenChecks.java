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

    /** The fewest repeats in a row that make a stretch of a placeholder: 8 (random base 62: about 62^-8 per place). */
    static final int PLACEHOLDER_REPEATS = 8;
    /** The longest period of a placeholder's stretch: 8 ({@code EXAMPLE}, {@code 123}, {@code x}). */
    static final int PLACEHOLDER_PERIOD = 8;
    /**
     * The most characters of a placeholder outside its stretches: 12, fewer than the body of nearly every entry, so
     * a real token padded with a repeated character ({@code sk-proj-<key>xxxx...}) is not one.
     */
    static final int PLACEHOLDER_REST = 12;

    /**
     * {@return whether the token body {@code [start, end)} is a placeholder written in a token's shape} Separators
     * ({@code - _ . ~}) left out, at least half of its characters, and all but at most {@value #PLACEHOLDER_REST},
     * lie in stretches that repeat with a period of 1 to {@value #PLACEHOLDER_PERIOD} at least
     * {@value #PLACEHOLDER_REPEATS} times in a row ({@code ghp_xxxx...}, {@code AKIAXXXXXXXXXXXXXXXX},
     * {@code XXXX_YOUR_TOKEN_XXXX}, {@code GR1348941} and {@code 123123...}). A body drawn at random never
     * is: each such stretch has a chance of about {@code alphabet^-8} per place, and one stretch is not half of a
     * real token's body (a Telegram bot id {@code 5000000001:...} is a tenth of its token); nor is a real token
     * padded with a repeated character, whose own characters are more than the rest allowed.
     *
     * @param text the text
     * @param start the first character after the prefix (or of a keyword entry's value)
     * @param end the end of the token
     */
    static boolean placeholder(ByteBuffer text, int start, int end) {
        byte[] s = new byte[end - start];
        int n = 0;
        for (int i = start; i < end; i++) {
            byte b = text.get(i);
            if (b != '-' && b != '_' && b != '.' && b != '~') {
                s[n++] = b;
            }
        }
        if (n < PLACEHOLDER_REPEATS + 1) {
            return false;
        }
        boolean[] covered = new boolean[n];
        for (int p = 1; p <= PLACEHOLDER_PERIOD && p < n; p++) {
            int a = 0; // the stretch that repeats with period p starts at a: s[k] == s[k - p] for k in [a + p, i)
            for (int i = p; i <= n; i++) {
                if (i < n && s[i] == s[i - p]) {
                    continue;
                }
                if (i - a - p >= PLACEHOLDER_REPEATS) {
                    java.util.Arrays.fill(covered, a, i, true);
                }
                a = i - p + 1;
            }
        }
        int count = 0;
        for (boolean c : covered) {
            count += c ? 1 : 0;
        }
        return 2 * count >= n && n - count <= PLACEHOLDER_REST;
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
