package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * What a WHATWG HTML tree builder (HTML, "Tree construction": html5lib, browsers, and every DOM built from them)
 * does with the start tags a tokenizer reads, reduced to the one question a split token depends on: does the tag make
 * an element between the text before it and the text after it, or do the two end up as one text node? Fed the tags of
 * one text in order by {@link HtmlTags#literalOpeners}; it answers for each start tag.
 *
 * <p>A start tag joins the text around it (attacker pass 23, P29-2 and P29-4) when the tree builder ignores it where
 * it stands: a second {@code <html>}, a {@code <head>} or {@code <body>} once the body has begun, a {@code <frame>}
 * outside a frameset, a table part ({@code <tr>}, {@code <td>}, {@code <caption>}, {@code <col>} ...) outside any
 * table, a tag other than an option's inside a {@code <select>} ("in select": {@code <select><option>T1<b>T2} is
 * {@code T1T2}); and when it moves the text on both sides before a table (foster parenting): {@code <table>} itself
 * ({@code <div>T1<table>T2} is {@code T1T2}) and the row and section tags inside one ({@code B<tr>C} between rows is
 * {@code BC}). A cell ({@code <td>}, {@code <th>}, {@code <caption>}) inside a table separates. The reduction answers
 * "joins" wherever some document state makes it so (a cell's text before a {@code <tr>} is not foster-parented, yet
 * the tag is read as joining), so the reading it drives may join two values that are not one; it never separates two
 * that are.
 *
 * <p>It also tracks SVG and MathML content (foreign content, from {@code <svg>} or {@code <math>} to its end tag):
 * there a tokenizer reads {@code <![CDATA[...]]>} as a CDATA section (attacker pass 24, P30-3) and no element's text
 * as raw text ({@code <svg><style>T1<!--x-->T2</style>} is {@code T1T2} to html5lib). HTML integration points and the
 * tags that break out of foreign content are not tracked: the content is foreign to its end tag.
 */
final class HtmlTree {
    /** Table parts that a tree builder ignores outside a table (HTML, "in body", "A start tag whose tag name is..."). */
    private static final Set<String> TABLE_PARTS = Set.of("caption", "col", "colgroup", "tbody", "td", "tfoot", "th",
            "thead", "tr");
    /** Table parts whose text on both sides is foster-parented inside a table: all but the cells. */
    private static final Set<String> TABLE_SECTIONS = Set.of("col", "colgroup", "tbody", "tfoot", "thead", "tr");
    /** Elements that may stand in a document's head: they do not begin its body. */
    private static final Set<String> HEAD_CONTENT = Set.of("base", "basefont", "bgsound", "link", "meta", "noframes",
            "noscript", "script", "style", "template", "title");
    /** Start tags a tree builder handles "in select" (HTML, 13.2.6.4.16); it ignores every other. */
    private static final Set<String> IN_SELECT = Set.of("option", "optgroup", "hr", "input", "keygen", "textarea",
            "script", "template");

    /**
     * Elements no end tag separates text of: those without content (HTML, "Void elements", and the obsolete ones
     * parsed as such), and the document's {@code html}, {@code head} and {@code body}, after whose end tags a tree
     * builder puts text back into the body ({@code T1</body></html>T2} is {@code T1T2}).
     */
    private static final Set<String> NEVER_CLOSED = Set.of("area", "base", "basefont", "bgsound", "br", "col",
            "embed", "frame", "hr", "img", "input", "keygen", "link", "meta", "param", "source", "track", "wbr", "html",
            "head", "body");
    /** Every start tag name {@link #joins} decides on by name, or that changes its state once the body has begun. */
    private static final Set<String> NAMED = Set.of("html", "head", "body", "frameset", "frame", "select", "table",
            "svg", "math", "caption", "col", "colgroup", "tbody", "td", "tfoot", "th", "thead", "tr");
    /** The end tags that end a state of the tokenizer's pass: a table, a select, foreign content. */
    private static final String[] STRUCTURE = {"table", "select", "svg", "math"};
    /** At most this many distinct element names are counted open; a text of more is read with the rest not counted. */
    private static final int NAMES = 256;

    private final boolean full;
    /** How many elements of each name are open (start tags less end tags, at least 0): bounded by {@link #NAMES}. */
    private final Map<String, Integer> open;
    private int tables;
    private boolean select;
    private int foreign;
    private boolean htmlSeen;
    private boolean headSeen;
    private boolean body;
    /** Whether foreign content holds what a tokenizer reads otherwise there: a CDATA section, raw text with markup. */
    private boolean foreignDiffers;
    /** Whether the last text before the tag at hand ends in a character that is not white space. */
    private boolean afterText;

    /**
     * @param full whether it drives the tree reading's own tokenization: foreign content read as foreign, and the
     *     open elements counted so that an end tag that closes one separates ({@link #endTag}); else it follows the
     *     tokenizer's reading (HTML content throughout, every end tag joining), which only tells whether the tree
     *     reading differs from it ({@link #differs})
     */
    HtmlTree(boolean full) {
        this.full = full;
        this.open = full ? new HashMap<>() : null;
    }

    /**
     * The text between the last markup and a {@code <}: text that is not white space begins the body, and whether it
     * ends in a character that is not white space decides whether the markup that follows may join it to more.
     *
     * @param b the input
     * @param from the index after the last markup unit
     * @param to the index of the {@code <}
     */
    void text(ByteBuffer b, int from, int to) {
        if (from >= to) {
            return; // markup right after markup: what came before it stands
        }
        afterText = !HtmlTags.isSpace(b.get(to - 1));
        for (int k = from; !body && k < to; k++) {
            body = !HtmlTags.isSpace(b.get(k));
        }
    }

    /** A CDATA section of foreign content was read: it is text. */
    void cdataSection() {
        afterText = true;
    }

    /**
     * In the tokenizer's reading, markup stands in foreign content that a tree builder's tokenizer reads otherwise:
     * {@code <![} (a CDATA section there, a bogus comment in HTML content), or a {@code <} in the text of an element
     * that holds raw text in HTML content only.
     */
    void foreignMarkup() {
        foreignDiffers |= foreign > 0;
    }

    /** {@return whether the tree reading may read the text otherwise than the tokenizer (the tokenizer's pass)} */
    boolean differs() {
        return foreignDiffers;
    }

    /** {@return whether foreign content is open, whichever the reading} */
    boolean foreignOpen() {
        return foreign > 0;
    }

    /**
     * {@return whether {@link #endTag} acts on an end tag whose name starts at {@code from}: in the tree reading's pass
     * every one, in the tokenizer's pass those of {@code table}, {@code select}, {@code svg} and {@code math} (found
     * without making a string of the name)}
     *
     * @param b the input
     * @param from the index of the name's first letter
     */
    boolean endTagMatters(ByteBuffer b, int from) {
        if (full) {
            return true;
        }
        int end = HtmlTags.nameEnd(b, from);
        for (String name : STRUCTURE) {
            if (end - from == name.length() && HtmlTags.equalsIgnoreCase(b, from, name)) {
                return true;
            }
        }
        return false;
    }

    /** {@return whether the tokenizer is in foreign content, where it reads CDATA sections and no raw text} */
    boolean inForeign() {
        return full && foreign > 0;
    }

    /**
     * {@return whether a start tag joins the text on both sides of it} (the class comment)
     *
     * @param name the tag's name, in lower case
     * @param selfClosing whether it ends with {@code />}
     */
    boolean startTag(String name, boolean selfClosing) {
        boolean joins = joins(name, selfClosing) && afterText;
        if (full && !joins && !selfClosing && !NEVER_CLOSED.contains(name)
                && (open.size() < NAMES || open.containsKey(name))) {
            open.merge(name, 1, Integer::sum);
        }
        afterText &= joins;
        return joins;
    }

    private boolean joins(String name, boolean selfClosing) {
        if (body && !select && foreign == 0 && !NAMED.contains(name)) {
            return false; // most tags of a body: one look-up
        }
        if (select && foreign == 0) {
            return otherStartTag(name); // in a select even <svg> makes no element
        }
        boolean svg = name.equals("svg") || name.equals("math");
        if (foreign > 0) {
            foreign += svg && !selfClosing ? 1 : 0;
            return false;
        }
        if (svg && !selfClosing) {
            foreign = 1;
            body = true;
            return false;
        }
        switch (name) {
            case "html" -> {
                boolean ignored = htmlSeen || headSeen || body;
                htmlSeen = true;
                return ignored;
            }
            case "head" -> {
                boolean ignored = headSeen || body;
                headSeen = true;
                return ignored;
            }
            case "body", "frameset" -> {
                boolean ignored = body;
                body = true;
                return ignored;
            }
            case "frame" -> {
                return true;
            }
            default -> {
                return otherStartTag(name);
            }
        }
    }

    private boolean otherStartTag(String name) {
        if (select) {
            if (name.equals("select")) {
                select = false; // a select inside a select ends it
                return false;
            }
            return !IN_SELECT.contains(name);
        }
        if (HEAD_CONTENT.contains(name)) {
            return false;
        }
        body = true;
        if (name.equals("select")) {
            select = true;
            return false;
        }
        if (name.equals("table")) {
            tables++;
            return true;
        }
        if (TABLE_PARTS.contains(name)) {
            return tables == 0 || TABLE_SECTIONS.contains(name);
        }
        return false;
    }

    /**
     * {@return whether an end tag separates the text around it: it closes an element that is open (the text before it
     * is that element's, the text after it is not), where one that closes nothing makes no element and joins it} It
     * also ends a table, a select or foreign content.
     *
     * @param name the tag's name, in lower case
     */
    boolean endTag(String name) {
        Integer count = full ? open.get(name) : null;
        if (count != null && count == 1) {
            open.remove(name);
        } else if (count != null) {
            open.put(name, count - 1);
        }
        if (foreign > 0) {
            foreign -= name.equals("svg") || name.equals("math") ? 1 : 0;
        } else if (name.equals("table")) {
            tables = Math.max(0, tables - 1);
        } else if (name.equals("select")) {
            select = false;
        }
        afterText &= count == null;
        return count != null;
    }
}
