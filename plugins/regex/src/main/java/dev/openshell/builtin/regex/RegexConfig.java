package dev.openshell.builtin.regex;

import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.util.EnumSet;
import java.util.Set;
import java.util.StringJoiner;

/**
 * The parsed config of one {@code openshell/regex} stage. Keys (all optional; nothing else is accepted):
 * <ul>
 *   <li>{@code mode}: {@code "redact"} (default) replaces each match with {@code [REDACTED:<id>]};
 *       {@code "deny"} denies a request that holds any match;</li>
 *   <li>{@code patterns}: a non-empty list of {@link SecretKind#id()}s to look for, without repeats; default: all.</li>
 * </ul>
 *
 * @param mode what to do with matches
 * @param kinds the kinds looked for
 */
record RegexConfig(Mode mode, Set<SecretKind> kinds) {
    /** What the stage does with matches. */
    enum Mode {
        /** Replace each match with its placeholder and allow. */
        REDACT,
        /** Deny the request. */
        DENY
    }

    /** Config keys. */
    static final String MODE = "mode";
    static final String PATTERNS = "patterns";

    /** Thrown for an invalid config; the message is safe to show an operator (it never echoes values). */
    static final class Invalid extends Exception {
        private static final long serialVersionUID = 1L;

        Invalid(String message) {
            super("openshell/regex: " + message);
        }
    }

    /**
     * Parses and checks a config.
     *
     * @param config the config mapping from policy
     * @return the settings
     * @throws Invalid with an operator-facing message naming the key and the rule
     */
    static RegexConfig parse(JsonObject config) throws Invalid {
        for (String key : config.keySet()) {
            if (!key.equals(MODE) && !key.equals(PATTERNS)) {
                throw new Invalid("unknown config key '%s' (known keys: mode, patterns)".formatted(printable(key)));
            }
        }
        Mode mode = Mode.REDACT;
        JsonValue m = config.get(MODE);
        if (m != null) {
            if (!(m instanceof JsonString s) || !(s.getString().equals("redact") || s.getString().equals("deny"))) {
                throw new Invalid("'mode' must be \"redact\" or \"deny\"");
            }
            mode = s.getString().equals("deny") ? Mode.DENY : Mode.REDACT;
        }
        Set<SecretKind> kinds = EnumSet.allOf(SecretKind.class);
        JsonValue p = config.get(PATTERNS);
        if (p != null) {
            if (!(p instanceof JsonArray list) || list.isEmpty()) {
                throw new Invalid("'patterns' must be a non-empty list of pattern names (" + known() + ")");
            }
            kinds = EnumSet.noneOf(SecretKind.class);
            for (int i = 0; i < list.size(); i++) {
                SecretKind kind = list.get(i) instanceof JsonString s ? SecretKind.byId(s.getString()) : null;
                if (kind == null) {
                    throw new Invalid("'patterns' entry %d is not a known pattern name (%s)".formatted(i + 1, known()));
                }
                if (!kinds.add(kind)) {
                    throw new Invalid("'patterns' names '%s' twice".formatted(kind.id()));
                }
            }
        }
        return new RegexConfig(mode, kinds);
    }

    private static String known() {
        StringJoiner j = new StringJoiner(", ");
        for (SecretKind k : SecretKind.values()) {
            j.add(k.id());
        }
        return j.toString();
    }

    private static String printable(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length() && i < 64; i++) {
            char c = s.charAt(i);
            b.append(c < 0x20 || c == 0x7f ? '?' : c);
        }
        return s.length() > 64 ? b + "..." : b.toString();
    }
}
