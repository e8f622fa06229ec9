package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * Where in a text a match of a {@link Selection} can be: around a long run of token characters, or a run that holds a
 * {@code -}. Every character a match of an enabled entry can hold (its prefix's characters other than space, every
 * character of its lead's and shape's atoms, a keyword value's) is a token character. A match then holds a run of at
 * least {@link #least()} of them, except a match of an entry whose prefix is anchored on {@code -} (the scanner tries
 * it from that byte) and that guarantees fewer ({@code -----BEGIN}, {@code glcbt-} and five more, {@code xoxb-} and ten
 * more); and the position the scanner tries a match from (a prefix's anchor byte, an operator before a value) lies at
 * most {@link #before()} bytes before that run's start (the operator before a value, {@code Bearer } before its
 * token) and at most {@link #after()} bytes after its end.
 *
 * <p>So the scanner first finds such runs ({@link #nextRun}: 8 bytes at a time, with a few arithmetic operations and
 * one well-predicted branch per word) and reads the text its exact way only around them. Prose, code and chat are
 * made of words shorter than {@value #MIN_RUN} characters: most of their bytes are never looked at twice. The result
 * is the same as reading every byte the exact way, because every position from which a match could be recorded lies
 * in a window that is read, and windows are read in text order.
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

    static {
        for (char c : (Assignment.OPERATOR_STARTS + "\"'` \t\r\n=").toCharArray()) {
            TO_VALUE[c] = true;
        }
    }

    private RunGate(List<Rule> rules, boolean[] enabled) {
        boolean[] token = new boolean[256];
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
     * {@return the next run at or after {@code from} that is {@link #least()} long or holds a {@code -}, as its start
     * times 2^32 plus its end (exclusive); or -1 when there is none} Runs are counted from {@code from}: the byte
     * before it is not looked at.
     *
     * @param text the text, from 0 to its limit, in little-endian byte order ({@link #littleEndian})
     * @param from where to start
     */
    long nextRun(ByteBuffer text, int from) {
        if (least <= Long.BYTES) {
            return nextRunByBytes(text, from);
        }
        int n = text.limit();
        int need = least;
        long e0 = exclude[0];
        long e1 = exclude[1];
        long e2 = exclude[2];
        long e3 = exclude[3];
        long e4 = exclude[4];
        int run = 0;
        int k = from;
        for (; k + Long.BYTES <= n; k += Long.BYTES) {
            long w = text.getLong(k);
            long x = w & LOWS;
            long t = (x + ABOVE_SPACE) & ~w & ((x ^ e0) + LOWS) & ((x ^ e1) + LOWS) & ((x ^ e2) + LOWS)
                    & ((x ^ e3) + LOWS) & ((x ^ e4) + LOWS) & HIGHS;
            long dash = ~((x ^ DASHES) + LOWS) & ~w & HIGHS;
            if ((t ^ HIGHS | dash) == 0) {
                run += Long.BYTES;
                continue;
            }
            int head = Long.numberOfTrailingZeros(~t & HIGHS) >>> 3;
            if (run + head >= need && (dash == 0 || Long.numberOfTrailingZeros(dash) >>> 3 > head)) {
                return (long) (k - run) << 32 | extend(text, k + head);
            }
            if (dash != 0) {
                return nextRunByBytes(text, k - run); // the run that holds it starts at k - run or in this word
            }
            run = Long.numberOfLeadingZeros(~t & HIGHS) >>> 3;
        }
        return nextRunByBytes(text, k - run);
    }

    /** {@link #nextRun} a byte at a time from {@code at}, where a run of token bytes may start. */
    private long nextRunByBytes(ByteBuffer text, int at) {
        int n = text.limit();
        int start = at;
        for (int k = at; k < n; k++) {
            int c = text.get(k) & 0xff;
            if (!wide[c]) {
                start = k + 1;
            } else if (c == '-' || k + 1 - start >= least) {
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
