package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Strict UTF-8 well-formedness (The Unicode Standard, Table 3-7 "Well-Formed UTF-8 Byte Sequences"; RFC 3629 section
 * 4): exactly what the JDK's UTF-8 decoder accepts when malformed input is reported rather than replaced. Rejected:
 * stray continuation bytes, truncated sequences, overlong forms (C0, C1, E0 80-9F, F0 80-8F), UTF-16 surrogates
 * (ED A0-BF) and code points above U+10FFFF (F4 90-BF, F5-FF).
 *
 * <p>Runs of ASCII are checked eight bytes at a time; the body is never decoded or copied.
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
        ByteBuffer bytes = b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int n = bytes.limit();
        int i = 0;
        while (i < n) {
            if (i + 8 <= n && (bytes.getLong(i) & HIGH_BITS) == 0) {
                i += 8;
                continue;
            }
            int c = bytes.get(i) & 0xff;
            if (c < 0x80) {
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
                return false; // 80-C1 (continuation or overlong lead) and F5-FF
            }
            if (i + need >= n) {
                return false; // truncated
            }
            int second = bytes.get(i + 1) & 0xff;
            if (second < lo || second > hi) {
                return false;
            }
            for (int k = 2; k <= need; k++) {
                int cont = bytes.get(i + k) & 0xff;
                if (cont < 0x80 || cont > 0xbf) {
                    return false;
                }
            }
            i += need + 1;
        }
        return true;
    }
}
