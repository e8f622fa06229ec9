package dev.openshell.supervisor.proxy.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Finds a searched form of a secret split across two header fields of one response (issue 39, item 4): the end of
 * one field value and the start of another, as a client joining the two would read it ({@link SecretScrubber#scrubSplits}).
 */
final class FieldSplits {
    private FieldSplits() {
    }

    /**
     * {@return for each form that can appear in a header field (no NUL byte) and each byte b, the lengths k in
     * [1, length) whose prefix of k bytes ends with b; null for the other forms}
     *
     * @param forms the searched forms
     */
    static int[][][] ends(byte[][] forms) {
        int[][][] out = new int[forms.length][][];
        for (int f = 0; f < forms.length; f++) {
            byte[] form = forms[f];
            boolean text = form.length >= 2;
            for (byte x : form) {
                text &= x != 0;
            }
            if (!text) {
                continue;
            }
            List<List<Integer>> ends = new ArrayList<>();
            for (int b = 0; b < 256; b++) {
                ends.add(null);
            }
            for (int k = form.length - 1; k >= 1; k--) {
                int b = form[k - 1] & 0xff;
                if (ends.get(b) == null) {
                    ends.set(b, new ArrayList<>());
                }
                ends.get(b).add(k);
            }
            out[f] = new int[256][];
            for (int b = 0; b < 256; b++) {
                if (ends.get(b) != null) {
                    out[f][b] = ends.get(b).stream().mapToInt(Integer::intValue).toArray();
                }
            }
        }
        return out;
    }

    /**
     * Replaces one split form: the part at the end of one value is removed, the part at the start of another becomes
     * the replacement.
     *
     * @param values the field values, replaced in place
     * @param forms the searched forms
     * @param replacements each form's replacement
     * @param ends {@link #ends} of the forms
     * @return the form replaced, or -1 when no form is split across two values
     */
    static int replaceOne(byte[][] values, byte[][] forms, byte[][] replacements, int[][][] ends) {
        for (int f = 0; f < forms.length; f++) {
            if (ends[f] == null) {
                continue;
            }
            byte[] form = forms[f];
            for (int i = 0; i < values.length; i++) {
                byte[] v = values[i];
                int[] ks = v.length == 0 ? null : ends[f][v[v.length - 1] & 0xff];
                if (ks == null) {
                    continue;
                }
                for (int k : ks) {
                    if (k > v.length || !Arrays.equals(v, v.length - k, v.length, form, 0, k)) {
                        continue;
                    }
                    int j = startingWith(values, i, form, k);
                    if (j >= 0) {
                        byte[] w = values[j];
                        int rest = form.length - k;
                        values[i] = Arrays.copyOf(v, v.length - k);
                        byte[] joined = Arrays.copyOf(replacements[f], replacements[f].length + w.length - rest);
                        System.arraycopy(w, rest, joined, replacements[f].length, w.length - rest);
                        values[j] = joined;
                        return f;
                    }
                }
            }
        }
        return -1;
    }

    /** {@return a value other than {@code i} that starts with {@code form[k, length)}, or -1} */
    private static int startingWith(byte[][] values, int i, byte[] form, int k) {
        int rest = form.length - k;
        for (int j = 0; j < values.length; j++) {
            byte[] w = values[j];
            if (j != i && w.length >= rest && Arrays.equals(w, 0, rest, form, k, form.length)) {
                return j;
            }
        }
        return -1;
    }
}
