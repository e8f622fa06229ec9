package dev.openshell.middleware.spi.internal;

import static org.apiguardian.api.API.Status.INTERNAL;

import java.io.ByteArrayOutputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apiguardian.api.API;

/**
 * RFC 2047 encoded words {@code =?charset?B|Q?text?=} (section 2; an RFC 2231 section 5 {@code *language} suffix on
 * the charset), found wherever they stand, with or without white space around, as Python's {@code email.header} finds
 * them: the one home of finding and decoding them, for {@link HeaderParameters} (a parameter reading holding words)
 * and the proxy's response header scrub ({@code HeaderReadings}, which replaces a value inside them). B is base64 with
 * non-alphabet characters skipped, Q is section 4.2 ({@code _} a space, {@code =XX} an octet). A word's charset is
 * read by {@link HeaderCharsets}: a charset this runtime cannot decode, or octets that do not decode cleanly in it
 * ({@link HeaderCharsets#decode}), make the decoded text unreadable.
 *
 * <p>Linear in the text: when no {@code ?} or no {@code ?=} follows a candidate, none follows a later one either.
 * Decoding only shrinks text. Static methods only; never throws.
 */
@API(status = INTERNAL, since = "0.2")
public final class EncodedWords {
    private EncodedWords() {
    }

    /**
     * One encoded word.
     *
     * @param start where {@code =?} starts in the text
     * @param end the index after its {@code ?=}
     * @param charset its charset as written (with any {@code *language} suffix)
     * @param bytes its decoded octets
     */
    @API(status = INTERNAL, since = "0.2")
    public record Word(int start, int end, String charset, byte[] bytes) {
        /** {@return the charset name without its {@code *language} suffix, lower case} */
        public String charsetName() {
            int star = charset.indexOf('*');
            return (star < 0 ? charset : charset.substring(0, star)).toLowerCase(Locale.ROOT);
        }
    }

    /**
     * A text with its encoded words decoded.
     *
     * @param text the decoded text (a word in a charset that cannot be decoded is in it as UTF-8, as Python falls back)
     * @param pythonText the text as Python's {@code email} decodes it: the same but for {@code UTF-16} and
     *     {@code UTF-32} words without a byte order mark, which Python reads little-endian and the JDK big-endian
     *     ({@link HeaderCharsets#decoders}: the last decoder)
     * @param unreadable whether a word declares a charset this runtime cannot decode, or its octets do not decode
     *     cleanly in it ({@link HeaderCharsets#decode}: ISO-2022-JP-2's {@code ESC . A}, ...)
     */
    @API(status = INTERNAL, since = "0.2")
    public record Decoded(String text, String pythonText, boolean unreadable) {
    }

    /**
     * {@return every encoded word in {@code raw}, in order} The charset runs to the first {@code ?}, the text to the
     * first {@code ?=} after the encoding's {@code ?}.
     *
     * @param raw the text's octets (ISO-8859-1)
     */
    public static List<Word> find(byte[] raw) {
        List<Word> words = new ArrayList<>();
        int i = 0;
        while (i + 1 < raw.length) {
            if (raw[i] != '=' || raw[i + 1] != '?') {
                i++;
                continue;
            }
            int q = indexOf(raw, i + 2);
            if (q < 0) {
                break;
            }
            if (q + 2 >= raw.length || raw[q + 2] != '?' || "BbQq".indexOf(raw[q + 1]) < 0) {
                i++;
                continue;
            }
            int close = closeAt(raw, q + 3);
            if (close < 0) {
                break;
            }
            String charset = new String(raw, i + 2, q - i - 2, StandardCharsets.ISO_8859_1);
            boolean b64 = raw[q + 1] == 'B' || raw[q + 1] == 'b';
            words.add(new Word(i, close + 2, charset, b64 ? decodeB(raw, q + 3, close) : decodeQ(raw, q + 3, close)));
            i = close + 2;
        }
        return words;
    }

    /**
     * {@return {@code s} with each encoded word decoded in its charset, white space between two words dropped
     * (section 6.2), the octets of adjacent words of one charset decoded together (a UTF-16 unit split between two
     * words reads whole, as Python's {@code email} reads it)}
     *
     * @param s the text, one character per octet
     */
    public static Decoded decode(String s) {
        byte[] raw = s.getBytes(StandardCharsets.ISO_8859_1);
        StringBuilder out = new StringBuilder(s.length());
        StringBuilder python = new StringBuilder(s.length());
        ByteArrayOutputStream pending = new ByteArrayOutputStream();
        String pendingCharset = null;
        boolean unreadable = false;
        int at = 0;
        for (Word w : find(raw)) {
            String gap = s.substring(at, w.start());
            if (pendingCharset == null || !gap.isBlank() || !w.charsetName().equals(pendingCharset)) {
                unreadable |= flush(out, python, pending, pendingCharset);
                if (pendingCharset == null || !gap.isBlank()) {
                    out.append(gap);
                    python.append(gap);
                }
            }
            pending.writeBytes(w.bytes());
            pendingCharset = w.charsetName();
            at = w.end();
        }
        unreadable |= flush(out, python, pending, pendingCharset);
        return new Decoded(out.append(s, at, s.length()).toString(), python.append(s, at, s.length()).toString(),
                unreadable);
    }

    /**
     * Appends the pending octets decoded, to {@code out} in the charset and to {@code python} as Python reads them;
     * {@return whether their charset cannot be decoded or rejects them ({@link HeaderCharsets#decode})}
     */
    private static boolean flush(StringBuilder out, StringBuilder python, ByteArrayOutputStream pending,
                                 String charset) {
        if (pending.size() == 0) {
            return false;
        }
        List<Charset> decoders = HeaderCharsets.decoders(charset);
        byte[] octets = pending.toByteArray();
        pending.reset();
        if (decoders.isEmpty()) {
            out.append(new String(octets, StandardCharsets.UTF_8));
            python.append(new String(octets, StandardCharsets.UTF_8));
            return !HeaderCharsets.readable(charset);
        }
        String jdk = HeaderCharsets.decode(octets, decoders.getFirst());
        String py = decoders.size() == 1 ? jdk : HeaderCharsets.decode(octets, decoders.getLast());
        out.append(jdk != null ? jdk : new String(octets, decoders.getFirst()));
        python.append(py != null ? py : new String(octets, decoders.getLast()));
        return jdk == null || py == null; // not clean: unreadable (HeaderCharsets)
    }

    /**
     * {@return RFC 2047 section 4.2 Q text decoded: {@code _} is 0x20, {@code =XX} (hex in either case) an octet,
     * anything else itself}
     *
     * @param raw the octets
     * @param from the first index
     * @param to the index after the last
     */
    public static byte[] decodeQ(byte[] raw, int from, int to) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(0, to - from));
        for (int i = from; i < to; i++) {
            int h1 = i + 2 < to ? Syntax.hexDigit((char) (raw[i + 1] & 0xff)) : -1;
            int h2 = i + 2 < to ? Syntax.hexDigit((char) (raw[i + 2] & 0xff)) : -1;
            if (raw[i] == '=' && h1 >= 0 && h2 >= 0) {
                out.write(h1 << 4 | h2);
                i += 2;
            } else {
                out.write(raw[i] == '_' ? ' ' : raw[i]);
            }
        }
        return out.toByteArray();
    }

    /**
     * {@return base64 decoded as Python's lenient decoder reads it: characters outside the standard alphabet skipped}
     *
     * @param raw the octets
     * @param from the first index
     * @param to the index after the last
     */
    public static byte[] decodeB(byte[] raw, int from, int to) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(0, (to - from) * 3 / 4 + 1));
        int bits = 0;
        int count = 0;
        for (int i = from; i < to; i++) {
            int c = raw[i];
            int v = c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26
                    : c >= '0' && c <= '9' ? c - '0' + 52 : c == '+' ? 62 : c == '/' ? 63 : -1;
            if (v < 0) {
                continue;
            }
            bits = bits << 6 | v;
            count += 6;
            if (count >= 8) {
                count -= 8;
                out.write(bits >>> count & 0xff);
            }
        }
        return out.toByteArray();
    }

    private static int indexOf(byte[] raw, int from) {
        for (int i = from; i < raw.length; i++) {
            if (raw[i] == '?') {
                return i;
            }
        }
        return -1;
    }

    private static int closeAt(byte[] raw, int from) {
        for (int i = from; i + 1 < raw.length; i++) {
            if (raw[i] == '?' && raw[i + 1] == '=') {
                return i;
            }
        }
        return -1;
    }
}
