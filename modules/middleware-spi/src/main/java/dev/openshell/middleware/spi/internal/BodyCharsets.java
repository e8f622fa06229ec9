package dev.openshell.middleware.spi.internal;

import static org.apiguardian.api.API.Status.INTERNAL;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apiguardian.api.API;

/**
 * Which charsets a body declares in itself, as the clients that read a body's bytes do (attacker passes 9 and 10,
 * P11-1, P11-2, P11-7, P12-1, P12-3): the one rule the response scrub and the {@code openshell/regex} stage share.
 * Three kinds of declaration are read, in ASCII bytes:
 *
 * <ul>
 *   <li>a signature at the very start: the byte order marks of UTF-8, UTF-16 and UTF-32, and the UTF-7 signatures
 *       {@code +/v8}, {@code +/v9}, {@code +/v+}, {@code +/v/} (RFC 2152; what {@code charset_normalizer}, and so
 *       Python's requests for a body without a declared charset, detects UTF-7 by);</li>
 *   <li>an XML declaration or other processing instruction at the start (after a UTF-8 byte order mark and white
 *       space), in the first {@value #WINDOW} bytes: its {@code encoding} pseudo-attribute (XML 1.0 section 4.3.3),
 *       quoted or not, with white space around {@code =}, searched up to the first {@code ?>} or the end of the first
 *       line (its LF), whichever is later (lxml reads the declaration; BeautifulSoup's {@code EncodingDetector} matches
 *       {@code ^\s*<\?.*encoding=} on that line, in the first 1024 bytes);</li>
 *   <li>an HTML {@code <meta>} element <em>anywhere in the body</em> ({@link MetaCharsets}): every {@code charset}
 *       assignment inside a tag that starts with {@code <meta} (white space allowed after {@code <}), so both
 *       {@code <meta charset="...">} and the {@code content="text/html; charset=..."} of {@code http-equiv}. A WHATWG
 *       prescan reads the first 1024 bytes, but BeautifulSoup reads up to byte 2048 or 5% of the document (all of it
 *       when asked), a browser that meets a later one while parsing reloads the page in it, and libxml2's HTML parser
 *       takes one wherever it meets it: so no window. A tag ends at the first {@code >} outside quotes; comments are
 *       not skipped. More declarations found only refuse more.</li>
 * </ul>
 *
 * <p>The names are returned as a codec lookup reads them ({@link CharsetName}: lower case, every run of other bytes
 * than letters, digits and {@code .} one {@code -}, none at the ends; at most {@value CharsetName#MAX} bytes), in the
 * order their ends are read, each only when some reader resolves it ({@link KnownCharsets}: a template's {@code %s}
 * or {@code {enc}} declares nothing); the caller judges them as it judges a
 * {@code Content-Type} charset. A body read whole is read by {@link #declared(ByteBuffer)}; a streamed one by a
 * {@link Reader} fed its bytes as they arrive, which finds the same declarations however the bytes are split. Each
 * byte is looked at a bounded number of times (the search for {@code <} reads eight bytes per step); never throws. A
 * body in UTF-16 or UTF-32 whose declaration is in that encoding is not read (its bytes are not ASCII).
 */
@API(status = INTERNAL, since = "0.2")
public final class BodyCharsets {
    /** How many first bytes of a body are read for a signature or an XML declaration (BeautifulSoup reads 1024). */
    public static final int WINDOW = 1024;

    private BodyCharsets() {
    }

    /** Where a body declares a charset. */
    @API(status = INTERNAL, since = "0.2")
    public enum Source {
        /** A byte order mark or the UTF-7 signature at the start. */
        SIGNATURE,
        /** The {@code encoding} of an XML declaration (or processing instruction) at the start. */
        XML,
        /** The {@code charset} of an HTML {@code <meta>} element. */
        META
    }

    /**
     * A charset a body declares.
     *
     * @param name the name as a codec lookup reads it ({@link CharsetName}), never blank
     * @param source where it was declared
     */
    @API(status = INTERNAL, since = "0.2")
    public record Declaration(String name, Source source) {
    }

    /**
     * {@return the charsets the whole body {@code body[0, limit)} declares in itself, in the order found; empty when
     * none}
     *
     * @param body the whole body (position ignored, from index 0 to its limit)
     */
    public static List<Declaration> declared(ByteBuffer body) {
        Reader reader = new Reader();
        List<Declaration> out = reader.read(body, 0, body.limit());
        out.addAll(reader.end());
        return out;
    }

    /** {@return the charsets the whole body {@code b[0, n)} declares in itself} See {@link #declared(ByteBuffer)}. */
    public static List<Declaration> declared(byte[] b, int n) {
        return declared(ByteBuffer.wrap(b, 0, Math.max(0, Math.min(n, b.length))).slice());
    }

    /**
     * {@return a reader of one streamed body's declarations}
     */
    public static Reader reader() {
        return new Reader();
    }

    /**
     * The declarations of one body read as its bytes arrive: the first {@value #WINDOW} bytes are kept for the
     * signature and the XML declaration (read once they are decided: when the window is full, when the declaration
     * closed and its first line ended, or at the end), and every byte goes through {@link MetaCharsets}. Not
     * thread-safe: one reading thread.
     */
    @API(status = INTERNAL, since = "0.2")
    public static final class Reader {
        private final byte[] start = new byte[WINDOW];
        private int startLength;
        /** Whether the signature was read (at 4 bytes or the end). */
        private boolean signatureRead;
        /** Whether the start is read to its end (the XML declaration's first line, or none). */
        private boolean startRead;
        /** Where the XML declaration's {@code encoding} was searched up to. */
        private int xmlRead;
        private final MetaCharsets meta = new MetaCharsets();

        private Reader() {
        }

        /**
         * {@return the declarations whose end {@code b[off, off + len)}, the body's next bytes, holds}
         *
         * @param b the bytes
         * @param off where they start
         * @param len how many
         */
        public List<Declaration> read(byte[] b, int off, int len) {
            return read(ByteBuffer.wrap(b), off, len);
        }

        /**
         * {@return the declarations whose end {@code b[off, off + len)} (absolute indices; position and limit not
         * used), the body's next bytes, holds}
         *
         * @param b the bytes
         * @param off where they start
         * @param len how many
         */
        public List<Declaration> read(ByteBuffer b, int off, int len) {
            List<Declaration> out = new ArrayList<>(0);
            if (!startRead) {
                int n = Math.min(len, WINDOW - startLength);
                b.get(off, start, startLength, n);
                startLength += n;
                readStart(out, startLength == WINDOW);
            }
            meta.read(b, off, len, out);
            return out;
        }

        /** {@return the declarations the body's end completes}: a start shorter than the window, a name at the end */
        public List<Declaration> end() {
            List<Declaration> out = new ArrayList<>(0);
            if (!startRead) {
                readStart(out, true);
            }
            meta.end(out);
            return out;
        }

        /**
         * Reads what the kept start decides: the signature at 4 bytes; the XML declaration's {@code encoding} up to
         * its {@code ?>} once that came, then on to the later of its {@code ?>} and the end of its first line once
         * both came (or the window filled, or the body ended: {@code last}).
         */
        private void readStart(List<Declaration> out, boolean last) {
            int n = startLength;
            if (!signatureRead && (n >= 4 || last)) {
                signatureRead = true;
                String sig = signature(start, n);
                if (sig != null) {
                    out.add(new Declaration(sig, Source.SIGNATURE));
                }
            }
            int open = xmlOpen(start, n);
            if (open < 0) {
                startRead = signatureRead && (open == NOT_XML || last);
                return;
            }
            int close = indexOf(start, open + 2, n, (byte) '?', (byte) '>');
            int line = open;
            while (line < n && start[line] != '\n') { // Python's . matches CR: BeautifulSoup's line ends at LF
                line++;
            }
            boolean decided = close >= 0 && line < n || last; // the later of ?> and the line's end has come
            int to = decided ? Math.max(close < 0 ? n : close, line) : close;
            if (to > xmlRead) {
                encodings(start, Math.max(xmlRead, open + 2), to, out);
                xmlRead = to;
            }
            startRead = signatureRead && decided;
        }
    }

    /**
     * {@return the charset names readers take from a {@code Content-Type} field value besides its {@code charset}
     * parameter (attacker pass 12, P14-4): w3lib's (Scrapy's) {@code charset=([\w-]+)} and node-fetch's
     * {@code charset=([^;]*)} take the first {@code charset=} anywhere in it ({@code x-charset=utf-7},
     * {@code a="charset=utf-7"}), and requests strips quotes from a parameter's name ({@code "charset"=utf-7}), so
     * every {@code charset} followed by quotes, white space and {@code =} is read, up to the next {@code ;}, as {@link CharsetValue} reads a
     * value; only names some reader resolves ({@link KnownCharsets})}
     *
     * @param raw the field value, as received (ISO-8859-1 characters)
     */
    public static List<String> namesInHeader(String raw) {
        List<String> out = new ArrayList<>(1);
        // U+017F and U+0130/U+0131 in UTF-8 read as s and i: Scrapy decodes the field as UTF-8 and w3lib matches
        // charset= with Python's case folding (attacker pass 14, P16-1)
        String value = raw.replace("\u00c5\u00bf", "s").replace("\u00c4\u00b0", "i").replace("\u00c4\u00b1", "i")
                .replace('\u017f', 's').replace('\u0130', 'i').replace('\u0131', 'i'); // as bytes, or decoded
        String lower = value.toLowerCase(java.util.Locale.ROOT);
        CharsetValue reading = new CharsetValue();
        for (int at = lower.indexOf("charset"); at >= 0; at = lower.indexOf("charset", at + 1)) {
            int i = at + 7;
            while (i < value.length() && (space((byte) value.charAt(i)) || value.charAt(i) == '"'
                    || value.charAt(i) == '\'')) {
                i++; // requests strips quotes and spaces from a parameter's name: "charset"=utf-7 (P15-1)
            }
            if (i >= value.length() || value.charAt(i) != '=') {
                continue;
            }
            i++;
            while (i < value.length() && space((byte) value.charAt(i))) {
                i++;
            }
            boolean quoted = i < value.length() && (value.charAt(i) == '"' || value.charAt(i) == '\'');
            reading.start(quoted ? (byte) value.charAt(i) : 0);
            for (i += quoted ? 1 : 0; i < value.length() && value.charAt(i) != ';'; i++) {
                if (!reading.add((byte) value.charAt(i))) {
                    break;
                }
            }
            for (String name : reading.names()) {
                if (KnownCharsets.resolves(name) && !out.contains(name)) {
                    out.add(name);
                }
            }
        }
        return out;
    }

    /**
     * Adds a name read from a {@code <meta>} or an XML declaration to {@code out} when some reader resolves it
     * ({@link KnownCharsets}): a name none resolves ({@code %s}, {@code {enc}} in a code sample) declares nothing.
     */
    static void declare(List<Declaration> out, String name, Source source) {
        if (KnownCharsets.resolves(name)) {
            out.add(new Declaration(name, source));
        }
    }

    /** {@link #xmlOpen}: the start is not an XML declaration. */
    private static final int NOT_XML = -1;
    /** {@link #xmlOpen}: the bytes so far do not tell. */
    private static final int UNDECIDED = -2;
    private static final int[] BOM = {0xef, 0xbb, 0xbf};

    /**
     * {@return where {@code <?} opens the body's first {@code n} bytes (after a UTF-8 byte order mark and white
     * space), {@link #NOT_XML}, or {@link #UNDECIDED}}
     */
    private static int xmlOpen(byte[] b, int n) {
        int bom = 0;
        while (bom < Math.min(n, 3) && (b[bom] & 0xff) == BOM[bom]) {
            bom++;
        }
        if (bom == n && n < 3) {
            return UNDECIDED; // a byte order mark so far
        }
        int i = bom == 3 ? 3 : 0;
        while (i < n && space(b[i])) {
            i++;
        }
        if (i >= n || i + 1 >= n && b[i] == '<') {
            return UNDECIDED;
        }
        return b[i] == '<' && b[i + 1] == '?' ? i : NOT_XML;
    }

    private static String signature(byte[] b, int n) {
        int b0 = n > 0 ? b[0] & 0xff : -1;
        int b1 = n > 1 ? b[1] & 0xff : -1;
        int b2 = n > 2 ? b[2] & 0xff : -1;
        int b3 = n > 3 ? b[3] & 0xff : -1;
        if (b0 == 0xef && b1 == 0xbb && b2 == 0xbf) {
            return "UTF-8";
        }
        if (b0 == 0 && b1 == 0 && b2 == 0xfe && b3 == 0xff) {
            return "UTF-32BE";
        }
        if (b0 == 0xff && b1 == 0xfe && b2 == 0 && b3 == 0) {
            return "UTF-32LE";
        }
        if (b0 == 0xfe && b1 == 0xff) {
            return "UTF-16BE";
        }
        if (b0 == 0xff && b1 == 0xfe) {
            return "UTF-16LE";
        }
        if (b0 == '+' && b1 == '/' && b2 == 'v' && (b3 == '8' || b3 == '9' || b3 == '+' || b3 == '/')) {
            return "UTF-7";
        }
        return null;
    }

    /** Adds the {@code encoding} pseudo-attributes that start in {@code b[from, to)}, names read up to {@code to}. */
    private static void encodings(byte[] b, int from, int to, List<Declaration> out) {
        for (int k = from; k + 8 <= to; k++) {
            if (word(b, k, "encoding")) {
                String name = value(b, k + 8, to);
                if (name != null) {
                    declare(out, name, Source.XML);
                }
            }
        }
    }

    /**
     * {@return the value assigned at {@code i} ({@code [ws] = [ws] ["|'] name}), as a codec lookup reads it
     * ({@link CharsetName}); {@code null} when there is no {@code =} or the name is empty} A quoted name runs to the
     * next quote of either kind (BeautifulSoup's {@code encoding=['"](.*?)['"]}: {@code " utf-7"} is {@code utf-7});
     * an unquoted one to white space, {@code /}, {@code ;}, {@code >}, {@code ?} or {@code end}.
     */
    private static String value(byte[] b, int i, int end) {
        while (i < end && space(b[i])) {
            i++;
        }
        if (i >= end || b[i] != '=') {
            return null;
        }
        i++;
        while (i < end && space(b[i])) {
            i++;
        }
        boolean quoted = i < end && (b[i] == '"' || b[i] == '\'');
        i += quoted ? 1 : 0;
        CharsetName name = new CharsetName();
        for (; i < end && b[i] != '"' && b[i] != '\''; i++) {
            if (!quoted && (space(b[i]) || b[i] == '/' || b[i] == ';' || b[i] == '>' || b[i] == '?')) {
                break;
            }
            name.add(b[i]);
        }
        return name.isEmpty() ? null : name.toString();
    }

    /** {@return whether {@code b} holds {@code w} (lower-case ASCII) at {@code i}, in any case} */
    private static boolean word(byte[] b, int i, String w) {
        if (i + w.length() > b.length) {
            return false;
        }
        for (int k = 0; k < w.length(); k++) {
            int c = b[i + k] & 0xff;
            if ((c >= 'A' && c <= 'Z' ? c + 32 : c) != w.charAt(k)) {
                return false;
            }
        }
        return true;
    }

    private static int indexOf(byte[] b, int from, int n, byte x, byte y) {
        for (int i = from; i + 1 < n; i++) {
            if (b[i] == x && b[i + 1] == y) {
                return i;
            }
        }
        return -1;
    }

    private static boolean space(byte c) {
        return MetaCharsets.space(c);
    }
}
