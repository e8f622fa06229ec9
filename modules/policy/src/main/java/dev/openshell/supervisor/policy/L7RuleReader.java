package dev.openshell.supervisor.policy;

import dev.openshell.middleware.spi.internal.Syntax;
import dev.openshell.supervisor.policy.L7Reader.Family;
import dev.openshell.supervisor.policy.YamlTree.Entry;
import dev.openshell.supervisor.policy.YamlTree.Item;
import dev.openshell.supervisor.policy.internal.KeyPath;
import dev.openshell.supervisor.policy.internal.Problems;
import dev.openshell.supervisor.policy.internal.Texts;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

import org.eclipse.collections.api.factory.Lists;
import org.eclipse.collections.impl.factory.OrderedMaps;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.ScalarNode;

/**
 * Reads one L7 rule of an endpoint ({@code rules[].allow} or {@code deny_rules[]}) into an {@link L7Rule}, and the
 * matchers and globs inside rules ({@code docs/policy-reference.md}, "L7 policy"): the rule-level half of
 * {@link L7Reader}. Every doubt is an error at the offending node (file:line:col), never a guess.
 */
final class L7RuleReader {
    /** Longest method name a rule may give, in characters. */
    static final int MAX_METHOD_LENGTH = 64;
    private static final Pattern STRICT_TOOL_GLOB = Pattern.compile("[A-Za-z0-9_.*?-]{1,128}");
    private static final List<String> OPERATION_TYPES = List.of("query", "mutation", "subscription", "*");

    private final YamlTree yaml;
    private final Problems problems;

    L7RuleReader(YamlTree yaml) {
        this.yaml = yaml;
        this.problems = yaml.problems();
    }

    /** How rules of one endpoint are read: its protocol family and the endpoint settings rules depend on. */
    record Context(Family family, boolean graphqlMessages, boolean strictTools, boolean allowAllMcp) {
    }

    /** The parts of a rule as they are read; {@code source} is the rule in words, for explanations. */
    private static final class Parts {
        Optional<String> method = Optional.empty();
        Optional<Glob> path = Optional.empty();
        final Map<String, ValueMatcher> query = new LinkedHashMap<>();
        Optional<String> opType = Optional.empty();
        Optional<Glob> opName = Optional.empty();
        final List<Glob> fields = new ArrayList<>();
        Optional<Glob> rpcMethod = Optional.empty();
        Optional<ValueMatcher> tool = Optional.empty();
        final StringBuilder source = new StringBuilder();

        L7Rule rule() {
            return new L7Rule(source.toString(), method, path, OrderedMaps.adapt(query).toImmutable(), opType, opName,
                    Lists.immutable.withAll(fields), rpcMethod, tool);
        }
    }

    /**
     * Reads one rule.
     *
     * @param node the rule's mapping
     * @param path its key path
     * @param c the endpoint's context
     * @param deny whether it is a deny rule
     * @return the rule, or empty after an error (reported) or for {@code protocol: sql} (audit only)
     */
    Optional<L7Rule> rule(Node node, KeyPath path, Context c, boolean deny) {
        Map<String, Entry> f = yaml.mapping(node, path);
        if (f == null) {
            return Optional.empty();
        }
        int errors = problems.errorCount();
        boolean operation = c.family() == Family.GRAPHQL
                || (c.family() == Family.WEBSOCKET && c.graphqlMessages() && hasOperationKey(node));
        f = checkKeys(f, c.family(), operation);
        if (c.family() == Family.SQL) {
            Entry command = f.get("command");
            if (command != null) {
                yaml.string(command);
            }
            return Optional.empty();
        }
        Parts parts = new Parts();
        if (operation) {
            operationParts(f, node, path, parts);
        } else if (c.family() == Family.REST || c.family() == Family.WEBSOCKET) {
            httpParts(f, node, path, c, deny, parts);
        } else {
            rpcParts(f, node, path, c, parts);
        }
        return problems.errorCount() != errors ? Optional.empty() : Optional.of(parts.rule());
    }

    /** Refuses keys the family does not read; an operation rule on a websocket endpoint drops the HTTP keys. */
    private Map<String, Entry> checkKeys(Map<String, Entry> f, Family family, boolean operation) {
        List<String> allowed = switch (family) {
            case REST -> List.of("method", "path", "query");
            case WEBSOCKET -> operation ? List.of("operation_type", "operation_name", "fields")
                    : List.of("method", "path", "query");
            case GRAPHQL -> List.of("operation_type", "operation_name", "fields");
            case JSON_RPC -> List.of("method");
            case MCP -> List.of("method", "tool", "params");
            case SQL -> List.of("command");
        };
        Map<String, Entry> keys = f;
        if (family == Family.WEBSOCKET && operation) {
            for (String k : List.of("method", "path", "query")) {
                Entry e = f.get(k);
                if (e != null) {
                    problems.error(yaml.at(e.keyNode()), e.path(), "a GraphQL operation rule cannot also match " + k
                            + "; write the upgrade's method and path in a separate rule");
                }
            }
            keys = new LinkedHashMap<>(f);
            keys.keySet().removeAll(List.of("method", "path", "query"));
        }
        yaml.rejectUnknown(keys, allowed);
        return keys;
    }

    private void operationParts(Map<String, Entry> f, Node node, KeyPath path, Parts parts) {
        Entry t = f.get("operation_type");
        if (t == null) {
            problems.error(yaml.at(node), path, "operation_type is required: query, mutation, subscription or *");
        } else {
            Optional<String> text = yaml.string(t);
            if (text.isPresent()) {
                String lower = text.get().toLowerCase(Locale.ROOT);
                if (!OPERATION_TYPES.contains(lower)) {
                    problems.error(yaml.at(t.value()), t.path(), "unknown operation_type "
                            + Texts.quote(text.get()) + "; expected query, mutation, subscription or *");
                } else {
                    parts.opType = Optional.of(lower);
                }
            }
        }
        Entry n = f.get("operation_name");
        if (n != null) {
            parts.opName = yaml.string(n).flatMap(s -> valueGlob(s, n.value(), n.path()));
        }
        Entry fl = f.get("fields");
        if (fl != null) {
            List<Item> items = yaml.sequence(fl);
            if (items != null) {
                if (items.isEmpty()) {
                    problems.error(yaml.at(fl.value()), fl.path(), "fields is empty; leave it out to allow any"
                            + " root field, or list at least one");
                }
                for (Item i : items) {
                    yaml.string(i.node(), i.path()).flatMap(s -> valueGlob(s, i.node(), i.path()))
                            .ifPresent(parts.fields::add);
                }
            }
        }
        parts.source.append(parts.opType.orElse("?"));
        parts.opName.ifPresent(g -> parts.source.append(' ').append(g.source()));
        if (!parts.fields.isEmpty()) {
            parts.source.append(parts.fields.stream().map(Glob::source).reduce((a, b) -> a + "," + b)
                    .map(s -> " {" + s + "}").orElse(""));
        }
    }

    private void httpParts(Map<String, Entry> f, Node node, KeyPath path, Context c, boolean deny, Parts parts) {
        Entry m = f.get("method");
        if (m == null) {
            problems.error(yaml.at(node), path, "method is required (an HTTP method, or * for any)"
                    + (deny ? "; a deny rule without a method would never fire" : ""));
        } else {
            parts.method = yaml.string(m).flatMap(s -> httpMethod(s, m, c.family()));
            if (c.graphqlMessages() && parts.method.filter("WEBSOCKET_TEXT"::equals).isPresent()) {
                problems.error(yaml.at(m.value()), m.path(), "this websocket endpoint carries GraphQL messages"
                        + " (its rules name operations), which are matched by operation rules; a WEBSOCKET_TEXT"
                        + " rule would bypass them");
                parts.method = Optional.empty();
            }
        }
        Entry p = f.get("path");
        if (p == null) {
            problems.error(yaml.at(node), path, "path is required (a path glob such as /repos/** or **)"
                    + (deny ? "" : "; an allow rule without a path would never match"));
        } else {
            parts.path = yaml.string(p).flatMap(s -> pathGlob(s, p.value(), p.path()));
        }
        Entry q = f.get("query");
        if (q != null) {
            Map<String, Entry> keys = yaml.mapping(q.value(), q.path());
            if (keys != null) {
                for (Entry k : keys.values()) {
                    valueMatcher(k, false).ifPresent(v -> parts.query.put(k.key(), v));
                }
            }
        }
        parts.source.append(parts.method.orElse("?")).append(' ').append(parts.path.map(Glob::source).orElse("?"));
        if (!parts.query.isEmpty()) {
            parts.source.append(parts.query.keySet().stream().reduce((a, b) -> a + "&" + b).map(s -> "?" + s)
                    .orElse(""));
        }
    }

    private void rpcParts(Map<String, Entry> f, Node node, KeyPath path, Context c, Parts parts) {
        Entry m = f.get("method");
        Entry t = c.family() == Family.MCP ? f.get("tool") : null;
        Entry params = f.get("params");
        if (c.family() == Family.MCP && params != null) {
            Map<String, Entry> pf = yaml.mapping(params.value(), params.path());
            if (pf != null) {
                yaml.rejectUnknown(pf, List.of("name"));
                Entry name = pf.get("name");
                if (t != null) {
                    problems.error(yaml.at(params.keyNode()), params.path(), "give either tool or params.name,"
                            + " not both");
                } else if (name != null) {
                    t = name;
                }
            }
        }
        if (t != null) {
            parts.tool = valueMatcher(t, c.strictTools());
        }
        if (m == null) {
            if (c.family() == Family.MCP && c.allowAllMcp()) {
                parts.rpcMethod = Optional.of(Glob.value(parts.tool.isPresent() ? "tools/call" : "*"));
            } else {
                problems.error(yaml.at(node), path, "method is required (a JSON-RPC method name, or * for any)");
            }
        } else {
            Optional<String> text = yaml.string(m);
            if (text.isPresent()) {
                parts.rpcMethod = rpcMethod(text.get(), m, c.family());
            }
        }
        if (parts.tool.isPresent() && parts.rpcMethod.isPresent() && !parts.rpcMethod.get().matches("tools/call")) {
            problems.error(yaml.at(t.keyNode()), t.path(), "a tool selector applies to tools/call only, and"
                    + " method " + Texts.quote(parts.rpcMethod.get().source()) + " does not cover tools/call");
        }
        parts.source.append(parts.rpcMethod.map(Glob::source).orElse("?"));
        parts.tool.ifPresent(v -> parts.source.append(" tool=").append(v));
    }

    /** {@return whether a rule node names a GraphQL operation key} */
    static boolean hasOperationKey(Node n) {
        if (!(n instanceof MappingNode m)) {
            return false;
        }
        for (var t : m.getValue()) {
            if (t.getKeyNode() instanceof ScalarNode k && List.of("operation_type", "operation_name", "fields")
                    .contains(k.getValue())) {
                return true;
            }
        }
        return false;
    }

    private Optional<String> httpMethod(String text, Entry at, Family family) {
        if (text.equals("*")) {
            return Optional.of("*");
        }
        if (text.length() > MAX_METHOD_LENGTH || !Syntax.isToken(text)) {
            problems.error(yaml.at(at.value()), at.path(), "method " + Texts.quote(text) + " is not an HTTP method"
                    + " token (RFC 9110, section 9.1); write the method name or *");
            return Optional.empty();
        }
        String upper = text.toUpperCase(Locale.ROOT);
        if (family == Family.WEBSOCKET && !upper.equals("GET") && !upper.equals("WEBSOCKET_TEXT")) {
            problems.error(yaml.at(at.value()), at.path(), "method " + Texts.quote(text) + " cannot match on a"
                    + " websocket endpoint; expected GET (the upgrade), WEBSOCKET_TEXT (a text message) or *");
            return Optional.empty();
        }
        if (family == Family.REST && upper.equals("WEBSOCKET_TEXT")) {
            problems.error(yaml.at(at.value()), at.path(), "WEBSOCKET_TEXT rules belong on protocol: websocket"
                    + " endpoints");
            return Optional.empty();
        }
        return Optional.of(upper);
    }

    private Optional<Glob> rpcMethod(String text, Entry at, Family family) {
        if (text.isEmpty()) {
            problems.error(yaml.at(at.value()), at.path(), "method must not be empty");
            return Optional.empty();
        }
        Optional<Glob> g = valueGlob(text, at.value(), at.path());
        if (g.isEmpty()) {
            return g;
        }
        if (family == Family.JSON_RPC && !text.equals("*") && g.get().hasWildcards()) {
            problems.error(yaml.at(at.value()), at.path(), "JSON-RPC methods are matched exactly; "
                    + Texts.quote(text) + " has wildcard characters (only * alone, for any method, is a pattern)");
            return Optional.empty();
        }
        if (family == Family.MCP && !text.equals("*") && g.get().hasWildcards() && !text.startsWith("tools/")) {
            problems.error(yaml.at(at.value()), at.path(), "MCP method patterns are allowed in the tools/ family only"
                    + " (such as tools/*); write " + Texts.quote(text) + " as exact method names or *");
            return Optional.empty();
        }
        return g;
    }

    private Optional<ValueMatcher> valueMatcher(Entry e, boolean strictTool) {
        Node v = e.value();
        List<Glob> globs = new ArrayList<>();
        if (v instanceof MappingNode) {
            Map<String, Entry> m = yaml.mapping(v, e.path());
            if (m == null) {
                return Optional.empty();
            }
            yaml.rejectUnknown(m, List.of("glob", "any"));
            Entry glob = m.get("glob");
            Entry any = m.get("any");
            if (glob != null && any != null) {
                problems.error(yaml.at(any.keyNode()), any.path(), "give either glob or any, not both");
                return Optional.empty();
            }
            if (glob == null && any == null) {
                problems.error(yaml.at(v), e.path(), "a matcher is a string, {glob: ...} or {any: [...]}");
                return Optional.empty();
            }
            if (glob != null) {
                yaml.string(glob).flatMap(s -> matcherGlob(s, glob.value(), glob.path(), strictTool))
                        .ifPresent(globs::add);
                if (globs.isEmpty()) {
                    return Optional.empty();
                }
            } else {
                List<Item> items = yaml.sequence(any);
                if (items == null) {
                    return Optional.empty();
                }
                if (items.isEmpty()) {
                    problems.error(yaml.at(any.value()), any.path(), "any is empty, so nothing would match; list at"
                            + " least one glob");
                    return Optional.empty();
                }
                int errors = problems.errorCount();
                for (Item i : items) {
                    yaml.string(i.node(), i.path()).flatMap(s -> matcherGlob(s, i.node(), i.path(), strictTool))
                            .ifPresent(globs::add);
                }
                if (problems.errorCount() != errors) {
                    return Optional.empty();
                }
            }
        } else {
            Optional<Glob> g = yaml.string(e).flatMap(s -> matcherGlob(s, e.value(), e.path(), strictTool));
            if (g.isEmpty()) {
                return Optional.empty();
            }
            globs.add(g.get());
        }
        return Optional.of(new ValueMatcher(Lists.immutable.withAll(globs)));
    }

    private Optional<Glob> matcherGlob(String text, Node node, KeyPath path, boolean strictTool) {
        if (strictTool && !STRICT_TOOL_GLOB.matcher(text).matches()) {
            problems.error(yaml.at(node), path, "tool name pattern " + Texts.quote(text) + " cannot match a strict"
                    + " tool name (letters, digits, _ . - and the wildcards * ?, at most 128 characters);"
                    + " set mcp.strict_tool_names: false for other names");
            return Optional.empty();
        }
        return valueGlob(text, node, path);
    }

    private Optional<Glob> valueGlob(String text, Node node, KeyPath path) {
        try {
            return Optional.of(Glob.value(text));
        } catch (IllegalArgumentException e) {
            problems.error(yaml.at(node), path, "invalid pattern " + Texts.quote(text) + ": " + e.getMessage());
            return Optional.empty();
        }
    }

    /** A path glob: it must be able to match an absolute path, so it starts with {@code /}, {@code **} or a group. */
    Optional<Glob> pathGlob(String text, Node node, KeyPath path) {
        if (!(text.startsWith("/") || text.startsWith("**") || text.startsWith("{"))) {
            problems.error(yaml.at(node), path, "path pattern " + Texts.quote(text) + " can never match: request"
                    + " paths start with /; write /" + text + " or ** (any path)");
            return Optional.empty();
        }
        try {
            return Optional.of(Glob.path(text));
        } catch (IllegalArgumentException e) {
            problems.error(yaml.at(node), path, "invalid path pattern " + Texts.quote(text) + ": " + e.getMessage());
            return Optional.empty();
        }
    }

    /** {@return a {@code graphql_persisted_queries} entry, or empty after an error} @param e the entry */
    Optional<GraphQlOperationSpec> registered(Entry e) {
        Map<String, Entry> f = yaml.mapping(e.value(), e.path());
        if (f == null) {
            return Optional.empty();
        }
        int errors = problems.errorCount();
        yaml.rejectUnknown(f, List.of("operation_type", "operation_name", "fields"));
        String type = null;
        Entry t = f.get("operation_type");
        if (t == null) {
            problems.error(yaml.at(e.value()), e.path(), "operation_type is required: query, mutation or"
                    + " subscription");
        } else {
            Optional<String> text = yaml.string(t);
            if (text.isPresent()) {
                String lower = text.get().toLowerCase(Locale.ROOT);
                if (!List.of("query", "mutation", "subscription").contains(lower)) {
                    problems.error(yaml.at(t.value()), t.path(), "unknown operation_type " + Texts.quote(text.get())
                            + "; expected query, mutation or subscription");
                } else {
                    type = lower;
                }
            }
        }
        Optional<String> name = Optional.empty();
        Entry n = f.get("operation_name");
        if (n != null) {
            name = yaml.string(n);
        }
        List<String> fields = new ArrayList<>();
        Entry fl = f.get("fields");
        if (fl != null) {
            List<Item> items = yaml.sequence(fl);
            if (items != null) {
                for (Item i : items) {
                    yaml.string(i.node(), i.path()).ifPresent(fields::add);
                }
            }
        }
        if (problems.errorCount() != errors || type == null) {
            return Optional.empty();
        }
        return Optional.of(new GraphQlOperationSpec(type, name, Lists.immutable.withAll(fields).distinct()
                .toSortedList().toImmutable()));
    }
}
