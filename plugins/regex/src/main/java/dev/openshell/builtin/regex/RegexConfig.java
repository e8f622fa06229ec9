package dev.openshell.builtin.regex;

import jakarta.json.JsonArray;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The parsed config of one {@code openshell/regex} stage. Keys (all optional; nothing else is accepted):
 * <ul>
 *   <li>{@code mode}: {@code "redact"} (default) replaces each match with {@code [REDACTED:<id>]};
 *       {@code "deny"} denies a request that holds any match;</li>
 *   <li>{@code patterns}: a non-empty list, without repeats, of catalog entry ids ({@link Rule#id()}) and provider
 *       names ({@link Rule#provider()}: all of that provider's entries) to look for; default: every entry enabled by
 *       default (opt-in entries, such as the generic keyword ones, only when named);</li>
 *   <li>{@code custom_patterns}: up to {@value #MAX_CUSTOM} operator patterns, each an object with {@code id}
 *       ({@code [a-z0-9_]}, 2 to 64, not a catalog id or provider), {@code regex} (RE2 syntax, see
 *       {@link CustomPattern}), optional {@code keyword} (3 to 64 printable ASCII characters) and optional
 *       {@code entropy} (0 to 7 bits per character);</li>
 *   <li>{@code uninspectable} (response binding only): {@code "block"} (default) blocks the delivery of a response
 *       with a body the stage may not read (partial, {@code no-transform}, a content coding the supervisor does not
 *       decode); {@code "allow"} lets it through unread, with a finding.</li>
 * </ul>
 * A refusal names the key as a path ({@code custom_patterns[0].regex}, indexes from 0 as in policy key paths) and
 * stays within the 80 characters the policy reader shows of a built-in's reason.
 *
 * @param mode what to do with matches
 * @param selection what is looked for
 * @param allowUninspectable whether a response body the stage may not read is let through ({@code uninspectable:
 *     allow}) rather than blocked
 */
record RegexConfig(Mode mode, Selection selection, boolean allowUninspectable) {
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
    static final String CUSTOM = "custom_patterns";
    static final String UNINSPECTABLE = "uninspectable";
    /** The most operator patterns one stage may declare. */
    static final int MAX_CUSTOM = 32;
    private static final Pattern ID = Pattern.compile("[a-z0-9_]{2,64}");
    private static final Set<String> CUSTOM_KEYS = Set.of("id", "regex", "keyword", "entropy");

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
            if (!key.equals(MODE) && !key.equals(PATTERNS) && !key.equals(CUSTOM) && !key.equals(UNINSPECTABLE)) {
                throw new Invalid("unknown config key '%s' (known keys: mode, patterns, custom_patterns)"
                        .formatted(printable(key)));
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
        boolean allow = false;
        JsonValue u = config.get(UNINSPECTABLE);
        if (u != null) {
            if (!(u instanceof JsonString s) || !(s.getString().equals("block") || s.getString().equals("allow"))) {
                throw new Invalid("'uninspectable' must be \"block\" or \"allow\"");
            }
            allow = s.getString().equals("allow");
        }
        boolean[] enabled = patterns(config.get(PATTERNS));
        List<CustomPattern> custom = customPatterns(config.get(CUSTOM));
        return new RegexConfig(mode, new Selection(enabled, custom), allow);
    }

    private static boolean[] patterns(JsonValue p) throws Invalid {
        Catalog catalog = Catalog.get();
        if (p == null) {
            return Selection.defaults().enabled();
        }
        String expected = "'patterns' must be a non-empty list of catalog entry ids and provider names "
                + "(docs/builtin-regex.md lists them)";
        if (!(p instanceof JsonArray list) || list.isEmpty()) {
            throw new Invalid(expected);
        }
        boolean[] enabled = new boolean[catalog.rules().size()];
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < list.size(); i++) {
            String name = list.get(i) instanceof JsonString s ? s.getString() : null;
            Rule rule = name == null ? null : catalog.byId(name);
            List<Rule> provider = name == null ? null : catalog.byProvider(name);
            if (rule == null && provider == null) {
                throw new Invalid("'patterns' entry %d is not a catalog entry id or provider name "
                        .formatted(i + 1) + "(docs/builtin-regex.md lists them)");
            }
            if (!seen.add(name)) {
                throw new Invalid("'patterns' names '%s' twice".formatted(name));
            }
            for (Rule r : rule != null ? List.of(rule) : provider) {
                enabled[r.index()] = true;
            }
        }
        return enabled;
    }

    private static List<CustomPattern> customPatterns(JsonValue v) throws Invalid {
        if (v == null) {
            return List.of();
        }
        if (!(v instanceof JsonArray list) || list.isEmpty() || list.size() > MAX_CUSTOM) {
            throw new Invalid("custom_patterns must be a list of 1 to " + MAX_CUSTOM + " objects");
        }
        List<CustomPattern> out = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < list.size(); i++) {
            String at = "custom_patterns[" + i + "]";
            if (!(list.get(i) instanceof JsonObject o)) {
                throw new Invalid(at + " must be an object (id, regex, keyword, entropy)");
            }
            for (String k : o.keySet()) {
                if (!CUSTOM_KEYS.contains(k)) {
                    throw new Invalid(at + ": unknown key '%s'".formatted(printable(k)));
                }
            }
            String id = o.get("id") instanceof JsonString s ? s.getString() : null;
            if (id == null || !ID.matcher(id).matches()) {
                throw new Invalid(at + ".id must be 2 to 64 of a-z 0-9 _");
            }
            if (Catalog.get().byId(id) != null || Catalog.get().byProvider(id) != null || !ids.add(id)) {
                throw new Invalid(at + ".id '" + id + "' is already in use");
            }
            out.add(customPattern(o, id, at));
        }
        return List.copyOf(out);
    }

    private static CustomPattern customPattern(JsonObject o, String id, String at) throws Invalid {
        if (!(o.get("regex") instanceof JsonString regex)) {
            throw new Invalid(at + ".regex must be a string (RE2 syntax)");
        }
        com.google.re2j.Pattern pattern;
        try {
            pattern = CustomPattern.compile(regex.getString());
        } catch (CustomPattern.Invalid e) {
            throw new Invalid(at + e.getMessage());
        }
        String keyword = null;
        JsonValue k = o.get("keyword");
        if (k != null) {
            if (!(k instanceof JsonString s) || s.getString().length() < 3 || s.getString().length() > 64
                    || !s.getString().chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
                throw new Invalid(at + ".keyword must be 3 to 64 printable ASCII");
            }
            keyword = CustomPattern.normalizeKeyword(s.getString());
        }
        double entropy = 0;
        JsonValue e = o.get("entropy");
        if (e != null) {
            if (!(e instanceof JsonNumber num) || num.doubleValue() < 0 || num.doubleValue() > 7) {
                throw new Invalid(at + ".entropy must be 0 to 7 (bits per character)");
            }
            entropy = num.doubleValue();
        }
        return new CustomPattern(id, pattern, keyword, entropy);
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
