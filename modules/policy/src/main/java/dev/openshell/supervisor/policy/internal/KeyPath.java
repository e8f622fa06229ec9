package dev.openshell.supervisor.policy.internal;

import java.util.regex.Pattern;

/**
 * A config key path as shown in problems: keys joined with {@code .}, list indexes in brackets, and keys that are not
 * plain words in double quotes ({@code openshell.supervisor.network.static_hosts."api.test"}).
 */
public final class KeyPath {
    private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9_-]+");
    private static final KeyPath ROOT = new KeyPath("");
    private final String text;

    private KeyPath(String text) {
        this.text = text;
    }

    /** {@return the empty path (the whole file)} */
    public static KeyPath root() {
        return ROOT;
    }

    /**
     * {@return a path of plain keys} for example {@code KeyPath.of("openshell", "supervisor")}
     *
     * @param keys the keys
     */
    public static KeyPath of(String... keys) {
        KeyPath p = ROOT;
        for (String k : keys) {
            p = p.key(k);
        }
        return p;
    }

    /**
     * {@return this path extended by a mapping key}
     *
     * @param key the key, any text
     */
    public KeyPath key(String key) {
        String segment = PLAIN.matcher(key).matches() ? key : "\"" + Texts.printable(key).replace("\"", "\\\"") + "\"";
        return new KeyPath(text.isEmpty() ? segment : text + "." + segment);
    }

    /**
     * {@return this path extended by a list index}
     *
     * @param index the 0-based index
     */
    public KeyPath index(int index) {
        return new KeyPath(text + "[" + index + "]");
    }

    /** {@return whether this is the root} */
    public boolean isRoot() {
        return text.isEmpty();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeyPath other && text.equals(other.text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    /** {@return the path text} */
    @Override
    public String toString() {
        return text;
    }
}
