package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;

/**
 * How many elements of each name are open in an HTML text ({@link HtmlTree}), names keyed by a 64-bit hash of their
 * bytes (ASCII letters in lower case), so that an end tag is looked up without making a string of its name. Open
 * addressing in a fixed table; at most {@link #NAMES} distinct names are counted, the rest never (their end tags then
 * close nothing). Two names of one hash count as one: the reading it drives joins or separates text at such an end
 * tag as for the other name, never reading past the text.
 */
final class OpenElements {
    /** At most this many distinct element names are counted. */
    static final int NAMES = 256;
    private static final int SLOTS = 512;
    private final long[] keys = new long[SLOTS];
    private final int[] counts = new int[SLOTS];
    private int names;

    /** {@return the key of the name from {@code from} to {@code to}: FNV-1a over its bytes, ASCII in lower case} */
    static long key(ByteBuffer b, int from, int to) {
        long h = 0xcbf2_9ce4_8422_2325L;
        for (int k = from; k < to; k++) {
            int c = b.get(k) & 0xff;
            h = (h ^ (c >= 'A' && c <= 'Z' ? c | 0x20 : c)) * 0x100_0000_01b3L;
        }
        return h == 0 ? 1 : h;
    }

    /** An element of {@code key} was opened. */
    void opened(long key) {
        int s = slot(key);
        if (keys[s] == 0) {
            if (names >= NAMES) {
                return;
            }
            keys[s] = key;
            names++;
        }
        counts[s]++;
    }

    /** {@return whether an element of {@code key} was open; one of them is closed} */
    boolean close(long key) {
        int s = slot(key);
        if (keys[s] == 0 || counts[s] == 0) {
            return false;
        }
        counts[s]--;
        return true;
    }

    /** Every element of {@code key} is closed. */
    void closeAll(long key) {
        int s = slot(key);
        if (keys[s] != 0) {
            counts[s] = 0;
        }
    }

    /** {@return the slot holding {@code key}, or the empty one where it would go} (never full: names < slots) */
    private int slot(long key) {
        int s = (int) (key ^ (key >>> 32)) & (SLOTS - 1);
        while (keys[s] != 0 && keys[s] != key) {
            s = (s + 1) & (SLOTS - 1);
        }
        return s;
    }
}
