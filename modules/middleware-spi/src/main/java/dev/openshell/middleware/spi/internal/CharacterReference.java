package dev.openshell.middleware.spi.internal;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * An HTML character reference inside a {@code <meta>} tag, read a byte at a time for {@link MetaCharsets} (WHATWG
 * HTML, "character reference state"): {@code &#} decimal digits or {@code &#x} hexadecimal digits, any number of
 * leading zeros, the {@code ;} optional (a parser reads {@code &#97} too); or {@code &} a name and {@code ;}, of which
 * the names that stand for ASCII characters a charset assignment is written with are known ({@code equals},
 * {@code semi}, {@code sol}, {@code quest}, {@code quot}, {@code apos}, {@code gt}, {@code lt}, {@code amp},
 * {@code Tab}, {@code NewLine}; {@code &hyphen;} is U+2010, not {@code -}). A reference that stands for an ASCII character is read
 * as it; any other is read as its bytes (at most {@value #KEPT} of them kept), so a name that holds one is judged as
 * written. Mutable, one per reader.
 */
final class CharacterReference {
    /** How many bytes of a reference are kept to be read as themselves when it stands for no ASCII character. */
    static final int KEPT = 32;
    private static final int NONE = -1;

    private final byte[] raw = new byte[KEPT];
    /** Bytes read since the {@code &}, the {@code &} included; 0 when no reference is being read. */
    int length;
    private boolean numeric;
    private int radix;
    private int digits;
    private long code;

    /** A {@code &} was read. */
    void start() {
        length = 0;
        numeric = false;
        radix = 0;
        digits = 0;
        code = 0;
        keep((byte) '&');
    }

    /** {@return whether {@code c} continues the reference (it is then read)} */
    boolean takes(byte c) {
        if (length == 1) {
            numeric = c == '#';
            return (numeric || letter(c)) && keep(c);
        }
        if (!numeric) {
            return (letter(c) || digit(c)) && length < KEPT && keep(c);
        }
        if (radix == 0) {
            radix = c == 'x' || c == 'X' ? 16 : 10;
            if (radix == 16) {
                return keep(c);
            }
        }
        int d = Character.digit(c, radix);
        if (d < 0 || c < 0) {
            return false;
        }
        digits++;
        code = Math.min(code * radix + d, 0x110000L);
        return keep(c);
    }

    /**
     * The reference ended (at {@code ;} when {@code semicolon}): what it stands for, or its bytes, go to {@code into}.
     */
    void end(boolean semicolon, MetaCharsets into, List<BodyCharsets.Declaration> out) {
        int n = Math.min(length, KEPT);
        length = 0;
        int c = numeric ? (digits > 0 ? (int) code : NONE) : semicolon ? named(n) : NONE;
        if (c >= 0 && c < 0x80) {
            into.text((byte) c, out);
            return;
        }
        for (int k = 0; k < n; k++) {
            into.text(raw[k], out);
        }
        if (semicolon) {
            into.text((byte) ';', out);
        }
    }

    private int named(int n) {
        return switch (new String(raw, 1, n - 1, StandardCharsets.ISO_8859_1)) {
            case "equals" -> '=';
            case "semi" -> ';';
            case "sol" -> '/';
            case "quest" -> '?';
            case "quot" -> '"';
            case "apos" -> '\'';
            case "gt", "GT" -> '>';
            case "lt", "LT" -> '<';
            case "amp", "AMP" -> '&';
            case "Tab" -> '\t';
            case "NewLine" -> '\n';
            default -> NONE;
        };
    }

    /** Keeps {@code c} (the first {@value #KEPT} bytes); {@return true} */
    private boolean keep(byte c) {
        if (length < KEPT) {
            raw[length] = c;
        }
        length++;
        return true;
    }

    private static boolean letter(byte c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z';
    }

    private static boolean digit(byte c) {
        return c >= '0' && c <= '9';
    }
}
