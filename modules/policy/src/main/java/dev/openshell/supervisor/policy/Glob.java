package dev.openshell.supervisor.policy;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Objects;

/**
 * A compiled glob of an L7 rule: one engine for paths and one for values and names ({@code docs/policy-reference.md},
 * "Globs"; decisions 1 and 2 of the L7 design).
 *
 * <p>Grammar, both kinds: {@code ?} one character, {@code *} any run of characters, {@code [abc]} / {@code [a-z]} a
 * class ({@code [!x]} or {@code [^x]} negated; {@code ]} first in a class is literal), {@code {a,b}} alternation (not
 * nested), {@code \c} the literal character {@code c}; every other character is literal and compared
 * case-sensitively.
 *
 * <ul>
 *   <li>{@linkplain #path(String) Path globs}: {@code *}, {@code ?} and classes never match {@code /}; {@code **} is
 *       recursive only as a whole segment: a leading {@code **}{@code /} matches any prefix ending in {@code /} or
 *       none, a trailing {@code /**} matches {@code /} and anything after it ({@code /x/**} matches {@code /x/} and
 *       {@code /x/a/b}, not {@code /x}), an inner {@code /**}{@code /} matches {@code /} or {@code /.../}; the pattern
 *       {@code **} alone matches everything. Elsewhere {@code **} is {@code *}.</li>
 *   <li>{@linkplain #value(String) Value globs} (query values, GraphQL operation names and fields, JSON-RPC/MCP
 *       methods, MCP tool names): there is no delimiter, so {@code *} matches any run of characters, dots and slashes
 *       included.</li>
 * </ul>
 *
 * <p>Matching simulates the compiled automaton over the text once (time proportional to text length times pattern
 * length, no backtracking), so a hostile path cannot make it slow. Patterns are at most {@value #MAX_PATTERN_CHARS}
 * characters and expand to at most {@value #MAX_ALTERNATIVES} alternatives.
 */
public final class Glob {
    /** The longest pattern accepted. */
    public static final int MAX_PATTERN_CHARS = 1024;
    /** The most alternatives {@code {a,b}} groups may expand to. */
    public static final int MAX_ALTERNATIVES = 256;

    private static final int LITERAL = 0;
    private static final int ONE = 1;
    private static final int CLASS = 2;

    private final String source;
    private final boolean path;
    private final boolean all;
    /** Automaton: per state, the kind of character test, or a split. */
    private final List<Node> nodes;
    private final int start;

    /** A state: tests one character and goes to {@code next}, or (when {@code split}) goes to both edges for free. */
    private record Node(int kind, char literal, CharClass cls, boolean crossesSlash, int next, int alt,
                        boolean split, boolean accept) {
    }

    /** A bracket class. */
    private record CharClass(String singles, String ranges, boolean negated) {
        boolean test(char c) {
            boolean in = singles.indexOf(c) >= 0;
            for (int i = 0; !in && i + 1 < ranges.length(); i += 2) {
                in = c >= ranges.charAt(i) && c <= ranges.charAt(i + 1);
            }
            return in != negated;
        }
    }

    private Glob(String source, boolean path, boolean all, List<Node> nodes, int start) {
        this.source = source;
        this.path = path;
        this.all = all;
        this.nodes = nodes;
        this.start = start;
    }

    /**
     * Compiles a path glob (rule {@code path} and endpoint {@code path}).
     *
     * @param pattern the pattern as written
     * @return the glob
     * @throws IllegalArgumentException with a message for operators when the pattern is malformed (unclosed
     *     {@code [} or {@code {}, nested {@code {}, a trailing {@code \}, an empty class, too long)
     */
    public static Glob path(String pattern) {
        return compile(pattern, true);
    }

    /**
     * Compiles a value glob (query values, operation names, fields, methods, tool names).
     *
     * @param pattern the pattern as written
     * @return the glob
     * @throws IllegalArgumentException when the pattern is malformed, as for {@link #path(String)}
     */
    public static Glob value(String pattern) {
        return compile(pattern, false);
    }

    /** {@return the pattern as written} */
    public String source() {
        return source;
    }

    /** {@return whether this is a path glob (else a value glob)} */
    public boolean isPath() {
        return path;
    }

    /** {@return whether the pattern has any wildcard, class or alternation (else it matches only itself)} */
    public boolean hasWildcards() {
        for (int i = 0; i < source.length(); i++) {
            if ("*?[{\\".indexOf(source.charAt(i)) >= 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@return how specific the pattern is: the number of characters that are not {@code *}} Used to choose among
     * endpoints whose {@code path} matches one request (most specific first).
     */
    public int specificity() {
        int n = 0;
        for (int i = 0; i < source.length(); i++) {
            if (source.charAt(i) != '*') {
                n++;
            }
        }
        return n;
    }

    /**
     * {@return whether the whole of {@code text} matches}
     *
     * @param text the canonical path or the value
     */
    public boolean matches(CharSequence text) {
        Objects.requireNonNull(text, "text");
        if (all) {
            return true;
        }
        BitSet current = new BitSet(nodes.size());
        BitSet next = new BitSet(nodes.size());
        add(current, start);
        for (int i = 0; i < text.length() && !current.isEmpty(); i++) {
            char c = text.charAt(i);
            next.clear();
            for (int s = current.nextSetBit(0); s >= 0; s = current.nextSetBit(s + 1)) {
                Node n = nodes.get(s);
                if (n.split() || n.accept()) {
                    continue;
                }
                if (c == '/' && !n.crossesSlash()) {
                    continue;
                }
                boolean ok = switch (n.kind()) {
                    case LITERAL -> n.literal() == c;
                    case CLASS -> n.cls().test(c);
                    default -> true;
                };
                if (ok) {
                    add(next, n.next());
                }
            }
            BitSet t = current;
            current = next;
            next = t;
        }
        for (int s = current.nextSetBit(0); s >= 0; s = current.nextSetBit(s + 1)) {
            if (nodes.get(s).accept()) {
                return true;
            }
        }
        return false;
    }

    private void add(BitSet set, int state) {
        if (state < 0 || set.get(state)) {
            return;
        }
        set.set(state);
        Node n = nodes.get(state);
        if (n.split()) {
            add(set, n.next());
            add(set, n.alt());
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Glob g && g.source.equals(source) && g.path == path;
    }

    @Override
    public int hashCode() {
        return source.hashCode() * 31 + (path ? 1 : 0);
    }

    @Override
    public String toString() {
        return source;
    }

    // ------------------------------------------------------------------------------------------------- compiling

    /** A parsed piece of the pattern. */
    private sealed interface Piece {
    }

    private record Lit(char c) implements Piece {
    }

    private record One() implements Piece {
    }

    private record Star() implements Piece {
    }

    private record Cls(CharClass cls) implements Piece {
    }

    /** {@code **} as a whole segment: {@code prefix} = leading {@code ** /}, {@code suffix} = trailing {@code /**}. */
    private record Recursive(boolean leading, boolean trailing) implements Piece {
    }

    private record Alt(List<List<Piece>> branches) implements Piece {
    }

    private static Glob compile(String pattern, boolean path) {
        Objects.requireNonNull(pattern, "pattern");
        if (pattern.length() > MAX_PATTERN_CHARS) {
            throw new IllegalArgumentException("the pattern is longer than " + MAX_PATTERN_CHARS + " characters");
        }
        if (path && pattern.equals("**")) {
            return new Glob(pattern, true, true, List.of(), 0);
        }
        int[] pos = {0};
        List<Piece> pieces = parse(pattern, pos, path, false);
        int[] alternatives = {1};
        countAlternatives(pieces, alternatives);
        Builder b = new Builder(path);
        int accept = b.node(new Node(LITERAL, '\0', null, false, -1, -1, false, true));
        int start = b.sequence(pieces, accept);
        return new Glob(pattern, path, false, List.copyOf(b.nodes), start);
    }

    private static void countAlternatives(List<Piece> pieces, int[] count) {
        for (Piece p : pieces) {
            if (p instanceof Alt a) {
                count[0] *= a.branches().size();
                if (count[0] > MAX_ALTERNATIVES) {
                    throw new IllegalArgumentException("the {...} groups expand to more than " + MAX_ALTERNATIVES
                            + " alternatives");
                }
            }
        }
    }

    private static List<Piece> parse(String p, int[] pos, boolean path, boolean inAlt) {
        List<Piece> out = new ArrayList<>();
        while (pos[0] < p.length()) {
            char c = p.charAt(pos[0]);
            if (inAlt && (c == ',' || c == '}')) {
                return out;
            }
            switch (c) {
                case '\\' -> {
                    if (pos[0] + 1 >= p.length()) {
                        throw new IllegalArgumentException("a trailing '\\' escapes nothing");
                    }
                    out.add(new Lit(p.charAt(pos[0] + 1)));
                    pos[0] += 2;
                }
                case '?' -> {
                    out.add(new One());
                    pos[0]++;
                }
                case '*' -> {
                    int i = pos[0];
                    if (i + 1 < p.length() && p.charAt(i + 1) == '*') {
                        boolean segmentStart = i == 0 || p.charAt(i - 1) == '/';
                        boolean segmentEnd = i + 2 == p.length() || p.charAt(i + 2) == '/';
                        if (path && segmentStart && segmentEnd && !inAlt) {
                            boolean leading = i == 0;
                            boolean trailing = i + 2 == p.length();
                            if (leading) {
                                // "**/..." : the recursive piece eats the slash after it
                                out.add(new Recursive(true, false));
                                pos[0] = i + 3;
                            } else {
                                // ".../**" or ".../**/...": the slash before is part of the recursive piece
                                out.remove(out.size() - 1);
                                out.add(new Recursive(false, trailing));
                                pos[0] = trailing ? i + 2 : i + 3;
                            }
                            continue;
                        }
                        pos[0] = i + 2;
                    } else {
                        pos[0] = i + 1;
                    }
                    if (out.isEmpty() || !(out.get(out.size() - 1) instanceof Star)) {
                        out.add(new Star());
                    }
                }
                case '[' -> out.add(new Cls(parseClass(p, pos)));
                case '}' -> throw new IllegalArgumentException("unexpected '}' at character " + (pos[0] + 1)
                        + ": no '{' is open (write \\} for the character)");
                case '{' -> {
                    if (inAlt) {
                        throw new IllegalArgumentException("nested '{' at character " + (pos[0] + 1)
                                + ": alternatives cannot be nested");
                    }
                    int open = pos[0];
                    pos[0]++;
                    List<List<Piece>> branches = new ArrayList<>();
                    while (true) {
                        branches.add(parse(p, pos, path, true));
                        if (pos[0] >= p.length()) {
                            throw new IllegalArgumentException("unclosed '{' at character " + (open + 1));
                        }
                        char d = p.charAt(pos[0]++);
                        if (d == '}') {
                            break;
                        }
                    }
                    out.add(new Alt(branches));
                }
                default -> {
                    out.add(new Lit(c));
                    pos[0]++;
                }
            }
        }
        return out;
    }

    private static CharClass parseClass(String p, int[] pos) {
        int open = pos[0];
        int i = pos[0] + 1;
        boolean negated = false;
        if (i < p.length() && (p.charAt(i) == '!' || p.charAt(i) == '^')) {
            negated = true;
            i++;
        }
        StringBuilder singles = new StringBuilder();
        StringBuilder ranges = new StringBuilder();
        boolean first = true;
        while (true) {
            if (i >= p.length()) {
                throw new IllegalArgumentException("unclosed '[' at character " + (open + 1));
            }
            char c = p.charAt(i);
            if (c == ']' && !first) {
                break;
            }
            first = false;
            if (i + 2 < p.length() && p.charAt(i + 1) == '-' && p.charAt(i + 2) != ']') {
                char hi = p.charAt(i + 2);
                if (hi < c) {
                    throw new IllegalArgumentException("reversed range '" + c + "'-'" + hi + "' at character " + (i + 1));
                }
                ranges.append(c).append(hi);
                i += 3;
            } else {
                singles.append(c);
                i++;
            }
        }
        pos[0] = i + 1;
        return new CharClass(singles.toString(), ranges.toString(), negated);
    }

    /** Builds the automaton back to front: each piece is wired to the state after it. */
    private static final class Builder {
        final List<Node> nodes = new ArrayList<>();
        final boolean path;

        Builder(boolean path) {
            this.path = path;
        }

        int node(Node n) {
            nodes.add(n);
            return nodes.size() - 1;
        }

        int test(int kind, char c, CharClass cls, boolean crossesSlash, int next) {
            return node(new Node(kind, c, cls, crossesSlash, next, -1, false, false));
        }

        int split(int a, int b) {
            return node(new Node(LITERAL, '\0', null, false, a, b, true, false));
        }

        /** A loop over {@code kind}: zero or more characters, then {@code next}. */
        int loop(boolean crossesSlash, int next) {
            int split = node(null);
            int body = test(ONE, '\0', null, crossesSlash, split);
            nodes.set(split, new Node(LITERAL, '\0', null, false, body, next, true, false));
            return split;
        }

        int sequence(List<Piece> pieces, int next) {
            int cur = next;
            for (int i = pieces.size() - 1; i >= 0; i--) {
                cur = piece(pieces.get(i), cur);
            }
            return cur;
        }

        int piece(Piece p, int next) {
            boolean cross = !path;
            return switch (p) {
                case Lit l -> test(LITERAL, l.c(), null, true, next);
                case One o -> test(ONE, '\0', null, cross, next);
                case Cls c -> test(CLASS, '\0', c.cls(), cross, next);
                case Star s -> loop(cross, next);
                case Recursive r -> {
                    if (r.leading()) {
                        // (?:/?|.*/) : nothing, "/", or anything ending in "/"
                        int slash = test(LITERAL, '/', null, true, next);
                        int any = loop(true, slash);
                        yield split(next, any);
                    }
                    if (r.trailing()) {
                        // /.* 
                        yield test(LITERAL, '/', null, true, loop(true, next));
                    }
                    // (?:/|/.*/) : "/" then optionally anything ending in "/"
                    int slash = test(LITERAL, '/', null, true, next);
                    int any = loop(true, slash);
                    yield test(LITERAL, '/', null, true, split(next, any));
                }
                case Alt a -> {
                    int cur = -1;
                    for (List<Piece> branch : a.branches()) {
                        int b = sequence(branch, next);
                        cur = cur < 0 ? b : split(b, cur);
                    }
                    yield cur;
                }
            };
        }
    }
}
