package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.internal.BodyCharsets;
import dev.openshell.middleware.spi.internal.ExtendedCharset;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Which declared charsets (the {@code charset} parameter of {@code Content-Type}, RFC 9110 section 8.3.2, also in
 * its RFC 2231 extended form {@code charset*}, which Python's {@code email} package and so httpx read) a scrubbed
 * response may carry (attacker pass 3, findings R3 and R4): one rule, whatever the media type. A charset is
 * readable when a client decoding the body by it reads the secret only where {@link SecretScrubber} searches a form
 * of it: UTF-8 (also as Python names it: utf, u8, cp65001) and the charsets that encode ASCII as ASCII, one byte
 * sequence per character and without shift states (US-ASCII and its aliases such as ANSI_X3.4-1968, ISO-8859-1 to -16, windows-1250 to -1258, KOI8-R/-U,
 * Shift_JIS, windows-31j, EUC-JP, EUC-KR, GBK, GB2312, GB18030, Big5), UTF-16 and UTF-32 in either byte order,
 * and IBM037. Any other name, known to the JDK or not ({@code utf-7}, where one text has many spellings, the
 * ISO-2022 family with its escape sequences, HZ, other EBCDIC pages, a name nobody registered) is not: the response
 * is refused as uninspectable.
 *
 * <p>An event stream is joined across events on its bytes ({@link EventSplits}), so it is readable only in the
 * charsets above that encode ASCII as ASCII: a {@code text/event-stream} declaring UTF-16, UTF-32 or IBM037 is
 * refused, and so is a body of another type declaring UTF-16 or UTF-32 whose text, decoded in either byte order,
 * starts an event stream ({@link EventText#start}), as the body of a UTF-8 event stream sniffed so is joined. The
 * decisions depend on the head and the body's first characters only, never on a secret. Static methods only.
 *
 * <p>A charset the body declares in itself ({@link BodyCharsets}: the UTF-7 signature, an XML declaration, an HTML
 * {@code <meta>} anywhere; attacker passes 9 and 10, P11-1, P11-2, P12-1) is judged by the same rule
 * ({@link #unreadableIn}), whatever the media type: BeautifulSoup and lxml given the bytes, and
 * {@code charset_normalizer} (Python's requests for a body without a declared charset) read the body in it, and
 * Scrapy and node-fetch read one in any type, JSON and event streams included. A body read whole is refused with 502
 * before any byte; a streamed body is read as it arrives, and one whose declaration comes after bytes were relayed is
 * cut off there (the bytes before it were scrubbed as the head declared). An event stream's head is not held back.
 */
final class ResponseCharsets {
    /** Charsets that encode ASCII as ASCII, statelessly. */
    private static final Pattern ASCII = Pattern.compile("utf-?8|utf|u8|cp65001|(us-)?ascii|ansi-x3\\.4-1968|iso-?8859|8859|latin"
            + "|iso646-us|us|iso[-_]?8859[-_]?([1-9]|1[0-6])|latin-?1|l1|(cp|ibm)819|(windows|cp)-?125[0-8]|koi8-[ru]"
            + "|shift[-_]jis|sjis|windows-31j|cp932|euc-(jp|kr)|gbk|gb2312|gb18030|big5");
    /** UTF-16 and UTF-32, either byte order. */
    private static final Pattern WIDE = Pattern.compile("utf-?(16|32)(-?(le|be))?");
    /** IBM037 (EBCDIC), whose value form is searched. */
    private static final Pattern EBCDIC = Pattern.compile("(ibm|cp)0?37");
    /** Why an event stream in UTF-16, UTF-32 or EBCDIC is not relayed. */
    static final String WIDE_EVENTS = "it is an event stream in a charset other than UTF-8";
    /** Why a response whose RFC 2231 {@code charset*} parameter cannot be decoded is not relayed. */
    static final String UNDECODABLE = "its declared charset (RFC 2231 charset*) cannot be decoded";
    /** Why a response declaring {@code charset*} and another, different charset is not relayed. */
    static final String DISAGREE = "it declares different charsets in charset and charset*";
    /** The most body bytes read to decide whether wide text starts an event stream (9 characters of UTF-32). */
    private static final int SNIFF = 40;

    private ResponseCharsets() {
    }

    /**
     * The charsets a response declares and why they leave its reading unknown.
     *
     * @param names every declared charset, lower-cased, unquoted, {@code _} read as {@code -}
     * @param unclear why a client's reading is unknown ({@link #UNDECODABLE}, {@link #DISAGREE}), or {@code null}
     */
    private record Declared(List<String> names, String unclear) {
    }

    /**
     * {@return every charset the response declares, lower-cased, unquoted, {@code _} read as {@code -}}: each
     * {@code charset} parameter of each {@code Content-Type} field and the charset each field's RFC 2231 extended
     * parameters give ({@code charset*}, {@code charset*0}, ...: {@link ExtendedCharset}; a client may take any)
     */
    static List<String> declared(ResponseHead r) {
        return reading(r).names();
    }

    private static Declared reading(ResponseHead r) {
        List<String> out = new ArrayList<>();
        boolean extendedSeen = false;
        String unclear = null;
        for (HeaderField f : r.all("content-type")) {
            List<String[]> extended = new ArrayList<>();
            for (String param : f.value().split(";")) {
                int eq = param.indexOf('=');
                if (eq <= 0) {
                    continue;
                }
                String name = param.substring(0, eq).strip().toLowerCase(Locale.ROOT);
                String v = param.substring(eq + 1).strip();
                if (v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"")) {
                    v = v.substring(1, v.length() - 1).strip();
                }
                if (name.equals("charset")) {
                    out.add(v.toLowerCase(Locale.ROOT).replace('_', '-'));
                } else if (name.startsWith("charset*")) {
                    extended.add(new String[] {name, v});
                }
            }
            if (!extended.isEmpty()) {
                try {
                    out.add(ExtendedCharset.decode(extended).toLowerCase(Locale.ROOT).replace('_', '-'));
                    extendedSeen = true;
                } catch (IllegalArgumentException e) {
                    unclear = UNDECODABLE;
                }
            }
        }
        if (unclear == null && extendedSeen && out.stream().distinct().count() > 1) {
            unclear = DISAGREE;
        }
        return new Declared(out, unclear);
    }

    /**
     * {@return why the response's declared charsets cannot be read for the secret; {@code null} when they can (or
     * none is declared)} The reason names no value and not the upstream's charset name. An RFC 2231
     * {@code charset*} parameter that cannot be decoded, or that names another charset than a {@code charset} the
     * response declares too, leaves the client's reading unknown.
     */
    static String unreadable(ResponseHead r) {
        Declared d = reading(r);
        if (d.unclear() != null) {
            return d.unclear();
        }
        for (HeaderField f : r.all("content-type")) { // another reader's charset= (P14-4: x-charset=utf-7)
            for (String cs : BodyCharsets.namesInHeader(f.value())) {
                if (!readable(cs)) {
                    return "its declared charset is not one the scrub reads";
                }
            }
        }
        String why = null;
        for (String cs : d.names()) {
            if (ASCII.matcher(cs).matches()) {
                continue;
            }
            if (!readable(cs)) {
                return "its declared charset is not one the scrub reads";
            }
            why = ScrubbingRelay.eventStream(r) ? WIDE_EVENTS : why;
        }
        return why;
    }

    /** Why a response whose body declares, in itself, a charset the scrub does not read is not relayed. */
    static final String BODY_DECLARED = "its body declares a charset the scrub does not read";

    /** {@return whether a charset name (lower-cased, {@code _} read as {@code -}) is one the scrub reads} */
    private static boolean readable(String cs) {
        return ASCII.matcher(cs).matches() || WIDE.matcher(cs).matches() || EBCDIC.matcher(cs).matches();
    }

    /**
     * {@return {@link #BODY_DECLARED} when one of {@code found}, charsets the response's body declares in itself, is
     * not one the scrub reads (the same names as a declared {@code charset} parameter: {@link #unreadable}), else
     * {@code null}} Whatever the type: Scrapy and node-fetch read a {@code <meta>} in a JSON body or an event
     * stream too (attacker pass 13, P15-2).
     */
    static String unreadableIn(List<BodyCharsets.Declaration> found) {
        for (BodyCharsets.Declaration d : found) {
            if (!readable(d.name().strip().toLowerCase(Locale.ROOT).replace('_', '-'))) {
                return BODY_DECLARED;
            }
        }
        return null;
    }

    /**
     * {@return why a whole body {@code b[0, n)} is not relayed for a charset it declares anywhere in itself
     * ({@link #BODY_DECLARED}), or {@code null}} Any type is read, an event stream's body too; the caller reads none
     * when the declared charset is refused already.
     */
    static String declaredInBody(byte[] b, int n) {
        return n == 0 ? null : unreadableIn(BodyCharsets.declared(b, n));
    }

    /**
     * {@return why a streamed response is not relayed for its body's first bytes {@code b[0, n)}: a wide body that
     * starts an event stream ({@link #WIDE_EVENTS}), or a charset the body declares in itself that {@code reader}
     * (when not {@code null}) finds in them ({@link #BODY_DECLARED}); else {@code null}}
     */
    static String firstBytes(ResponseHead r, byte[] b, int n, BodyCharsets.Reader reader) {
        if (n > 0 && wide(r) && !ScrubbingRelay.eventStream(r) && startsEvents(b, n)) {
            return WIDE_EVENTS;
        }
        return reader != null && n > 0 ? unreadableIn(reader.read(b, 0, n)) : null;
    }

    /**
     * {@return how many first bytes of a streamed body are read before its head is sent}: 4 (a signature: a byte
     * order mark or the UTF-7 one, which {@code charset_normalizer} sniffs); 0 for an event stream, whose events are
     * not held (its first bytes are read as they come).
     * An XML declaration or {@code <meta>} is read as the body arrives ({@link BodyCharsets#reader}): the head is never held for
     * one, and one found after bytes were relayed cuts the response off (P12-1, P12-2).
     */
    static int window(ResponseHead r) {
        return ScrubbingRelay.eventStream(r) ? 0 : 4;
    }

    /** {@return whether the response declares UTF-16 or UTF-32 (its text is sniffed for events decoded)} */
    static boolean wide(ResponseHead r) {
        return declared(r).stream().anyMatch(cs -> WIDE.matcher(cs).matches());
    }

    /**
     * {@return whether the wide text {@code b[0, n)} starts an event stream, decoded as UTF-16 or UTF-32 in either
     * byte order} Undecided beginnings count as none (the caller gives enough bytes).
     */
    static boolean startsEvents(byte[] b, int n) {
        for (String cs : new String[] {"UTF-16LE", "UTF-16BE", "UTF-32LE", "UTF-32BE"}) {
            int unit = cs.startsWith("UTF-32") ? 4 : 2;
            byte[] text = new String(b, 0, n - n % unit, Charset.forName(cs)).getBytes(StandardCharsets.UTF_8);
            if (EventText.start(text, text.length) == EventText.Start.EVENTS) {
                return true;
            }
        }
        return false;
    }

    /** {@return {@code n}, grown by reading {@code body} into {@code buf} until {@value #SNIFF} bytes or its end} */
    static int fill(InputStream body, byte[] buf, int n) throws IOException {
        return fill(body, buf, n, SNIFF);
    }

    /**
     * {@return {@code n}, grown by reading {@code body} into {@code buf} until {@code limit} bytes or its end} The wait
     * is bounded by {@code limit} bytes and by the upstream's read timeout.
     */
    static int fill(InputStream body, byte[] buf, int n, int limit) throws IOException {
        while (n >= 0 && n < limit) {
            int more = body.read(buf, n, limit - n);
            if (more < 0) {
                break;
            }
            n += more;
        }
        return n;
    }
}
