package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The YAML layer: the escapes of a double-quoted scalar (YAML 1.2.2 section 5.7, "Escaped Characters", and 7.3.1,
 * escaped line breaks), decoded as a second reading of a body declared as YAML ({@link BodyDecoder}).
 *
 * <p>Decoded: {@code \0 \a \b \t \n \v \f \r \e}, escaped space, {@code \" \/ \\}, a backslash before a tab,
 * {@code \N \_ \L \P}, {@code \x} with 2, <code>&#92;u</code> with 4 and <code>&#92;U</code> with 8 hex digits (a code point above
 * U+10FFFF stays as written), and a backslash before a line break, which reads as nothing together with the break and
 * the spaces and tabs that start the next line (so {@code "sk-proj-Ab\}<i>line break</i>{@code   3d..."} is one
 * token). A backslash that starts none of these stays itself. The escapes are decoded wherever they are, not only
 * inside double-quoted scalars: the reading is an addition to the text as it is (both are scanned), so a backslash in
 * a plain or single-quoted scalar read as an escape costs at most a redaction the upstream did not need. The way back
 * replaces whole escapes and writes replacements escaped as in a double-quoted scalar.
 */
final class YamlText {
    private static final long BACKSLASHES = 0x5c5c_5c5c_5c5c_5c5cL;

    private YamlText() {
    }

    /**
     * {@return the reading with every YAML escape decoded, or {@code null} when the text holds none}
     *
     * @param input text (UTF-8, or ASCII-compatible)
     */
    static TextView view(ByteBuffer input) {
        ByteBuffer b = input.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int n = b.limit();
        int i = 0;
        while (true) {
            i = JsonText.skipTo(b, i, n, BACKSLASHES, BACKSLASHES);
            while (i < n && b.get(i) != '\\') {
                i++;
            }
            if (i >= n) {
                return null;
            }
            if ((int) escape(b, i) != LITERAL) {
                break;
            }
            i++;
        }
        byte[] out = new byte[n + n / 2 + 4]; // "\\L" (2 bytes) reads as U+2028 (3 bytes)
        int o = 0;
        for (int j = 0; j < n; ) {
            long u = escape(b, j);
            int kind = (int) u;
            if (kind == LITERAL) {
                out[o++] = b.get(j);
            } else if (kind != NOTHING) {
                o = Charsets.Transcoded.putUtf8(out, o, kind);
            }
            j += (int) (u >>> 32);
        }
        return new Decoded(input, ByteBuffer.wrap(out, 0, o).slice());
    }

    private static final int LITERAL = -1;
    private static final int NOTHING = -2;

    private static long pack(int length, int kind) {
        return ((long) length << 32) | (kind & 0xffff_ffffL);
    }

    /**
     * {@return the unit at {@code i}: its input length times 2^32 plus what it reads as ({@link #LITERAL} for the
     * byte itself, {@link #NOTHING}, or a code point)}
     */
    private static long escape(ByteBuffer b, int i) {
        int n = b.limit();
        if (b.get(i) != '\\' || i + 1 >= n) {
            return pack(1, LITERAL);
        }
        int c = b.get(i + 1);
        int simple = switch (c) {
            case '0' -> 0;
            case 'a' -> 7;
            case 'b' -> '\b';
            case 't', '\t' -> '\t';
            case 'n' -> '\n';
            case 'v' -> 11;
            case 'f' -> '\f';
            case 'r' -> '\r';
            case 'e' -> 27;
            case ' ', '"', '/', '\\' -> c;
            case 'N' -> 0x85;
            case '_' -> 0xa0;
            case 'L' -> 0x2028;
            case 'P' -> 0x2029;
            default -> -1;
        };
        if (simple >= 0) {
            return pack(2, simple);
        }
        if (c == '\n' || c == '\r') {
            int j = i + 2;
            if (c == '\r' && j < n && b.get(j) == '\n') {
                j++;
            }
            while (j < n && (b.get(j) == ' ' || b.get(j) == '\t')) {
                j++;
            }
            return pack(j - i, NOTHING);
        }
        int digits = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
        if (digits == 0 || i + 2 + digits > n) {
            return pack(1, LITERAL);
        }
        long cp = 0;
        for (int k = 0; k < digits; k++) {
            int h = JsonText.hex(b.get(i + 2 + k));
            if (h < 0) {
                return pack(1, LITERAL);
            }
            cp = cp * 16 + h;
        }
        return cp > 0x10ffff ? pack(1, LITERAL) : pack(2 + digits, (int) cp);
    }

    /** YAML with escapes: the decoded text, and the way back over its escapes. */
    private static final class Decoded extends TextView.Escaped {
        Decoded(ByteBuffer input, ByteBuffer text) {
            super(input, text);
        }

        @Override
        long unit(int i) {
            long u = escape(input, i);
            int kind = (int) u;
            int length = kind == LITERAL ? 1 : kind == NOTHING ? 0
                    : kind < 0x80 ? 1 : kind < 0x800 ? 2 : kind < 0x10000 ? 3 : 4;
            return unit((int) (u >>> 32), length);
        }

        @Override
        byte[] encode(byte[] ascii) {
            return JsonText.escapeString(ascii);
        }
    }
}
