package dev.openshell.supervisor.proxy.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayDeque;
import java.util.HexFormat;
import java.util.Map;

/**
 * The paths of one JSON text's string values: the channels their text joins in ({@link EventText.Piece}), for the
 * strict reading ({@link EventText}) and the lenient one ({@link LenientJson}) alike.
 *
 * <p>A path is its steps, keys (folded, {@link EventText#foldKey}, and escaped, {@link #escape}) and array indices,
 * joined with {@code .}, as {@code choices.0.delta.content}, then U+0000 and {@code json}: one path, one spelling. A path of more than {@value #SPELLED} steps is named
 * instead by the SHA-256 digest of its steps, each step's digest made once from its parent's: a text nested {@code N}
 * levels deep with a string at every level costs work and memory in proportion to {@code N}, where spelling every
 * path out would cost {@code N * N} (a 64 KiB event of nested arrays would have spelled gigabytes). Equal paths, in
 * any event or message of one body, have equal channels; different paths have different channels but for a SHA-256
 * collision.
 *
 * <p>Not thread-safe: one reading of one text.
 */
final class JsonPaths {
    /** The most steps of a path spelled out in its channel. */
    static final int SPELLED = 32;

    /** One step of a path: a key or an array index, under its container's step ({@code null} at the top). */
    static final class Step {
        final Step parent;
        final int depth;
        /** The key or index; an earlier member of a repeated key is renamed ({@link #member}) before paths are read. */
        String name;
        /** For a member: the occurrences of its key before it in its object. */
        int before;
        /** The digest of the path to this step, once made ({@link #digest}). */
        private byte[] digest;

        Step(Step parent, String name) {
            this.parent = parent;
            this.depth = parent == null ? 1 : parent.depth + 1;
            this.name = name;
        }
    }

    private MessageDigest sha256;

    /**
     * {@return the step of a new member of an object} An earlier member of the same folded key is given a path of its
     * own (its key, U+0000, its occurrence's number from 0), as JSON readers take the last occurrence to be the member.
     *
     * @param members the object's members so far, by folded key
     * @param parent the object's step
     * @param folded the member's key, folded
     */
    static Step member(Map<String, Step> members, Step parent, String folded) {
        Step step = new Step(parent, escape(folded));
        Step earlier = members.put(folded, step);
        if (earlier != null) {
            step.before = earlier.before + 1;
            earlier.name = earlier.name + "\u0000" + earlier.before;
        }
        return step;
    }

    /**
     * {@return a key as a step's name}: a backslash, {@code .} and U+0000 escaped with a backslash, so that names joined
     * with {@code .} and the U+0000 of a renamed member ({@link #member}) spell one path only. Without it the key
     * {@code "a.b"} and the member {@code b} of the member {@code a} would share a channel, and text of the one would
     * come between the parts of a value split across events in the other.
     */
    static String escape(String key) {
        int i = 0;
        while (i < key.length() && key.charAt(i) != '.' && key.charAt(i) != '\\' && key.charAt(i) != 0) {
            i++;
        }
        if (i == key.length()) {
            return key;
        }
        StringBuilder out = new StringBuilder(key.length() + 8).append(key, 0, i);
        for (; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c == '.' || c == '\\') {
                out.append('\\').append(c);
            } else if (c == 0) {
                out.append("\\0");
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /** {@return the channel of a string value at {@code step}} @param step its step, {@code null} at the top */
    String channel(Step step) {
        if (step == null) {
            return "\u0000json";
        }
        if (step.depth > SPELLED) {
            return "\u0000sha256:" + HexFormat.of().formatHex(digest(step)) + "\u0000json";
        }
        String[] steps = new String[step.depth];
        for (Step s = step; s != null; s = s.parent) {
            steps[s.depth - 1] = s.name;
        }
        return String.join(".", steps) + "\u0000json";
    }

    /** {@return the digest of the path to {@code step}}: SHA-256 of its parent's digest (none at the top) and its name */
    private byte[] digest(Step step) {
        ArrayDeque<Step> undone = new ArrayDeque<>();
        for (Step s = step; s != null && s.digest == null; s = s.parent) {
            undone.push(s); // iterative: a path may be tens of thousands of steps deep
        }
        MessageDigest md = sha256();
        while (!undone.isEmpty()) {
            Step s = undone.pop();
            if (s.parent != null) {
                md.update(s.parent.digest);
            }
            s.digest = md.digest(s.name.getBytes(StandardCharsets.UTF_8));
        }
        return step.digest;
    }

    private MessageDigest sha256() {
        if (sha256 == null) {
            try {
                sha256 = MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("SHA-256 is a required algorithm of every Java platform", e);
            }
        }
        return sha256;
    }
}
