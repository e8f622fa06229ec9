package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * One replacement in a byte sequence: bytes {@code [start, end)} become {@code replacement}. Lists of edits are in
 * increasing order and never overlap.
 *
 * @param start the first byte replaced
 * @param end the end of the replaced range, exclusive; at least {@code start}
 * @param replacement the new bytes (ASCII when they come from a placeholder, in any layer's encoding); not copied
 */
record Edit(int start, int end, byte[] replacement) {
    Edit {
        if (start < 0 || end < start) {
            throw new IllegalArgumentException("edit [" + start + ", " + end + ")");
        }
    }

    /**
     * {@return {@code input} with {@code edits} applied}
     *
     * @param input the bytes from 0 to the limit; not modified
     * @param edits in increasing order, not overlapping, within the input
     */
    static byte[] apply(ByteBuffer input, List<Edit> edits) {
        int n = input.limit();
        long length = n;
        for (Edit e : edits) {
            length += e.replacement.length - (e.end - e.start);
        }
        byte[] out = new byte[Math.toIntExact(length)];
        int o = 0;
        int copied = 0;
        for (Edit e : edits) {
            input.get(copied, out, o, e.start - copied);
            o += e.start - copied;
            System.arraycopy(e.replacement, 0, out, o, e.replacement.length);
            o += e.replacement.length;
            copied = e.end;
        }
        input.get(copied, out, o, n - copied);
        return out;
    }
}
