package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The PEM private key block of the catalog's {@link Rule.Kind#PEM} entry: {@code -----BEGIN <words> PRIVATE KEY-----}
 * (RFC 7468 labels such as {@code RSA PRIVATE KEY}, {@code EC PRIVATE KEY}, {@code OPENSSH PRIVATE KEY},
 * {@code ENCRYPTED PRIVATE KEY}; also OpenPGP's {@code PGP PRIVATE KEY BLOCK}), the key data after it, through the
 * matching END line, or, without one, through the end of the key data.
 *
 * <p>The BEGIN and END lines are bounded patterns (at most 40 label characters) and the key data is extended by a
 * plain loop, never a reluctant {@code .*?}, so the run time is linear even for a body made only of BEGIN lines.
 * Stateless, thread-safe.
 */
final class PemBlock {
    private static final Pattern BEGIN = Pattern.compile("-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----");
    private static final Pattern END = Pattern.compile("-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----");
    private static final byte[] DASHES = {'-', '-', '-', '-', '-'};
    private static final byte[] END_LITERAL = {'-', '-', '-', '-', '-', 'E', 'N', 'D', ' '};

    private PemBlock() {
    }

    /**
     * {@return the end of the block whose BEGIN line starts at {@code at}, or -1 if no BEGIN line starts there}
     *
     * @param text the text
     * @param at where {@code -----BEGIN } starts
     */
    static int match(ByteBuffer text, int at) {
        Latin1 chars = new Latin1(text);
        Matcher begin = BEGIN.matcher(chars).region(at, chars.length());
        if (!begin.lookingAt()) {
            return -1;
        }
        int from = begin.end();
        int n = text.limit();
        int j = from;
        while (j < n) {
            int c = text.get(j) & 0xff;
            if (c == '-') {
                if (startsWith(text, j, DASHES)) {
                    break;
                }
                j++;
            } else if (isKeyData(c)) {
                j++;
            } else {
                break;
            }
        }
        if (startsWith(text, j, END_LITERAL)) {
            Matcher end = END.matcher(chars).region(j, chars.length());
            if (end.lookingAt()) {
                return end.end();
            }
        }
        while (j > from && (isWhitespace(text.get(j - 1) & 0xff) || text.get(j - 1) == '\\')) {
            j--;
        }
        return j;
    }

    private static boolean startsWith(ByteBuffer b, int at, byte[] literal) {
        if (at + literal.length > b.limit()) {
            return false;
        }
        for (int k = 0; k < literal.length; k++) {
            if (b.get(at + k) != literal[k]) {
                return false;
            }
        }
        return true;
    }

    /** {@link Character#isWhitespace} for the ASCII range (the key data holds nothing else). */
    private static boolean isWhitespace(int c) {
        return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
    }

    /** Base64, PEM header lines ({@code Proc-Type: 4,ENCRYPTED}), whitespace and escapes (a literal backslash-n). */
    private static boolean isKeyData(int c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/'
                || c == '=' || c == ':' || c == ',' || c == '.' || c == '\\' || c == ' ' || c == '\t' || c == '\r'
                || c == '\n';
    }
}
