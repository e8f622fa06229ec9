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
            if (startsWith(b, j, end)) {
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

    /** The longest name a broken reference is read through. */
    private static final int MAX_NAME = 32;

    /**
     * {@return the index after a {@code </} or {@code <?} at {@code i} and the character libxml2's HTML parser drops
     * right after it (raw, or a reference), else 0}
     */
    static int libxml2Drops(ByteBuffer b, int i) {
        int n = b.limit();
        if (i + 2 >= n || b.get(i) != '<' || (b.get(i + 1) != '/' && b.get(i + 1) != '?')) {
            return 0;
        }
        int bad = DroppedSequences.notXmlChar(b, i + 2, n);
        if (bad == 0 && b.get(i + 2) == '&') {
            long r = MarkupReference.at(b, i + 2, MarkupReference.Reader.LIBXML2_HTML);
            bad = (int) r == MarkupReference.NOTHING ? (int) (r >>> 32) : 0;
        }
        return bad > 0 ? i + 2 + bad : 0;
    }

    /**
     * {@return whether HTML holds a {@code </} or {@code <?} that libxml2's HTML parser drops with the character
     * after it ({@link #libxml2Drops}): its reading is then scanned too}
     *
     * @param b the text
     */
    static boolean libxml2DropsAnywhere(ByteBuffer b) {
        int n = b.limit();
        int i = 0;
        while (i < n) {
            i = JsonText.skipTo(b, i, n, XmlText.LESS_THANS, XmlText.LESS_THANS);
            for (int end = Math.min(n, i + Long.BYTES); i < end; i++) {
                if (libxml2Drops(b, i) > 0) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean startsWith(ByteBuffer b, int at, String s) {
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
