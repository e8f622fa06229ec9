package dev.openshell.builtin.regex;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The JSON layer (RFC 8259): the text a JSON parser reads is the document with every string escape decoded.
 *
 * <p>The document is checked first: one JSON value (or, for NDJSON, JSON Lines and JSON text sequences, any number of
 * them) with whitespace around, strict grammar, any nesting depth. The only leniency is one that changes nothing a
 * reader sees: raw control characters inside strings are accepted as themselves. Anything else a lenient parser might
 * accept (comments, single quotes, trailing commas, unknown escapes) is not JSON, and a body declared as JSON that is
 * not JSON is undecodable.
 *
 * <p>The text keeps the document's structure and replaces each escape by the UTF-8 of what it stands for
 * ({@code \n} by a line feed, {@code \u0073} by {@code s}, a surrogate pair by its 4-byte character, a lone surrogate
 * by its 3-byte form), so token boundaries are judged as the reader sees them. A document without escapes is its own
 * text (no copy). The way back replaces whole escapes, and writes replacements JSON-escaped, so a redacted document is
 * still valid JSON.
 */
final class JsonText {
    private JsonText() {
    }

    /**
     * {@return the view of a JSON document}
     *
     * @param input the document, UTF-8 (or transcoded to it)
     * @param sequence whether a sequence of JSON texts is allowed (NDJSON, JSON Lines, {@code json-seq})
     * @throws Undecodable if it is not JSON
     */
    static TextView view(ByteBuffer input, boolean sequence) throws Undecodable {
        if (!check(input, sequence)) {
            return TextView.identity(input);
        }
        return new Decoded(input, decode(input, false), false);
    }

    /**
     * {@return the view of a body that may be JSON, or {@code null} when it is not}
     *
     * @param input text
     */
    static TextView sniff(ByteBuffer input) {
        int n = input.limit();
        int i = 0;
        while (i < n && isWhitespace(input.get(i), false)) {
            i++;
        }
        if (i == n || (input.get(i) != '{' && input.get(i) != '[')) {
            return null;
        }
        try {
            return view(input, false);
        } catch (Undecodable e) {
            return null;
        }
    }

    /**
     * {@return the view of text that is not a JSON document but holds JSON string escapes, or {@code null} when it
     * holds none} A lenient JSON reader (one that takes {@code NaN}, comments or a trailing comma), or a program that
     * unquotes a string it found in the text, reads {@code \u0073k-...} as {@code sk-...}. Every valid escape (as in a
     * JSON string) is decoded; a backslash that starts none stays as it is. The way back replaces whole escapes.
     *
     * @param input text (UTF-8, or ASCII-compatible)
     */
    static TextView escapes(ByteBuffer input) {
        ByteBuffer b = input.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int n = b.limit();
        int i = 0;
        while (true) {
            i = skipTo(b, i, n, BACKSLASHES, BACKSLASHES); // 8 bytes at a time to the next word with a backslash
            while (i < n && b.get(i) != '\\') {
                i++;
            }
            if (i >= n) {
                return null;
            }
            if (validEscape(b, i) > 0) {
                return new Decoded(input, decode(input, true), true);
            }
            i++;
        }
    }

    /** {@return the length of the valid escape at {@code i} (its backslash), or 0 when none starts there} */
    static int validEscape(ByteBuffer b, int i) {
        if (i + 1 >= b.limit()) {
            return 0;
        }
        return switch (b.get(i + 1)) {
            case '"', '\\', '/', 'b', 'f', 'n', 'r', 't' -> 2;
            case 'u' -> i + 6 <= b.limit() && hex4Checked(b, i + 2) >= 0 ? 6 : 0;
            default -> 0;
        };
    }

    private static Undecodable invalid() {
        return Undecodable.because("request body is declared as JSON but is not valid JSON");
    }

    /**
     * Checks the grammar.
     *
     * @return whether any string holds an escape
     * @throws Undecodable if the document is not JSON
     */
    static boolean check(ByteBuffer input, boolean sequence) throws Undecodable {
        ByteBuffer b = input.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int n = b.limit();
        byte[] stack = new byte[16];
        int depth = 0;
        boolean escapes = false;
        int i = skip(b, 0, sequence);
        if (i == n) {
            throw invalid();
        }
        boolean expectValue = true;
        while (true) {
            if (expectValue) {
                i = skip(b, i, sequence);
                if (i >= n) {
                    throw invalid();
                }
                int c = b.get(i);
                if (c == '{' || c == '[') {
                    if (depth == stack.length) {
                        stack = java.util.Arrays.copyOf(stack, depth * 2);
                    }
                    stack[depth++] = (byte) c;
                    i = skip(b, i + 1, sequence);
                    if (i < n && b.get(i) == (c == '{' ? '}' : ']')) {
                        depth--;
                        i++;
                        expectValue = false;
                    } else if (c == '{') {
                        long s = key(b, i, sequence);
                        escapes |= s < 0;
                        i = (int) Math.abs(s);
                    }
                    continue;
                }
                long s = scalar(b, i, c);
                escapes |= s < 0;
                i = (int) Math.abs(s);
                expectValue = false;
                continue;
            }
            i = skip(b, i, sequence);
            if (depth == 0) {
                if (i == n) {
                    return escapes;
                }
                if (!sequence) {
                    throw invalid();
                }
                expectValue = true;
                continue;
            }
            if (i >= n) {
                throw invalid();
            }
            int c = b.get(i);
            byte top = stack[depth - 1];
            if (c == ',') {
                i++;
                if (top == '{') {
                    long s = key(b, skip(b, i, sequence), sequence);
                    escapes |= s < 0;
                    i = (int) Math.abs(s);
                }
                expectValue = true;
            } else if ((c == '}' && top == '{') || (c == ']' && top == '[')) {
                depth--;
                i++;
            } else {
                throw invalid();
            }
        }
    }

    /**
     * Parses the scalar at {@code i}, whose first byte is {@code c}: a string, {@code true}, {@code false},
     * {@code null} or a number; returns the index after it, negated for a string that holds an escape.
     */
    private static long scalar(ByteBuffer b, int i, int c) throws Undecodable {
        if (c == '"') {
            return string(b, i);
        }
        if (c == 't') {
            return literal(b, i, "true");
        }
        if (c == 'f') {
            return literal(b, i, "false");
        }
        if (c == 'n') {
            return literal(b, i, "null");
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
            return number(b, i);
        }
        throw invalid();
    }

    /** Parses a member name and its colon at {@code i}; returns the index after the colon, negated if escaped. */
    private static long key(ByteBuffer b, int i, boolean sequence) throws Undecodable {
        if (i >= b.limit() || b.get(i) != '"') {
            throw invalid();
        }
        long s = string(b, i);
        int j = skip(b, (int) Math.abs(s), sequence);
        if (j >= b.limit() || b.get(j) != ':') {
            throw invalid();
        }
        return s < 0 ? -(j + 1L) : j + 1L;
    }

    /** Parses a string at {@code i} (its opening quote); returns the index after it, negated if it holds escapes. */
    private static long string(ByteBuffer b, int i) throws Undecodable {
        int n = b.limit();
        boolean escaped = false;
        int j = i + 1;
        while (j < n) {
            j = skipTo(b, j, n, QUOTES, BACKSLASHES);
            if (j >= n) {
                break;
            }
            int c = b.get(j);
            if (c == '"') {
                return escaped ? -(j + 1L) : j + 1L;
            }
            if (c == '\\') {
                escaped = true;
                j += escapeLength(b, j);
            } else {
                j++;
            }
        }
        throw invalid();
    }

    /** {@return the length of the escape at {@code i} (its backslash)} @throws Undecodable if it is not one */
    private static int escapeLength(ByteBuffer b, int i) throws Undecodable {
        if (i + 1 >= b.limit()) {
            throw invalid();
        }
        switch (b.get(i + 1)) {
            case '"', '\\', '/', 'b', 'f', 'n', 'r', 't' -> {
                return 2;
            }
            case 'u' -> {
                if (i + 6 > b.limit()) {
                    throw invalid();
                }
                for (int k = 2; k < 6; k++) {
                    if (hex(b.get(i + k)) < 0) {
                        throw invalid();
                    }
                }
                return 6;
            }
            default -> throw invalid();
        }
    }

    private static int literal(ByteBuffer b, int i, String word) throws Undecodable {
        if (i + word.length() > b.limit()) {
            throw invalid();
        }
        for (int k = 0; k < word.length(); k++) {
            if (b.get(i + k) != word.charAt(k)) {
                throw invalid();
            }
        }
        return i + word.length();
    }

    private static int number(ByteBuffer b, int i) throws Undecodable {
        int n = b.limit();
        int j = i;
        if (b.get(j) == '-') {
            j++;
        }
        if (j < n && b.get(j) == '0') {
            j++;
        } else {
            int s = j;
            j = digits(b, j);
            if (j == s) {
                throw invalid();
            }
        }
        if (j < n && b.get(j) == '.') {
            int s = ++j;
            j = digits(b, j);
            if (j == s) {
                throw invalid();
            }
        }
        if (j < n && (b.get(j) == 'e' || b.get(j) == 'E')) {
            j++;
            if (j < n && (b.get(j) == '+' || b.get(j) == '-')) {
                j++;
            }
            int s = j;
            j = digits(b, j);
            if (j == s) {
                throw invalid();
            }
        }
        return j;
    }

    private static int digits(ByteBuffer b, int j) {
        while (j < b.limit() && b.get(j) >= '0' && b.get(j) <= '9') {
            j++;
        }
        return j;
    }

    private static int skip(ByteBuffer b, int i, boolean sequence) {
        int n = b.limit();
        while (i < n && isWhitespace(b.get(i), sequence)) {
            i++;
        }
        return i;
    }

    private static boolean isWhitespace(byte c, boolean sequence) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || (sequence && c == 0x1e);
    }

    static int hex(int c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }

    private static int hex4(ByteBuffer b, int i) {
        return (hex(b.get(i)) << 12) | (hex(b.get(i + 1)) << 8) | (hex(b.get(i + 2)) << 4) | hex(b.get(i + 3));
    }

    /**
     * {@return the code point of the escape at {@code i} (its backslash) times 2^8 plus its input length} The
     * document has been checked, so every backslash starts an escape.
     */
    private static long escape(ByteBuffer b, int i) {
        int c = b.get(i + 1);
        if (c != 'u') {
            int v = switch (c) {
                case 'b' -> '\b';
                case 'f' -> '\f';
                case 'n' -> '\n';
                case 'r' -> '\r';
                case 't' -> '\t';
                default -> c;
            };
            return ((long) v << 8) | 2;
        }
        int cp = hex4(b, i + 2);
        if (cp >= 0xd800 && cp <= 0xdbff && i + 12 <= b.limit() && b.get(i + 6) == '\\' && b.get(i + 7) == 'u') {
            int low = hex4Checked(b, i + 8);
            if (low >= 0xdc00 && low <= 0xdfff) {
                return ((long) (0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00)) << 8) | 12;
            }
        }
        return ((long) cp << 8) | 6;
    }

    private static int hex4Checked(ByteBuffer b, int i) {
        for (int k = 0; k < 4; k++) {
            if (hex(b.get(i + k)) < 0) {
                return -1;
            }
        }
        return hex4(b, i);
    }

    private static final long ONES = 0x0101_0101_0101_0101L;
    private static final long HIGHS = 0x8080_8080_8080_8080L;
    private static final long QUOTES = 0x2222_2222_2222_2222L;
    /** A backslash in each byte of a word, for {@link #skipTo}. */
    static final long BACKSLASHES = 0x5c5c_5c5c_5c5c_5c5cL;

    /**
     * {@return the first index at or after {@code j} of an 8-byte word holding one of two ASCII bytes (given repeated
     * in {@code a} and {@code z}), or where fewer than 8 bytes remain} The caller finishes byte by byte. The test is
     * the three-byte one's ({@link #skipTo(ByteBuffer, int, int, long, long, long)}).
     */
    static int skipTo(ByteBuffer littleEndian, int j, int n, long a, long z) {
        while (j + 8 <= n) {
            long w = littleEndian.getLong(j);
            if (((((w ^ a) - ONES) | ((w ^ z) - ONES)) & ~w & HIGHS) != 0) {
                return j;
            }
            j += 8;
        }
        return j;
    }

    /**
     * {@return the first index at or after {@code j} of an 8-byte word holding one of three ASCII bytes (given
     * repeated in {@code a}, {@code y} and {@code z}), or where fewer than 8 bytes remain} The caller finishes byte by
     * byte. A byte of the word equal to one of the three is a zero byte of the word XOR it, so subtracting 1 from each
     * byte sets its high bit; any other byte's high bit is set only when the word's byte is not ASCII (masked out, as
     * none of the three is) or by a borrow from a zero byte below it. So a word is stopped at exactly when it holds one
     * of the three: three XORs, three subtractions and three masks per 8 bytes, one mask fewer per byte than the
     * classic zero-byte test.
     */
    static int skipTo(ByteBuffer littleEndian, int j, int n, long a, long y, long z) {
        while (j + 8 <= n) {
            long w = littleEndian.getLong(j);
            if (((((w ^ a) - ONES) | ((w ^ y) - ONES) | ((w ^ z) - ONES)) & ~w & HIGHS) != 0) {
                return j;
            }
            j += 8;
        }
        return j;
    }

    private static int utf8Length(int cp) {
        return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    }

    /** {@return the text of {@code input} with its escapes decoded; {@code lenient}: a non-escape backslash stays} */
    private static ByteBuffer decode(ByteBuffer input, boolean lenient) {
        ByteBuffer b = input.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int n = b.limit();
        byte[] out = new byte[n];
        int o = 0;
        int i = 0;
        while (i < n) {
            int run = skipTo(b, i, n, BACKSLASHES, BACKSLASHES);
            while (run < n && b.get(run) != '\\') {
                run++;
            }
            b.get(i, out, o, run - i);
            o += run - i;
            i = run;
            if (i >= n) {
                break;
            }
            if (lenient && validEscape(b, i) == 0) {
                out[o++] = '\\';
                i++;
                continue;
            }
            long e = escape(b, i);
            int cp = (int) (e >>> 8);
            i += (int) (e & 0xff);
            o = Charsets.Transcoded.putUtf8(out, o, cp);
        }
        return ByteBuffer.wrap(out, 0, o).slice();
    }

    /**
     * {@return {@code ascii} as the content of a JSON string: quote, backslash and control characters escaped}
     *
     * @param ascii ASCII text
     */
    static byte[] escapeString(byte[] ascii) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(ascii.length + 8);
        for (byte c : ascii) {
            if (c == '"' || c == '\\') {
                out.write('\\');
                out.write(c);
            } else if (c >= 0 && c < 0x20) {
                out.writeBytes(String.format("\\u%04x", (int) c).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            } else {
                out.write(c);
            }
        }
        return out.toByteArray();
    }

    /** A document with escapes: the decoded text, and the way back over its escapes. */
    private static final class Decoded extends TextView.Escaped {
        private final boolean lenient;

        Decoded(ByteBuffer input, ByteBuffer text, boolean lenient) {
            super(input, text);
            this.lenient = lenient;
        }

        @Override
        long unit(int i) {
            if (input.get(i) != '\\' || lenient && validEscape(input, i) == 0) {
                return unit(1, 1);
            }
            long e = escape(input, i);
            return unit((int) (e & 0xff), utf8Length((int) (e >>> 8)));
        }

        @Override
        byte[] encode(byte[] ascii) {
            return escapeString(ascii);
        }
    }
}
