package dev.openshell.builtin.regex;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * What one stage looks for: the catalog entries its config enables and its operator patterns. A secret type is
 * numbered: catalog entries by their {@link Rule#index()}, then the operator patterns in config order.
 *
 * @param enabled by catalog index: whether the entry is looked for
 * @param custom the operator patterns, in config order
 * @param shortestKeywordValue the fewest characters a value of an enabled keyword entry has (derived)
 * @param gate where in a text a match of these entries can be (derived)
 */
record Selection(boolean[] enabled, List<CustomPattern> custom, int shortestKeywordValue, RunGate gate) {
    private static final Catalog CATALOG = Catalog.get();
    private static final byte[][] RULE_PLACEHOLDERS;

    static {
        List<Rule> rules = CATALOG.rules();
        RULE_PLACEHOLDERS = new byte[rules.size()][];
        for (Rule r : rules) {
            RULE_PLACEHOLDERS[r.index()] = r.placeholder().getBytes(StandardCharsets.US_ASCII);
        }
    }

    /**
     * @param enabled by catalog index: whether the entry is looked for
     * @param custom the operator patterns, in config order
     */
    Selection(boolean[] enabled, List<CustomPattern> custom) {
        this(enabled.clone(), List.copyOf(custom), shortestKeywordValue(enabled), RunGate.of(enabled));
    }

    /** {@return the fewest characters a value of an enabled keyword entry has; {@link Integer#MAX_VALUE} if none} */
    private static int shortestKeywordValue(boolean[] enabled) {
        int least = Integer.MAX_VALUE;
        for (Rule r : CATALOG.rules()) {
            if (enabled[r.index()] && r.kind() == Rule.Kind.KEYWORD) {
                for (Rule.Form f : r.forms()) {
                    least = Math.min(least, f.shape().minLength());
                }
            }
        }
        return least;
    }

    /** {@return the entries enabled by default, no operator patterns} */
    static Selection defaults() {
        boolean[] on = new boolean[CATALOG.rules().size()];
        for (Rule r : CATALOG.rules()) {
            on[r.index()] = r.enabledByDefault();
        }
        return new Selection(on, List.of());
    }

    /** {@return every catalog entry, opt-in ones included, no operator patterns} */
    static Selection everything() {
        boolean[] on = new boolean[CATALOG.rules().size()];
        java.util.Arrays.fill(on, true);
        return new Selection(on, List.of());
    }

    /** {@return exactly these entries} @param rules the entries */
    static Selection of(List<Rule> rules) {
        boolean[] on = new boolean[CATALOG.rules().size()];
        for (Rule r : rules) {
            on[r.index()] = true;
        }
        return new Selection(on, List.of());
    }

    /** {@return whether the entry at {@code index} is looked for} @param index a catalog index */
    boolean on(int index) {
        return enabled[index];
    }

    /** {@return how many secret types there are: catalog entries, then operator patterns} */
    int types() {
        return enabled.length + custom.size();
    }

    /** {@return the id of a secret type} @param type its number */
    String id(int type) {
        return type < enabled.length ? CATALOG.rules().get(type).id() : custom.get(type - enabled.length).id();
    }

    /** {@return the audit-safe label of a secret type} @param type its number */
    String label(int type) {
        return type < enabled.length ? CATALOG.rules().get(type).label()
                : "Custom pattern " + custom.get(type - enabled.length).id();
    }

    /** {@return {@code [REDACTED:<id>]} of a secret type, ASCII} @param type its number */
    byte[] placeholder(int type) {
        return type < enabled.length ? RULE_PLACEHOLDERS[type]
                : ("[REDACTED:" + id(type) + "]").getBytes(StandardCharsets.US_ASCII);
    }

    /** {@return whether the type's format carries a checksum} @param type its number */
    boolean checksummed(int type) {
        return type < enabled.length && CATALOG.rules().get(type).checksum() != null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Selection s && java.util.Arrays.equals(enabled, s.enabled) && custom.equals(s.custom);
    }

    @Override
    public int hashCode() {
        return java.util.Arrays.hashCode(enabled) * 31 + custom.hashCode();
    }

    @Override
    public String toString() {
        return "Selection[" + java.util.Arrays.toString(enabled) + ", " + custom + "]";
    }
}
