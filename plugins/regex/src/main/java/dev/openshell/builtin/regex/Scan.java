package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The result of a {@link SecretScanner} scan.
 *
 * @param selection what was looked for
 * @param kinds the types found, as triples (type in {@link Selection} numbering, matches, matches of a
 *     checksummed format that failed its checksum), in increasing type order; a body holds few types, so the
 *     result is as small as they are, not as large as the catalog
 * @param kindInts how many ints of {@code kinds} are used (three per type found)
 * @param spans the matches as triples (start, end exclusive, type), in increasing order and never overlapping;
 *     only filled when the scan was asked to redact
 * @param spanInts how many ints of {@code spans} are used (three per match)
 */
record Scan(Selection selection, int[] kinds, int kindInts, int[] spans, int spanInts) {
    private static final int[] NO_COUNTS = new int[0];

    /** {@return the total number of matches} */
    int total() {
        int total = 0;
        for (int k = 1; k < kindInts; k += 3) {
            total += kinds[k];
        }
        return total;
    }

    /** {@return whether nothing matched} */
    boolean isEmpty() {
        return kindInts == 0;
    }

    /** {@return how many types were found} */
    int kindCount() {
        return kindInts / 3;
    }

    /** {@return the type of the {@code k}-th type found, in type order} @param k 0 to {@link #kindCount()} - 1 */
    int type(int k) {
        return kinds[3 * k];
    }

    /** {@return the matches of the {@code k}-th type found} @param k 0 to {@link #kindCount()} - 1 */
    int count(int k) {
        return kinds[3 * k + 1];
    }

    /**
     * {@return how many matches of the {@code k}-th type found failed its format's checksum}
     *
     * @param k 0 to {@link #kindCount()} - 1
     */
    int unverified(int k) {
        return kinds[3 * k + 2];
    }

    /** {@return matches per type, indexed by type ({@link Selection} numbering); empty when nothing matched} */
    int[] counts() {
        return perType(1);
    }

    /** {@return per type, the matches that failed a checksum; empty when nothing matched} */
    int[] unverified() {
        return perType(2);
    }

    private int[] perType(int field) {
        if (kindInts == 0) {
            return NO_COUNTS;
        }
        int[] out = new int[selection.types()];
        for (int k = 0; k < kindInts; k += 3) {
            out[kinds[k]] = kinds[k + field];
        }
        return out;
    }

    /** {@return the counts of the types found, in type order: id to count} */
    Map<String, Integer> byId() {
        Map<String, Integer> m = new java.util.LinkedHashMap<>();
        for (int k = 0; k < kindInts; k += 3) {
            m.put(selection.id(kinds[k]), kinds[k + 1]);
        }
        return m;
    }

    /** {@return the redactions as edits of the scanned text: each match replaced by its placeholder} */
    List<Edit> edits() {
        List<Edit> edits = new ArrayList<>(spanInts / 3);
        for (int s = 0; s < spanInts; s += 3) {
            edits.add(new Edit(spans[s], spans[s + 1], selection.placeholder(spans[s + 2])));
        }
        return edits;
    }

    /** {@return the scanned text with each match replaced, or {@code null} if none matched} @param text it */
    byte[] redacted(ByteBuffer text) {
        return spanInts == 0 ? null : Edit.apply(text, edits());
    }
}
