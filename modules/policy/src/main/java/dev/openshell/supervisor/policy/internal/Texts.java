package dev.openshell.supervisor.policy.internal;

import dev.openshell.middleware.spi.internal.Syntax;
import java.util.Collection;
import java.util.Locale;

/**
 * Rendering of untrusted text in problem messages: values are quoted, control and format characters are escaped,
 * and long values are cut, so a message never carries terminal escapes or a whole file.
 */
public final class Texts {
    /** Longest value rendered, in characters, before it is cut with {@code ...}. */
    public static final int MAX_QUOTED = Syntax.MAX_QUOTED;

    /** Longest untrusted detail (a plugin's or service's own reason) shown to an operator, in characters. */
    public static final int MAX_UNTRUSTED_DETAIL = 300;

    private Texts() {
    }

    /**
     * {@return text from outside the supervisor (a plugin's or external service's own reason) made safe to show an
     * operator on a console}: control and format characters (terminal escapes, line breaks, bidirectional controls)
     * are removed, runs of white space become one space, and the result is cut after
     * {@value #MAX_UNTRUSTED_DETAIL} characters with {@code ...}; empty when nothing printable is left
     *
     * @param value any text; never {@code null}
     */
    public static String untrusted(String value) {
        StringBuilder b = new StringBuilder(Math.min(value.length(), MAX_UNTRUSTED_DETAIL) + 3);
        int shown = 0;
        boolean space = false;
        for (int i = 0; i < value.length(); ) {
            int cp = value.codePointAt(i);
            i += Character.charCount(cp);
            if (Syntax.isUnsafe(cp) || Character.isWhitespace(cp)) {
                space = true;
                continue;
            }
            if (shown == MAX_UNTRUSTED_DETAIL) {
                b.append("...");
                break;
            }
            if (space && b.length() > 0) {
                b.append(' ');
                shown++;
            }
            space = false;
            b.appendCodePoint(cp);
            shown++;
        }
        return b.toString();
    }

    /** {@return {@link Syntax#quote(String)} of {@code value}} @param value any text; never {@code null} */
    public static String quote(String value) {
        return Syntax.quote(value);
    }

    /** {@return {@link Syntax#printable(String)} of {@code value}} @param value any text; never {@code null} */
    public static String printable(String value) {
        return Syntax.printable(value);
    }

    /**
     * {@return a short description of one character for a message: {@code ','} for a visible character,
     * {@code U+0009} for an invisible one}
     *
     * @param codePoint the character
     */
    public static String describeChar(int codePoint) {
        if (Syntax.isUnsafe(codePoint) || Character.isWhitespace(codePoint) || Character.isSpaceChar(codePoint)) {
            return String.format(Locale.ROOT, "U+%04X", codePoint);
        }
        return "'" + new String(Character.toChars(codePoint)) + "'";
    }

    /**
     * {@return {@code " (did you mean 'x'?)"} when one of {@code known} is within a small edit distance of
     * {@code unknown}, else the empty string}
     *
     * @param unknown the unrecognised key
     * @param known the keys allowed at that place
     */
    public static String suggestion(String unknown, Collection<String> known) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        int limit = Math.max(1, Math.min(3, unknown.length() / 4));
        for (String candidate : known) {
            int d = distance(unknown.toLowerCase(Locale.ROOT), candidate.toLowerCase(Locale.ROOT), limit);
            if (d <= limit && d < bestDistance) {
                best = candidate;
                bestDistance = d;
            }
        }
        return best == null ? "" : " (did you mean '" + best + "'?)";
    }

    /**
     * Edit distance counting insertions, deletions, substitutions and swaps of neighbours (optimal string alignment),
     * or {@code limit + 1} for strings too far apart or too long to bother.
     */
    static int distance(String a, String b, int limit) {
        if (Math.abs(a.length() - b.length()) > limit || a.length() > 64 || b.length() > 64) {
            return limit + 1;
        }
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return Math.min(d[a.length()][b.length()], limit + 1);
    }
}
