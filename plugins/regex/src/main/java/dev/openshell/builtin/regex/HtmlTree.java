package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.BitSet;
import java.util.Set;

/**
 * What a WHATWG HTML tree builder (HTML, "Tree construction": html5lib, browsers, and every DOM built from them)
 * does with the tags a tokenizer reads, reduced to the one question a split token depends on: does a tag make an
 * element between the text before it and the text after it, or do the two end up as one text node? Fed the tags of
 * one text in order by {@link HtmlTags#literalOpeners}; it answers for each tag.
 *
 * <p>A start tag joins the text around it (attacker pass 23, P29-2 and P29-4) when the tree builder ignores it where
 * it stands: a second {@code <html>}, a {@code <head>} or {@code <body>} once the body has begun, a {@code <frame>}
 * outside a frameset, a table part ({@code <tr>}, {@code <td>}, {@code <caption>}, {@code <col>} ...) outside any
 * table, a {@code <form>} inside a form, a tag other than {@code option}, {@code optgroup} and {@code script} inside a
 * {@code <select>} ("in select": {@code <select><option>T1<b>T2} is {@code T1T2}; an element it ignores there holds no
 * raw text); and when it moves the text on both sides before a table (foster parenting): {@code <table>} itself
 * ({@code <div>T1<table>T2} is {@code T1T2}) and the row, section, form and input tags inside one ({@code B<tr>C}
 * between rows is {@code BC}). A cell ({@code <td>}, {@code <th>}, {@code <caption>}) inside a table separates. Only a
 * tag that follows text (no white space between, comments and joining tags aside) joins. The reduction answers
 * "joins" wherever some document state makes it so (a cell's text before a {@code <tr>} is not foster-parented, yet
 * the tag is read as joining), so the reading it drives may join two values that are not one.
 *
 * <p>An end tag separates when it closes an open element (counted by name, {@link OpenElements}), and {@code </br>}
 * and {@code </p>} always (each makes an element); one that closes nothing joins. A comment, or an end tag that closes
 * nothing, right after text marks a text whose nodes a node-walking reader reads apart from {@code textContent}
 * ({@link #nodesDiffer}).
 *
 * <p>It also tracks SVG and MathML content (foreign content, from {@code <svg>} or {@code <math>} to its end tag, or
 * to a tag that breaks out of it: {@code <b>}, {@code <div>}, {@code <p>}, {@code </br>} ...): there a tokenizer
 * reads {@code <![CDATA[...]]>} as a CDATA section (attacker pass 24, P30-3) and no element's text as raw text
 * ({@code <svg><style>T1<!--x-->T2</style>} is {@code T1T2} to html5lib). HTML integration points
 * ({@code foreignObject}, {@code mtext} ...) are read with both: the HTML rules for joining tags go on in foreign
 * content.
 */
final class HtmlTree {
    /** {@link #endTag}: the end tag closes an open element. */
    static final int CLOSES = 1;
    /** {@link #endTag}: the end tag makes an element ({@code </br>}, {@code </p>}). */
    static final int ELEMENT = 2;
    /** Table parts that a tree builder ignores outside a table (HTML, "in body", "A start tag whose tag name is..."). */
    private static final Set<String> TABLE_PARTS = Set.of("caption", "col", "colgroup", "tbody", "td", "tfoot", "th",
            "thead", "tr");
    /** End tags of a table and its parts. */
    private static final String[] TABLE_ENDS = {"table", "caption", "tbody", "td", "tfoot", "th", "thead", "tr"};
    /** Table parts whose text on both sides is foster-parented inside a table: all but the cells. */
    private static final Set<String> TABLE_SECTIONS = Set.of("col", "colgroup", "tbody", "tfoot", "thead", "tr");
    /** Elements that may stand in a document's head: they do not begin its body. */
    private static final Set<String> HEAD_CONTENT = Set.of("base", "basefont", "bgsound", "link", "meta", "noframes",
            "noscript", "script", "style", "template", "title");
    /** Start tags a tree builder keeps "in select" (HTML, 13.2.6.4.16; input, keygen, textarea end it); others go. */
    private static final Set<String> IN_SELECT = Set.of("option", "optgroup", "script");
    /**
     * Start tags that end foreign content (HTML, "The rules for parsing tokens in foreign content": {@code b},
     * {@code div}, {@code p}, {@code table} ...), read as HTML after it.
     */
    private static final Set<String> BREAKOUT = Set.of("b", "big", "blockquote", "body", "br", "center", "code",
            "dd", "div", "dl", "dt", "em", "embed", "h1", "h2", "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li",
            "listing", "menu", "meta", "nobr", "ol", "p", "pre", "ruby", "s", "small", "span", "strong", "strike",
            "sub", "sup", "table", "tt", "u", "ul", "var", "font");

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
            "svg", "math", "caption", "col", "colgroup", "tbody", "td", "tfoot", "th", "thead", "tr", "form", "input",
            "style", "script", "template");

    /** The {@link OpenElements#key} of {@code select}. */
    private static final long SELECT = OpenElements.key(ByteBuffer.wrap("select".getBytes(StandardCharsets.US_ASCII)),
            0, 6);

    private final boolean treeMode;
    /** How many elements of each name are open (start tags less end tags). */
    private final OpenElements open = new OpenElements();
    private int tables;
    private boolean select;
    private boolean form;
    private int foreign;
    private boolean htmlSeen;
    private boolean headSeen;
    private boolean body;
    /**
     * Whether the tree builder's tokenizer reads the text otherwise than the tokenizer's pass: foreign content holds a
     * CDATA section or raw text with markup, or an element the tree builder ignores was read as raw text.
     */
    private boolean tokenizationDiffers;
    /** Whether the tree builder made no element for the last start tag, or moved the text around it. */
    private boolean ignored;
    /** Whether it moved the text around the last start tag before a table, the element made (foster parenting). */
    private boolean foster;
    /** For each open table (by depth), whether a {@code td} of it is open. */
    private final BitSet td = new BitSet();
    /** For each open table (by depth), whether a {@code th} of it is open. */
    private final BitSet th = new BitSet();
    /** For each open table (by depth), whether its caption is open. */
    private final BitSet caption = new BitSet();
    /** As {@link #afterText}, but an end tag that closes an element leaves it (the reading of end tags as nothing). */
    private boolean joinText;
    /** Whether a comment or an end tag that closes nothing stood right after text. */
    private boolean nodesDiffer;
    /** Whether the last text before the tag at hand ends in a character that is not white space. */
    private boolean afterText;

    /**
     * @param treeMode whether it drives the tree reading's own tokenization (foreign content read as foreign, an
     *     ignored element holding no raw text); else it follows the tokenizer's reading (HTML content throughout), and
     *     tells whether the tree builder's tokenizer reads the text otherwise ({@link #differs})
     */
    HtmlTree(boolean treeMode) {
        this.treeMode = treeMode;
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
        joinText = afterText;
        for (int k = from; !body && k < to; k++) {
            body = !HtmlTags.isSpace(b.get(k));
        }
    }

    /**
     * A comment (or bogus comment) was read: where text stands right before it, the text after it starts a text node
     * of its own to a reader that walks the nodes (lxml's {@code .text}/{@code .tail}, html5lib's tree, BeautifulSoup's
     * strings), while {@code textContent} joins the two ({@code x<!---->sk-proj-...} holds the whole key in one node).
     */
    void comment() {
        nodesDiffer |= afterText;
    }

    /**
     * {@return whether a reader that walks the text nodes may read a run the other readings do not: a comment, or an
     * end tag that closes nothing, stood right after text ({@link #comment}, {@link #endTag})}
     */
    boolean nodesDiffer() {
        return nodesDiffer;
    }

    /** A CDATA section of foreign content was read: it is text. */
    void cdataSection() {
        afterText = true;
        joinText = true;
    }

    /**
     * In the tokenizer's reading, markup stands in foreign content that a tree builder's tokenizer reads otherwise:
     * {@code <![} (a CDATA section there, a bogus comment in HTML content), or a {@code <} in the text of an element
     * that holds raw text in HTML content only.
     */
    void foreignMarkup() {
        tokenizationDiffers |= foreign > 0;
    }

    /** {@return whether the tree reading may read the text otherwise than the tokenizer (the tokenizer's pass)} */
    boolean differs() {
        return tokenizationDiffers;
    }

    /**
     * {@return whether the tree builder made no element for the last start tag, or moved the text on both sides of
     * it before a table} An ignored element holds no raw text: {@code <select><xmp>} leaves the tokenizer reading
     * markup.
     */
    boolean lastIgnored() {
        return ignored && !foster;
    }

    /** The tokenizer's pass read raw text after a tag the tree builder ignores: the tree reading reads it otherwise. */
    void ignoredRawText() {
        tokenizationDiffers = true;
    }

    /** {@return whether it drives the tree reading's own tokenization} */
    boolean treeMode() {
        return treeMode;
    }

    /** {@return whether foreign content is open, whichever the reading} */
    boolean foreignOpen() {
        return foreign > 0;
    }

    /** {@return whether the tokenizer is in foreign content, where it reads CDATA sections and no raw text} */
    boolean inForeign() {
        return treeMode && foreign > 0;
    }

    /**
     * {@return whether a start tag joins the text on both sides of it} (the class comment)
     *
     * @param name the tag's name, in lower case
     * @param key its {@link OpenElements#key}
     * @param selfClosing whether it ends with {@code />}
     */
    boolean startTag(String name, long key, boolean selfClosing) {
        foster = false;
        ignored = joins(name, selfClosing);
        boolean joins = ignored && joinText;
        if (!ignored && !selfClosing && !NEVER_CLOSED.contains(name)) {
            open.opened(key);
        }
        afterText &= joins;
        joinText &= joins;
        return joins;
    }

    private boolean joins(String name, boolean selfClosing) {
        if (body && !select && foreign == 0 && !NAMED.contains(name)) {
            return false; // most tags of a body: one look-up
        }
        if (foreign > 0 && BREAKOUT.contains(name)) {
            foreign = 0; // back to HTML content, where the tag is read
        }
        if (select && foreign == 0) {
            return otherStartTag(name); // in a select even <svg> makes no element
        }
        boolean svg = name.equals("svg") || name.equals("math");
        if (foreign > 0 && svg) {
            foreign += selfClosing ? 0 : 1;
            return false;
        } // in foreign content the HTML rules go on: an integration point (mtext, foreignObject ...) holds HTML
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
            if (name.equals("select") || name.equals("input") || name.equals("keygen") || name.equals("textarea")) {
                select = false; // each ends the select (the select's own end tag then closes nothing)
                open.closeAll(SELECT);
                return false;
            }
            return !IN_SELECT.contains(name);
        }
        boolean inTableText = tables > 0 && !inCell();
        if (inTableText && (name.equals("style") || name.equals("script") || name.equals("input")
                || name.equals("template"))) {
            foster = true; // a table holds these outside a cell: the text on both sides moves before it
            body = true;
            return true;
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
            if (inTableText) {
                return false; // a table where a table holds text ends that table and starts another after it
            }
            tables++;
            clearCell();
            foster = true;
            return true;
        }
        if (TABLE_PARTS.contains(name)) {
            return tablePart(name, inTableText);
        }
        if (name.equals("form")) { // a form inside a form makes no element; one in a table's text stands in it
            boolean nested = form;
            form = true;
            foster = !nested && inTableText;
            return nested || inTableText;
        }
        return false;
    }

    /** {@return whether a table part joins: outside a table (ignored), or a row or section where text is fostered} */
    private boolean tablePart(String name, boolean inTableText) {
        if (tables == 0) {
            return true;
        }
        boolean section = TABLE_SECTIONS.contains(name);
        clearCell(); // a row, section or cell closes the open cell: its text stays in it
        if (!section) {
            (name.equals("td") ? td : name.equals("th") ? th : caption).set(tables);
        }
        foster = section;
        return section && inTableText;
    }

    /**
     * {@return how an end tag stands between the text around it: {@link #CLOSES} an element that is open (the text
     * before it is that element's, the text after it is not; a tree reading of end tags as nothing reads through it,
     * as the tree builder does where the element is out of scope), {@link #ELEMENT} ({@code </br>}, {@code </p>}: an
     * element, always a boundary), or 0 (it closes nothing, makes no element and joins the text)} It also ends a
     * table, a cell, a select, a form or foreign content.
     *
     * @param b the input
     * @param from the index of the name's first letter
     */
    int endTag(ByteBuffer b, int from) {
        int to = HtmlTags.nameEnd(b, from);
        boolean tablePart = tables > 0 && tableEndName(b, from, to);
        // </br> is read as <br>, </p> that closes nothing makes an empty p: each separates
        boolean element = !select && (is(b, from, to, "br") || is(b, from, to, "p"));
        if (foreign > 0 && (element || tablePart || is(b, from, to, "select") || is(b, from, to, "form"))) {
            foreign = 0; // an HTML end tag no foreign element matches ends foreign content and is read as HTML
        }
        if (foreign > 0) {
            foreign -= is(b, from, to, "svg") || is(b, from, to, "math") ? 1 : 0;
        }
        if (select && tablePart) { // </td>, </tr>, </table> in a select in a table end the select first
            select = false;
            open.closeAll(SELECT);
        }
        boolean selectEnd = is(b, from, to, "option") || is(b, from, to, "optgroup") || is(b, from, to, "select");
        // in a select other end tags are ignored
        boolean closes = (!select || selectEnd) && open.close(OpenElements.key(b, from, to));
        if (foreign == 0 && tablePart) {
            closes |= tableEnd(b, from, to);
        } else if (foreign == 0 && is(b, from, to, "select")) {
            select = false;
        } else if (foreign == 0 && !select && is(b, from, to, "form")) {
            form = false;
        }
        nodesDiffer |= afterText && !closes && !element; // T1</b>T2: one node, x</p>T1</b>T2: two
        afterText &= !closes && !element;
        joinText &= !element;
        return element ? ELEMENT : closes ? CLOSES : 0;
    }

    /**
     * {@return whether the end of a table, a cell or a caption, or of a row or section, closes what holds text: the
     * table, or a cell of its own kind that is open (a {@code </td>} in a caption is ignored), or the open cell a row
     * end closes} A row or section end where no cell is open closes nothing that holds text (fostered text on both
     * sides).
     */
    private boolean tableEnd(ByteBuffer b, int from, int to) {
        if (is(b, from, to, "table")) {
            clearCell();
            tables--;
            return true;
        }
        BitSet kind = is(b, from, to, "td") ? td : is(b, from, to, "th") ? th : is(b, from, to, "caption") ? caption
                : null;
        if (kind != null) {
            boolean open = kind.get(tables);
            kind.clear(tables);
            return open;
        }
        boolean cell = inCell(); // tr, tbody, thead, tfoot close the open cell
        clearCell();
        return cell;
    }

    private boolean inCell() {
        return td.get(tables) || th.get(tables) || caption.get(tables);
    }

    private void clearCell() {
        td.clear(tables);
        th.clear(tables);
        caption.clear(tables);
    }

    private static boolean tableEndName(ByteBuffer b, int from, int to) {
        for (String name : TABLE_ENDS) {
            if (is(b, from, to, name)) {
                return true;
            }
        }
        return false;
    }

    private static boolean is(ByteBuffer b, int from, int to, String name) {
        return to - from == name.length() && HtmlTags.equalsIgnoreCase(b, from, name);
    }
}
