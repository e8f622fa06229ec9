package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.internal.Syntax;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * A secret as a JSON string's content may spell it (RFC 8259 section 7): each character literal (UTF-8) or
 * escaped, as {@code \\uXXXX} (hex in any case; a surrogate pair for a character beyond U+FFFF) or as its
 * two-character escape ({@code \"}, {@code \\}, {@code \/}, {@code \b}, {@code \f}, {@code \n}, {@code \r},
 * {@code \t}), in any mix: an upstream that escapes some ASCII characters of a value as {@code \\u00XX} does not
 * hide it.
 */
final class JsonSpelling implements Spelling {
    /** The secret's code points. */
    final int[] cps;
    /** Each code point as UTF-8. */
    final byte[][] utf8;

    /** @param secret the secret value; not empty */
    JsonSpelling(String secret) {
        cps = secret.codePoints().toArray();
        utf8 = new byte[cps.length][];
        for (int c = 0; c < cps.length; c++) {
            utf8[c] = new String(Character.toChars(cps[c])).getBytes(StandardCharsets.UTF_8);
        }
    }

    @Override
    public int longest() {
        int w = 0;
        for (int cp : cps) {
            w += cp > 0xffff ? 12 : 6;
        }
        return w;
    }

    /** {@return the character a two-character escape {@code \x} stands for, or -1} @param x the byte after \ */
    static int unescape(int x) {
        return switch (x) {
            case '"', '\\', '/' -> x;
            case 'b' -> 8;
            case 'f' -> 12;
            case 'n' -> 10;
            case 'r' -> 13;
            case 't' -> 9;
            default -> -1;
        };
    }

    /** {@return the byte after \ of the two-character escape of {@code cp}, or -1} @param cp a code point */
    static int shortEscape(int cp) {
        return switch (cp) {
            case '"', '\\', '/' -> cp;
            case 8 -> 'b';
            case 12 -> 'f';
            case 10 -> 'n';
            case 13 -> 'r';
            case 9 -> 't';
            default -> -1;
        };
    }

    @Override
    public void starts(Pairs pairs) {
        pairs.pair('\\', 'u');
        int e = shortEscape(cps[0]);
        if (e >= 0) {
            pairs.pair('\\', e);
        }
        byte[] lit = utf8[0];
        int b0 = lit[0] & 0xff;
        if (lit.length > 1) {
            pairs.pair(b0, lit[1] & 0xff);
        } else if (cps.length > 1) {
            pairs.pair(b0, utf8[1][0] & 0xff);
            pairs.pair(b0, '\\');
        } else {
            pairs.pair(b0, -1);
        }
    }

    @Override
    public int match(byte[] buf, int i, int n) {
        int p = i;
        for (int c = 0; c < cps.length; c++) {
            if (p >= n) {
                return -1;
            }
            if (buf[p] != '\\') {
                byte[] lit = utf8[c];
                int have = Math.min(lit.length, n - p);
                if (!Arrays.equals(buf, p, p + have, lit, 0, have)) {
                    return 0;
                }
                if (have < lit.length) {
                    return -1;
                }
                p += lit.length;
                continue;
            }
            if (p + 1 >= n) {
                return -1;
            }
            int x = buf[p + 1] & 0xff;
            if (x != 'u') {
                if (unescape(x) != cps[c]) {
                    return 0;
                }
                p += 2;
                continue;
            }
            int cp = cps[c];
            int units = cp > 0xffff ? 2 : 1;
            for (int u = 0; u < units; u++) {
                char want = units == 1 ? (char) cp : Character.toChars(cp)[u];
                int q = p + 6 * u;
                int got = hex4(buf, q, n);
                if (got == -2) {
                    return -1;
                }
                if (got != want) {
                    return 0;
                }
            }
            p += 6 * units;
        }
        return p - i;
    }

    /** {@return the value of {@code \\uXXXX} at {@code q}; -1 if it is not one; -2 if {@code buf} ends first} */
    private static int hex4(byte[] buf, int q, int n) {
        int v = 0;
        for (int d = 0; d < 6; d++) {
            if (q + d >= n) {
                return -2;
            }
            int x = buf[q + d] & 0xff;
            if (d == 0 && x != '\\' || d == 1 && x != 'u') {
                return -1;
            }
            if (d >= 2) {
                int h = Syntax.hexDigit((char) x);
                if (h < 0) {
                    return -1;
                }
                v = v << 4 | h;
            }
        }
        return v;
    }

    /**
     * {@return {@code s} JSON-escaped (RFC 8259 section 7): quote and reverse solidus escaped, the solidus only when
     * {@code slash}, controls and non-ASCII characters as six-character escapes in upper- or lowercase hex}
     *
     * @param s the text
     * @param slash whether {@code /} is escaped
     * @param upperHex whether hex digits are uppercase
     */
    static String escaped(String s, boolean slash, boolean upperHex) {
        Objects.requireNonNull(s, "s");
        StringBuilder b = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '/' -> b.append(slash ? "\\/" : "/");
                default -> {
                    if (c < 0x20 || c > 0x7e) {
                        b.append(String.format(upperHex ? "\\u%04X" : "\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.toString();
    }
}
