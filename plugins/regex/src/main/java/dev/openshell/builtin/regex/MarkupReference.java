package dev.openshell.builtin.regex;

import dev.openshell.middleware.spi.internal.DroppedSequences;
import java.nio.ByteBuffer;
import java.util.Map;

/**
 * How the readers of markup read a character reference, for {@link XmlText}: the readers differ where a reference
 * names a character one of them drops, so each such reader's reading is scanned (attacker passes 16 and 17, P18-1,
 * P19-1, P19-3: {@code ghp_R8xq&#1;2LmT...}, {@code &#;}, {@code &a;} inside a token):
 * <ul>
 *   <li>{@link Reader#WHATWG} (browsers, html5lib, jsoup): a reference to a Unicode scalar value reads as it (a C0
 *       control, DEL or a noncharacter too), any other numeric reference ({@code &#0;}, a surrogate, a value above
 *       U+10FFFF: U+FFFD) and {@code &#} without digits as written;</li>
 *   <li>{@link Reader#PYTHON} (Python's {@code html.unescape} and {@code html.parser}, BeautifulSoup's
 *       {@code html.parser}): as WHATWG, but the characters of {@link DroppedSequences#droppedByPython} read as
 *       nothing;</li>
 *   <li>{@link Reader#LIBXML2_HTML} (libxml2's HTML parser: lxml, xmllint {@code --html}, PHP's DOM): every numeric
 *       reference that names no XML {@code Char} ({@link DroppedSequences#droppedByLibxml2}), and {@code &#} or
 *       {@code &#x} without digits, read as nothing;</li>
 *   <li>{@link Reader#LIBXML2_XML} (libxml2's XML parser recovering: lxml's {@code recover=True}, BeautifulSoup's
 *       {@code xml}): as {@link Reader#LIBXML2_HTML}, and every named reference reads as nothing (one no DTD declares
 *       always; XML's five predefined entities too once the document had an error before them, which this reading
 *       takes as given: attacker pass 17d, P22-1), and so does a numeric reference without its semicolon (P22-2).</li>
 * </ul>
 * Numeric references: {@code &#} and decimal digits or {@code &#x} and hex digits, any number of leading zeros, the
 * semicolon optional ({@link DroppedSequences#reference}). Named references: XML's five predefined entities and the
 * HTML named references that stand for an ASCII character ({@code &period;}, {@code &lowbar;}, ...; {@code &amp},
 * {@code &lt}, {@code &gt}, {@code &quot} also without the semicolon) read as that character; any other name as
 * written (but to {@link Reader#LIBXML2_XML}). Static methods only.
 */
final class MarkupReference {
    /** A unit that stands for itself (one byte). */
    static final int LITERAL = -1;
    /** A unit that reads as nothing. */
    static final int NOTHING = -2;
    /** The longest name of a named reference read. */
    private static final int MAX_NAME = 32;

    /** A reader of markup, as it reads character references. */
    enum Reader {
        /** Browsers and the WHATWG tokenizer's implementations. */
        WHATWG,
        /** Python's {@code html.unescape}. */
        PYTHON,
        /** libxml2's HTML parser. */
        LIBXML2_HTML,
        /** libxml2's XML parser, recovering. */
        LIBXML2_XML;

        boolean libxml2() {
            return this == LIBXML2_HTML || this == LIBXML2_XML;
        }

        /** {@return what this reader reads a numeric reference to {@code cp} as: {@code cp}, NOTHING or LITERAL} */
        int numeric(int cp) {
            if (cp == DroppedSequences.NO_DIGITS) {
                return libxml2() ? NOTHING : LITERAL;
            }
            if (libxml2()) {
                return DroppedSequences.droppedByLibxml2(cp) ? NOTHING : cp;
            }
            if (this == PYTHON && DroppedSequences.droppedByPython(cp)) {
                return NOTHING;
            }
            return cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? LITERAL : cp;
        }
    }

    /** Named references that stand for an ASCII character (XML's five, then HTML's). */
    private static final Map<String, Integer> NAMED = Map.ofEntries(Map.entry("amp", (int) '&'),
            Map.entry("lt", (int) '<'), Map.entry("gt", (int) '>'), Map.entry("quot", (int) '"'),
            Map.entry("apos", (int) '\''), Map.entry("AMP", (int) '&'), Map.entry("LT", (int) '<'),
            Map.entry("GT", (int) '>'), Map.entry("QUOT", (int) '"'), Map.entry("excl", (int) '!'),
            Map.entry("num", (int) '#'), Map.entry("dollar", (int) '$'), Map.entry("percnt", (int) '%'),
            Map.entry("lpar", (int) '('), Map.entry("rpar", (int) ')'), Map.entry("ast", (int) '*'),
            Map.entry("midast", (int) '*'), Map.entry("plus", (int) '+'), Map.entry("comma", (int) ','),
            Map.entry("period", (int) '.'), Map.entry("sol", (int) '/'), Map.entry("colon", (int) ':'),
            Map.entry("semi", (int) ';'), Map.entry("equals", (int) '='), Map.entry("quest", (int) '?'),
            Map.entry("commat", (int) '@'), Map.entry("lsqb", (int) '['), Map.entry("lbrack", (int) '['),
            Map.entry("bsol", (int) '\\'), Map.entry("rsqb", (int) ']'), Map.entry("rbrack", (int) ']'),
            Map.entry("Hat", (int) '^'), Map.entry("lowbar", (int) '_'), Map.entry("UnderBar", (int) '_'),
            Map.entry("grave", (int) '`'), Map.entry("DiacriticalGrave", (int) '`'), Map.entry("lcub", (int) '{'),
            Map.entry("lbrace", (int) '{'), Map.entry("verbar", (int) '|'), Map.entry("vert", (int) '|'),
            Map.entry("VerticalLine", (int) '|'), Map.entry("rcub", (int) '}'), Map.entry("rbrace", (int) '}'),
            Map.entry("Tab", (int) '\t'), Map.entry("NewLine", (int) '\n'));
    /** Named references an HTML parser also reads without the semicolon. */
    private static final String[] LEGACY = {"amp", "lt", "gt", "quot", "AMP", "LT", "GT", "QUOT"};

    private MarkupReference() {
    }

    /**
     * {@return the unit of the reference at {@code i} (its {@code &}) as {@code reader} reads it: its input length
     * times 2^32 plus the code point it reads as, {@link #NOTHING}, or {@link #LITERAL} (the {@code &} alone, one
     * byte)}
     *
     * @param b the text
     * @param i the index of an {@code &}
     * @param reader the reader
     */
    static long at(ByteBuffer b, int i, Reader reader) {
        int n = b.limit();
        if (i + 1 < n && b.get(i + 1) == '#') {
            long r = DroppedSequences.reference(b, i, n, true);
            int kind = r == 0 ? LITERAL : reader.numeric((int) r);
            int length = (int) (r >>> 32);
            if (reader == Reader.LIBXML2_XML && r != 0 && b.get(i + length - 1) != ';') {
                kind = NOTHING; // XML requires the semicolon: libxml2 recovering drops the reference (P22-2: &#45)
            }
            return kind == LITERAL ? pack(1, LITERAL) : pack(length, kind);
        }
        if (reader == Reader.LIBXML2_XML) {
            return libxml2XmlNamed(b, i);
        }
        int j = i + 1;
        while (j < n && j - i <= MAX_NAME && isAlnum(b.get(j))) {
            j++;
        }
        if (j == i + 1) {
            return pack(1, LITERAL); // no name: a lone & (attacker pass 17, P19-5: a body of them cost 30 times a byte)
        }
        if (j < n && b.get(j) == ';') {
            int cp = named(b, i + 1, j);
            if (cp >= 0) {
                return pack(j + 1 - i, cp);
            }
        }
        for (String legacy : LEGACY) {
            if (startsWith(b, i + 1, legacy)) {
                return pack(1 + legacy.length(), NAMED.get(legacy));
            }
        }
        return pack(1, LITERAL);
    }

    /**
     * {@return a named reference at {@code i} as libxml2's recovering XML parser reads it} {@code &} and an XML name
     * (a letter, {@code _} or {@code :}, then letters, digits, {@code . - _ :} and non-ASCII bytes) reads as nothing,
     * with its {@code ;} (no DTD declares it, and after any error not even the five predefined ones: P22-1) or
     * without one (the reference is broken: attacker pass 23, P29-5, {@code T1&a&b;T2} and {@code T1&nbsp<![CDATA[]]>T2}
     * are one text node to lxml); a lone {@code &} reads as itself.
     */
    private static long libxml2XmlNamed(ByteBuffer b, int i) {
        int n = b.limit();
        byte first = i + 1 < n ? b.get(i + 1) : 0;
        if (!MarkupRecovery.nameStart(first) && first >= 0) {
            return pack(1, LITERAL);
        }
        int j = i + 2;
        while (j < n && j - i <= MAX_NAME && (isAlnum(b.get(j)) || b.get(j) < 0 || ".-_:".indexOf(b.get(j)) >= 0)) {
            j++;
        }
        return pack((j < n && b.get(j) == ';' ? j + 1 : j) - i, NOTHING);
    }

    /**
     * {@return the readers that read some numeric reference of {@code b} otherwise than WHATWG does, one bit per
     * reader ordinal: Python's, and libxml2's HTML parser when asked} One pass over the {@code &} bytes, ended once
     * every reader asked about differs. (libxml2's readings of markup are scanned whatever references it holds, for its
     * recovery from broken markup: only text of no markup type asks about its HTML reading here.)
     *
     * @param b the text
     * @param html whether to ask about libxml2's HTML parser ({@link Reader#LIBXML2_HTML})
     */
    static int differing(ByteBuffer b, boolean html) {
        int python = 1 << Reader.PYTHON.ordinal();
        int libxml2 = 1 << Reader.LIBXML2_HTML.ordinal();
        int asked = python | (html ? libxml2 : 0);
        int n = b.limit();
        int out = 0;
        int i = 0;
        while (i < n && out != asked) {
            i = JsonText.skipTo(b, i, n, XmlText.AMPERSANDS, XmlText.AMPERSANDS);
            for (int end = Math.min(n, i + Long.BYTES); i < end; i++) {
                if (b.get(i) != '&' || i + 1 >= n || b.get(i + 1) != '#') {
                    continue;
                }
                long r = DroppedSequences.reference(b, i, n, true);
                if (r != 0) { // a numeric reference: read once, its value judged per reader
                    int whatwg = Reader.WHATWG.numeric((int) r);
                    out |= (Reader.PYTHON.numeric((int) r) != whatwg ? python : 0)
                            | (Reader.LIBXML2_HTML.numeric((int) r) != whatwg ? libxml2 : 0);
                    out &= asked;
                }
            }
        }
        return out;
    }

    static long pack(int length, int kind) {
        return ((long) length << 32) | (kind & 0xffff_ffffL);
    }

    private static boolean isAlnum(byte c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    }

    /**
     * {@return the code point of the name from {@code from} to {@code to} (exclusive) in {@link #NAMED}, or -1} Read
     * in place, without a string per reference: a body of 4 MB of {@code &a;} made 1.3 million of them per reading,
     * 400 MB of garbage per scan.
     */
    private static int named(ByteBuffer b, int from, int to) {
        String[] candidates = BY_FIRST[b.get(from) & 0x7f];
        if (candidates != null) {
            for (String name : candidates) {
                if (name.length() == to - from && startsWith(b, from, name)) {
                    return NAMED.get(name);
                }
            }
        }
        return -1;
    }

    /** {@link #NAMED}'s names by their first character (ASCII). */
    private static final String[][] BY_FIRST = byFirst();

    private static String[][] byFirst() {
        String[][] out = new String[128][];
        for (String name : NAMED.keySet()) {
            String[] old = out[name.charAt(0)];
            String[] grown = old == null ? new String[1] : java.util.Arrays.copyOf(old, old.length + 1);
            grown[grown.length - 1] = name;
            out[name.charAt(0)] = grown;
        }
        return out;
    }

    /** {@return whether {@code s} (ASCII) stands in {@code b} at {@code at}} */
    static boolean startsWith(ByteBuffer b, int at, String s) {
        if (at + s.length() > b.limit()) {
            return false;
        }
        for (int k = 0; k < s.length(); k++) {
            if (b.get(at + k) != s.charAt(k)) {
                return false;
            }
        }
        return true;
    }
}
