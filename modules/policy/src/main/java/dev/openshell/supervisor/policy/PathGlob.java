package dev.openshell.supervisor.policy;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A path glob with segment rules: {@code /} is only ever matched by a literal {@code /} (OpenShell's
 * {@code glob.match(pattern, ["/"], value)}, globset with {@code literal_separator}; {@code openshell-l7-semantics.md}
 * section 1.4a). Used for {@code binaries[].path} entries that contain {@code *}.
 *
 * <h2>Grammar</h2>
 * <ul>
 *   <li>{@code *}: any run of characters within one segment, possibly empty, never {@code /};</li>
 *   <li>{@code ?}: exactly one character other than {@code /};</li>
 *   <li>{@code [abc]}, {@code [a-z]}, {@code [!x]} or {@code [^x]}: one character (never {@code /}) in, or not in,
 *       the class; a {@code ]} right after the opening (or after {@code !}/{@code ^}) is a member;</li>
 *   <li>{@code {a,b}}: one of the comma-separated alternatives (not nested);</li>
 *   <li>{@code \x}: the character {@code x} literally;</li>
 *   <li>{@code **} as a whole segment spans segments: a leading {@code **}{@code /} matches any prefix (also none),
 *       so {@code **}{@code /node} matches {@code /usr/bin/node} and {@code node}; a trailing {@code /**} matches
 *       {@code /} and anything below, but not the directory itself; an inner {@code /**}{@code /} matches one or more
 *       whole segments' worth of separators ({@code /a/**}{@code /b} matches {@code /a/b} and {@code /a/x/y/b}); the
 *       pattern {@code **} alone matches everything. Anywhere else {@code **} is the same as {@code *}.</li>
 * </ul>
 * Matching is case-sensitive and covers the whole value. An unclosed {@code [} or <code>{</code>, a nested
 * <code>{</code>, a <code>}</code> with no open <code>{</code>, a reversed range or a trailing {@code \} is an error
 * at parse time (never at match time).
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class PathGlob {
    private final String source;
    private final Pattern regex;

    private PathGlob(String source, Pattern regex) {
        this.source = source;
        this.regex = regex;
    }

    /**
     * Parses a glob.
     *
     * @param source the glob
     * @return the glob
     * @throws IllegalArgumentException with a message that says what is wrong and where
     */
    public static PathGlob parse(String source) {
        Objects.requireNonNull(source, "source");
        if (source.equals("**")) {
            return new PathGlob(source, Pattern.compile("(?s).*"));
        }
        StringBuilder re = new StringBuilder("(?s)");
        int end = translate(source, 0, re, false);
        if (end != source.length()) {
            throw new IllegalArgumentException("unexpected " + quoteChar(source.charAt(end)) + " at character "
                    + (end + 1));
        }
        return new PathGlob(source, Pattern.compile(re.toString()));
    }

    /** {@return the glob as written} */
    public String source() {
        return source;
    }

    /**
     * {@return whether the whole value matches}
     *
     * @param value a path
     */
    public boolean matches(String value) {
        return regex.matcher(value).matches();
    }

    /**
     * Translates from {@code i} until the end, or (inside an alternative) until the {@code ,} or <code>}</code> that
     * ends it; {@return the index where it stopped}
     */
    private static int translate(String s, int i, StringBuilder re, boolean inAlternative) {
        int n = s.length();
        while (i < n) {
            char c = s.charAt(i);
            if (inAlternative && (c == ',' || c == '}')) {
                return i;
            }
            switch (c) {
                case '*' -> i = star(s, i, re);
                case '?' -> {
                    re.append("[^/]");
                    i++;
                }
                case '[' -> i = charClass(s, i, re);
                case '{' -> {
                    if (inAlternative) {
                        throw new IllegalArgumentException("nested '{' at character " + (i + 1)
                                + ": alternatives cannot be nested");
                    }
                    i = alternatives(s, i, re);
                }
                case '}' -> throw new IllegalArgumentException("unexpected '}' at character " + (i + 1)
                        + ": no '{' is open (write \\} for the character)");
                case '\\' -> {
                    if (i + 1 >= n) {
                        throw new IllegalArgumentException("a trailing '\\' escapes nothing");
                    }
                    re.append(Pattern.quote(String.valueOf(s.charAt(i + 1))));
                    i += 2;
                }
                default -> {
                    re.append(Pattern.quote(String.valueOf(c)));
                    i++;
                }
            }
        }
        return i;
    }

    private static int star(String s, int i, StringBuilder re) {
        int n = s.length();
        if (i + 1 < n && s.charAt(i + 1) == '*') {
            boolean atStart = i == 0;
            boolean afterSlash = i > 0 && s.charAt(i - 1) == '/' && !escaped(s, i - 1);
            boolean atEnd = i + 2 == n;
            boolean beforeSlash = i + 2 < n && s.charAt(i + 2) == '/';
            if (atStart && beforeSlash) {
                re.append("(?:/?|.*/)");
                return i + 3;
            }
            if (afterSlash && atEnd) {
                removeTrailingSlash(re);
                re.append("/.*");
                return i + 2;
            }
            if (afterSlash && beforeSlash) {
                removeTrailingSlash(re);
                re.append("(?:/|/.*/)");
                return i + 3;
            }
            re.append("[^/]*");
            return i + 2;
        }
        re.append("[^/]*");
        return i + 1;
    }

    private static boolean escaped(String s, int i) {
        int backslashes = 0;
        for (int j = i - 1; j >= 0 && s.charAt(j) == '\\'; j--) {
            backslashes++;
        }
        return backslashes % 2 == 1;
    }

    private static void removeTrailingSlash(StringBuilder re) {
        String slash = Pattern.quote("/");
        re.setLength(re.length() - slash.length());
    }

    private static int charClass(String s, int open, StringBuilder re) {
        int n = s.length();
        int i = open + 1;
        boolean negated = i < n && (s.charAt(i) == '!' || s.charAt(i) == '^');
        if (negated) {
            i++;
        }
        StringBuilder members = new StringBuilder();
        boolean first = true;
        while (true) {
            if (i >= n) {
                throw new IllegalArgumentException("unclosed '[' at character " + (open + 1));
            }
            char c = s.charAt(i);
            if (c == ']' && !first) {
                break;
            }
            first = false;
            if (i + 2 < n && s.charAt(i + 1) == '-' && s.charAt(i + 2) != ']') {
                char to = s.charAt(i + 2);
                if (to < c) {
                    throw new IllegalArgumentException("reversed range " + quoteChar(c) + "-" + quoteChar(to)
                            + " at character " + (i + 1));
                }
                members.append(classChar(c)).append('-').append(classChar(to));
                i += 3;
            } else {
                members.append(classChar(c));
                i++;
            }
        }
        re.append("(?:(?!/)[").append(negated ? "^" : "").append(members).append("])");
        return i + 1;
    }

    private static String classChar(char c) {
        return Character.isLetterOrDigit(c) ? String.valueOf(c) : "\\" + c;
    }

    private static int alternatives(String s, int open, StringBuilder re) {
        re.append("(?:");
        int i = open + 1;
        while (true) {
            i = translate(s, i, re, true);
            if (i >= s.length()) {
                throw new IllegalArgumentException("unclosed '{' at character " + (open + 1));
            }
            if (s.charAt(i) == '}') {
                re.append(')');
                return i + 1;
            }
            re.append('|');
            i++;
        }
    }

    private static String quoteChar(char c) {
        return "'" + c + "'";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PathGlob g && g.source.equals(source);
    }

    @Override
    public int hashCode() {
        return source.hashCode();
    }

    @Override
    public String toString() {
        return source;
    }
}
