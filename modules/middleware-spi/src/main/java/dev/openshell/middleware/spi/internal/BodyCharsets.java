package dev.openshell.middleware.spi.internal;

import static org.apiguardian.api.API.Status.INTERNAL;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apiguardian.api.API;

/**
 * Which charsets a body declares in itself, in its first {@value #WINDOW} bytes, as the clients that read a body's
 * bytes do (attacker pass 9, P11-1, P11-2, P11-7): the one rule the response scrub and the {@code openshell/regex}
 * stage share. Three kinds of declaration are read, in ASCII bytes:
 *
 * <ul>
 *   <li>a signature at the very start: the byte order marks of UTF-8, UTF-16 and UTF-32, and the UTF-7 signatures
 *       {@code +/v8}, {@code +/v9}, {@code +/v+}, {@code +/v/} (RFC 2152; what {@code charset_normalizer}, and so
 *       Python's requests for a body without a declared charset, detects UTF-7 by);</li>
 *   <li>an XML declaration or other processing instruction at the start (after a UTF-8 byte order mark and white
 *       space): its {@code encoding} pseudo-attribute (XML 1.0 section 4.3.3), quoted or not, with white space around
 *       {@code =}, searched up to the first {@code ?>} or the end of the first line, whichever is later (lxml reads
 *       the declaration; BeautifulSoup's {@code EncodingDetector} matches {@code ^\s*<\?.*encoding=} on that line);</li>
 *   <li>an HTML {@code <meta>} element (WHATWG HTML, "prescan a byte stream to determine its encoding"): every
 *       {@code charset} assignment inside a tag that starts with {@code <meta} (white space allowed after {@code <},
 *       as BeautifulSoup's {@code <\s*meta[^>]+charset=} matches), so both {@code <meta charset="...">} and the
 *       {@code content="text/html; charset=..."} of {@code http-equiv}. A tag ends at the first {@code >} outside
 *       quotes; comments are not skipped. This finds every declaration a WHATWG prescan or that expression finds in
 *       the window, and may find more (a {@code <meta>} inside a comment): more declarations only refuse more.</li>
 * </ul>
 *
 * <p>The names are returned as written, without quotes and surrounding white space, in the order found; the caller
 * judges them as it judges a {@code Content-Type} charset. One pass over at most {@value #WINDOW} bytes (each byte is
 * looked at a bounded number of times); never throws. A body in UTF-16 or UTF-32 whose declaration is in that
 * encoding is not read (its bytes are not ASCII); declarations after the window are not read (WHATWG reads 1024
 * bytes; BeautifulSoup reads a {@code <meta>} up to byte 2048 or 5% of the document, libxml2's HTML parser wherever
 * it meets one: limits the callers document).
 */
@API(status = INTERNAL, since = "0.2")
public final class BodyCharsets {
    /** How many bytes of a body are read for a declaration (WHATWG HTML's prescan reads 1024). */
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
     * @param name the name as written (no quotes, no surrounding white space), never blank
     * @param source where it was declared
     */
    @API(status = INTERNAL, since = "0.2")
    public record Declaration(String name, Source source) {
    }

    /**
     * {@return the charsets {@code body[0, min(limit, WINDOW))} declares in itself, in the order found; empty when
     * none}
     *
     * @param body the body's first bytes (position ignored, from index 0 to its limit)
     */
    public static List<Declaration> declared(ByteBuffer body) {
        int n = Math.min(body.limit(), WINDOW);
        byte[] b = new byte[n];
        body.get(0, b);
        List<Declaration> out = new ArrayList<>(2);
        String sig = signature(b, n);
        if (sig != null) {
            out.add(new Declaration(sig, Source.SIGNATURE));
        }
        xml(b, n, out);
        meta(b, n, out);
        return out;
    }

    /** {@return the charsets {@code b[0, min(n, WINDOW))} declares in itself} See {@link #declared(ByteBuffer)}. */
    public static List<Declaration> declared(byte[] b, int n) {
        return declared(ByteBuffer.wrap(b, 0, Math.max(0, Math.min(n, b.length))).slice());
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

    /** Adds the {@code encoding} of a processing instruction at the start of {@code b[0, n)}. */
    private static void xml(byte[] b, int n, List<Declaration> out) {
        int i = n >= 3 && (b[0] & 0xff) == 0xef && (b[1] & 0xff) == 0xbb && (b[2] & 0xff) == 0xbf ? 3 : 0;
        while (i < n && space(b[i])) {
            i++;
        }
        if (i + 1 >= n || b[i] != '<' || b[i + 1] != '?') {
            return;
        }
        int close = indexOf(b, i + 2, n, (byte) '?', (byte) '>');
        int line = i;
        while (line < n && b[line] != '\n' && b[line] != '\r') {
            line++;
        }
        int end = Math.max(close < 0 ? n : close, line);
        for (int k = i + 2; k + 8 <= end; k++) {
            if (word(b, k, "encoding")) {
                String name = value(b, k + 8, end);
                if (name != null) {
                    out.add(new Declaration(name, Source.XML));
                }
            }
        }
    }

    /** Adds the {@code charset} assignments of every {@code <meta} tag in {@code b[0, n)}. */
    private static void meta(byte[] b, int n, List<Declaration> out) {
        int i = 0;
        while (i < n) {
            if (b[i] != '<') {
                i++;
                continue;
            }
            int k = i + 1;
            while (k < n && space(b[k])) {
                k++;
            }
            if (k + 4 > n || !word(b, k, "meta")) {
                i = k;
                continue;
            }
            int end = tagEnd(b, k + 4, n);
            for (int j = k + 4; j + 7 <= end; j++) {
                if (word(b, j, "charset")) {
                    String name = value(b, j + 7, end);
                    if (name != null) {
                        out.add(new Declaration(name, Source.META));
                    }
                }
            }
            i = end;
        }
    }

    /** {@return the index of the first {@code >} from {@code from} outside quotes, or {@code n}} */
    private static int tagEnd(byte[] b, int from, int n) {
        byte quote = 0;
        for (int i = from; i < n; i++) {
            byte c = b[i];
            if (quote != 0) {
                quote = c == quote ? 0 : quote;
            } else if (c == '"' || c == '\'') {
                quote = c;
            } else if (c == '>') {
                return i;
            }
        }
        return n;
    }

    /**
     * {@return the value assigned at {@code i} ({@code [ws] = [ws] ["|'] name}), ending at white space, {@code /},
     * {@code ;}, a quote, {@code >}, {@code ?} or {@code end}; {@code null} when there is no {@code =} or the name is
     * empty}
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
        if (i < end && (b[i] == '"' || b[i] == '\'')) {
            i++;
        }
        int start = i;
        while (i < end && !space(b[i]) && b[i] != '/' && b[i] != ';' && b[i] != '"' && b[i] != '\''
                && b[i] != '>' && b[i] != '?') {
            i++;
        }
        return i == start ? null : new String(b, start, i - start, java.nio.charset.StandardCharsets.ISO_8859_1);
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

    /** {@return whether {@code c} is ASCII white space (WHATWG: TAB, LF, FF, CR, SPACE)} */
    private static boolean space(byte c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
    }
}
