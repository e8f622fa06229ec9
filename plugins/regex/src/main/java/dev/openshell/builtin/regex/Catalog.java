package dev.openshell.builtin.regex;

import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The catalog of secret formats {@code openshell/regex} knows: the resource {@code catalog.json} beside this class,
 * read once when the class loads, checked, and turned into {@link Rule}s and one {@link Prefilter}. The catalog is the
 * single home of every format; {@code docs/builtin-regex.md} lists it ({@link CatalogDoc}) and a test keeps the two
 * equal.
 *
 * <p>Each entry of the resource's {@code rules} array is an object with {@code id}, {@code label}, {@code provider},
 * {@code source} (the provider's documentation), {@code not} (what it deliberately does not match) and either
 * {@code "pem": true}, or {@code prefixes} or {@code keywords} with a {@code shape} ({@link Shape}) and optionally a
 * {@code lead}, or {@code forms} (a list of such objects, for an entry written in several ways); optional:
 * {@code edge}, {@code entropy}, {@code checksum} ({@code "crc32_base62"}), {@code default} ({@code false}: only when
 * {@code patterns} names it), {@code bare_key} (a keyword entry whose keyword alone names the credential). A
 * broken catalog is a build error: loading throws {@link IllegalStateException} naming
 * the entry.
 *
 * <p>Immutable, thread-safe.
 */
final class Catalog {
    private static final Pattern NAME = Pattern.compile("[a-z0-9_]{2,64}");
    private static final Set<String> KEYS = Set.of("id", "label", "provider", "source", "not", "pem", "prefixes",
            "keywords", "shape", "forms", "edge", "entropy", "checksum", "default", "lead", "bare_key");
    /** The share of the largest possible entropy a keyword entry's value must reach when it states no floor. */
    static final double DEFAULT_ENTROPY_SHARE = 0.6;

    private static final Catalog INSTANCE = load("catalog.json");

    private final List<Rule> rules;
    private final Map<String, Rule> byId;
    private final Map<String, List<Rule>> byProvider;
    private final Prefilter prefilter;

    private Catalog(List<Rule> rules) {
        this.rules = List.copyOf(rules);
        Map<String, Rule> ids = new HashMap<>();
        Map<String, List<Rule>> providers = new LinkedHashMap<>();
        for (Rule r : rules) {
            if (ids.put(r.id(), r) != null) {
                throw new IllegalStateException("catalog: id '" + r.id() + "' appears twice");
            }
            providers.computeIfAbsent(r.provider(), p -> new ArrayList<>()).add(r);
        }
        for (String p : providers.keySet()) {
            Rule same = ids.get(p);
            if (same != null && !(providers.get(p).size() == 1 && same.provider().equals(p))) {
                throw new IllegalStateException("catalog: provider '" + p + "' is also another entry's id");
            }
        }
        providers.replaceAll((p, l) -> List.copyOf(l));
        this.byId = Map.copyOf(ids);
        this.byProvider = Collections.unmodifiableMap(providers);
        this.prefilter = new Prefilter(this.rules);
    }

    /** {@return the catalog shipped with the built-in} */
    static Catalog get() {
        return INSTANCE;
    }

    /** {@return every entry, in catalog order (the order of precedence)} */
    List<Rule> rules() {
        return rules;
    }

    /** {@return the entry with this id, or {@code null}} @param id a candidate id */
    Rule byId(String id) {
        return byId.get(id);
    }

    /** {@return the entries of a provider in catalog order, or {@code null}} @param provider a candidate provider */
    List<Rule> byProvider(String provider) {
        return byProvider.get(provider);
    }

    /** {@return the providers, in the order of their first entry} */
    Set<String> providers() {
        return byProvider.keySet();
    }

    /** {@return the literal index over every entry's prefixes and keywords} */
    Prefilter prefilter() {
        return prefilter;
    }

    static Catalog load(String resource) {
        try (InputStream in = Catalog.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("catalog resource " + resource + " is missing");
            }
            JsonArray array;
            try (JsonReader reader = Json.createReader(in)) {
                array = reader.readObject().getJsonArray("rules");
            }
            List<Rule> rules = new ArrayList<>(array.size());
            for (int i = 0; i < array.size(); i++) {
                JsonObject o = array.getJsonObject(i);
                try {
                    rules.add(rule(i, o));
                } catch (RuntimeException | Shape.Invalid e) {
                    throw new IllegalStateException("catalog entry " + (i + 1) + " (" + o.getString("id", "?")
                            + "): " + e.getMessage(), e);
                }
            }
            return new Catalog(rules);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Rule rule(int index, JsonObject o) throws Shape.Invalid {
        for (String k : o.keySet()) {
            if (!KEYS.contains(k)) {
                throw new IllegalArgumentException("unknown key '" + k + "'");
            }
        }
        String id = name(o, "id");
        String provider = name(o, "provider");
        String label = o.getString("label");
        String source = o.getString("source");
        String not = o.getString("not");
        if (label.isBlank() || source.isBlank() || not.isBlank()) {
            throw new IllegalArgumentException("label, source and not must say something");
        }
        boolean byDefault = o.getBoolean("default", true);
        Rule.Checksum checksum = o.containsKey("checksum")
                ? Rule.Checksum.valueOf(o.getString("checksum").toUpperCase(Locale.ROOT)) : null;
        if (o.getBoolean("pem", false)) {
            return new Rule(index, id, label, provider, Rule.Kind.PEM, List.of(), 0, null, byDefault, false, source,
                    not);
        }
        boolean keyword = o.containsKey("keywords") || (o.containsKey("forms")
                && o.getJsonArray("forms").getJsonObject(0).containsKey("keywords"));
        List<Rule.Form> forms = new ArrayList<>();
        if (o.containsKey("forms")) {
            for (JsonValue f : o.getJsonArray("forms")) {
                forms.add(form(f.asJsonObject(), keyword ? "keywords" : "prefixes", keyword, o.getString("edge", "")));
            }
        } else {
            forms.add(form(o, keyword ? "keywords" : "prefixes", keyword, o.getString("edge", "")));
        }
        double entropy = o.containsKey("entropy") ? o.getJsonNumber("entropy").doubleValue()
                : keyword ? defaultEntropy(forms.getFirst().shape()) : 0;
        if (forms.stream().anyMatch(f -> f.shape() == null) && entropy > 0) {
            throw new IllegalArgumentException("an entry without a shape after its literal has no entropy floor");
        }
        if (entropy < 0 || entropy > 7) {
            throw new IllegalArgumentException("entropy must be 0 to 7 bits per character");
        }
        boolean bareKey = o.getBoolean("bare_key", false);
        if (bareKey && !keyword) {
            throw new IllegalArgumentException("bare_key belongs to keyword entries");
        }
        return new Rule(index, id, label, provider, keyword ? Rule.Kind.KEYWORD : Rule.Kind.PREFIX,
                List.copyOf(forms), entropy, checksum, byDefault, bareKey, source, not);
    }

    /** {@return 60 % of the most entropy a value of the shape can have: log2 of its alphabet or of its length} */
    static double defaultEntropy(Shape shape) {
        int distinct = Math.min(shape.alphabetSize(), Math.max(1, shape.minLength()));
        return Math.round(DEFAULT_ENTROPY_SHARE * Math.log(distinct) / Math.log(2) * 100) / 100.0;
    }

    private static Rule.Form form(JsonObject o, String key, boolean keyword, String edge) throws Shape.Invalid {
        for (String k : o.keySet()) {
            if (!KEYS.contains(k)) {
                throw new IllegalArgumentException("unknown key '" + k + "' in a form");
            }
        }
        List<String> literals = new ArrayList<>();
        for (JsonString s : o.getJsonArray(key).getValuesAs(JsonString.class)) {
            String l = s.getString();
            if (l.length() < Prefilter.GRAM || l.charAt(0) == ' ' || !l.chars().allMatch(c -> c >= 0x20 && c < 0x7f)) {
                throw new IllegalArgumentException("literal '" + l + "' must be 3 or more printable ASCII characters "
                        + "(spaces inside only)");
            }
            if (keyword && !l.equals(l.toLowerCase(Locale.ROOT))) {
                throw new IllegalArgumentException("keyword '" + l + "' must be lowercase (matched ignoring case)");
            }
            literals.add(l);
        }
        if (literals.isEmpty()) {
            throw new IllegalArgumentException("no " + key);
        }
        Shape lead = o.containsKey("lead") ? Shape.parse(o.getString("lead")) : null;
        if (lead != null && (keyword || lead.fixedLength() < 0)) {
            throw new IllegalArgumentException("a lead must have a fixed length and belongs to prefix entries only");
        }
        Shape shape = o.containsKey("shape") || lead == null ? Shape.parse(o.getString("shape")) : null;
        if (shape != null && !shape.possessiveIsExact()) {
            throw new IllegalArgumentException("shape " + shape + " needs backtracking: a repeated class is "
                    + "followed by one sharing its characters");
        }
        return new Rule.Form(List.copyOf(literals), lead, shape, o.getString("edge", edge));
    }

    private static String name(JsonObject o, String key) {
        String v = o.getString(key);
        if (!NAME.matcher(v).matches()) {
            throw new IllegalArgumentException(key + " must be 2 to 64 of a-z 0-9 _");
        }
        return v;
    }
}
