package dev.openshell.supervisor.policy.gateway;

import dev.openshell.supervisor.policy.SourceLocation;
import dev.openshell.supervisor.policy.internal.KeyPath;
import dev.openshell.supervisor.policy.internal.Problems;
import dev.openshell.supervisor.policy.internal.Texts;
import java.time.temporal.TemporalAccessor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Predicate;
import org.tomlj.TomlArray;
import org.tomlj.TomlPosition;
import org.tomlj.TomlTable;

/**
 * The typed getters of the gateway configuration's TOML reader: each reads one key of a table as the type the
 * reader expects and reports anything else as a problem at the key's line and column (file:line:col), never an
 * exception; unknown keys get a did-you-mean. Tables are remembered where they were opened, so a problem about a
 * missing key points at its table. tomlj parses; this class binds. Each reader holds its own instance (the table
 * locations are the reader's), and reports through the same {@link Problems}.
 */
final class TomlValues {
    private final Problems problems;
    /** Where each table read so far was opened, by key path, for problems about a missing key. */
    private final Map<String, SourceLocation> tableLocations = new LinkedHashMap<>();

    TomlValues(Problems problems) {
        this.problems = problems;
    }

    SourceLocation at(TomlTable t, String key) {
        return position(t.inputPositionOf(List.of(key)));
    }

    /** The location of a table: where its header (or first key) was written, as recorded while walking. */
    SourceLocation at(KeyPath path, TomlTable t) {
        SourceLocation known = tableLocations.get(path.toString());
        if (known != null) {
            return known;
        }
        for (String k : t.keySet()) {
            return at(t, k);
        }
        return problems.nowhere();
    }

    SourceLocation position(TomlPosition p) {
        return p == null ? problems.nowhere() : problems.at(p.line(), p.column());
    }

    /**
     * Keys operators write in the wrong table, with where they belong: the did-you-mean of an unknown key that is
     * not a typo but misplaced (for example {@code admin_listen}, which older documentation showed).
     */
    static final java.util.Map<String, String> MISPLACED = java.util.Map.of(
            "admin_listen", "listen in [openshell.supervisor.admin]",
            "allow_loopback_upstreams", "allow_loopback_upstreams in [openshell.supervisor.network]",
            "static_hosts", "[openshell.supervisor.network.static_hosts]",
            "upstream_ca_bundle", "upstream_ca_bundle in [openshell.supervisor.tls]",
            "ca_cert", "ca_cert in [openshell.supervisor.tls]",
            "ca_key", "ca_key in [openshell.supervisor.tls]",
            "metrics_listen", "listen in [openshell.supervisor.admin]");

    void rejectUnknown(TomlTable t, KeyPath path, List<String> allowed) {
        for (String key : t.keySet()) {
            problems.locate(path.key(key), at(t, key));
            if (!allowed.contains(key)) {
                String hint = MISPLACED.containsKey(key) ? " (did you mean " + MISPLACED.get(key) + "?)"
                        : Texts.suggestion(key, allowed);
                problems.error(at(t, key), path.key(key), "unknown key " + Texts.quote(key) + hint
                        + "; allowed keys: " + String.join(", ", allowed));
            }
        }
    }

    /** {@return the sub-table {@code key}, or {@code null} when absent or (after an error) not a table} */
    TomlTable table(TomlTable t, String key, KeyPath path) {
        if (!t.contains(List.of(key))) {
            return null;
        }
        Object v = t.get(List.of(key));
        if (v instanceof TomlTable sub) {
            tableLocations.put(path.key(key).toString(), at(t, key));
            return sub;
        }
        problems.error(at(t, key), path.key(key), "expected a table, found " + describe(v));
        return null;
    }

    /** {@return the tables of an array of tables; {@code null} entries where an element is not a table} */
    List<TomlTable> tables(TomlTable t, String key, KeyPath path) {
        List<TomlTable> out = new ArrayList<>();
        TomlArray array = array(t, key, path);
        if (array == null) {
            return out;
        }
        for (int i = 0; i < array.size(); i++) {
            Object v = array.get(i);
            KeyPath ip = path.key(key).index(i);
            SourceLocation vat = position(array.inputPositionOf(i));
            if (v instanceof TomlTable table) {
                tableLocations.put(ip.toString(), vat);
                problems.locate(ip, vat);
                out.add(table);
            } else {
                problems.error(vat, ip, "expected a table, found " + describe(v));
                out.add(null);
            }
        }
        return out;
    }

    TomlArray array(TomlTable t, String key, KeyPath path) {
        if (!t.contains(List.of(key))) {
            return null;
        }
        Object v = t.get(List.of(key));
        if (v instanceof TomlArray a) {
            return a;
        }
        problems.error(at(t, key), path.key(key), "expected an array, found " + describe(v));
        return null;
    }

    Optional<String> string(TomlTable t, String key, KeyPath path) {
        if (!t.contains(List.of(key))) {
            return Optional.empty();
        }
        Object v = t.get(List.of(key));
        if (v instanceof String s) {
            return Optional.of(s);
        }
        problems.error(at(t, key), path.key(key), "expected a string, found " + describe(v));
        return Optional.empty();
    }

    Optional<Boolean> bool(TomlTable t, String key, KeyPath path) {
        if (!t.contains(List.of(key))) {
            return Optional.empty();
        }
        Object v = t.get(List.of(key));
        if (v instanceof Boolean b) {
            return Optional.of(b);
        }
        problems.error(at(t, key), path.key(key), "expected true or false, found " + describe(v));
        return Optional.empty();
    }

    OptionalLong optionalInteger(TomlTable t, String key, KeyPath path, long min, long max) {
        return t.contains(List.of(key)) ? integer(t, key, path, min, max) : OptionalLong.empty();
    }

    OptionalLong integer(TomlTable t, String key, KeyPath path, long min, long max) {
        Object v = t.get(List.of(key));
        if (v instanceof Long l) {
            if (l < min || l > max) {
                problems.error(at(t, key), path.key(key), l + " is outside " + min + ".." + max);
                return OptionalLong.empty();
            }
            return OptionalLong.of(l);
        }
        problems.error(at(t, key), path.key(key), "expected an integer, found " + describe(v));
        return OptionalLong.empty();
    }

    /** How a message names a TOML value it did not expect; strings are quoted, nothing is shown of tables. */
    static String describe(Object v) {
        if (v instanceof String s) {
            return "the string " + Texts.quote(s);
        }
        if (v instanceof Long || v instanceof Double) {
            return "the number " + v;
        }
        if (v instanceof Boolean b) {
            return b.toString();
        }
        if (v instanceof TomlTable) {
            return "a table";
        }
        if (v instanceof TomlArray) {
            return "an array";
        }
        if (v instanceof TemporalAccessor) {
            return "a date or time";
        }
        return "a value";
    }

    /**
     * {@return the table's required, unique {@code name}}: reported when absent ({@code what} says what it is for),
     * not matching {@code grammar} ({@code grammarText} in words) or already in {@code names}
     */
    Optional<String> requiredName(TomlTable t, KeyPath path, Map<String, KeyPath> names, String what,
                           Predicate<String> grammar, String grammarText) {
        if (!t.contains(List.of("name"))) {
            problems.error(at(path, t), path, "name is required: " + what);
            return Optional.empty();
        }
        Optional<String> name = string(t, "name", path);
        if (name.isEmpty()) {
            return name;
        }
        if (!grammar.test(name.get())) {
            problems.error(at(t, "name"), path.key("name"), "name " + Texts.quote(name.get()) + " must be "
                    + grammarText);
            return Optional.empty();
        }
        KeyPath first = names.putIfAbsent(name.get(), path);
        if (first != null) {
            problems.error(at(t, "name"), path.key("name"), "name " + Texts.quote(name.get()) + " is already used by "
                    + first + "; names must be unique");
            return Optional.empty();
        }
        return name;
    }
}
