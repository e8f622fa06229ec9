package dev.openshell.builtin.regex;

import dev.openshell.middleware.spi.internal.DroppedSequences;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * The markup layer: the text an XML parser (XML 1.0 sections 2.4, 2.5, 2.6, 2.7, 4.1, 4.6) or an HTML parser (WHATWG
 * HTML, "Character references") hands its application, as a second reading of XML, HTML and any other text that holds
 * {@code &#} or a CDATA section ({@link BodyDecoder}).
 *
 * <ul>
 *   <li>Character references are decoded as a reader reads them ({@link MarkupReference}: browsers by default,
 *       also Python's {@code html.unescape} and libxml2, which drop some): {@code &#115;} and {@code &#x73;} (any
 *       number of leading zeros; the semicolon may be missing, as an HTML parser accepts), the five predefined
 *       entities and the HTML named references that stand for an ASCII character.</li>
 *   <li>CDATA section markers ({@code <![CDATA[} and {@code ]]>}) read as nothing, and nothing is decoded inside a
 *       section: a parser reports the text before, in and after adjacent sections as one text node.</li>
 *   <li>Comments ({@code <!-- -->}) and processing instructions ({@code <? ?>}) read as nothing: a parser that drops
 *       them (Python's ElementTree, DOM {@code textContent}, XPath {@code string()}) joins the text around them. An
 *       unclosed one runs to the end of the input (as an HTML parser reads it), or to a character XML does not allow,
 *       which ends it ({@link MarkupRecovery#xmlThrough}). Their content is scanned in the
 *       other reading, the text as it is.</li>
 *   <li>Element tags stay in the text: text in two elements is two values, and a keyword entry reads {@code >} ending
 *       a start tag as an assignment.</li>
 * </ul>
 *
 * <p>The way back replaces the whole units that encode a match (references, markers, comments inside it) and writes
 * the placeholder as the context needs it: escaped ({@code &amp;}, {@code &lt;}, {@code &gt;}) outside a CDATA
 * section, as it is inside one, followed by {@code ]]>} when the match starts inside a section and ends outside, and
 * by {@code <![CDATA[} when it starts outside and ends inside, so the sections of the rest stay as they were. Linear
 * in the input: each unit is read once per pass, a comment's end is searched once.
 */
final class XmlText {
    /** A unit that stands for itself (one byte). */
    private static final int LITERAL = MarkupReference.LITERAL;
    /** A unit that reads as nothing (a marker, a comment, a processing instruction, a dropped reference). */
    private static final int NOTHING = MarkupReference.NOTHING;

    private static final byte[] CDATA_OPEN = "<![CDATA[".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CDATA_CLOSE = "]]>".getBytes(StandardCharsets.US_ASCII);

    private XmlText() {
    }

    /** {@code &} in each byte of a word, for {@link JsonText#skipTo}. */
    static final long AMPERSANDS = 0x2626_2626_2626_2626L;
    /** {@code <} in each byte of a word, for {@link JsonText#skipTo}. */
    static final long LESS_THANS = 0x3c3c_3c3c_3c3c_3c3cL;

    /**
     * {@return whether {@code &#}, a named reference other than XML's five predefined entities ({@code &a;}: libxml2's
     * recovering XML parser drops it) or {@code <![CDATA[} starts at {@code i}: what makes text of no markup media
     * type worth the markup reading}
     *
     * @param input text
     * @param i a position in it
     */
    static boolean markupAt(ByteBuffer input, int i) {
        if (input.get(i) == '&') { // &#, or an entity no DTD declares (attacker pass 17b, P20-2: lxml's recover drops it)
            return i + 1 < input.limit() && (input.get(i + 1) == '#'
                    || DroppedSequences.lengthInComplete(input, i, input.limit()) > 0);
        }
        return startsWith(input, i, CDATA_OPEN);
    }

    /**
     * {@return whether text of no markup media type is worth the markup reading: it holds {@code &#}, an undeclared
     * entity or {@code <![CDATA[} ({@link #markupAt})} The test reads eight bytes at a time to the next {@code &} or
     * {@code <}.
     *
     * @param input text (UTF-8, or ASCII-compatible)
     */
    static boolean worthReading(ByteBuffer input) {
        int n = input.limit();
        int i = 0;
        while (true) {
            i = JsonText.skipTo(input, i, n, AMPERSANDS, LESS_THANS);
            while (i < n && input.get(i) != '&' && input.get(i) != '<') {
                i++;
            }
            if (i >= n) {
                return false;
            }
            if (markupAt(input, i)) {
                return true;
            }
            i++;
        }
    }

    /**
     * {@return the markup reading of the input, or {@code null} when it decodes nothing (no reference, marker,
     * comment or processing instruction): the text as it is is then the same reading}
     *
     * @param input text (UTF-8, or ASCII-compatible)
     */
    static TextView view(ByteBuffer input) {
        return view(input, null, MarkupReference.Reader.WHATWG);
    }

    /**
     * {@return the markup reading of the input with its character references read as {@code reader} reads them
     * ({@link MarkupReference}), or {@code null} when it decodes nothing}
     *
     * @param input text (UTF-8, or ASCII-compatible)
     * @param reader the reader
     */
    static TextView view(ByteBuffer input, MarkupReference.Reader reader) {
        return view(input, null, reader);
    }

    /**
     * {@return the reading of HTML as a WHATWG tokenizer reads it (HTML, "Tokenization"), with the character references
     * read as {@code reader} reads them, or {@code null} when it decodes nothing} As {@link #view}, except for the
     * markup read as nothing: a comment ends at the first {@code -->} or {@code --!>}; {@code <!} not followed by
     * {@code --} (a doctype, and {@code <![CDATA[} in HTML content), {@code <?}, and {@code </} not followed by an
     * ASCII letter open a bogus comment that ends at the first {@code >}; an end tag reads as nothing; there are no
     * CDATA sections. Python's {@code html.parser} drops the same units. A {@code <} inside a tag (an attribute value:
     * {@code <p title="<!--">}) or inside the text of a raw-text element ({@code script}, {@code style},
     * {@code textarea}, {@code title}, ...: {@link HtmlTags#literalOpeners}) opens nothing.
     *
     * @param input text (UTF-8, or ASCII-compatible)
     * @param openers the input's {@link HtmlTags#literalOpeners} to {@code reader}
     * @param reader the reader (Python's {@code html.parser} drops bogus comments too)
     */
    static TextView htmlView(ByteBuffer input, BitSet openers, MarkupReference.Reader reader) {
        return view(input, openers, reader);
    }

    /**
     * @param html for HTML, the positions of the {@code <} that open nothing ({@link HtmlTags#literalOpeners}); {@code null}
     *     for XML
     */
    private static TextView view(ByteBuffer input, BitSet html, MarkupReference.Reader reader) {
        int n = input.limit();
        byte[] out = null; // made at the first unit that does not read as itself: until then o == i
        int o = 0;
        boolean cdata = false;
        boolean changed = false;
        int check = 0;
        boolean[] special = reader.libxml2() ? SPECIAL_TO_LIBXML2 : SPECIAL;
        for (int i = 0; i < n; ) {
            if (i >= check) {
                check = Interrupts.checkAt(i);
            }
            int plain = i;
            while (plain < n && !special[input.get(plain) & 0xff]) {
                plain++;
            }
            if (plain > i) { // a run of bytes that read as themselves: copied at once
                if (out != null) {
                    input.get(i, out, o, plain - i);
                }
                o += plain - i;
                i = plain;
                continue;
            }
            long u = step(input, i, cdata, html, reader);
            int len = (int) (u >>> 32);
            int kind = (int) u;
            if (kind == LITERAL) {
                if (out != null) {
                    out[o] = input.get(i);
                }
                o++;
            } else {
                if (out == null) {
                    out = new byte[n + 4];
                    input.get(0, out, 0, i);
                }
                changed |= kind != NOTHING || cdata || startsWith(input, i, CDATA_OPEN) || joins(input, i);
                if (kind == NOTHING) {
                    cdata = cdataAfter(input, i, len, cdata, html);
                } else {
                    o = Charsets.Transcoded.putUtf8(out, o, kind);
                }
            }
            i += len;
        }
        return changed ? new Decoded(input, ByteBuffer.wrap(out, 0, o).slice(), html, reader) : null;
    }

    /**
     * {@return whether a comment or processing instruction at {@code i} may join two text runs: it follows text, not
     * the start, a tag's {@code >} or white space} One that does not (an XML declaration, a comment on a line of its
     * own) changes no token, so a document whose only markup units are such needs no second reading.
     */
    private static boolean joins(ByteBuffer b, int i) {
        if (i == 0) {
            return false;
        }
        byte c = b.get(i - 1);
        return c != '>' && c != ' ' && c != '\t' && c != '\r' && c != '\n';
    }

    /**
     * {@return the state after the NOTHING unit at {@code i} of XML ({@code html} null) or HTML: inside a CDATA section
     * or not} HTML has CDATA sections only in foreign content, which only a tree reading reads as such
     * ({@link HtmlTags#treeReadings}).
     */
    private static boolean cdataAfter(ByteBuffer b, int i, int length, boolean cdata, BitSet html) {
        if (html == null) {
            return stateAfter(b, i, length, cdata);
        }
        if (!(html instanceof HtmlTags.Openers o) || !o.tree()) {
            return false;
        }
        return cdata ? stateAfter(b, i, length, true) : o.opensCdata(i);
    }

    /** {@return the state after the NOTHING unit at {@code i}: inside a CDATA section or not} */
    private static boolean stateAfter(ByteBuffer b, int i, int length, boolean cdata) {
        if (cdata) {
            return !(length == CDATA_CLOSE.length && b.get(i) == ']'); // "]]>" closes; a dropped character does not
        }
        // "<![CDATA[" opens; a comment, a PI, or a section libxml2 drops whole (attacker pass 18, P24-1) does not
        return length == CDATA_OPEN.length && b.get(i) == '<' && b.get(i + 1) == '!' && b.get(i + 2) == '[';
    }

    /** The bytes at which {@link #step} may read other than the byte itself: {@code <}, {@code &}, {@code ]}. */
    private static final boolean[] SPECIAL = special(false);
    /** {@link #SPECIAL} and what starts a character libxml2 drops ({@link DroppedSequences#notXmlChar}). */
    private static final boolean[] SPECIAL_TO_LIBXML2 = special(true);

    private static boolean[] special(boolean libxml2) {
        boolean[] out = new boolean[256];
        out['<'] = true;
        out['&'] = true;
        out[']'] = true;
        for (int c = 0; libxml2 && c < out.length; c++) {
            out[c] |= DroppedSequences.mayStartNotXmlChar((byte) c);
        }
        return out;
    }

    private static long pack(int length, int kind) {
        return ((long) length << 32) | (kind & 0xffff_ffffL);
    }

    /**
     * {@return the unit at {@code i}: its input length times 2^32 plus its kind ({@link #LITERAL}, {@link #NOTHING}
     * or the code point it reads as)}
     */
    private static long step(ByteBuffer b, int i, boolean cdata, BitSet html, MarkupReference.Reader reader) {
        byte c = b.get(i);
        if (reader.libxml2()) { // libxml2 drops a character XML does not allow wherever it stands (P22-4)
            int bad = DroppedSequences.notXmlChar(b, i, b.limit());
            if (bad > 0) {
                return pack(bad, NOTHING);
            }
            if (reader == MarkupReference.Reader.LIBXML2_XML && !cdata && (c == '<' || c == '&')) {
                int drops = MarkupRecovery.libxml2XmlDrops(b, i);
                if (drops > 0) {
                    return pack(drops, NOTHING);
                }
            }
        }
        if (cdata) {
            return c == ']' && startsWith(b, i, CDATA_CLOSE) ? pack(3, NOTHING) : pack(1, LITERAL);
        }
        if (c == '<' && html != null) {
            return html.get(i) ? pack(1, LITERAL) : htmlMarkup(b, i, reader, html);
        }
        if (c == '<') {
            if (startsWith(b, i, CDATA_OPEN)) {
                return pack(CDATA_OPEN.length, NOTHING);
            }
            if (i + 3 < b.limit() && b.get(i + 1) == '!' && b.get(i + 2) == '-' && b.get(i + 3) == '-') {
                // "<!-->" closes as in HTML, but not to libxml2's XML parser: its comment text starts after "<!--"
                // (attacker pass 19, P25-2: <!-->- 0x01 inside a token, dropped through the 0x01 by lxml's recover),
                // and it ends only at an even run of dashes and ">" (attacker pass 21, P27-3: <!--x--->-->)
                int end = reader == MarkupReference.Reader.LIBXML2_XML ? MarkupRecovery.libxml2CommentThrough(b, i + 4)
                        : MarkupRecovery.xmlThrough(b, i + 2, "-->");
                return pack(end - i, NOTHING);
            }
            if (i + 1 < b.limit() && b.get(i + 1) == '?') {
                return pack(MarkupRecovery.xmlThrough(b, i + 2, "?>") - i, NOTHING);
            }
            int broken = MarkupRecovery.brokenTag(b, i + 1);
            return broken > 0 ? pack(broken - i, NOTHING) : pack(1, LITERAL);
        }
        if (c == '&' && html == null) {
            int broken = MarkupRecovery.brokenName(b, i + 1);
            if (broken > 0) {
                return pack(broken - i, NOTHING);
            }
        }
        return c == '&' ? MarkupReference.at(b, i, reader) : pack(1, LITERAL);
    }

    /**
     * {@return {@link #htmlMarkup} as {@code reader} reads it} libxml2's HTML parser drops {@code </} or {@code <?}
     * before a character it drops (raw, or a reference) together with it, where a WHATWG tokenizer opens a bogus
     * comment to the next {@code >} (attacker pass 17c, P21-3: {@code ghp_R8xq2</} 0x01 {@code LmT5...} reads as the
     * token to Debian's libxml2).
     */
    static long htmlMarkup(ByteBuffer b, int i, MarkupReference.Reader reader, BitSet openers) {
        int n = b.limit();
        int tree = openers instanceof HtmlTags.Openers o ? o.treeUnitEnd(b, i) : 0;
        if (tree > 0) { // a start tag a tree builder joins the text around, a CDATA section of SVG (P29-2, P30-3)
            return pack(tree - i, NOTHING);
        }
        if (reader == MarkupReference.Reader.LIBXML2_HTML) {
            int after = MarkupRecovery.libxml2Drops(b, i);
            if (after > 0) {
                return pack(after - i, NOTHING);
            }
        }
        byte next = i + 1 < n ? b.get(i + 1) : 0;
        if (next == '!' && i + 3 < n && b.get(i + 2) == '-' && b.get(i + 3) == '-') {
            // Python's html.parser (to 3.12) and libxml2's HTML parser read a comment's text from after "<!--", so
            // "<!-->" opens one that the next "-->" ends (attacker pass 20, P26-1: T1<!-->-->T2 is one text node)
            int end = reader == MarkupReference.Reader.WHATWG ? htmlCommentEnd(b, i + 2)
                    : legacyCommentEnd(b, i + 4, reader == MarkupReference.Reader.PYTHON);
            return comment(end - i, openers);
        }
        if (reader == MarkupReference.Reader.PYTHON && next == '!' && i + 2 < n && b.get(i + 2) == '[') {
            int end = HtmlTags.pythonMarkedSectionEnd(b, i, (HtmlTags.Openers) openers); // its ends (P28-4)
            if (end > 0) {
                return pack(end - i, NOTHING);
            }
        }
        boolean closeTag = next == '/' && i + 2 < n && !HtmlTags.isAsciiLetter(b.get(i + 2));
        if (next == '!' || next == '?' || closeTag) {
            return comment(through(b, i + 1, ">") - i, openers);
        }
        if (next == '/' && i + 2 < n) { // an end tag: one that closes nothing leaves the text around it one text node
            int name = HtmlTags.nameEnd(b, i + 2); // to every HTML reader (pass 19, P25-3: T1</b>T2); its attributes
                                                    // after its name (P29-3)
            int end = reader == MarkupReference.Reader.WHATWG ? HtmlTags.tagEnd(b, name, null)
                    : HtmlTags.legacyEndTagEnd(b, name, null); // to its first '>', quotes or not (P28-5)
            return pack(end - i, NOTHING);
        }
        return pack(1, LITERAL);
    }

    /** {@return a comment of {@code length}: nothing, or a space to a tree reading of text nodes} */
    private static long comment(int length, BitSet openers) {
        boolean separate = openers instanceof HtmlTags.Openers o && o.commentsSeparate();
        return pack(length, separate ? ' ' : NOTHING);
    }

    /**
     * {@return the index after the end of a comment whose text starts at {@code from}, as Python's {@code html.parser}
     * (to 3.12: {@code --}, white space, {@code >}; {@code spaceBeforeClose}) or libxml2's HTML parser ({@code -->},
     * {@code --!>}) ends it, or the input's limit} One scan for either end, so every comment is read once.
     */
    private static int legacyCommentEnd(ByteBuffer b, int from, boolean spaceBeforeClose) {
        int n = b.limit();
        for (int j = from; j + 2 < n; j++) {
            if (b.get(j) == '-' && b.get(j + 1) == '-') {
                int k = j + 2;
                while (spaceBeforeClose && k < n && isHtmlSpace(b.get(k))) {
                    k++;
                }
                if (k < n && b.get(k) == '>') {
                    return k + 1;
                }
                if (!spaceBeforeClose && k + 1 < n && b.get(k) == '!' && b.get(k + 1) == '>') {
                    return k + 2; // libxml2 (2.9) ends one at "--!>" too (attacker pass 23, P29-7: T1<!--->--!>T2)
                }
            }
        }
        return n;
    }

    private static boolean isHtmlSpace(byte c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
    }

    /**
     * {@return the index after the end of an HTML comment whose {@code --} opener starts at {@code from}: the first
     * {@code -->} or {@code --!>} (the opener's dashes may be the closer's: {@code <!-->}, {@code <!--->}), or the
     * input's limit} One pass.
     */
    private static int htmlCommentEnd(ByteBuffer b, int from) {
        int n = b.limit();
        for (int j = from; j + 2 < n; j++) {
            if (b.get(j) == '-' && b.get(j + 1) == '-') {
                if (b.get(j + 2) == '>') {
                    return j + 3;
                }
                if (b.get(j + 2) == '!' && j + 3 < n && b.get(j + 3) == '>' && j >= from + 2) {
                    return j + 4;
                }
            }
        }
        return n;
    }

    /** {@return the index after the first {@code end} at or after {@code from}, or the input's limit} */
    private static int through(ByteBuffer b, int from, String end) {
        int n = b.limit();
        for (int j = from; j + end.length() <= n; j++) {
            boolean match = true;
            for (int k = 0; k < end.length() && match; k++) {
                match = b.get(j + k) == end.charAt(k);
            }
            if (match) {
                return j + end.length();
            }
        }
        return n;
    }

    static boolean startsWith(ByteBuffer b, int at, byte[] s) {
        if (at + s.length > b.limit()) {
            return false;
        }
        for (int k = 0; k < s.length; k++) {
            if (b.get(at + k) != s[k]) {
                return false;
            }
        }
        return true;
    }

    /** Markup with something decoded: the text, and the way back over its units and CDATA sections. */
    private static final class Decoded extends TextView {
        private final ByteBuffer input;
        private final ByteBuffer text;
        private final BitSet html;
        private final MarkupReference.Reader reader;

        Decoded(ByteBuffer input, ByteBuffer text, BitSet html, MarkupReference.Reader reader) {
            this.input = input;
            this.text = text;
            this.html = html;
            this.reader = reader;
        }

        @Override
        ByteBuffer text() {
            return text;
        }

        @Override
        List<Edit> toInput(List<Edit> edits) {
            List<Edit> out = new ArrayList<>(edits.size());
            int n = input.limit();
            int i = 0;
            int d = 0;
            boolean cdata = false;
            for (Edit e : edits) {
                Interrupts.check(); // the walk between two edits reads at most the input once
                while (i < n) { // to the edit's first text byte, past markers and comments before it
                    long u = step(input, i, cdata, html, reader);
                    if (d >= e.start() && textLength(u) > 0) {
                        break;
                    }
                    cdata = next(i, u, cdata);
                    d += textLength(u);
                    i += (int) (u >>> 32);
                }
                int start = i;
                boolean startCdata = cdata;
                while (i < n && d < e.end()) {
                    long u = step(input, i, cdata, html, reader);
                    cdata = next(i, u, cdata);
                    d += textLength(u);
                    i += (int) (u >>> 32);
                }
                out.add(new Edit(start, i, encode(e.replacement(), startCdata, cdata)));
            }
            return out;
        }

        private boolean next(int i, long u, boolean cdata) {
            return (int) u == NOTHING ? cdataAfter(input, i, (int) (u >>> 32), cdata, html) : cdata;
        }

        private static int textLength(long u) {
            int kind = (int) u;
            if (kind == LITERAL) {
                return 1;
            }
            if (kind == NOTHING) {
                return 0;
            }
            return kind < 0x80 ? 1 : kind < 0x800 ? 2 : kind < 0x10000 ? 3 : 4;
        }

        private static byte[] encode(byte[] ascii, boolean startCdata, boolean endCdata) {
            StringBuilder s = new StringBuilder(ascii.length + 16);
            for (byte c : ascii) {
                if (!startCdata && c == '&') {
                    s.append("&amp;");
                } else if (!startCdata && c == '<') {
                    s.append("&lt;");
                } else if (!startCdata && c == '>') {
                    s.append("&gt;");
                } else {
                    s.append((char) c);
                }
            }
            if (startCdata && !endCdata) {
                s.append("]]>");
            } else if (!startCdata && endCdata) {
                s.append("<![CDATA[");
            }
            return s.toString().getBytes(StandardCharsets.US_ASCII);
        }
    }
}
