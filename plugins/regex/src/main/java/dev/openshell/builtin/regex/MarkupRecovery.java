package dev.openshell.builtin.regex;

import dev.openshell.middleware.spi.internal.DroppedSequences;
import java.nio.ByteBuffer;

/**
 * How recovering parsers read markup that a character XML does not allow breaks (a C0 control but TAB, LF and CR, NUL,
 * U+FFFE, U+FFFF, a surrogate: {@link DroppedSequences#notXmlChar}), for {@link XmlText}: libxml2's recovering XML
 * parser (lxml's {@code recover=True}, BeautifulSoup's {@code xml}) drops a comment, processing instruction, tag or
 * reference left open up to such a character together with it, and libxml2's HTML parser drops {@code </} or
 * {@code <?} with such a character (or a reference it drops) right after it (attacker pass 17c, P21-2, P21-3). A
 * well-formed document holds no such character, so no other reader reads these otherwise. Each scan stops at the
 * construct's end or the next {@code <}: linear in the text. Static methods only.
 */
final class MarkupRecovery {
    private MarkupRecovery() {
    }

    /**
     * {@return the index after the first {@code end} at or after {@code from}, or after the first character XML does
     * not allow (a C0 control but TAB, LF and CR, NUL, U+FFFE, U+FFFF, a surrogate: {@link DroppedSequences#notXmlChar})
     * if one comes first, or the input's limit} A recovering XML parser (libxml2: lxml's {@code recover=True},
     * BeautifulSoup's {@code xml}) ends an unterminated comment or processing instruction there and drops the
     * character with it (attacker pass 17c: {@code ghp_R8xq<!--} 0x01 {@code 2LmT...} reads as the token); a
     * well-formed document holds no such character, so no other reader reads it otherwise.
     */
    static int xmlThrough(ByteBuffer b, int from, String end) {
        int n = b.limit();
        for (int j = from; j < n; j++) {
            if (MarkupReference.startsWith(b, j, end)) {
                return j + end.length();
            }
            int bad = DroppedSequences.notXmlChar(b, j, n);
            if (bad > 0) {
                return j + bad;
            }
        }
        return n;
    }

    /**
     * {@return the index after the end of a comment whose text starts at {@code from}, as libxml2's XML parser reads
     * it} libxml2 (2.9 and 2.14, recovering or not) reads a comment's dashes in pairs: a pair followed by {@code >}
     * ends it, a pair followed by another dash is an error it reads past, so a run of dashes and {@code >} ends the
     * comment only when the run is even ({@code -->}, {@code ---->}; {@code --->} does not, and the comment runs on
     * to a later end: attacker pass 21, P27-3, {@code T1<!--x--->-->T2} is one text node to lxml). A character XML
     * does not allow ends it after that character ({@link #xmlThrough}); the input's limit ends it too.
     *
     * @param b the text
     * @param from the first byte after {@code <!--}
     */
    static int libxml2CommentThrough(ByteBuffer b, int from) {
        int n = b.limit();
        int dashes = 0;
        for (int j = from; j < n; j++) {
            byte c = b.get(j);
            if (c == '-') {
                dashes++;
                continue;
            }
            if (c == '>' && dashes >= 2 && dashes % 2 == 0) {
                return j + 1;
            }
            dashes = 0;
            int bad = DroppedSequences.notXmlChar(b, j, n);
            if (bad > 0) {
                return j + bad;
            }
        }
        return n;
    }

    /**
     * {@return the index after a character XML does not allow that comes at or after {@code from} before a {@code >},
     * another {@code <} or the input's limit, else 0} A recovering XML parser (libxml2) drops a tag such a character
     * breaks, from its {@code <} through the character (attacker pass 17c, P21-2: {@code <a b=} 0x01, {@code <} 0x01
     * inside a token); the scan stops at the next {@code <}, so every byte is read once per tag.
     */
    static int brokenTag(ByteBuffer b, int from) {
        int n = b.limit();
        for (int j = from; j < n; j++) {
            byte c = b.get(j);
            if (c == '>' || c == '<') {
                return 0;
            }
            int bad = DroppedSequences.notXmlChar(b, j, n);
            if (bad > 0) {
                return j + bad;
            }
        }
        return 0;
    }

    /**
     * {@return the index after a character XML does not allow that follows {@code &} and a name's characters from
     * {@code from}, else 0} A recovering XML parser drops the broken reference through the character
     * ({@code &} 0x01, {@code &a} 0x01: P21-2).
     */
    static int brokenName(ByteBuffer b, int from) {
        int n = b.limit();
        int j = from;
        while (j < n && j - from < MAX_NAME && isNameChar(b.get(j))) {
            j++;
        }
        int bad = j < n ? DroppedSequences.notXmlChar(b, j, n) : 0;
        return bad > 0 ? j + bad : 0;
    }

    private static boolean isNameChar(byte c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':'
                || c == '.' || c == '-' || c == '#';
    }

    /** The longest run after {@code </} or {@code <?} read for what libxml2 drops: every scan is bounded. */
    private static final int MAX_RUN = 64;

    /** The longest name a broken reference is read through. */
    private static final int MAX_NAME = 32;

    /**
     * {@return the index after a {@code </} or {@code <?} at {@code i} and the character libxml2's HTML parser drops
     * right after it (raw, or a reference), else 0} Before an ASCII character that starts no name (a digit, a space,
     * {@code -}, {@code =}, {@code >}, ...), that parser (Debian's 2.9.14) drops the {@code </} or {@code <?} alone
     * and reads the character as text (attacker pass 22, P28-3: {@code ghp_...pD</6sG0...} is the token to it), where
     * a WHATWG tokenizer opens a bogus comment to the next {@code >}.
     */
    static int libxml2Drops(ByteBuffer b, int i) {
        int n = b.limit();
        if (i + 2 >= n || b.get(i) != '<' || (b.get(i + 1) != '/' && b.get(i + 1) != '?')) {
            return 0;
        }
        int j = i + 2;
        int dropped = j;
        while (j < n && j - i < MAX_RUN) { // a run of them (P22-4: </ 0x01 0x01), other such starts among them
            int bad = DroppedSequences.notXmlChar(b, j, n);
            if (bad == 0 && b.get(j) == '&') {
                long r = MarkupReference.at(b, j, MarkupReference.Reader.LIBXML2_HTML);
                bad = (int) r == MarkupReference.NOTHING ? (int) (r >>> 32) : 0;
            }
            if (bad > 0) {
                j += bad;
                dropped = j;
            } else if (b.get(j) == '<' && j + 1 < n && (b.get(j + 1) == '/' || b.get(j + 1) == '?')) {
                j += 2; // <?</&#1;: kept only if a dropped character follows
            } else {
                break;
            }
        }
        if (dropped > i + 2) {
            return dropped;
        }
        byte c = b.get(i + 2);
        boolean nameStart = nameStart(c) || c < 0;
        if (nameStart && b.get(i + 1) == '?') { // a <? whose name runs to the end: its text stays (P29-6: T1<?T2)
            int k = i + 3;
            while (k < n && (isNameChar(b.get(k)) && b.get(k) != '#' || b.get(k) < 0)) {
                k++;
            }
            return k == n ? i + 2 : 0;
        }
        return nameStart ? 0 : i + 2;
    }

    /**
     * {@return the length of what libxml2's recovering XML parser drops at {@code i} of XML beside what
     * {@link XmlText} reads as markup, 0 for none} A {@code <} or {@code &} that starts nothing (before another
     * {@code <} or {@code &}, or before a character that starts no name: {@code &&a;}, {@code <&#}), and {@code <} and
     * a name broken by an {@code &} ({@code <a&a;}): attacker pass 17d, P22-3.
     *
     * @param b the text
     * @param i the index of a {@code <} or {@code &}
     */
    static int libxml2XmlDrops(ByteBuffer b, int i) {
        int n = b.limit();
        byte c = b.get(i);
        if (i + 1 >= n) {
            return 0;
        }
        byte next = b.get(i + 1);
        if (c == '&') {
            return next == '#' || nameStart(next) ? 0 : 1;
        }
        if (next == '?') { // a processing instruction without a name (P23-2: <?&#)
            return i + 2 < n && nameStart(b.get(i + 2)) ? 0 : 2;
        }
        if (next == '!') {
            return openCdataBroken(b, i);
        }
        if (next == '/') {
            return 0;
        }
        if (!nameStart(next)) {
            return 1;
        }
        int j = i + 1;
        while (j < n && isNameChar(b.get(j)) && b.get(j) != '#') {
            j++;
        }
        return j < n && b.get(j) == '&' ? j - i : 0;
    }

    /**
     * {@return the length from a {@code <![CDATA[} at {@code i} through the first character XML does not allow before
     * its {@code ]]>}, else 0} libxml2's recovering parser drops such a section from its start through the character
     * (attacker pass 17e, P23-1: {@code <![CDATA[-} 0x01 inside a token).
     */
    private static int openCdataBroken(ByteBuffer b, int i) {
        int n = b.limit();
        if (!MarkupReference.startsWith(b, i, "<![CDATA[")) {
            return 0;
        }
        for (int j = i + 9; j < n; j++) {
            if (MarkupReference.startsWith(b, j, "]]>")) {
                return 0;
            }
            int bad = DroppedSequences.notXmlChar(b, j, n);
            if (bad > 0) {
                return j + bad - i;
            }
        }
        return 0;
    }

    static boolean nameStart(byte c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    }
}
