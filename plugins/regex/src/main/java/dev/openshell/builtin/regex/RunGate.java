package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * Where in a text a match of a {@link Selection} can be: around a long run of token characters, or a run that holds a
 * {@code -} where a prefix anchored on a dash may stand. Every character a match of an enabled entry can hold (its
 * prefix's characters other than space, every character of its lead's and shape's atoms, a keyword value's) is a token
 * character. A match then holds a run of at least {@link #least()} of them, except a match of an entry whose prefix is
 * anchored on {@code -} (the scanner tries it from that byte) and that guarantees fewer ({@code -----BEGIN},
 * {@code glcbt-} and five more, {@code xoxb-} and ten more); and the position the scanner tries a match from (a prefix's
 * anchor byte, an operator before a value) lies at most {@link #before()} bytes before that run's start (the operator
 * before a value, {@code Bearer } before its token) and at most {@link #after()} bytes after its end.
 *
 * <p>So the scanner first finds such runs ({@link #nextRun}: 8 bytes at a time, with a few arithmetic operations and
 * one well-predicted branch per 7 bytes; a short run is kept only when one of its dashes passes the tests the exact
 * reading makes at a dash, {@link #mayAnchor}) and reads the text its exact way only around them. Prose, code and chat
 * are made of words shorter than {@value #MIN_RUN} characters: most of their bytes are never looked at twice. The
 * result is the same as reading every byte the exact way, because every position from which a match could be recorded
 * lies in a window that is read, and windows are read in text order.
 *
 * <p>Immutable, thread-safe.
 */
final class RunGate {
    /** The run length the gate aims for; an entry that guarantees less lowers it unless it is anchored on {@code -}. */
    static final int MIN_RUN = 16;
    private static final long LOWS = 0x7F7F_7F7F_7F7F_7F7FL;
    private static final long HIGHS = 0x8080_8080_8080_8080L;
    /** Added to each byte's low 7 bits: the high bit is then set for 0x21 and above. */
    private static final long ABOVE_SPACE = 0x5F5F_5F5F_5F5F_5F5FL;
    private static final long DASHES = 0x2D2D_2D2D_2D2D_2D2DL;
    /** Delimiters that end a run when no enabled entry holds them (besides space, controls and non-ASCII). */
    private static final String WORD_DELIMITERS = ",\"'()";

    /**
     * By byte value: whether the words' test counts it as a token character: ASCII from 0x21, except the delimiters
     * of {@link #WORD_DELIMITERS} that no enabled entry holds. A superset of the token characters.
     */
    private final boolean[] wide = new boolean[256];
    /** The catalog's prefixes by anchor, for the tests at a dash ({@link #mayAnchor}). */
    private final Prefilter prefilter = Catalog.get().prefilter();
    /** By byte value: whether an enabled entry's match may hold it. */
    private final boolean[] token;
    /** Each delimiter of {@link #WORD_DELIMITERS} that is no token character, repeated in 8 bytes; else spaces. */
    private final long[] exclude = new long[WORD_DELIMITERS.length()];
    /**
     * The enabled prefixes anchored before the longest piece of token characters their match holds ({@code B} of
     * {@code Bearer }), each as that piece's distance from the anchor * 2^8 + the anchor byte: a run's whole reach
     * before it is read only when one of them stands at its distance before the run. (The piece follows a space, so
     * it starts a run.)
     */
    private final int[] farAnchors;
    /** By byte value: whether it may stand between an operator's first byte and its value (operator or filler). */
    private static final boolean[] TO_VALUE = new boolean[256];
    private final boolean keywords;
    private final int least;
    private final int before;
    private final int after;
    /**
     * How far apart {@link #nextRun} reads its 8-byte windows: {@link #least()} - 7, at most 8, so that a run of
     * {@link #least()} holds a whole window; 0 or less when runs are short enough to be found a byte at a time.
     */
    private final int step;

    static {
        for (char c : (Assignment.OPERATOR_STARTS + "\"'` \t\r\n=").toCharArray()) {
            TO_VALUE[c] = true;
        }
    }

    private RunGate(List<Rule> rules, boolean[] enabled) {
        token = new boolean[256];
        int fewest = MIN_RUN;
        int most = 0;
        int tail = 0;
        int prefixBefore = 0;
        int prefixAfter = 0;
        boolean anyKeyword = false;
        java.util.Set<Integer> far = new java.util.TreeSet<>();
        for (Rule r : rules) {
            if (!enabled[r.index()]) {
                continue;
            }
            if (r.kind() == Rule.Kind.PEM) {
                String l = SecretScanner.PEM_BEGIN_LITERAL;
                addCharacters(token, l);
                long s = segment(l, Prefilter.anchor(l), 0, 0);
                fewest = lower(fewest, s, l.charAt(Prefilter.anchor(l)));
                far.add(farAnchor(s, l.charAt(Prefilter.anchor(l))));
                most = Math.max(most, (int) (s >>> 20 & 0xFFFFF));
                tail = Math.max(tail, (int) (s & 0xFFFFF));
                continue;
            }
            for (Rule.Form f : r.forms()) {
                addShape(token, f.lead());
                addShape(token, f.shape());
                if (r.kind() == Rule.Kind.KEYWORD) {
                    anyKeyword = true;
                    fewest = Math.min(fewest, f.shape().minLength());
                    continue;
                }
                int lead = f.lead() == null ? 0 : f.lead().fixedLength();
                int body = f.shape() == null ? 0 : f.shape().minLength();
                for (String l : f.literals()) {
                    addCharacters(token, l);
                    int anchor = Prefilter.anchor(l);
                    long s = segment(l, lead + anchor, lead, body);
                    fewest = lower(fewest, s, l.charAt(anchor));
                    far.add(farAnchor(s, l.charAt(anchor)));
                    most = Math.max(most, (int) (s >>> 20 & 0xFFFFF));
                    tail = Math.max(tail, (int) (s & 0xFFFFF));
                    long fromStart = segment(l, lead, lead, body); // the same piece, seen from the prefix's start
                    prefixBefore = Math.max(prefixBefore, (int) (fromStart >>> 20 & 0xFFFFF));
                    prefixAfter = Math.max(prefixAfter, (int) (fromStart & 0xFFFFF));
                }
            }
        }
        keywords = anyKeyword;
        far.remove(0);
        farAnchors = far.stream().mapToInt(Integer::intValue).toArray();
        if (anyKeyword) { // an operator, then the value or an enabled prefix entry's match, at most VALUE_REACH after it
            most = Math.max(most, Assignment.VALUE_REACH + prefixBefore);
            tail = Math.max(tail, prefixAfter);
        }
        for (int d = 0; d < exclude.length; d++) {
            char c = WORD_DELIMITERS.charAt(d);
            exclude[d] = (token[c] ? ' ' : c) * 0x0101_0101_0101_0101L;
        }
        for (int c = 0x21; c < 0x80; c++) {
            wide[c] = token[c] || WORD_DELIMITERS.indexOf(c) < 0;
        }
        least = Math.max(1, fewest);
        before = most;
        after = tail;
        step = least >= 10 ? Math.min(Long.BYTES, least - (Long.BYTES - 1)) : 0;
    }

    /** {@return the gate of the entries {@code enabled} selects} @param enabled by catalog index */
    static RunGate of(boolean[] enabled) {
        return new RunGate(Catalog.get().rules(), enabled);
    }

    /**
     * {@return a prefix's {@link #farAnchors} element, or 0 when its longest piece does not start after its anchor}
     * An anchor on {@code -} gives the piece's distance as 0: its run holds the dash, and the whole reach is read.
     */
    private static int farAnchor(long segment, char anchor) {
        int distance = (int) (segment >>> 20 & 0xFFFFF);
        if (distance == 0) {
            return 0;
        }
        return anchor == '-' ? 1 << 30 : distance << 8 | anchor;
    }

    /** {@return {@code fewest}, lowered to a prefix's guaranteed piece unless the prefix is anchored on a dash} */
    private static int lower(int fewest, long segment, char anchor) {
        return anchor == '-' ? fewest : Math.min(fewest, (int) (segment >>> 40));
    }

    /**
     * {@return the longest piece of token characters a match of a prefix literal always holds, as its length * 2^40
     * + how far it starts after the position {@code from} (0 when it starts at or before) * 2^20 + how far it ends
     * before that position (0 when it ends after)}
     *
     * @param literal the prefix
     * @param from a position in the match, counted from the lead's start
     * @param lead the lead's length (token characters before the literal)
     * @param body the fewest characters of the shape after the literal
     */
    private static long segment(String literal, int from, int lead, int body) {
        int length = lead + literal.length() + body;
        int bestStart = 0;
        int bestLength = -1;
        int start = 0;
        for (int k = 0; k <= length; k++) {
            boolean space = k == length
                    || (k >= lead && k < lead + literal.length() && literal.charAt(k - lead) == ' ');
            if (space) {
                if (k - start > bestLength) {
                    bestLength = k - start;
                    bestStart = start;
                }
                start = k + 1;
            }
        }
        long startsAfter = Math.max(0, bestStart - from);
        long endsBefore = Math.max(0, from - (bestStart + bestLength - 1));
        return (long) bestLength << 40 | startsAfter << 20 | endsBefore;
    }

    private static void addCharacters(boolean[] token, String literal) {
        for (int k = 0; k < literal.length(); k++) {
            if (literal.charAt(k) != ' ') {
                token[literal.charAt(k)] = true;
            }
        }
    }

    private static void addShape(boolean[] token, Shape shape) {
        if (shape == null) {
            return;
        }
        long[] chars = shape.characters();
        for (int c = 0; c < 128; c++) {
            if (((c < 64 ? chars[0] >>> c : chars[1] >>> (c - 64)) & 1) != 0) {
                token[c] = true;
            }
        }
    }

    /** {@return whether an enabled entry's match may hold the byte {@code c} (0 to 255)} */
    boolean isToken(int c) {
        return token[c];
    }

    /** {@return the fewest token characters in one run that every match holds, unless the run holds a dash} */
    int least() {
        return least;
    }

    /** {@return how far before its run's start the position a match is tried from may lie} */
    int before() {
        return before;
    }

    /**
     * {@return where the exact reading for the run that starts at {@code start} begins: the first byte of the operator
     * run and fillers just before it (an operator counts only if its value may start in the run), or, when the anchor
     * of a prefix whose longest piece may be this run stands at its distance before it, the first of the
     * {@link #before()} bytes before it; never before {@code floor}} Every other position before the run belongs to a run too short to hold a match.
     *
     * @param text the text
     * @param start where the run starts
     * @param floor where the reading may start at the earliest
     */
    int windowStart(ByteBuffer text, int start, int floor) {
        int lo = Math.max(floor, start - before);
        for (int a : farAnchors) {
            int at = start - (a >>> 8);
            if (a == 1 << 30 || (at >= lo && (text.get(at) & 0xff) == (a & 0xff))) {
                return lo;
            }
        }
        int j = start;
        if (keywords) {
            int stop = Math.max(lo, start - Assignment.VALUE_REACH);
            while (j > stop && TO_VALUE[text.get(j - 1) & 0xff]) {
                j--;
            }
        }
        return Math.max(j, floor);
    }

    /** {@return how far after its run's end the position a match is tried from may lie} */
    int after() {
        return after;
    }

    /**
     * {@return the next run at or after {@code from} that is {@link #least()} long or holds a {@code -} that
     * {@link #mayAnchor}, as its start times 2^32 plus its end (exclusive); or -1 when there is none} Runs are counted
     * from {@code from}: the byte before it is not looked at.
     *
     * <p>The text is read in overlapping windows of 8 bytes, {@link #step} apart (7 when {@link #least()} is 14), so
     * that every run of {@link #least()} token characters holds a whole window and every byte lies in a window. Most
     * windows of prose and code hold a space, a control byte or a non-ASCII byte and no dash: a few arithmetic
     * operations and one well-predicted branch skip them. A window of token characters only finds its run's ends in
     * the words just before and after it ({@link #around}); a window with a dash finds the run of its first dash
     * ({@link #dashed}). No run that qualifies lies wholly before such a window: its whole window or its dash would
     * have been found first. So the first run that qualifies is the one found, as reading a byte at a time from
     * {@code from} finds it (a property test compares the two).
     *
     * @param text the text, from 0 to its limit, in little-endian byte order ({@link #littleEndian})
     * @param from where to start
     */
    long nextRun(ByteBuffer text, int from) {
        if (step <= 0) {
            return nextRunByBytes(text, from);
        }
        int n = text.limit();
        int k = from;
        while (k + Long.BYTES <= n) {
            long w = text.getLong(k);
            long x = w & LOWS;
            long outside = (~(x + ABOVE_SPACE) | w) & HIGHS; // a byte below 0x21 or non-ASCII
            long dash = ~((x ^ DASHES) + LOWS | w) & HIGHS;
            if (outside != 0 && dash == 0) {
                k += step;
                continue;
            }
            long r;
            if (dash == 0) {
                if ((outside | delimiters(x)) != 0) {
                    k += step;
                    continue;
                }
                r = around(text, k, from);
            } else {
                r = dashed(text, k, from, w, dash);
            }
            if (r >= 0) {
                return r;
            }
            k = (int) ~r;
        }
        return nextRunByBytes(text, runStart(text, Math.min(k, n), from));
    }

    /**
     * {@return the high bit of each byte of {@code x} (8 bytes, high bits clear) that is a delimiter of the words'
     * test}
     */
    private long delimiters(long x) {
        return ~(((x ^ exclude[0]) + LOWS) & ((x ^ exclude[1]) + LOWS) & ((x ^ exclude[2]) + LOWS)
                & ((x ^ exclude[3]) + LOWS) & ((x ^ exclude[4]) + LOWS)) & HIGHS;
    }

    /** {@return the high bit of each byte of the word {@code w} that is no token character for the words' test} */
    private long outside(long w) {
        return spaces(w) | delimiters(w & LOWS);
    }

    /** {@return the high bit of each byte of the word {@code w} below 0x21 or not ASCII: it ends any run} */
    private static long spaces(long w) {
        return (~((w & LOWS) + ABOVE_SPACE) | w) & HIGHS;
    }

    /** {@return the high bit of each byte of the word {@code w} that is a {@code -}} */
    private static long dashes(long w) {
        return ~((w & LOWS ^ DASHES) + LOWS | w) & HIGHS;
    }

    /**
     * {@return as {@link #runFrom}, for the window at {@code k} whose 8 bytes are token characters and no dash} The
     * run's ends are found in the words just before and just after the window, first by spaces, controls and
     * non-ASCII bytes only (cheaper, and enough to pass over a long word of prose), then with the delimiters too; a
     * run that reaches past either word is read a byte at a time.
     */
    private long around(ByteBuffer text, int k, int from) {
        if (k - Long.BYTES < from || k + 2 * Long.BYTES > text.limit()) {
            return runFrom(text, runStart(text, k, from), k + Long.BYTES);
        }
        long back = text.getLong(k - Long.BYTES);
        long ahead = text.getLong(k + Long.BYTES);
        long backEnds = spaces(back);
        long aheadEnds = spaces(ahead);
        if (backEnds != 0 && aheadEnds != 0) {
            // ends by spaces, controls and non-ASCII bytes only: a run that holds the exact one; a word of prose is
            // too short even so and holds no dash, and then no position up to its space starts a run that qualifies
            int trail = Long.numberOfTrailingZeros(aheadEnds) >>> 3;
            int length = (Long.numberOfLeadingZeros(backEnds) >>> 3) + Long.BYTES + trail;
            long dash = dashes(back) & -(Long.highestOneBit(backEnds) << 1)
                    | dashes(ahead) & (Long.lowestOneBit(aheadEnds) - 1);
            if (length < least && dash == 0) {
                return ~(long) (k + Long.BYTES + trail);
            }
        }
        long backOut = backEnds | delimiters(back & LOWS);
        long aheadOut = aheadEnds | delimiters(ahead & LOWS);
        if (backOut == 0 || aheadOut == 0) {
            return runFrom(text, runStart(text, k, from), k + Long.BYTES);
        }
        int start = k - (Long.numberOfLeadingZeros(backOut) >>> 3);
        int end = k + Long.BYTES + (Long.numberOfTrailingZeros(aheadOut) >>> 3);
        long dash = dashes(back) & -(Long.highestOneBit(backOut) << 1)
                | dashes(ahead) & (Long.lowestOneBit(aheadOut) - 1);
        return qualified(text, start, end, dash != 0);
    }

    /**
     * {@return as {@link #runFrom}, for the window at {@code k} (the word {@code w}) that holds a dash: the run that
     * holds its first dash, if it qualifies} No run that qualifies ends before that dash: it would have been found in
     * an earlier window.
     */
    private long dashed(ByteBuffer text, int k, int from, long w, long dash) {
        long first = Long.lowestOneBit(dash);
        long out = outside(w);
        long below = out & (first - 1);
        long above = out & -(first << 1);
        int start = below != 0 ? k + Long.BYTES - (Long.numberOfLeadingZeros(below) >>> 3) : runStart(text, k, from);
        int end = above != 0 ? k + (Long.numberOfTrailingZeros(above) >>> 3) : extend(text, k + Long.BYTES);
        return qualified(text, start, end, true);
    }

    /**
     * {@return the run from {@code start} to {@code end} as {@link #nextRun} gives it if it is {@link #least()} long
     * or holds a dash that {@link #mayAnchor}; else the complement of {@code end}, from which the windows go on}
     *
     * @param dashed whether the run holds a dash
     */
    private long qualified(ByteBuffer text, int start, int end, boolean dashed) {
        if (end - start >= least) {
            return (long) start << 32 | end;
        }
        if (dashed) {
            for (int i = start; i < end; i++) {
                if (text.get(i) == '-' && mayAnchor(text, i)) {
                    return (long) start << 32 | end;
                }
            }
        }
        return ~(long) end;
    }

    /**
     * {@return whether some prefix anchored on a {@code -} may stand at the dash at {@code i}: the tests the scanner
     * makes at a dash before it compares prefixes (the byte before it, or after it for a prefix that starts with a
     * dash, and the byte one further; {@link Prefilter#anchored}, {@link Prefilter#admits})} A run shorter than
     * {@link #least()} none of whose dashes passes them holds no match.
     */
    boolean mayAnchor(ByteBuffer text, int i) {
        int n = text.limit();
        int previous = i > 0 ? text.get(i - 1) & 0xff : 0;
        if (prefilter.anchored(false, '-', previous) != null
                && prefilter.admits(false, '-', previous, i > 1 ? text.get(i - 2) & 0xff : -1)) {
            return true;
        }
        int next = i + 1 < n ? text.get(i + 1) & 0xff : -1;
        return next >= 0 && prefilter.anchored(true, '-', next) != null
                && prefilter.admits(true, '-', next, i + 2 < n ? text.get(i + 2) & 0xff : -1);
    }

    /**
     * {@return where the run of token bytes that holds {@code k} starts ({@code k} if none does), not before
     * {@code from}}
     */
    private int runStart(ByteBuffer text, int k, int from) {
        int s = k;
        while (s > from && wide[text.get(s - 1) & 0xff]) {
            s--;
        }
        return s;
    }

    /**
     * {@return the first run from {@code at} (where a run may start) that is {@link #least()} long or holds a dash that
     * {@link #mayAnchor}, as {@link #nextRun} gives it, when one starts before the first byte at or after {@code until}
     * that ends a run; else the complement of the position after that byte, from which the windows go on}
     */
    private long runFrom(ByteBuffer text, int at, int until) {
        int n = text.limit();
        int start = at;
        for (int k = at; k < n; k++) {
            int c = text.get(k) & 0xff;
            if (!wide[c]) {
                if (k >= until) {
                    return ~(long) (k + 1);
                }
                start = k + 1;
            } else if (k + 1 - start >= least || (c == '-' && mayAnchor(text, k))) {
                return (long) start << 32 | extend(text, k + 1);
            }
        }
        return ~(long) n;
    }

    /** {@link #nextRun} a byte at a time from {@code at}, where a run of token bytes may start. */
    private long nextRunByBytes(ByteBuffer text, int at) {
        int n = text.limit();
        int start = at;
        for (int k = at; k < n; k++) {
            int c = text.get(k) & 0xff;
            if (!wide[c]) {
                start = k + 1;
            } else if (k + 1 - start >= least || (c == '-' && mayAnchor(text, k))) {
                return (long) start << 32 | extend(text, k + 1);
            }
        }
        return -1;
    }

    /** {@return {@code text} in little-endian byte order, as {@link #nextRun} reads it} @param text the text */
    static ByteBuffer littleEndian(ByteBuffer text) {
        return text.order() == ByteOrder.LITTLE_ENDIAN ? text : text.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** {@return the end of the run of token bytes that continues at {@code k}} */
    private int extend(ByteBuffer text, int k) {
        int n = text.limit();
        int e = k;
        while (e < n && wide[text.get(e) & 0xff]) {
            e++;
        }
        return e;
    }
}
