package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Where in a text an entry of the catalog could be: an index of every prefix and keyword (the literals).
 *
 * <h2>Prefixes: anchored on their rarest character</h2>
 * Each prefix is anchored on its character least common in ordinary text (punctuation, then digits, then capitals,
 * then lowercase letters, each from the rarest): {@code _} in {@code ghp_}, {@code K} in {@code AKIA}, {@code -} in
 * {@code glpat-}, {@code B} in {@code Bearer }. The scanner reads each byte once and tests one flag of a 256-entry
 * table ({@link #flags}); only on an anchor byte does it test whether the byte before it (or, for an anchor that is
 * the prefix's first character, after it) is one some prefix has there (one bit of an 8 KiB table), then whether the
 * byte one further is one of those prefixes have there ({@link #admits}: {@code v} before {@code s.} for
 * {@code hvs.}, so the end of a plural word before a full stop goes no further), and only then look up those prefixes
 * ({@link #anchored}) and compare them whole. Most bytes of prose are not anchors, and most
 * anchors do not sit next to the right byte, so the work per byte is a table look-up or two however many entries
 * there are: more prefixes only add anchors, and a list to compare where one matches.
 *
 * <h2>Keywords: found from the assignment</h2>
 * A keyword entry's value follows an assignment operator, so keywords are looked for only where an operator byte
 * ({@code = : > ,}) starts: in the key name just before it, through the keywords' first three characters, ASCII case
 * folded ({@link #keywordCandidates}).
 *
 * <p>Immutable, thread-safe.
 */
final class Prefilter {
    /** Every literal has at least this many characters. */
    static final int GRAM = 3;
    /** {@link #flags} bit: some prefix is anchored on this byte, after its first character. */
    static final int ANCHOR = 1;
    /** {@link #flags} bit: some prefix is anchored on this byte as its first character. */
    static final int HEAD = 4;
    /** {@link #flags} bit: this byte starts an assignment operator. */
    static final int OPERATOR = 2;
    private static final int FILTER_BITS = 16;
    private static final byte[] FOLD = new byte[256];
    /** Lowercase letters from the most to the least common in English text. */
    private static final String LETTERS_BY_FREQUENCY = "etaoinshrdlcumwfgypbvkjxqz";

    static {
        for (int c = 0; c < 256; c++) {
            FOLD[c] = (byte) (c >= 'A' && c <= 'Z' ? c + 32 : c);
        }
    }

    /**
     * One literal of one entry's form.
     *
     * @param bytes the literal as written (ASCII; lowercase for a keyword)
     * @param ignoreCase whether it matches ignoring ASCII case (keywords) or exactly (prefixes)
     * @param rule the entry
     * @param form the form's index in the entry
     * @param anchor for a prefix: the index of the character it is anchored on
     */
    record Literal(byte[] bytes, boolean ignoreCase, Rule rule, int form, int anchor) {
        /** {@return whether the literal occurs in {@code text} at {@code at}} */
        boolean at(ByteBuffer text, int at) {
            if (at < 0 || at + bytes.length > text.limit()) {
                return false;
            }
            for (int k = 0; k < bytes.length; k++) {
                byte b = text.get(at + k);
                if (b != bytes[k] && !(ignoreCase && FOLD[b & 0xff] == bytes[k])) {
                    return false;
                }
            }
            return true;
        }
    }

    private final byte[] flags = new byte[256];
    /** By anchor byte * 256 + the byte next to it (before it, or after a head anchor): the prefixes anchored there. */
    private final Literal[][] anchored = new Literal[1 << 17][];
    /** The same keys as a bit set, small enough to stay in the first-level cache. */
    private final long[] neighbours = new long[(1 << 17) / 64];
    /**
     * By the same keys: the bytes the prefixes anchored there have one further from the anchor (two before it, or two
     * after a head anchor), as a 256-bit set; {@code null} where one of them has none (its anchor is its second
     * character).
     */
    private final long[][] farther = new long[1 << 17][];
    private final long[] filter = new long[(1 << FILTER_BITS) / 64];
    private final int[] keys;
    private final Literal[][] values;
    private final int mask;

    Prefilter(List<Rule> rules) {
        Map<Integer, List<Literal>> byGram = new HashMap<>();
        Map<Integer, List<Literal>> byAnchor = new HashMap<>();
        for (Rule r : rules) {
            for (int f = 0; f < r.forms().size(); f++) {
                boolean ignoreCase = r.kind() == Rule.Kind.KEYWORD;
                for (String l : r.forms().get(f).literals()) {
                    add(byGram, byAnchor, new Literal(ascii(ignoreCase ? l.toLowerCase(Locale.ROOT) : l), ignoreCase, r,
                            f, ignoreCase ? 0 : anchor(l)));
                }
            }
            if (r.kind() == Rule.Kind.PEM) {
                add(byGram, byAnchor, new Literal(ascii(SecretScanner.PEM_BEGIN_LITERAL), false, r, 0,
                        anchor(SecretScanner.PEM_BEGIN_LITERAL)));
            }
        }
        for (Map.Entry<Integer, List<Literal>> e : byAnchor.entrySet()) {
            Literal[] list = e.getValue().toArray(Literal[]::new);
            Arrays.sort(list, (a, b) -> Integer.compare(a.rule().index(), b.rule().index()));
            int key = e.getKey();
            anchored[key] = list;
            farther[key] = farther(list, (key >>> 16) == 1);
            neighbours[key >>> 6] |= 1L << key;
            flags[key >>> 8 & 0xff] |= (byte) ((key >>> 16) == 1 ? HEAD : ANCHOR);
        }
        for (char c : Assignment.OPERATOR_STARTS.toCharArray()) {
            flags[c] |= OPERATOR;
        }
        int size = Integer.highestOneBit(Math.max(16, byGram.size() * 4));
        keys = new int[size];
        values = new Literal[size][];
        mask = size - 1;
        for (Map.Entry<Integer, List<Literal>> e : byGram.entrySet()) {
            int gram = e.getKey();
            if (e.getValue().stream().anyMatch(Literal::ignoreCase)) {
                int bit = hash(gram);
                filter[bit >>> 6] |= 1L << bit;
            }
            Literal[] list = e.getValue().toArray(Literal[]::new);
            Arrays.sort(list, (a, b) -> Integer.compare(a.rule().index(), b.rule().index()));
            int slot = gram & mask;
            while (keys[slot] != 0) {
                slot = (slot + 1) & mask;
            }
            keys[slot] = gram | 1 << 24;
            values[slot] = list;
        }
    }

    /** {@return the set of bytes the literals have one further from their anchor, or null if one has none} */
    private static long[] farther(Literal[] list, boolean head) {
        long[] set = new long[4];
        for (Literal l : list) {
            int at = head ? 2 : l.anchor() - 2;
            if (at < 0) {
                return null;
            }
            int b = l.bytes()[at] & 0xff;
            set[b >>> 6] |= 1L << b;
        }
        return set;
    }

    private static void add(Map<Integer, List<Literal>> byGram, Map<Integer, List<Literal>> byAnchor, Literal l) {
        byGram.computeIfAbsent(gram(l.bytes(), 0), g -> new ArrayList<>()).add(l);
        if (!l.ignoreCase()) {
            int a = l.anchor();
            int key = a == 0 ? 1 << 16 | (l.bytes()[0] & 0xff) << 8 | (l.bytes()[1] & 0xff)
                    : (l.bytes()[a] & 0xff) << 8 | (l.bytes()[a - 1] & 0xff);
            byAnchor.computeIfAbsent(key, k -> new ArrayList<>()).add(l);
        }
    }

    /** {@return the index of the literal's character least common in ordinary text (the first of equals)} */
    static int anchor(String literal) {
        int best = 0;
        for (int k = 1; k < literal.length(); k++) {
            if (commonness(literal.charAt(k)) < commonness(literal.charAt(best))) {
                best = k;
            }
        }
        return best;
    }

    /** {@return a rank of how common a character is in ordinary text: lower is rarer} */
    private static int commonness(char c) {
        if (c == ' ') {
            return 1000;
        }
        if (c >= '0' && c <= '9') {
            return 20;
        }
        if (c >= 'A' && c <= 'Z') {
            return 55 - LETTERS_BY_FREQUENCY.indexOf(c + 32);
        }
        if (c >= 'a' && c <= 'z') {
            return 85 - LETTERS_BY_FREQUENCY.indexOf(c);
        }
        return 10;
    }

    private static int gram(byte[] b, int at) {
        return (FOLD[b[at] & 0xff] & 0xff) << 16 | (FOLD[b[at + 1] & 0xff] & 0xff) << 8 | FOLD[b[at + 2] & 0xff] & 0xff;
    }

    /** {@return the filter bit of a folded 24-bit trigram} */
    static int hash(int gram) {
        return (gram * 0x9E3779B1) >>> (32 - FILTER_BITS);
    }

    /** {@return the case-folded value of a byte (0 to 255)} @param b a byte */
    static int fold(byte b) {
        return FOLD[b & 0xff] & 0xff;
    }

    /** {@return the {@link #ANCHOR} and {@link #OPERATOR} bits of a byte} @param c a byte value, 0 to 255 */
    int flags(int c) {
        return flags[c];
    }

    /**
     * {@return the prefixes anchored on byte {@code c} next to byte {@code neighbour} (the byte before it; after it
     * when {@code head}), in catalog order of their entries; or {@code null}}
     *
     * @param head whether the anchor is the prefix's first character
     * @param c the anchor byte (0 to 255)
     * @param neighbour the byte before it, or after it for a head anchor (0 to 255)
     */
    Literal[] anchored(boolean head, int c, int neighbour) {
        int key = (head ? 1 << 16 : 0) | c << 8 | neighbour;
        return (neighbours[key >>> 6] >>> key & 1) == 0 ? null : anchored[key];
    }

    /**
     * {@return whether the scanner must look at the byte {@code c}: some prefix is anchored on it next to
     * {@code previous} (or, as its first character, before {@code next}), or it starts an operator} Computed without
     * branches; where it is false, {@link #anchored} is null for both anchor kinds and the byte starts no operator.
     *
     * @param c the byte (0 to 255)
     * @param previous the byte before it (0 to 255)
     * @param next the byte after it (0 to 255; any value where the text has none)
     */
    boolean mayStop(int c, int previous, int next) {
        int anchor = c << 8 | previous;
        int head = 1 << 16 | c << 8 | next;
        return ((neighbours[anchor >>> 6] >>> anchor | neighbours[head >>> 6] >>> head) & 1 | flags[c] & OPERATOR)
                != 0;
    }

    /**
     * {@return whether a prefix of {@link #anchored} may have the byte {@code far} one further from its anchor (two
     * before it, or two after a head anchor)} A cheap test before the prefixes are compared whole.
     *
     * @param head whether the anchor is the prefix's first character
     * @param c the anchor byte (0 to 255)
     * @param neighbour the byte next to it, as for {@link #anchored}
     * @param far the byte one further (0 to 255), or -1 where the text has none
     */
    boolean admits(boolean head, int c, int neighbour, int far) {
        long[] set = farther[(head ? 1 << 16 : 0) | c << 8 | neighbour];
        return set == null || (far >= 0 && (set[far >>> 6] >>> far & 1) != 0);
    }

    /** {@return whether some keyword may start with the folded trigram {@code gram}} @param gram a folded trigram */
    boolean mayStartKeyword(int gram) {
        int bit = hash(gram);
        return (filter[bit >>> 6] >>> bit & 1) != 0;
    }

    /**
     * {@return the literals (prefixes and keywords) whose first three characters, folded, are {@code gram}, in catalog
     * order of their entries; or {@code null}}
     *
     * @param gram a folded trigram
     */
    Literal[] candidates(int gram) {
        int key = gram | 1 << 24;
        int slot = gram & mask;
        while (keys[slot] != 0) {
            if (keys[slot] == key) {
                return values[slot];
            }
            slot = (slot + 1) & mask;
        }
        return null;
    }

    /** {@return the folded trigram at {@code at}, or -1 if fewer than three bytes remain} */
    static int gramAt(ByteBuffer text, int at) {
        if (at + GRAM > text.limit()) {
            return -1;
        }
        return fold(text.get(at)) << 16 | fold(text.get(at + 1)) << 8 | fold(text.get(at + 2));
    }

    /** {@return whether {@code literal} occurs exactly at {@code at}} */
    static boolean literalAt(ByteBuffer text, int at, String literal) {
        if (at + literal.length() > text.limit()) {
            return false;
        }
        for (int k = 0; k < literal.length(); k++) {
            if (text.get(at + k) != literal.charAt(k)) {
                return false;
            }
        }
        return true;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    }
}
