package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.Set;

/**
 * Tags and declarations of HTML as each HTML reader of {@link XmlText} reads them: where a tag ends (its attributes),
 * which elements hold raw text, and the marked sections of Python's {@code html.parser}. Stateless; every scan is one
 * pass over the text.
 */
final class HtmlTags {
    /** Elements whose text a WHATWG tokenizer reads as raw text or RCDATA: no markup in it but its end tag. */
    private static final Set<String> RAW_TEXT = Set.of("script", "style", "xmp", "iframe", "noembed", "noframes",
            "noscript", "textarea", "title", "plaintext");
    /**
     * Elements whose text Python's {@code html.parser} (3.11: {@code CDATA_CONTENT_ELEMENTS}) and libxml2's HTML
     * parser (2.9) read as raw text: markup in a {@code textarea}, {@code title}, {@code noscript} ... is markup to
     * them (attacker pass 22, P28-2: {@code <textarea>T1</p>T2</textarea>} is one text node to them).
     */
    private static final Set<String> LEGACY_RAW_TEXT = Set.of("script", "style");
    /** {@link #RAW_TEXT} without {@code noscript}: a WHATWG tokenizer with scripting disabled. */
    private static final Set<String> RAW_TEXT_NOSCRIPT = Set.of("script", "style", "xmp", "iframe", "noembed",
            "noframes", "textarea", "title", "plaintext");
    private static final byte[] CDATA_OPEN = "<![CDATA[".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CDATA_CLOSE = "]]>".getBytes(StandardCharsets.US_ASCII);

    private static final int BEFORE_NAME = 0;
    private static final int NAME = 1;
    private static final int AFTER_NAME = 2;
    private static final int BEFORE_VALUE = 3;
    private static final int UNQUOTED = 4;
    private static final int AFTER_QUOTED = 5;

    private HtmlTags() {
    }

    /**
     * The {@code <} that open nothing ({@link #literalOpeners}), and where the last possible end of each kind of
     * Python marked section stands, found once per text: a section that starts after it never ends, so looking for
     * its end costs nothing and a text of many unended sections is read in one pass.
     */
    static final class Openers extends BitSet {
        private static final long serialVersionUID = 1L;
        /** The index of the last {@code ]>} (white space allowed) in the text, or -1. */
        private final int lastMsClose;
        /** The index of the last {@code ]]>} (white space allowed) in the text, or -1. */
        private final int lastClose;
        /** Whether a tree reading reads with these openers ({@link #treeReadings}): its own units count. */
        private boolean tree;
        /** Whether that reading reads a comment as a boundary between two text nodes, not as nothing. */
        private boolean commentsSeparate;
        /** Whether the openers are a WHATWG tokenizer's with scripting enabled. */
        private boolean scripting;
        /** The tree builder that followed the tags, or {@code null} (not a WHATWG reading). */
        private transient HtmlTree builder;
        /** The {@code <} of start tags that join the text around them ({@link HtmlTree#startTag}), or {@code null}. */
        private BitSet joined;
        /** The {@code <} of {@code <![CDATA[} that open a section in foreign content, or {@code null}. */
        private BitSet cdata;
        /** The {@code <} of end tags that close an open element ({@link HtmlTree#endTag}), or {@code null}. */
        private BitSet closing;
        /** The {@code <} of end tags that make an element ({@code </br>}, {@code </p>}), or {@code null}. */
        private BitSet elements;
        /** For a start tag that joins and holds raw text (a style in a table), the index after its end tag. */
        private transient Map<Integer, Integer> joinedEnds;

        /** @param python whether the openers are Python's: only its reading has marked sections to end */
        Openers(ByteBuffer b, boolean python) {
            int ms = -1;
            int std = -1;
            for (int m = 0, n = python ? b.limit() : 0; m < n; m++) {
                if (b.get(m) == ']') {
                    ms = closes(b, m, 1) > 0 ? m : ms;
                    std = closes(b, m, 2) > 0 ? m : std;
                }
            }
            lastMsClose = ms;
            lastClose = std;
        }

        /** {@return whether a tree reading reads with these openers} */
        boolean tree() {
            return tree;
        }

        /** {@return whether the reading reads a comment as a boundary (a space) rather than as nothing} */
        boolean commentsSeparate() {
            return commentsSeparate;
        }

        /**
         * {@return for a tree reading, the index after a unit at {@code i} that only it reads as nothing: a start tag
         * that joins the text around it, or the {@code <![CDATA[} opening a CDATA section in foreign content; else 0}
         */
        int treeUnitEnd(ByteBuffer b, int i) {
            if (!tree) {
                return 0;
            }
            if (cdata != null && cdata.get(i)) {
                return i + CDATA_OPEN.length;
            }
            if (joined == null || !joined.get(i)) {
                return 0;
            }
            Integer end = joinedEnds == null ? null : joinedEnds.get(i);
            if (end != null) {
                return end; // the element and its raw text: the tree builder puts it in the table, not between
            }
            return tagEnd(b, nameEnd(b, i + 1), null);
        }

        /** {@return whether, for a tree reading, {@code <![CDATA[} at {@code i} opens a section} */
        boolean opensCdata(int i) {
            return tree && cdata != null && cdata.get(i);
        }

        private Openers asTree(boolean closes, boolean separate) {
            Openers t = (Openers) clone();
            t.tree = true;
            t.commentsSeparate = separate;
            if (closing != null && closes) { // an end tag that closes an element separates: left as text
                t.or(closing);
            }
            if (elements != null) {
                t.or(elements);
            }
            return t;
        }
    }

    /**
     * {@return the openers of the tree readings of a text ({@link HtmlTree}), none when they read it as the WHATWG
     * tokenizer's reading does} Two read the start tags a tree builder ignores or foster-parents text around as
     * nothing, and in SVG or MathML content CDATA sections as sections and no raw text: one with the end tags that
     * close an open element as boundaries, one with every end tag as nothing (an element out of scope closes
     * nothing); they are made where the tokenizer's pass found such a tag or foreign content that reads otherwise. A
     * third reads each comment as a boundary between two text nodes (a reader that walks the nodes), made where a
     * comment or an end tag that closes nothing follows text. The tags are read again in a second pass only where the
     * tree builder's tokenizer reads the text otherwise (foreign content, raw text in an ignored element).
     *
     * @param whatwg the text's {@link #literalOpeners} to a WHATWG tokenizer
     * @param b the text
     */
    static List<Openers> treeReadings(Openers whatwg, ByteBuffer b) {
        HtmlTree t = whatwg.builder;
        if (t == null || whatwg.joined == null && !t.differs() && !t.nodesDiffer()) {
            return List.of();
        }
        Openers tree = t.differs() ? scan(b, MarkupReference.Reader.WHATWG, whatwg.scripting, new HtmlTree(true))
                : whatwg;
        List<Openers> out = new ArrayList<>(2);
        if (tree.joined != null || tree.cdata != null || t.differs()) {
            out.add(tree.asTree(true, false));
            out.add(tree.asTree(false, false)); // end tags as nothing: one the tree builder finds out of scope
        }
        if (t.nodesDiffer()) {
            out.add(tree.asTree(true, true));
        }
        return out;
    }

    /**
     * {@return the positions of the {@code <} of HTML that open nothing to {@code reader}: those inside a tag (its
     * attributes, quoted or not) and inside the text of a raw-text or RCDATA element up to its end tag} One pass, the
     * comments and bogus comments skipped as {@code reader} reads them, so a {@code <!--} in an attribute value or a
     * script does not hide the next real comment. A WHATWG tokenizer reads the raw text of {@link #RAW_TEXT};
     * Python's {@code html.parser} and libxml2's HTML parser read raw text in {@code script} and {@code style} only
     * (and end an end tag at its first {@code >}: {@link XmlText#htmlMarkup}).
     *
     * @param b the text
     * @param reader the reader
     */
    static Openers literalOpeners(ByteBuffer b, MarkupReference.Reader reader) {
        return literalOpeners(b, reader, true);
    }

    /**
     * {@return {@link #literalOpeners}, for a WHATWG tokenizer with scripting enabled (browsers: {@code noscript}
     * holds raw text) or disabled ({@code scripting} false: html5lib, lxml 2.14 and BeautifulSoup read a
     * {@code noscript}'s content as markup; attacker pass 24, P30-1/P30-2)} A WHATWG pass also follows the tags with
     * an {@link HtmlTree} ({@link #treeReadings}).
     *
     * @param b the text
     * @param reader the reader
     * @param scripting for WHATWG, whether {@code noscript} holds raw text
     */
    static Openers literalOpeners(ByteBuffer b, MarkupReference.Reader reader, boolean scripting) {
        boolean whatwg = reader == MarkupReference.Reader.WHATWG;
        return scan(b, reader, scripting, whatwg ? new HtmlTree(false) : null);
    }

    private static Openers scan(ByteBuffer b, MarkupReference.Reader reader, boolean scripting, HtmlTree tree) {
        boolean whatwg = reader == MarkupReference.Reader.WHATWG;
        int n = b.limit();
        Openers literal = new Openers(b, reader == MarkupReference.Reader.PYTHON);
        literal.builder = tree;
        literal.scripting = scripting;
        int i = 0;
        int check = 0;
        int textFrom = 0;
        while (i < n) {
            if (i >= check) {
                check = Interrupts.checkAt(i); // a pass over the text, as each reading is
            }
            if (b.get(i) != '<') {
                i++;
                continue;
            }
            if (tree != null) {
                tree.text(b, textFrom, i);
            }
            if (tree != null && tree.inForeign() && XmlText.startsWith(b, i, CDATA_OPEN)) {
                i = foreignCdata(b, i, literal);
                tree.cdataSection();
                textFrom = i;
                continue;
            }
            long u = XmlText.htmlMarkup(b, i, reader, literal); // a comment, bogus comment or end tag: skipped whole
            if ((int) u == MarkupReference.NOTHING) {
                if (tree != null && i + 2 < n && b.get(i + 1) == '!' && b.get(i + 2) == '[') {
                    tree.foreignMarkup(); // a CDATA section in foreign content
                }
                boolean endTag = i + 2 < n && b.get(i + 1) == '/' && isAsciiLetter(b.get(i + 2));
                int separates = tree != null && endTag ? tree.endTag(b, i + 2) : 0;
                if (separates == HtmlTree.CLOSES) {
                    literal.closing = literal.closing == null ? new BitSet() : literal.closing;
                    literal.closing.set(i);
                } else if (separates == HtmlTree.ELEMENT) {
                    literal.elements = literal.elements == null ? new BitSet() : literal.elements;
                    literal.elements.set(i);
                } else if (tree != null && !endTag) {
                    tree.comment();
                }
                i += (int) (u >>> 32);
                textFrom = i;
                continue;
            }
            if (i + 1 >= n || !isAsciiLetter(b.get(i + 1))) {
                i++;
                continue;
            }
            i = startTag(b, i, whatwg ? scripting ? RAW_TEXT : RAW_TEXT_NOSCRIPT : LEGACY_RAW_TEXT,
                    reader == MarkupReference.Reader.LIBXML2_HTML, literal);
            textFrom = i;
        }
        return literal;
    }

    /**
     * {@return the index after a start tag at {@code i} and, when its element holds raw text, after that text}, each
     * {@code <} in them marked literal and the tag given to the openers' tree builder
     */
    private static int startTag(ByteBuffer b, int i, Set<String> rawText, boolean anyEndTag, Openers literal) {
        int nameEnd = nameEnd(b, i + 1);
        String tag = ascii(b, i + 1, nameEnd).toLowerCase(Locale.ROOT);
        int j = tagEnd(b, nameEnd, literal);
        HtmlTree tree = literal.builder;
        boolean selfClosing = j >= i + 3 && b.get(j - 1) == '>' && b.get(j - 2) == '/';
        boolean joins = tree != null && tree.startTag(tag, OpenElements.key(b, i + 1, nameEnd), selfClosing);
        if (joins) {
            literal.joined = literal.joined == null ? new BitSet() : literal.joined;
            literal.joined.set(i);
        }
        boolean raw = rawText.contains(tag)
                && !(tree != null && (tree.inForeign() || tree.treeMode() && tree.lastIgnored()));
        if (raw && tree != null && tree.lastIgnored()) {
            tree.ignoredRawText(); // <select><xmp>: raw text to the tokenizer's pass, markup to the tree builder's
        }
        int end = raw ? rawTextEnd(b, j, tag, anyEndTag, literal) : j;
        if (raw && tree != null && tree.foreignOpen() && literal.nextSetBit(j) >= 0 && literal.nextSetBit(j) < end) {
            tree.foreignMarkup(); // markup in an element's text that holds raw text in HTML content only
        }
        if (raw && joins && end < b.limit()) { // <table>T1<style>x</style>T2: the element read as nothing whole
            literal.joinedEnds = literal.joinedEnds == null ? new HashMap<>() : literal.joinedEnds;
            literal.joinedEnds.put(i, tagEnd(b, nameEnd(b, end + 2), null));
        }
        return end;
    }

    /** {@return the index after a CDATA section of foreign content at {@code i}}, its {@code <} marked literal */
    private static int foreignCdata(ByteBuffer b, int i, Openers literal) {
        literal.cdata = literal.cdata == null ? new BitSet() : literal.cdata;
        literal.cdata.set(i);
        int n = b.limit();
        for (int j = i + CDATA_OPEN.length; j < n; j++) {
            if (b.get(j) == '<') {
                literal.set(j);
            } else if (b.get(j) == ']' && XmlText.startsWith(b, j, CDATA_CLOSE)) {
                return j + CDATA_CLOSE.length;
            }
        }
        return n;
    }

    /** {@return the index after the tag name starting at {@code from}} */
    static int nameEnd(ByteBuffer b, int from) {
        int j = from;
        while (j < b.limit() && !tagNameEnd(b.get(j))) {
            j++;
        }
        return j;
    }

    /**
     * {@return the index after an end tag whose name ends at {@code j} as Python's {@code html.parser} and libxml2's
     * HTML parser read it: its first {@code >}, quotes or not (attacker pass 22, P28-5: {@code </p a=">} ends at that
     * {@code >} to them), or the limit}, each {@code <} in it marked literal (unless {@code literal} is {@code null})
     */
    static int legacyEndTagEnd(ByteBuffer b, int j, BitSet literal) {
        int n = b.limit();
        for (; j < n; j++) {
            byte c = b.get(j);
            if (c == '>') {
                return j + 1;
            }
            if (c == '<' && literal != null) {
                literal.set(j);
            }
        }
        return n;
    }

    static boolean tagNameEnd(byte c) {
        return isSpace(c) || c == '/' || c == '>';
    }

    static boolean isSpace(byte c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
    }

    /**
     * {@return the index after the {@code >} ending a tag whose name ends at {@code j} (or the limit)}, as a WHATWG
     * tokenizer reads its attributes (HTML, "Tokenization", the before-attribute-name to after-attribute-value
     * states): a quote opens a value only after {@code =} ends an attribute's name, so a {@code =} where a name may
     * start is itself a name's first character and the quote after it another ({@code </p =">} and {@code <b =">} end
     * at that {@code >}: attacker pass 22, P28-5); a quoted value runs to the same quote, a {@code >} in it ending
     * nothing. Each {@code <} in the tag is marked literal (unless {@code literal} is {@code null}).
     */
    static int tagEnd(ByteBuffer b, int j, BitSet literal) {
        int n = b.limit();
        int state = BEFORE_NAME;
        for (; j < n; j++) {
            byte c = b.get(j);
            if (c == '<' && literal != null) {
                literal.set(j);
            }
            if (c == '>') { // in every state outside a quoted value (read whole below)
                return j + 1;
            }
            boolean space = isSpace(c);
            state = switch (state) {
                case BEFORE_NAME -> space || c == '/' ? BEFORE_NAME : NAME;
                case NAME -> space ? AFTER_NAME : c == '/' ? BEFORE_NAME : c == '=' ? BEFORE_VALUE : NAME;
                case AFTER_NAME -> space ? AFTER_NAME : c == '/' ? BEFORE_NAME : c == '=' ? BEFORE_VALUE : NAME;
                case BEFORE_VALUE -> space ? BEFORE_VALUE : c == '"' || c == '\'' ? AFTER_QUOTED : UNQUOTED;
                case UNQUOTED -> space ? BEFORE_NAME : UNQUOTED;
                default -> space || c == '/' ? BEFORE_NAME : NAME; // after a quoted value
            };
            if (state == AFTER_QUOTED && (c == '"' || c == '\'')) {
                int k = j + 1;
                while (k < n && b.get(k) != c) {
                    if (b.get(k) == '<' && literal != null) {
                        literal.set(k);
                    }
                    k++;
                }
                if (k >= n) {
                    return n;
                }
                j = k; // the closing quote: the loop goes on after it
            }
        }
        return n;
    }

    /**
     * {@return the index of the end tag of raw-text element {@code tag} from {@code j} (or the limit)}, each
     * {@code <} before it marked literal; with {@code anyEndTag}, the first {@code </} and an ASCII letter ends it, as
     * libxml2's HTML parser (2.9, not recovering: PHP's DOM, xmllint) ends a {@code script} or {@code style} (attacker
     * pass 22: {@code <style>T1</p>T2</style>} reads as the token to it)
     */
    private static int rawTextEnd(ByteBuffer b, int j, String tag, boolean anyEndTag, BitSet literal) {
        int n = b.limit();
        for (; j < n; j++) {
            if (b.get(j) != '<') {
                continue;
            }
            if (anyEndTag && j + 2 < n && b.get(j + 1) == '/' && isAsciiLetter(b.get(j + 2))) {
                return j;
            }
            int k = j + 2 + tag.length();
            if (k <= n && b.get(j + 1) == '/' && ascii(b, j + 2, k).equalsIgnoreCase(tag)
                    && (k == n || tagNameEnd(b.get(k)))) {
                return j;
            }
            literal.set(j);
        }
        return n;
    }

    /**
     * {@return the index after a marked section {@code <![name ...} at {@code i} as Python's {@code html.parser}
     * (3.11, {@code _markupbase.parse_marked_section}) ends it, 0 when it reads it otherwise} The name
     * ({@code [a-zA-Z][-_.a-zA-Z0-9]*}, any case) decides the end: {@code cdata}, {@code temp}, {@code ignore},
     * {@code include} and {@code rcdata} end at {@code ]}, optional white space, {@code ]}, optional white space and
     * {@code >}; {@code if}, {@code else} and {@code endif} (Microsoft Office's) at {@code ]}, optional white space and
     * {@code >}; the section reads as nothing, so a {@code >} inside it ends nothing (attacker pass 22, P28-4:
     * {@code T1<![if x>]>T2} and {@code T1<![CDATA[>]]>T2} are one text run to it). Any other name (or none) and a
     * section that never ends: 0.
     *
     * @param b the text
     * @param i the index of {@code <![}
     */
    static int pythonMarkedSectionEnd(ByteBuffer b, int i, Openers openers) {
        int n = b.limit();
        int j = i + 3;
        if (j >= n || !isAsciiLetter(b.get(j))) {
            return 0;
        }
        int k = j + 1;
        while (k < n && (isAsciiLetter(b.get(k)) || b.get(k) >= '0' && b.get(k) <= '9' || "-_.".indexOf(b.get(k)) >= 0)) {
            k++;
        }
        String name = ascii(b, j, k).toLowerCase(Locale.ROOT);
        int brackets = switch (name) {
            case "cdata", "temp", "ignore", "include", "rcdata" -> 2;
            case "if", "else", "endif" -> 1;
            default -> 0;
        };
        int last = brackets == 2 ? openers.lastClose : openers.lastMsClose;
        if (brackets == 0 || last < i + 3) {
            return 0; // no end after it: found in O(1), so many unended sections cost one pass
        }
        for (int m = i + 3; m <= last; m++) {
            int end = closes(b, m, brackets);
            if (end > 0) {
                return end;
            }
        }
        return 0;
    }

    /**
     * {@return the index after {@code ]} and {@code >} at {@code m} ({@code ]} twice when {@code brackets} is 2; white
     * space allowed after each {@code ]}), else 0}
     */
    private static int closes(ByteBuffer b, int m, int brackets) {
        int n = b.limit();
        int k = m;
        for (int r = 0; r < brackets; r++) {
            if (k >= n || b.get(k) != ']') {
                return 0;
            }
            k++;
            while (k < n && isSpace(b.get(k))) {
                k++;
            }
        }
        return k < n && b.get(k) == '>' ? k + 1 : 0;
    }

    /** {@return whether the bytes at {@code from} are {@code name} (lower case ASCII letters), in any case} */
    static boolean equalsIgnoreCase(ByteBuffer b, int from, String name) {
        for (int k = 0; k < name.length(); k++) {
            if (from + k >= b.limit() || (b.get(from + k) | 0x20) != name.charAt(k)) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@return whether the text holds {@code <noscript} (any case) anywhere} Read byte by byte rather than from the tag
     * pass: a {@code noscript} after an element the tokenizer's pass reads as raw text to the end (an unclosed
     * {@code <svg><title>}) is a tag to a tree builder (attacker pass 27, P33-5).
     *
     * @param b the text
     */
    static boolean holdsNoscript(ByteBuffer b) {
        int n = b.limit();
        for (int i = 0; i + 9 < n; i++) {
            if (b.get(i) == '<' && (b.get(i + 1) | 0x20) == 'n' && equalsIgnoreCase(b, i + 1, "noscript")) {
                return true;
            }
        }
        return false;
    }

    static boolean isAsciiLetter(byte c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    }

    private static String ascii(ByteBuffer b, int from, int to) {
        byte[] s = new byte[to - from];
        b.get(from, s);
        return new String(s, StandardCharsets.ISO_8859_1);
    }
}
