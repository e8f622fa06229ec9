package dev.openshell.builtin.regex;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;

/**
 * The {@code application/x-www-form-urlencoded} layer (WHATWG URL Standard, "application/x-www-form-urlencoded
 * parsing"): names and values with {@code +} read as a space and {@code %XX} as the byte it encodes; a {@code %} not
 * followed by two hex digits stays itself. The {@code &} and {@code =} separators stay in the text, where no pattern
 * crosses them. The decoded bytes are UTF-8 (the form's charset) and must be well-formed. The way back replaces whole
 * escapes and writes replacements percent-encoded (everything but {@code A-Z a-z 0-9 * - . _}), so a redacted body is
 * still a form body with the same names.
 */
final class FormText {
    private FormText() {
    }

    /**
     * {@return the view of a form body}
     *
     * @param input the body as text (ASCII-compatible)
     * @param utf8 whether the decoded bytes must be well-formed UTF-8 (the form's charset is UTF-8)
     * @throws Undecodable if they are not
     */
    static TextView view(ByteBuffer input, boolean utf8) throws Undecodable {
        int n = input.limit();
        int i = 0;
        while (true) {
            i = JsonText.skipTo(input, i, n, 0x2525_2525_2525_2525L, 0x2b2b_2b2b_2b2b_2b2bL);
            if (i >= n || input.get(i) == '%' || input.get(i) == '+') {
                break;
            }
            i++;
        }
        if (i == n) {
            return TextView.identity(input); // nothing encoded: the text is the body
        }
        byte[] out = new byte[n];
        input.get(0, out, 0, i);
        int o = i;
        while (i < n) {
            byte c = input.get(i);
            if (c == '+') {
                out[o++] = ' ';
                i++;
            } else if (c == '%' && escaped(input, i)) {
                out[o++] = (byte) ((JsonText.hex(input.get(i + 1)) << 4) | JsonText.hex(input.get(i + 2)));
                i += 3;
            } else {
                out[o++] = c;
                i++;
            }
        }
        ByteBuffer text = ByteBuffer.wrap(out, 0, o).slice();
        if (utf8 && !Utf8.isWellFormed(text)) {
            throw new Undecodable(Undecodable.NOT_UTF8, "request body's form fields are not well-formed UTF-8");
        }
        return new Decoded(input, text);
    }

    private static boolean escaped(ByteBuffer b, int i) {
        return i + 2 < b.limit() && JsonText.hex(b.get(i + 1)) >= 0 && JsonText.hex(b.get(i + 2)) >= 0;
    }

    /** {@return {@code ascii} percent-encoded as a form name or value} @param ascii ASCII text */
    static byte[] encode(byte[] ascii) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(ascii.length * 2);
        for (byte c : ascii) {
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '*' || c == '-'
                    || c == '.' || c == '_') {
                out.write(c);
            } else {
                out.write('%');
                out.write(Character.toUpperCase(Character.forDigit((c >> 4) & 0xf, 16)));
                out.write(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return out.toByteArray();
    }

    private static final class Decoded extends TextView.Escaped {
        Decoded(ByteBuffer input, ByteBuffer text) {
            super(input, text);
        }

        @Override
        long unit(int i) {
            return input.get(i) == '%' && escaped(input, i) ? unit(3, 1) : unit(1, 1);
        }

        @Override
        byte[] encode(byte[] ascii) {
            return FormText.encode(ascii);
        }
    }
}
