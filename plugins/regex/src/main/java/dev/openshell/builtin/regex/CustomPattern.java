package dev.openshell.builtin.regex;

import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import java.nio.ByteBuffer;
import java.util.Locale;

/**
 * An operator pattern ({@code custom_patterns} in the stage config): a regular expression compiled by RE2/J, which
 * runs in time linear in the text (no backtracking: backreferences and lookaround are refused when the config is
 * validated).
 *
 * <p>The expression is matched against the text seen as one character per byte ({@link Latin1}): ASCII is itself, a
 * non-ASCII character is one or more characters above U+007F. A match is what group 1 matched when the expression has
 * a capturing group (so {@code key=([0-9a-f]{32})} reports and redacts only the value), else the whole match; an
 * empty match, one holding a non-ASCII character, or one whose Shannon entropy is below {@link #entropy()} is not
 * counted. With a {@link #keyword()}, the expression is only tried from each place the keyword occurs (ASCII case
 * ignored) over the next {@value #KEYWORD_WINDOW} characters, which also keeps a large body cheap.
 *
 * @param id the pattern's id: finding {@code secret.<id>}, placeholder {@code [REDACTED:<id>]}
 * @param pattern the compiled expression
 * @param keyword the keyword, lowercase, or {@code null}
 * @param entropy the least entropy of a match, in bits per character; 0 for none
 */
record CustomPattern(String id, Pattern pattern, String keyword, double entropy) {
    /** The most characters after a keyword's start that a match may reach. */
    static final int KEYWORD_WINDOW = 512;
    /** The longest expression accepted, in characters. */
    static final int MAX_REGEX_CHARS = 1024;

    /**
     * Thrown for an expression RE2/J refuses; the message says why and where (1-based within the expression), short
     * enough for the policy reader, which shows a built-in's reason up to 80 characters.
     */
    static final class Invalid extends Exception {
        private static final long serialVersionUID = 1L;

        Invalid(String message) {
            super(message);
        }
    }

    /**
     * {@return the compiled expression}
     *
     * @param regex the expression, RE2 syntax
     * @throws Invalid if it is too long, RE2/J refuses it, or it matches the empty text
     */
    static Pattern compile(String regex) throws Invalid {
        if (regex.isEmpty() || regex.length() > MAX_REGEX_CHARS) {
            throw new Invalid(".regex must be 1 to " + MAX_REGEX_CHARS + " characters");
        }
        Pattern p;
        try {
            p = Pattern.compile(regex);
        } catch (PatternSyntaxException e) {
            throw new Invalid(explain(regex, e));
        }
        if (p.matches("")) {
            throw new Invalid(".regex matches the empty text (so everywhere)");
        }
        return p;
    }

    /** {@return an operator-facing reason for a refused expression, with the position of the offending part} */
    private static String explain(String regex, PatternSyntaxException e) {
        String fragment = e.getPattern() == null ? "" : e.getPattern();
        int at = fragment.isEmpty() ? -1 : regex.indexOf(fragment);
        String where = at >= 0 ? " at char " + (at + 1) : "";
        String description = e.getDescription() == null ? "invalid syntax" : e.getDescription();
        if (fragment.startsWith("(?=") || fragment.startsWith("(?!") || fragment.startsWith("(?<=")
                || fragment.startsWith("(?<!")) {
            return ": lookaround" + where + " needs backtracking";
        }
        if (fragment.matches("\\\\[1-9].*") || fragment.startsWith("\\k")) {
            return ": backreference" + where + " needs backtracking";
        }
        return ".regex: " + description + where;
    }

    /**
     * {@return whether the keyword occurs at {@code at}, ignoring ASCII case}
     *
     * @param text the text
     * @param at a position
     */
    boolean keywordAt(ByteBuffer text, int at) {
        if (at + keyword.length() > text.limit()) {
            return false;
        }
        for (int k = 0; k < keyword.length(); k++) {
            if (Prefilter.fold(text.get(at + k)) != keyword.charAt(k)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Reports the matches in a window of the text.
     *
     * @param text the whole text
     * @param from the window's start
     * @param to the window's end, exclusive
     * @param sink receives each counted match as (start, end) in the whole text
     */
    void matches(ByteBuffer text, int from, int to, Sink sink) {
        Matcher m = pattern.matcher(new Latin1(text, from, to - from));
        boolean group = pattern.groupCount() > 0;
        while (m.find()) {
            int s = group ? m.start(1) : m.start();
            int e = group ? m.end(1) : m.end();
            if (s < 0 || e <= s) {
                continue;
            }
            s += from;
            e += from;
            if (ascii(text, s, e) && (entropy == 0 || TokenChecks.entropy(text, s, e) >= entropy)) {
                sink.match(s, e);
            }
        }
    }

    /** Receives matches. */
    interface Sink {
        /** @param start the first byte @param end the end, exclusive */
        void match(int start, int end);
    }

    private static boolean ascii(ByteBuffer text, int s, int e) {
        for (int i = s; i < e; i++) {
            if (text.get(i) < 0) {
                return false;
            }
        }
        return true;
    }

    /** {@return the lowercase form of a keyword} @param keyword as configured */
    static String normalizeKeyword(String keyword) {
        return keyword.toLowerCase(Locale.ROOT);
    }
}
