package dev.openshell.supervisor.policy;

import dev.openshell.supervisor.policy.internal.KeyPath;
import dev.openshell.supervisor.policy.internal.Problems;
import dev.openshell.supervisor.policy.internal.Texts;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonValue;
import jakarta.json.spi.JsonProvider;

import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.composer.Composer;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;
import org.snakeyaml.engine.v2.nodes.Tag;
import org.snakeyaml.engine.v2.parser.ParserImpl;
import org.snakeyaml.engine.v2.scanner.StreamReader;
import org.snakeyaml.engine.v2.schema.CoreSchema;

/**
 * Typed reading of a composed YAML node tree (snakeyaml-engine, YAML 1.2 core schema) with every problem reported,
 * located and keyed, instead of thrown: the policy loader keeps reading after an error.
 */
final class YamlTree {
    /** Deepest nesting accepted in opaque values ({@code config}, {@code rules}). */
    static final int MAX_DEPTH = 64;
    /** Most values one opaque value may expand to (aliases can multiply a small file). */
    static final int MAX_VALUES = 100_000;
    /** Most aliases per document (a guard against alias bombs). */
    static final int MAX_ALIASES = 50;

    /** Longest number text converted (longer ones are refused rather than parsed slowly). */
    static final int MAX_NUMBER_CHARS = 400;

    static final JsonProvider JSON = JsonProvider.provider();

    /** One mapping entry. */
    record Entry(String key, Node keyNode, Node value, KeyPath path) {
    }

    /** One sequence item. */
    record Item(Node node, KeyPath path, int index) {
    }

    private final Problems problems;

    YamlTree(Problems problems) {
        this.problems = problems;
    }

    Problems problems() {
        return problems;
    }

    /**
     * Composes one YAML document; a syntax error becomes a problem at its mark.
     *
     * @return the root node; empty for an empty document or after a syntax error (check {@link Problems#hasErrors})
     */
    Optional<Node> compose(String text) {
        LoadSettings settings = LoadSettings.builder()
                .setLabel(problems.file())
                .setSchema(new CoreSchema())
                .setMaxAliasesForCollections(MAX_ALIASES)
                .setAllowRecursiveKeys(false)
                .setAllowNonScalarKeys(false)
                .setCodePointLimit(Integer.MAX_VALUE)
                .build();
        try {
            // what the unexported api.lowlevel.Compose does: one document, or an error if there are more
            return new Composer(settings, new ParserImpl(settings, new StreamReader(settings, text))).getSingleNode();
        } catch (MarkedYamlEngineException e) {
            Mark mark = e.getProblemMark().or(e::getContextMark).orElse(null);
            String problem = e.getProblem() == null ? "" : e.getProblem();
            problems.error(mark == null ? problems.nowhere() : problems.at(mark.getLine() + 1, mark.getColumn() + 1),
                    KeyPath.root(), "YAML syntax error: " + Texts.printable(problem.strip()));
        } catch (YamlEngineException e) {
            problems.error(problems.nowhere(), KeyPath.root(), "YAML error: " + Texts.printable(
                    String.valueOf(e.getMessage()).strip()));
        }
        return Optional.empty();
    }

    SourceLocation at(Node node) {
        return node.getStartMark()
                .map(m -> problems.at(m.getLine() + 1, m.getColumn() + 1))
                .orElseGet(problems::nowhere);
    }

    /** {@return how a message names what was found at {@code node}} */
    static String found(Node node) {
        if (node instanceof MappingNode) {
            return "a mapping";
        }
        if (node instanceof SequenceNode) {
            return "a list";
        }
        ScalarNode s = (ScalarNode) node;
        return Texts.quote(s.getValue());
    }

    static boolean isNull(Node node) {
        return node instanceof ScalarNode s && s.getTag().equals(Tag.NULL);
    }

    /**
     * Reads a mapping's entries in file order. A duplicate key is an error; the first occurrence wins.
     *
     * @return the entries, or {@code null} (after an error) when {@code node} is not a mapping
     */
    Map<String, Entry> mapping(Node node, KeyPath path) {
        if (!(node instanceof MappingNode mapping)) {
            problems.error(at(node), path, isNull(node) ? "no value given; expected a mapping"
                    : "expected a mapping, found " + found(node));
            return null;
        }
        problems.locate(path, at(node));
        Map<String, Entry> entries = new LinkedHashMap<>();
        for (NodeTuple tuple : mapping.getValue()) {
            Node keyNode = tuple.getKeyNode();
            String key = keyNode instanceof ScalarNode s ? s.getValue() : "";
            KeyPath entryPath = path.key(key);
            Entry first = entries.get(key);
            if (first != null) {
                problems.error(at(keyNode), entryPath, "duplicate key " + Texts.quote(key)
                        + " (first given at line " + at(first.keyNode()).line() + ")");
                continue;
            }
            entries.put(key, new Entry(key, keyNode, tuple.getValueNode(), entryPath));
            problems.locate(entryPath, at(keyNode));
        }
        return entries;
    }

    /** {@return whether {@code node} is a mapping}; reports an error when it is not */
    boolean isMapping(Node node, KeyPath path) {
        if (node instanceof MappingNode) {
            return true;
        }
        problems.error(at(node), path, isNull(node) ? "no value given; expected a mapping"
                : "expected a mapping, found " + found(node));
        return false;
    }

    /** Reports every key not in {@code allowed} as an error at the key. */
    void rejectUnknown(Map<String, Entry> entries, Collection<String> allowed) {
        for (Entry e : entries.values()) {
            if (!allowed.contains(e.key())) {
                problems.error(at(e.keyNode()), e.path(), "unknown key " + Texts.quote(e.key())
                        + Texts.suggestion(e.key(), allowed) + "; allowed keys: " + String.join(", ", allowed));
            }
        }
    }

    /** {@return the text of a scalar (any tag but null)}; a non-scalar or null is an error */
    Optional<String> string(Node node, KeyPath path) {
        if (node instanceof ScalarNode s && !s.getTag().equals(Tag.NULL)) {
            if (!isPlainTag(s.getTag())) {
                problems.error(at(node), path, "unsupported YAML tag " + Texts.quote(s.getTag().getValue()));
                return Optional.empty();
            }
            return Optional.of(s.getValue());
        }
        problems.error(at(node), path, isNull(node) ? "no value given; expected a string"
                : "expected a string, found " + found(node));
        return Optional.empty();
    }

    Optional<String> string(Entry e) {
        return string(e.value(), e.path());
    }

    /** {@return a YAML integer within {@code min..max}}; anything else is an error */
    OptionalLong integer(Node node, KeyPath path, long min, long max) {
        if (node instanceof ScalarNode s && s.getTag().equals(Tag.INT)) {
            BigInteger value = parseInt(s.getValue());
            if (value == null) {
                problems.error(at(node), path, "expected an integer, found " + found(node));
                return OptionalLong.empty();
            }
            if (value.compareTo(BigInteger.valueOf(min)) < 0 || value.compareTo(BigInteger.valueOf(max)) > 0) {
                problems.error(at(node), path, Texts.printable(value.toString()) + " is outside " + min + ".." + max);
                return OptionalLong.empty();
            }
            return OptionalLong.of(value.longValueExact());
        }
        problems.error(at(node), path, isNull(node) ? "no value given; expected an integer"
                : "expected an integer, found " + found(node));
        return OptionalLong.empty();
    }

    OptionalLong integer(Entry e, long min, long max) {
        return integer(e.value(), e.path(), min, max);
    }

    /** {@return a YAML boolean ({@code true} or {@code false})}; anything else is an error */
    Optional<Boolean> bool(Entry e) {
        if (e.value() instanceof ScalarNode s && s.getTag().equals(Tag.BOOL)) {
            return Optional.of(Boolean.parseBoolean(s.getValue().toLowerCase(Locale.ROOT)));
        }
        problems.error(at(e.value()), e.path(), isNull(e.value()) ? "no value given; expected true or false"
                : "expected true or false, found " + found(e.value()));
        return Optional.empty();
    }

    /** {@return the items of a list}; a non-list is an error and gives {@code null} */
    List<Item> sequence(Node node, KeyPath path) {
        if (!(node instanceof SequenceNode seq)) {
            problems.error(at(node), path, isNull(node) ? "no value given; expected a list"
                    : "expected a list, found " + found(node));
            return null;
        }
        List<Item> items = new ArrayList<>(seq.getValue().size());
        for (int i = 0; i < seq.getValue().size(); i++) {
            Node n = seq.getValue().get(i);
            KeyPath p = path.index(i);
            problems.locate(p, at(n));
            items.add(new Item(n, p, i));
        }
        return items;
    }

    List<Item> sequence(Entry e) {
        return sequence(e.value(), e.path());
    }

    /**
     * Converts an opaque YAML value to JSON. Integers and decimals become JSON numbers, {@code true}/{@code false}
     * booleans, {@code null} null; mapping keys become strings. Infinity, NaN, binary and custom tags have no JSON
     * form and are errors, as are duplicate keys and nesting deeper than {@value #MAX_DEPTH}. Problems name the key
     * path only, never the value, since config may hold secrets.
     *
     * @return the value, or {@code null} after an error
     */
    JsonValue json(Node node, KeyPath path) {
        int[] budget = {MAX_VALUES};
        int before = problems.errorCount();
        JsonValue v = toJson(node, path, 0, budget, new IdentityHashMap<>());
        return problems.errorCount() == before ? v : null;
    }

    private JsonValue toJson(Node node, KeyPath path, int depth, int[] budget, Map<Node, Boolean> open) {
        if (depth > MAX_DEPTH || open.containsKey(node)) {
            problems.error(at(node), path, "nested deeper than " + MAX_DEPTH + " levels (or a recursive alias)");
            return JsonValue.NULL;
        }
        if (--budget[0] < 0) {
            if (budget[0] == -1) {
                problems.error(at(node), path, "expands to more than " + MAX_VALUES + " values (through aliases)");
            }
            return JsonValue.NULL;
        }
        if (node instanceof MappingNode mapping) {
            open.put(node, Boolean.TRUE);
            JsonObjectBuilder b = JSON.createObjectBuilder();
            Map<String, Node> seen = new LinkedHashMap<>();
            for (NodeTuple t : mapping.getValue()) {
                String key = t.getKeyNode() instanceof ScalarNode s ? s.getValue() : "";
                KeyPath p = path.key(key);
                if (seen.containsKey(key)) {
                    problems.error(at(t.getKeyNode()), p, "duplicate key " + Texts.quote(key)
                            + " (first given at line " + at(seen.get(key)).line() + ")");
                    continue;
                }
                seen.put(key, t.getKeyNode());
                b.add(key, toJson(t.getValueNode(), p, depth + 1, budget, open));
            }
            open.remove(node);
            return b.build();
        }
        if (node instanceof SequenceNode seq) {
            open.put(node, Boolean.TRUE);
            JsonArrayBuilder b = JSON.createArrayBuilder();
            for (int i = 0; i < seq.getValue().size(); i++) {
                b.add(toJson(seq.getValue().get(i), path.index(i), depth + 1, budget, open));
            }
            open.remove(node);
            return b.build();
        }
        ScalarNode s = (ScalarNode) node;
        Tag tag = s.getTag();
        String text = s.getValue();
        if (tag.equals(Tag.STR)) {
            return JSON.createValue(text);
        }
        if (tag.equals(Tag.NULL)) {
            return JsonValue.NULL;
        }
        if (tag.equals(Tag.BOOL)) {
            return Boolean.parseBoolean(text.toLowerCase(Locale.ROOT)) ? JsonValue.TRUE : JsonValue.FALSE;
        }
        if (tag.equals(Tag.INT)) {
            BigInteger value = parseInt(text);
            if (value != null) {
                return value.bitLength() < 64 ? JSON.createValue(value.longValue()) : JSON.createValue(value);
            }
            problems.error(at(node), path, "this integer is longer than " + MAX_NUMBER_CHARS + " characters");
            return JsonValue.NULL;
        }
        if (tag.equals(Tag.FLOAT)) {
            BigDecimal value = parseDecimal(text);
            if (value != null) {
                return JSON.createValue(value);
            }
            problems.error(at(node), path, "this number cannot be represented in JSON (infinity, NaN, or too long)");
            return JsonValue.NULL;
        }
        problems.error(at(node), path, "unsupported YAML tag " + Texts.quote(tag.getValue())
                + "; use plain strings, numbers, booleans, lists and mappings");
        return JsonValue.NULL;
    }

    private static boolean isPlainTag(Tag tag) {
        return tag.equals(Tag.STR) || tag.equals(Tag.INT) || tag.equals(Tag.FLOAT) || tag.equals(Tag.BOOL);
    }

    /** Parses a YAML 1.2 core-schema integer: decimal with optional sign, {@code 0o} octal, {@code 0x} hex. */
    static BigInteger parseInt(String text) {
        if (text.length() > MAX_NUMBER_CHARS) {
            return null;
        }
        try {
            if (text.startsWith("0x")) {
                return new BigInteger(text.substring(2), 16);
            }
            if (text.startsWith("0o")) {
                return new BigInteger(text.substring(2), 8);
            }
            return new BigInteger(text.startsWith("+") ? text.substring(1) : text);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** Parses a YAML 1.2 core-schema float; {@code null} for infinity and NaN. */
    static BigDecimal parseDecimal(String text) {
        if (text.length() > MAX_NUMBER_CHARS) {
            return null;
        }
        try {
            return new BigDecimal(text);
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
