package dev.openshell.middleware.spi.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * The value after {@code charset=} or {@code encoding=} (the {@code =} and white space before the value already
 * read), read a character at a time the ways the readers of a body or a {@code Content-Type} read it (attacker passes
 * 11 and 12, P13-1, P14-1, P14-2, P14-4), each kept as a codec lookup reads a name ({@link CharsetName}):
 *
 * <ul>
 *   <li>BeautifulSoup's {@code ["']?([^>]*?)[ /;'">]}: after an optional quote, up to a space, {@code /}, {@code ;},
 *       a quote or {@code >} ({@code "\tutf-7"} is {@code utf-7});</li>
 *   <li>cut also at any white space or {@code ?} (a WHATWG prescan and libxml2 read an unquoted value so);</li>
 *   <li>the whole value: up to the quote that opened it (any other quote a separator: jsoup drops quotes, so
 *       {@code "IB'M290"} is IBM290), or unquoted up to a quote or {@code >} (requests' and readability's
 *       {@code ["']*(.+?)["'>]}, node-fetch's {@code (['"])(.+?)\1}: {@code " utf-7"} and {@code "u t f 7"} are
 *       UTF-7), and that value without a last {@code :} and four digits, white space and other bytes after them
 *       aside (node-fetch trims, iconv-lite drops it: {@code UTF7:1999}, {@code "u:tf-7:1999 "});</li>
 *   <li>node-fetch's: the whole value upper-cased and lower-cased as JavaScript maps case, {@code [0-9a-z]} only
 *       ({@code unıcode-1-1-utf-7} is {@code unicode11utf7});</li>
 *   <li>w3lib's (Scrapy's) {@code ["']?\s*([\w-]+)}: after an optional quote and white space, the letters, digits,
 *       {@code _} and {@code -} ({@code utf-7:2024} and {@code utf-7.1} are {@code utf-7});</li>
 *   <li>a quoted value up to the next quote of either kind (BeautifulSoup's XML declaration expression
 *       {@code encoding=['"](.*?)['"]}: {@code "utf 7'} is {@code utf_7} to Python's codec lookup).</li>
 * </ul>
 *
 * <p>{@link #names()} gives the distinct non-empty readings once {@link #add} says the value ended. Mutable, reused.
 */
final class CharsetValue {
    private final CharsetName soup = new CharsetName();
    private final CharsetName cut = new CharsetName();
    private final CharsetName whole = new CharsetName();
    private final CharsetName word = new CharsetName();
    /** A quoted value up to the next quote of either kind (BeautifulSoup's {@code encoding=['"](.*?)['"]}). */
    private final CharsetName toQuote = new CharsetName();
    private boolean toQuoteOn;
    /** The whole value as iconv-lite (node-fetch) names it: case-mapped as JavaScript maps it, [0-9a-z] only. */
    private final StringBuilder iconvLite = new StringBuilder();
    /** The bytes of a UTF-8 character being read for {@link #iconvLite}. */
    private final byte[] utf8 = new byte[4];
    private int utf8Length;
    private boolean soupOn;
    private boolean cutOn;
    private boolean wordOn;
    private boolean wordStarted;
    /** The quote that opened the value, or 0. */
    private byte quote;
    /** The last five letters, digits or colons of the whole value (for iconv-lite's {@code :dddd}). */
    private final byte[] tail = new byte[5];
    private int count;

    /**
     * Starts a value.
     *
     * @param opening the quote the value starts with, or 0 when it starts with {@code first}
     */
    void start(byte opening) {
        soup.clear();
        cut.clear();
        whole.clear();
        word.clear();
        toQuote.clear();
        toQuoteOn = opening != 0;
        soupOn = true;
        cutOn = true;
        wordOn = true;
        wordStarted = false;
        quote = opening;
        count = 0;
        iconvLite.setLength(0);
        utf8Length = 0;
    }

    /** {@return whether the value goes on after {@code c}, its next character (when not, {@code c} is no part of it)} */
    boolean add(byte c) {
        boolean quoteChar = c == '"' || c == '\'';
        if (quote != 0 ? c == quote : quoteChar || c == '>') {
            return false;
        }
        boolean sp = MetaCharsets.space(c);
        soupOn &= !(c == ' ' || c == '/' || c == ';' || quoteChar || c == '>');
        if (soupOn) {
            soup.add(c);
        }
        cutOn &= !(sp || c == '/' || c == ';' || quoteChar || c == '>' || c == '?');
        if (cutOn) {
            cut.add(c);
        }
        if (wordOn) {
            boolean w = CharsetName.alnum(c) || c == '_' || c == '-';
            if (w) {
                word.add(c);
                wordStarted = true;
            } else if (wordStarted || !sp) {
                wordOn = false;
            }
        }
        toQuoteOn &= !quoteChar;
        if (toQuoteOn) {
            toQuote.add(c);
        }
        whole.add(c);
        iconvLite(c);
        if (CharsetName.alnum(c) || c == ':') { // other bytes skipped: node-fetch trims the name before iconv-lite drops :dddd
            tail[count++ % tail.length] = c;
        }
        return true;
    }

    /**
     * Reads {@code c} for {@link #iconvLite}: node-fetch's {@code encoding} package upper-cases the name and iconv-lite
     * lower-cases it and keeps {@code [0-9a-z]}, so a non-ASCII letter can become an ASCII one ({@code ı} and
     * {@code İ} are {@code i}, U+017F {@code s}, the Kelvin sign {@code k}; attacker pass 12, P14-2).
     */
    private void iconvLite(byte c) {
        if (c >= 0) {
            utf8Length = 0;
            keepAscii(String.valueOf((char) c));
            return;
        }
        if ((c & 0xc0) != 0x80) {
            utf8Length = 0; // a lead byte starts a character
        }
        if (utf8Length < utf8.length) {
            utf8[utf8Length++] = c;
        }
        int need = (utf8[0] & 0xe0) == 0xc0 ? 2 : (utf8[0] & 0xf0) == 0xe0 ? 3 : (utf8[0] & 0xf8) == 0xf0 ? 4 : 0;
        if (utf8Length == need) {
            String ch = new String(utf8, 0, need, java.nio.charset.StandardCharsets.UTF_8);
            keepAscii(ch.toUpperCase(java.util.Locale.ROOT).toLowerCase(java.util.Locale.ROOT));
            utf8Length = 0;
        }
    }

    private void keepAscii(String s) {
        for (int k = 0; k < s.length() && iconvLite.length() < CharsetName.MAX; k++) {
            char ch = Character.toLowerCase(s.charAt(k));
            if (CharsetName.alnum(ch)) { // lower-cased already
                iconvLite.append(ch);
            }
        }
    }

    /** {@return the distinct non-empty readings of the value read} */
    List<String> names() {
        List<String> out = new ArrayList<>(4);
        for (CharsetName n : new CharsetName[] {cut, soup, word, toQuote, whole}) {
            String s = n.toString();
            if (!s.isEmpty() && !out.contains(s)) {
                out.add(s);
            }
        }
        String w = whole.toString();
        boolean year = count >= 5 && tail[(count - 5) % 5] == ':' && digits();
        if (year && w.lastIndexOf('-') > 0) {
            String stripped = w.substring(0, w.lastIndexOf('-'));
            if (!out.contains(stripped)) {
                out.add(stripped);
            }
        }
        String js = year && iconvLite.length() >= 4 ? iconvLite.substring(0, iconvLite.length() - 4)
                : iconvLite.toString();
        if (!js.isEmpty() && out.stream().noneMatch(n -> n.replace("-", "").replace(".", "").equals(js))) {
            out.add(js);
        }
        return out;
    }

    /** {@return whether the last four characters are digits} */
    private boolean digits() {
        for (int k = 1; k <= 4; k++) {
            byte c = tail[(count - k) % 5];
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }
}
