package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;

/**
 * The assignment grammar of the catalog's keyword entries: what may stand between a keyword found inside a key name
 * and the value. After the keyword:
 * <ol>
 *   <li>the rest of the key name: up to {@value #MAX_KEY_REST} of {@code A-Z a-z 0-9 _ . -}, space and tab
 *       ({@code _auth_token}, {@code Token}, {@code .api.key});</li>
 *   <li>up to 3 quotes ({@code " '}) and white space (the end of a JSON member name or a quoted key);</li>
 *   <li>an operator: {@code =}, {@code :}, {@code ::}, {@code :=}, {@code ::=}, {@code :::=}, {@code ?=},
 *       {@code =>}, {@code ||}, {@code ,} after a quoted key (an argument list such as
 *       {@code setProperty("KEY", "value")}) or {@code >} (the end of an XML start tag);</li>
 *   <li>up to {@value #MAX_BEFORE_VALUE} quotes ({@code " ' `}), white space (line breaks included) and {@code =}.</li>
 * </ol>
 * The key name, from up to {@value #MAX_KEY_BEFORE} key characters before the keyword through the rest after it,
 * must also hold one of {@link #CREDENTIAL_WORDS} unless the entry's keyword names the credential itself.
 * This covers INI and {@code .env} lines, JSON members, YAML keys, XML elements, shell, Makefile, Go, Java, C#,
 * Kotlin, PHP, Python and Ruby assignments, and a form field ({@code key=value}). Stateless.
 */
final class Assignment {
    /** The most key-name characters after the keyword. */
    static final int MAX_KEY_REST = 30;
    /** The most quote, white-space and {@code =} characters between the operator and the value. */
    static final int MAX_BEFORE_VALUE = 6;
    /** The bytes an operator starts with: where the scanner looks back for a keyword. */
    static final String OPERATOR_STARTS = "=:>,?|";
    private static final boolean[] OPERATOR_BYTE = table(OPERATOR_STARTS);
    /**
     * The farthest after an operator's first byte that a value may start: the rest of an operator run of up to 4
     * bytes, then {@link #MAX_BEFORE_VALUE} quotes, spaces or {@code =} ({@link #valueStart}).
     */
    static final int VALUE_REACH = 4 + MAX_BEFORE_VALUE;
    /** What ends a value for {@link #valueMayFollow}: white space, quotes, backticks, delimiters, backslash. */
    private static final boolean[] VALUE_END = table("\"'` \t\r\n;,&<>)}]\\");
    private static final Set<String> OPERATORS = Set.of("=", ":", "::", ":=", "::=", ":::=", "?=", "=>", "||", ",",
            ">");
    /** The most key-name characters before the keyword. */
    static final int MAX_KEY_BEFORE = 40;
    /**
     * Words one of which a key name must hold (ASCII case ignored) for a keyword entry to read its value: the key then
     * names a credential ({@code twilio_auth_token}, {@code DD_APP_KEY}, {@code asanaClientSecret}), not some other
     * setting of the same provider ({@code datadog_trace_id}).
     */
    static final List<String> CREDENTIAL_WORDS = List.of("key", "token", "secret", "pass", "pwd", "auth", "api", "cred",
            "pat", "sid", "client", "access", "private", "signing", "license", "login", "session", "bearer", "dsn",
            "app");

    private Assignment() {
    }

    /**
     * {@return where the value starts, or -1 if what follows the keyword is not an assignment}
     *
     * @param text the text
     * @param from the position right after the keyword
     */
    static int valueStart(ByteBuffer text, int from) {
        int n = text.limit();
        int j = from;
        int k = 0;
        while (j < n && k < MAX_KEY_REST && keyChar(text.get(j))) {
            j++;
            k++;
        }
        k = 0;
        while (j < n && k < 3 && (quote(text.get(j)) || space(text.get(j)))) {
            j++;
            k++;
        }
        int op = j;
        while (j < n && j - op < 4 && OPERATOR_STARTS.indexOf(text.get(j)) >= 0) {
            j++;
        }
        if (j == op || !OPERATORS.contains(ascii(text, op, j))) {
            return -1;
        }
        k = 0;
        while (j < n && k < MAX_BEFORE_VALUE && (quote(text.get(j)) || text.get(j) == '`' || space(text.get(j))
                || text.get(j) == '=')) {
            j++;
            k++;
        }
        return j < n ? j : -1;
    }

    /**
     * {@return whether the key name around a keyword holds one of {@link #CREDENTIAL_WORDS}}
     *
     * @param text the text
     * @param keywordStart where the keyword starts
     * @param keywordEnd where it ends
     */
    static boolean namesACredential(ByteBuffer text, int keywordStart, int keywordEnd) {
        int from = keywordStart;
        while (from > 0 && keywordStart - from < MAX_KEY_BEFORE && keyChar(text.get(from - 1))
                && text.get(from - 1) != ' ' && text.get(from - 1) != '\t') {
            from--;
        }
        int to = keywordEnd;
        while (to < text.limit() && to - keywordEnd < MAX_KEY_REST && keyChar(text.get(to))) {
            to++;
        }
        StringBuilder key = new StringBuilder(to - from);
        for (int i = from; i < to; i++) {
            key.append((char) Prefilter.fold(text.get(i)));
        }
        for (String w : CREDENTIAL_WORDS) {
            if (key.indexOf(w) >= 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@return where the key name that ends before the operator at {@code op} starts (a key character run of up to
     * {@code max} characters, after up to 3 quotes or spaces), as start * 2^32 + end; or -1 if there is none}
     *
     * @param text the text
     * @param op where an operator starts
     * @param max the longest key name looked at
     */
    static long keyBefore(ByteBuffer text, int op, int max) {
        int j = op;
        int q = 0;
        while (j > 0 && q < 3 && (quote(text.get(j - 1)) || space(text.get(j - 1)) || text.get(j - 1) == '.')) {
            j--;
            q++;
        }
        int end = j;
        while (j > 0 && end - j < max && keyChar(text.get(j - 1))
                && (end - j < MAX_KEY_REST || (text.get(j - 1) != ' ' && text.get(j - 1) != '\t'))) {
            j--;
        }
        return end - j < Prefilter.GRAM ? -1 : (long) j << 32 | end;
    }

    /**
     * {@return whether a key name character ends just before the operator at {@code op} (after up to 3 quotes,
     * spaces or a {@code .}), a comma follows a quoted key, and at least {@code least} value characters follow the
     * operator run and what may stand before a value: a cheap test, before any key is searched, that rules out most
     * operators in prose} Value characters are everything but white space, quotes, backticks and the delimiters
     * {@code ; , & < > ) } ]} and backslash.
     *
     * @param text the text
     * @param op where an operator starts
     * @param least the shortest value any looked-for keyword entry accepts
     */
    static boolean valueMayFollow(ByteBuffer text, int op, int least) {
        if (op == 0) {
            return false;
        }
        byte before = text.get(op - 1);
        if (text.get(op) == ',' && !quote(before) && !(op >= 2 && space(before) && quote(text.get(op - 2)))) {
            return false;
        }
        if (!keyChar(before) && !quote(before) && !space(before) && before != '.') {
            return false;
        }
        int b = op;
        int skipped = 0;
        while (b > 0 && skipped < 3 && (quote(text.get(b - 1)) || space(text.get(b - 1)) || text.get(b - 1) == '.')) {
            b--;
            skipped++;
        }
        if (b == 0 || !keyChar(text.get(b - 1)) || space(text.get(b - 1))) {
            return false;
        }
        int n = text.limit();
        int j = op;
        while (j < n && j - op < 4 && OPERATOR_BYTE[text.get(j) & 0xff]) {
            j++;
        }
        int k = 0;
        while (j < n && k < MAX_BEFORE_VALUE && (quote(text.get(j)) || text.get(j) == '`' || space(text.get(j))
                || text.get(j) == '=')) {
            j++;
            k++;
        }
        if (j + least > n || VALUE_END[text.get(j + least - 1) & 0xff]) {
            return false; // the usual case, a short value: one read instead of walking it
        }
        int run = 0;
        while (j < n && run < least && !VALUE_END[text.get(j) & 0xff]) {
            j++;
            run++;
        }
        return run >= least;
    }

    /** {@return whether {@code c} may start an operator's run (the byte before it is no operator byte)} */
    static boolean operatorByte(byte c) {
        return OPERATOR_BYTE[c & 0xff];
    }

    private static boolean[] table(String chars) {
        boolean[] t = new boolean[256];
        for (char c : chars.toCharArray()) {
            t[c] = true;
        }
        return t;
    }

    private static boolean keyChar(byte c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.'
                || c == '-' || c == ' ' || c == '\t';
    }

    private static boolean quote(byte c) {
        return c == '"' || c == '\'';
    }

    private static boolean space(byte c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
    }

    private static String ascii(ByteBuffer text, int from, int to) {
        StringBuilder b = new StringBuilder(to - from);
        for (int i = from; i < to; i++) {
            b.append((char) text.get(i));
        }
        return b.toString();
    }
}
