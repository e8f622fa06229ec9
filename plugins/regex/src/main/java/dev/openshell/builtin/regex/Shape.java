package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The shape of a token body or a value in the catalog ({@link Catalog}): a sequence of ASCII atoms, each a literal
 * character or a character class with a repetition count, written in a subset of regular-expression syntax:
 * <ul>
 *   <li>a literal: any printable ASCII character except {@code [ ] { } ( ) . * + ? | ^ $ \}, or a backslash and any
 *       printable ASCII character ({@code \.} is a dot);</li>
 *   <li>a class: {@code [...]} of characters and ranges ({@code a-z}); {@code \-}, {@code \]}, {@code \\} inside;
 *       a {@code -} first or last is itself; no negation;</li>
 *   <li>a count after an atom: {@code {n}}, {@code {n,m}}, {@code {n,}} (at most 1000), {@code ?}, {@code +},
 *       {@code *}; none is exactly once.</li>
 * </ul>
 * Matching is possessive: each atom takes as many characters of its class as it may, never gives one back, and the
 * next atom starts where it stopped. The catalog check ({@link #possessiveIsExact}) refuses a shape in which that could
 * differ from ordinary regular-expression matching (a repeated atom followed by one that could start with its own
 * characters), so the documented regex is exactly what matches. Run time is linear in the characters taken.
 *
 * <p>Immutable, thread-safe. Text is bytes ({@link TextView}); only bytes below 0x80 are ever in a class.
 */
final class Shape {
    /** The longest bounded repetition a shape may state. */
    static final int MAX_COUNT = 1000;

    private final String source;
    private final long[] lo;
    private final long[] hi;
    private final int[] min;
    private final int[] max;
    /**
     * The token's own characters: the union of every class that is not a single literal character, as two 64-bit
     * halves of ASCII. A literal separator ({@code .} in {@code dt0c01.}, {@code -} in a UUID) is not one: a token
     * may end before a {@code .} or a {@code /}.
     */
    private final long alphaLo;
    private final long alphaHi;

    private Shape(String source, List<long[]> classes, List<int[]> counts) {
        this.source = source;
        int n = classes.size();
        lo = new long[n];
        hi = new long[n];
        min = new int[n];
        max = new int[n];
        long al = 0;
        long ah = 0;
        for (int i = 0; i < n; i++) {
            lo[i] = classes.get(i)[0];
            hi[i] = classes.get(i)[1];
            min[i] = counts.get(i)[0];
            max[i] = counts.get(i)[1];
            if (Long.bitCount(lo[i]) + Long.bitCount(hi[i]) > 1 || max[i] > 1) {
                al |= lo[i];
                ah |= hi[i];
            }
        }
        alphaLo = al;
        alphaHi = ah;
    }

    /** Thrown for a shape outside the subset; the message names the character position (1-based). */
    static final class Invalid extends Exception {
        private static final long serialVersionUID = 1L;

        Invalid(String message) {
            super(message);
        }
    }

    /**
     * {@return the parsed shape}
     *
     * @param source the shape, for example {@code [0-9a-f]{32}-us[0-9]{1,2}}
     * @throws Invalid if it is empty or outside the subset
     */
    static Shape parse(String source) throws Invalid {
        List<long[]> classes = new ArrayList<>();
        List<int[]> counts = new ArrayList<>();
        int i = 0;
        int n = source.length();
        while (i < n) {
            long[] cls = new long[2];
            char c = source.charAt(i);
            if (c == '[') {
                i = parseClass(source, i + 1, cls);
            } else if (c == '\\') {
                if (i + 1 >= n || !printable(source.charAt(i + 1))) {
                    throw new Invalid("a backslash must escape a printable ASCII character (at " + (i + 1) + ")");
                }
                add(cls, source.charAt(i + 1));
                i += 2;
            } else if (printable(c) && "[]{}().*+?|^$".indexOf(c) < 0) {
                add(cls, c);
                i++;
            } else {
                throw new Invalid("unexpected character at " + (i + 1) + " (only literals, classes and counts)");
            }
            int[] count = {1, 1};
            i = parseCount(source, i, count);
            classes.add(cls);
            counts.add(count);
        }
        if (classes.isEmpty()) {
            throw new Invalid("empty shape");
        }
        return new Shape(source, classes, counts);
    }

    private static int parseClass(String s, int i, long[] cls) throws Invalid {
        int start = i;
        int n = s.length();
        while (i < n && s.charAt(i) != ']') {
            char c = s.charAt(i);
            if (c == '\\') {
                if (i + 1 >= n) {
                    throw new Invalid("unterminated class starting at " + start);
                }
                c = s.charAt(++i);
            }
            if (!printable(c)) {
                throw new Invalid("class characters must be printable ASCII (at " + (i + 1) + ")");
            }
            if (i + 2 < n && s.charAt(i + 1) == '-' && s.charAt(i + 2) != ']') {
                char to = s.charAt(i + 2);
                if (to < c || !printable(to)) {
                    throw new Invalid("bad range at " + (i + 1));
                }
                for (char x = c; x <= to; x++) {
                    add(cls, x);
                }
                i += 3;
            } else {
                add(cls, c);
                i++;
            }
        }
        if (i >= n || i == start) {
            throw new Invalid("unterminated or empty class starting at " + start);
        }
        return i + 1;
    }

    private static int parseCount(String s, int i, int[] count) throws Invalid {
        if (i >= s.length()) {
            return i;
        }
        char c = s.charAt(i);
        switch (c) {
            case '?' -> {
                count[0] = 0;
                return i + 1;
            }
            case '+' -> {
                count[1] = Integer.MAX_VALUE;
                return i + 1;
            }
            case '*' -> {
                count[0] = 0;
                count[1] = Integer.MAX_VALUE;
                return i + 1;
            }
            case '{' -> {
                int close = s.indexOf('}', i);
                if (close < 0) {
                    throw new Invalid("unterminated count at " + (i + 1));
                }
                String[] parts = s.substring(i + 1, close).split(",", -1);
                try {
                    count[0] = Integer.parseInt(parts[0]);
                    count[1] = parts.length == 1 ? count[0]
                            : parts[1].isEmpty() ? Integer.MAX_VALUE : Integer.parseInt(parts[1]);
                } catch (NumberFormatException e) {
                    throw new Invalid("bad count at " + (i + 1));
                }
                if (parts.length > 2 || count[0] < 0 || count[1] < count[0] || count[0] > MAX_COUNT
                        || (count[1] != Integer.MAX_VALUE && count[1] > MAX_COUNT) || count[1] == 0) {
                    throw new Invalid("bad count at " + (i + 1));
                }
                return close + 1;
            }
            default -> {
                return i;
            }
        }
    }

    private static boolean printable(char c) {
        return c > 0x20 && c < 0x7f;
    }

    private static void add(long[] cls, char c) {
        if (c < 64) {
            cls[0] |= 1L << c;
        } else {
            cls[1] |= 1L << (c - 64);
        }
    }

    private static boolean in(long lo, long hi, int c) {
        return c < 64 ? (lo >>> c & 1) != 0 : c < 128 && (hi >>> (c - 64) & 1) != 0;
    }

    /**
     * {@return the end of the shape matched at {@code at}, possessively, or -1}
     *
     * @param text the text, from 0 to its limit
     * @param at where the shape starts
     */
    int match(ByteBuffer text, int at) {
        int n = text.limit();
        int p = at;
        for (int a = 0; a < min.length; a++) {
            long l = lo[a];
            long h = hi[a];
            int most = max[a];
            int taken = 0;
            while (taken < most && p < n && in(l, h, text.get(p) & 0xff)) {
                p++;
                taken++;
            }
            if (taken < min[a]) {
                return -1;
            }
        }
        return p;
    }

    /** {@return whether {@code c} (a byte value, 0 to 255) is one of the token's own characters} @param c the byte */
    boolean inAlphabet(int c) {
        return in(alphaLo, alphaHi, c);
    }

    /**
     * {@return every character some atom of the shape takes (literal or class), as two 64-bit halves of ASCII: a
     * match is made of these characters only}
     */
    long[] characters() {
        long l = 0;
        long h = 0;
        for (int a = 0; a < lo.length; a++) {
            l |= lo[a];
            h |= hi[a];
        }
        return new long[] {l, h};
    }

    /** {@return the fewest characters a match takes} */
    int minLength() {
        long sum = 0;
        for (int m : min) {
            sum += m;
        }
        return (int) Math.min(sum, Integer.MAX_VALUE);
    }

    /** {@return the length of every match when the shape has no variable count, else -1} */
    int fixedLength() {
        long sum = 0;
        for (int a = 0; a < min.length; a++) {
            if (min[a] != max[a]) {
                return -1;
            }
            sum += min[a];
        }
        return (int) sum;
    }

    /** {@return the number of the token's own characters (the alphabet's size)} */
    int alphabetSize() {
        return Long.bitCount(alphaLo) + Long.bitCount(alphaHi);
    }

    /**
     * {@return whether possessive matching equals regular-expression matching for this shape} It does when no atom
     * that may repeat a variable number of times is followed, before the next atom that must occur, by an atom whose
     * class shares a character with it: then giving a character back could never let the rest match.
     */
    boolean possessiveIsExact() {
        for (int a = 0; a < min.length; a++) {
            if (min[a] == max[a]) {
                continue;
            }
            for (int b = a + 1; b < min.length; b++) {
                if ((lo[a] & lo[b]) != 0 || (hi[a] & hi[b]) != 0) {
                    return false;
                }
                if (min[b] > 0) {
                    break;
                }
            }
        }
        return true;
    }

    /** {@return the shape as written in the catalog (a regular expression)} */
    @Override
    public String toString() {
        return source;
    }
}
