package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Where in a text any entry of the catalog could start: an index of every prefix and keyword (the literals) by
 * their first three characters, ASCII case folded.
 *
 * <p>The scanner keeps the last three bytes of the text, case folded, as one 24-bit number while it walks the text,
 * and tests one bit of a 65,536-bit filter (8 KiB, in the first-level cache) hashed from it. Only where the bit is
 * set does it look the three bytes up ({@link #candidates}) and compare whole literals. The work per byte is the same
 * for 7 entries as for 300: more literals only set more bits, and a set bit that no literal explains costs one
 * table probe.
 *
 * <p>Immutable, thread-safe.
 */
final class Prefilter {
    /** Every literal has at least this many characters: the filter looks at this many. */
    static final int GRAM = 3;
    private static final int FILTER_BITS = 16;
    private static final byte[] FOLD = new byte[256];

    static {
        for (int c = 0; c < 256; c++) {
            FOLD[c] = (byte) (c >= 'A' && c <= 'Z' ? c + 32 : c);
        }
    }

    /**
     * One literal of one entry's form.
     *
     * @param bytes the literal as written (ASCII)
     * @param ignoreCase whether it matches ignoring ASCII case (keywords) or exactly (prefixes)
     * @param rule the entry
     * @param form the form's index in the entry
     */
    record Literal(byte[] bytes, boolean ignoreCase, Rule rule, int form) {
        /** {@return whether the literal occurs in {@code text} at {@code at}} */
        boolean at(ByteBuffer text, int at) {
            if (at + bytes.length > text.limit()) {
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

    private final long[] filter = new long[(1 << FILTER_BITS) / 64];
    private final int[] keys;
    private final Literal[][] values;
    private final int mask;

    Prefilter(List<Rule> rules) {
        Map<Integer, List<Literal>> byGram = new HashMap<>();
        for (Rule r : rules) {
            for (int f = 0; f < r.forms().size(); f++) {
                boolean ignoreCase = r.kind() == Rule.Kind.KEYWORD;
                for (String l : r.forms().get(f).literals()) {
                    addLiteral(byGram, new Literal(ascii(ignoreCase ? l.toLowerCase(Locale.ROOT) : l), ignoreCase, r,
                            f));
                }
            }
            if (r.kind() == Rule.Kind.PEM) {
                addLiteral(byGram, new Literal(ascii(SecretScanner.PEM_BEGIN_LITERAL), false, r, 0));
            }
        }
        int size = Integer.highestOneBit(Math.max(16, byGram.size() * 4));
        keys = new int[size];
        values = new Literal[size][];
        mask = size - 1;
        for (Map.Entry<Integer, List<Literal>> e : byGram.entrySet()) {
            int gram = e.getKey();
            int bit = hash(gram);
            filter[bit >>> 6] |= 1L << bit;
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

    private static void addLiteral(Map<Integer, List<Literal>> byGram, Literal l) {
        byGram.computeIfAbsent(gram(l.bytes(), 0), g -> new ArrayList<>()).add(l);
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

    /** {@return whether the filter bit of {@code gram} is set} @param gram a folded trigram */
    boolean mayStart(int gram) {
        int bit = hash(gram);
        return (filter[bit >>> 6] >>> bit & 1) != 0;
    }

    /**
     * {@return the literals whose first three characters, folded, are {@code gram}, in catalog order of their
     * entries; or {@code null}}
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
