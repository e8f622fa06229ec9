package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.BitSet;
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
    static BitSet literalOpeners(ByteBuffer b, MarkupReference.Reader reader) {
        return literalOpeners(b, reader, true);
    }

    /**
     * {@return {@link #literalOpeners}, for a WHATWG tokenizer with scripting enabled (browsers: {@code noscript}
     * holds raw text) or disabled ({@code scripting} false: html5lib, lxml 2.14 and BeautifulSoup read a
     * {@code noscript}'s content as markup; attacker pass 24, P30-1/P30-2)}
     *
     * @param b the text
     * @param reader the reader
     * @param scripting for WHATWG, whether {@code noscript} holds raw text
     */
    static BitSet literalOpeners(ByteBuffer b, MarkupReference.Reader reader, boolean scripting) {
        boolean whatwg = reader == MarkupReference.Reader.WHATWG;
        int n = b.limit();
        Openers literal = new Openers(b, reader == MarkupReference.Reader.PYTHON);
        int i = 0;
        int check = 0;
        while (i < n) {
            if (i >= check) {
                check = Interrupts.checkAt(i); // a pass over the text, as each reading is
            }
            if (b.get(i) != '<') {
                i++;
                continue;
            }
            long u = XmlText.htmlMarkup(b, i, reader, literal); // a comment, bogus comment or end tag: skipped whole
            if ((int) u == MarkupReference.NOTHING) {
                i += (int) (u >>> 32);
                continue;
            }
            int name = i + 1;
            if (name >= n || !isAsciiLetter(b.get(name))) {
                i++;
                continue;
            }
            int j = name;
            while (j < n && !tagNameEnd(b.get(j))) {
                j++;
            }
            String tag = ascii(b, name, j).toLowerCase(Locale.ROOT);
            j = tagEnd(b, j, literal);
            boolean anyEndTag = reader == MarkupReference.Reader.LIBXML2_HTML;
            boolean raw = (whatwg ? RAW_TEXT : LEGACY_RAW_TEXT).contains(tag) && (scripting || !tag.equals("noscript"));
            i = raw ? rawTextEnd(b, j, tag, anyEndTag, literal) : j;
        }
        return literal;
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

    private static boolean isSpace(byte c) {
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

    /** {@return whether the text holds {@code <noscript} (any case)} @param b the text */
    static boolean holdsNoscript(ByteBuffer b) {
        int n = b.limit();
        for (int i = 0; i + 9 < n; i++) {
            if (b.get(i) == '<' && (b.get(i + 1) | 0x20) == 'n' && ascii(b, i + 1, i + 9).equalsIgnoreCase("noscript")) {
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
