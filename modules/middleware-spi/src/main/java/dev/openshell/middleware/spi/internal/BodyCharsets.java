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
 *       space), opening in the first {@value #WINDOW} bytes: its {@code encoding} pseudo-attribute (XML 1.0 section
 *       4.3.3), quoted or not, with white space around {@code =} (lxml reads the declaration; BeautifulSoup's
 *       {@code EncodingDetector} matches {@code ^\s*<\?.*encoding=} on its first line, in the first 1024 bytes). Read
 *       by {@link MetaCharsets} as every {@code <?xml} is (any processing instruction at the start), and named
 *       {@link Source#XML} when the value starts within those bytes and before the first {@code ?>} or the end of
 *       the first line (its LF), whichever is later;</li>
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
    /** Within how many first bytes of a body an XML declaration at the start opens (BeautifulSoup reads 1024). */
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
     * {@return the charset a body's first bytes declare by a signature (a byte order mark or the UTF-7 signature), as
     * {@link #declared(ByteBuffer)} finds it, or an empty list} Nothing past the first four bytes is read and no reader
     * state is made: for a body whose other declarations cannot count (JSON, whose readers detect its encoding by RFC
     * 8259) or cannot be there (a body that holds no {@code <}, where every other declaration starts).
     *
     * @param body the whole body (position ignored, from index 0 to its limit)
     */
    public static List<Declaration> signatureOf(ByteBuffer body) {
        int n = Math.min(4, body.limit());
        byte[] start = new byte[n];
        body.get(0, start, 0, n);
        String sig = signature(start, n);
        return sig == null ? List.of() : List.of(new Declaration(sig, Source.SIGNATURE));
    }

    /**
     * Loads, on the calling thread, the names some reader resolves ({@link KnownCharsets}): about a tenth of a second
     * on a fresh JVM (mostly the JDK's list of its charsets), which the first body in a process that declares a charset
     * would otherwise wait for. The proxy's start-up calls it on a thread of its own. Idempotent; never throws (a
     * failure shows on the first read).
     */
    public static void prepare() {
        try {
            KnownCharsets.resolves("utf-8");
        } catch (RuntimeException | LinkageError e) {
            // the first read reports it
        }
    }

    /**
     * {@return a reader of one streamed body's declarations}
     */
    public static Reader reader() {
        return new Reader();
    }

    /**
     * The declarations of one body read as its bytes arrive: its first 4 bytes are kept for the signature (read at 4
     * bytes or the end), and every byte goes through {@link MetaCharsets}, which also reads the XML declaration at
     * the start. Not thread-safe: one reading thread.
     */
    @API(status = INTERNAL, since = "0.2")
    public static final class Reader {
        private final byte[] start = new byte[4];
        private int startLength;
        /** Whether the signature was read (at 4 bytes or the end). */
        private boolean signatureRead;
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
            if (!signatureRead) {
                int n = Math.min(len, start.length - startLength);
                b.get(off, start, startLength, n);
                startLength += n;
                if (startLength == start.length) {
                    readSignature(out);
                }
            }
            meta.read(b, off, len, out);
            return out;
        }

        /** {@return the declarations the body's end completes}: a start shorter than 4 bytes, a name at the end */
        public List<Declaration> end() {
            List<Declaration> out = new ArrayList<>(0);
            if (!signatureRead) {
                readSignature(out);
            }
            meta.end(out);
            return out;
        }

        private void readSignature(List<Declaration> out) {
            signatureRead = true;
            String sig = signature(start, startLength);
            if (sig != null) {
                out.add(new Declaration(sig, Source.SIGNATURE));
            }
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

    private static boolean space(byte c) {
        return MetaCharsets.space(c);
    }
}
