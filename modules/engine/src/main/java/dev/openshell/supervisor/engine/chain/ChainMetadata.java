package dev.openshell.supervisor.engine.chain;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The request-local metadata bag of one chain run (RFC 0009, "Metadata and downstream routing"), namespaced by
 * config key: a stage under config key {@code anonymize} that emits {@code sensitivity} is stored as
 * {@code anonymize.sensitivity}, never under the display name or the binding ID, so two configs using the same
 * binding cannot collide.
 *
 * <p>{@link #namespace} and {@link #flat} give the values as the stages emitted them, for downstream consumers in
 * the supervisor; never log them. {@link #auditView} is the form for logs and audit events: values from
 * {@link Provenance#THIRD_PARTY} stages are kept only when they are short lowercase tokens
 * ({@code [a-z0-9][a-z0-9_.,:-]*}, at most 64 characters, for example {@code restricted} or {@code text,image}) and
 * are otherwise replaced by {@value #WITHHELD}. Immutable.
 */
public final class ChainMetadata {
    /** The platform text that replaces an untrusted metadata value in {@link #auditView}. */
    public static final String WITHHELD = "[withheld]";
    private static final ChainMetadata EMPTY = new ChainMetadata(Map.of(), Map.of());

    private final Map<String, Map<String, String>> byKey;
    private final Map<String, Provenance> provenance;

    private ChainMetadata(Map<String, Map<String, String>> byKey, Map<String, Provenance> provenance) {
        this.byKey = byKey;
        this.provenance = provenance;
    }

    /** {@return the empty bag} */
    public static ChainMetadata empty() {
        return EMPTY;
    }

    /** {@return the config keys that emitted metadata, in chain order; unmodifiable} */
    public java.util.Set<String> configKeys() {
        return byKey.keySet();
    }

    /**
     * {@return the entries one config emitted, keys sorted; empty when it emitted none; unmodifiable}
     *
     * @param configKey the config key
     */
    public Map<String, String> namespace(String configKey) {
        return byKey.getOrDefault(configKey, Map.of());
    }

    /**
     * {@return one value}
     *
     * @param configKey the config key
     * @param key the stage's key
     */
    public Optional<String> get(String configKey, String key) {
        return Optional.ofNullable(namespace(configKey).get(key));
    }

    /** {@return every entry as {@code <config key>.<key>}, in chain order then key order; unmodifiable} */
    public Map<String, String> flat() {
        Map<String, String> out = new LinkedHashMap<>();
        byKey.forEach((ns, entries) -> entries.forEach((k, v) -> out.put(ns + "." + k, v)));
        return Collections.unmodifiableMap(out);
    }

    /** {@return {@link #flat()} with untrusted values replaced (see the class comment); unmodifiable} */
    public Map<String, String> auditView() {
        Map<String, String> out = new LinkedHashMap<>();
        byKey.forEach((ns, entries) -> {
            boolean trusted = provenance.get(ns) == Provenance.BUILT_IN;
            entries.forEach((k, v) -> out.put(ns + "." + k,
                    trusted || SafeText.isLowerToken(v, 64, "_.,:-") ? v : WITHHELD));
        });
        return Collections.unmodifiableMap(out);
    }

    /** {@return whether no stage emitted metadata} */
    public boolean isEmpty() {
        return byKey.isEmpty();
    }

    /** {@return the number of entries over all namespaces} */
    public int size() {
        return byKey.values().stream().mapToInt(Map::size).sum();
    }

    /** {@return the config keys and entry counts only: values never appear in logs} */
    @Override
    public String toString() {
        java.util.StringJoiner j = new java.util.StringJoiner(", ", "ChainMetadata[", "]");
        byKey.forEach((ns, e) -> j.add(ns + "=" + e.size()));
        return j.toString();
    }

    /** Collects namespaces during a fold; not thread-safe. */
    static final class Builder {
        private Map<String, Map<String, String>> byKey;
        private Map<String, Provenance> provenance;

        void put(String configKey, Provenance from, Map<String, String> entries) {
            if (entries.isEmpty()) {
                return;
            }
            if (byKey == null) {
                byKey = new LinkedHashMap<>();
                provenance = new LinkedHashMap<>();
            }
            byKey.put(configKey, Collections.unmodifiableMap(new TreeMap<>(entries)));
            provenance.put(configKey, from);
        }

        ChainMetadata build() {
            return byKey == null ? EMPTY
                    : new ChainMetadata(Collections.unmodifiableMap(byKey), Collections.unmodifiableMap(provenance));
        }
    }
}
