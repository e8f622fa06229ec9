package dev.openshell.supervisor.policy;

import dev.openshell.middleware.spi.internal.Syntax;
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
import java.util.Set;
import java.util.regex.Pattern;

import org.eclipse.collections.api.factory.Lists;
import org.eclipse.collections.api.factory.Maps;
import org.eclipse.collections.impl.factory.OrderedMaps;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;

/**
 * Reads and validates the L7 keys of one endpoint into an {@link L7Endpoint} ({@code docs/policy-reference.md}, "L7
 * policy"). Every doubt is an error (decision 4 of the L7 design): unknown rule keys, unknown {@code access}, malformed
 * globs, rules that could never match, settings for another protocol.
 */
final class L7Reader {
    /** The endpoint keys this reader owns. */
    static final List<String> KEYS = List.of("enforcement", "access", "rules", "deny_rules", "path",
            "allow_encoded_slash", "persisted_queries", "graphql_persisted_queries", "graphql_max_body_bytes",
            "json_rpc", "mcp", "method_override");
    static final Set<String> KNOWN_METHODS = Set.of("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE",
            "TRACE", "CONNECT");
    /** Longest method name a rule may give, in characters. */
    static final int MAX_METHOD_LENGTH = 64;
    private static final Pattern STRICT_TOOL_GLOB = Pattern.compile("[A-Za-z0-9_.*?-]{1,128}");
    private static final List<String> OPERATION_TYPES = List.of("query", "mutation", "subscription", "*");

    private final YamlTree yaml;
    private final Problems problems;

    L7Reader(YamlTree yaml) {
        this.yaml = yaml;
        this.problems = yaml.problems();
    }

    /** The protocol-specific reading of a rule. */
    private enum Family {
        REST, WEBSOCKET, GRAPHQL, JSON_RPC, MCP, SQL
    }

    /**
     * Reads the L7 keys of an endpoint.
     *
     * @param endpoint the endpoint's entries
     * @param at the endpoint's node and path
     * @param protocol the protocol, when given and valid
     * @param protocolGiven whether a {@code protocol} key was written (valid or not)
     * @param concreteHost whether the host is given without wildcards
     * @param enforcement the enforcement already read
     * @return the L7 policy, or empty for an endpoint without an L7 protocol (or after errors)
     */
    Optional<L7Endpoint> read(Map<String, Entry> endpoint, Item at, Optional<EndpointProtocol> protocol,
                              boolean protocolGiven, boolean concreteHost, Enforcement enforcement) {
        int errors = problems.errorCount();
        boolean l7 = protocol.isPresent() && protocol.get() != EndpointProtocol.TCP;
        if (!l7) {
            if (!protocolGiven) {
                for (String key : KEYS) {
                    Entry e = endpoint.get(key);
                    if (e != null) {
                        problems.error(yaml.at(e.keyNode()), e.path(), key + " needs an L7 protocol on the endpoint"
                                + " (protocol: rest, graphql, json-rpc, mcp or websocket); without one the endpoint is"
                                + " admitted at L4 only and the setting would have no effect");
                    }
                }
            } else if (protocol.isPresent()) {
                for (String key : KEYS) {
                    Entry e = endpoint.get(key);
                    if (e != null) {
                        problems.error(yaml.at(e.keyNode()), e.path(), key + " has no effect on a protocol: tcp"
                                + " endpoint, which is never parsed");
                    }
                }
            }
            return Optional.empty();
        }
        EndpointProtocol p = protocol.get();
        Family family = switch (p) {
            case REST -> Family.REST;
            case WEBSOCKET -> Family.WEBSOCKET;
            case GRAPHQL -> Family.GRAPHQL;
            case JSON_RPC -> Family.JSON_RPC;
            case MCP -> Family.MCP;
            default -> Family.SQL;
        };
        Entry enf = endpoint.get("enforcement");
        if (enf == null) {
            problems.warning(yaml.at(at.node()), at.path(), "enforcement is not given, so this supervisor enforces"
                    + " the L7 rules (OpenShell audits here; write enforcement: audit to match it)");
        }
        if (family == Family.SQL && enforcement == Enforcement.ENFORCE) {
            problems.error(enf != null ? yaml.at(enf.value()) : yaml.at(at.node()),
                    enf != null ? enf.path() : at.path(), "protocol: sql loads with enforcement: audit only; the SQL"
                            + " wire protocol is not inspected, so it cannot be enforced");
        }
        if (p == EndpointProtocol.MCP && !concreteHost) {
            problems.error(yaml.at(at.node()), at.path(), "protocol: mcp needs a concrete host (no wildcards)");
        }

        // body limits and protocol stanzas
        int maxBody = L7Endpoint.DEFAULT_MAX_BODY_BYTES;
        boolean strictTools = true;
        boolean allowAllMcp = false;
        Entry gqlMax = endpoint.get("graphql_max_body_bytes");
        if (gqlMax != null) {
            if (p != EndpointProtocol.GRAPHQL && p != EndpointProtocol.WEBSOCKET) {
                onlyFor(gqlMax, "protocol: graphql");
            } else {
                maxBody = (int) yaml.integer(gqlMax, 1, L7Endpoint.MAX_BODY_BYTES_LIMIT).orElse(maxBody);
            }
        }
        Entry jsonRpc = endpoint.get("json_rpc");
        if (jsonRpc != null) {
            if (p != EndpointProtocol.JSON_RPC) {
                onlyFor(jsonRpc, "protocol: json-rpc");
            } else {
                Map<String, Entry> s = yaml.mapping(jsonRpc.value(), jsonRpc.path());
                if (s != null) {
                    yaml.rejectUnknown(s, List.of("max_body_bytes"));
                    Entry m = s.get("max_body_bytes");
                    if (m != null) {
                        maxBody = (int) yaml.integer(m, 1, L7Endpoint.MAX_BODY_BYTES_LIMIT).orElse(maxBody);
                    }
                }
            }
        }
        Entry mcp = endpoint.get("mcp");
        if (mcp != null) {
            if (p != EndpointProtocol.MCP) {
                onlyFor(mcp, "protocol: mcp");
            } else {
                Map<String, Entry> s = yaml.mapping(mcp.value(), mcp.path());
                if (s != null) {
                    yaml.rejectUnknown(s, List.of("max_body_bytes", "strict_tool_names",
                            "allow_all_known_mcp_methods"));
                    Entry m = s.get("max_body_bytes");
                    if (m != null) {
                        maxBody = (int) yaml.integer(m, 1, L7Endpoint.MAX_BODY_BYTES_LIMIT).orElse(maxBody);
                    }
                    Entry strict = s.get("strict_tool_names");
                    if (strict != null) {
                        strictTools = yaml.bool(strict).orElse(true);
                    }
                    Entry all = s.get("allow_all_known_mcp_methods");
                    if (all != null) {
                        allowAllMcp = yaml.bool(all).orElse(false);
                    }
                }
            }
        }

        // endpoint path and encoded slashes
        Optional<Glob> path = Optional.empty();
        Entry pathEntry = endpoint.get("path");
        if (pathEntry != null) {
            path = yaml.string(pathEntry).flatMap(t -> pathGlob(t, pathEntry.value(), pathEntry.path()));
        }
        boolean encodedSlash = false;
        Entry slash = endpoint.get("allow_encoded_slash");
        if (slash != null) {
            encodedSlash = yaml.bool(slash).orElse(false);
        }

        // rules
        Entry accessEntry = endpoint.get("access");
        Entry rulesEntry = endpoint.get("rules");
        Entry denyEntry = endpoint.get("deny_rules");
        boolean graphqlMessages = family == Family.WEBSOCKET && (mentionsOperations(rulesEntry)
                || mentionsOperations(denyEntry) || endpoint.containsKey("persisted_queries")
                || endpoint.containsKey("graphql_persisted_queries"));
        Optional<AccessPreset> access = Optional.empty();
        if (accessEntry != null) {
            if (family == Family.JSON_RPC || family == Family.MCP) {
                problems.error(yaml.at(accessEntry.keyNode()), accessEntry.path(), "access presets are not defined"
                        + " for protocol: " + p.policyName() + "; list the allowed methods in rules");
            } else {
                access = preset(accessEntry);
            }
        }
        List<L7Rule> allow = new ArrayList<>();
        if (rulesEntry != null) {
            if (accessEntry != null) {
                problems.error(yaml.at(rulesEntry.keyNode()), rulesEntry.path(), "give either access or rules, not"
                        + " both (access expands into rules)");
            }
            List<Item> items = yaml.sequence(rulesEntry);
            if (items != null) {
                for (Item item : items) {
                    Map<String, Entry> wrapper = yaml.mapping(item.node(), item.path());
                    if (wrapper == null) {
                        continue;
                    }
                    yaml.rejectUnknown(wrapper, List.of("allow"));
                    Entry a = wrapper.get("allow");
                    if (a == null) {
                        if (wrapper.isEmpty()) {
                            problems.error(yaml.at(item.node()), item.path(), "a rule is written allow: {...}");
                        }
                        continue;
                    }
                    rule(a.value(), a.path(), family, false, graphqlMessages, strictTools, allowAllMcp)
                            .ifPresent(allow::add);
                }
            }
        }
        access.ifPresent(a -> allow.addAll(expand(a, family, graphqlMessages)));
        List<L7Rule> deny = new ArrayList<>();
        if (denyEntry != null) {
            List<Item> items = yaml.sequence(denyEntry);
            if (items != null) {
                if (items.isEmpty()) {
                    problems.error(yaml.at(denyEntry.value()), denyEntry.path(), "deny_rules is empty; leave it out"
                            + " or list at least one rule");
                }
                for (Item item : items) {
                    rule(item.node(), item.path(), family, true, graphqlMessages, strictTools, allowAllMcp)
                            .ifPresent(deny::add);
                }
            }
            if (rulesEntry == null && accessEntry == null && family != Family.MCP) {
                problems.error(yaml.at(denyEntry.keyNode()), denyEntry.path(), "deny_rules narrow an allowed set;"
                        + " give rules or access as well");
            }
        }
        if (rulesEntry == null && accessEntry == null && family != Family.SQL
                && !(family == Family.MCP && allowAllMcp)) {
            problems.error(yaml.at(at.node()), at.path(), "an L7 endpoint needs rules or access (or, for mcp,"
                    + " mcp.allow_all_known_mcp_methods: true); without them it would deny every request");
        }
        if (rulesEntry != null && rulesEntry.value() instanceof SequenceNode s && s.getValue().isEmpty()
                && accessEntry == null && !(family == Family.MCP && allowAllMcp)) {
            problems.error(yaml.at(rulesEntry.value()), rulesEntry.path(), "rules is empty, so the endpoint would"
                    + " deny every request; list at least one rule");
        }
        if (family == Family.MCP) {
            checkMcpConflicts(allow, deny, rulesEntry, denyEntry);
        }

        // persisted queries
        boolean allowRegistered = false;
        Map<String, GraphQlOperationSpec> registry = new LinkedHashMap<>();
        Entry pq = endpoint.get("persisted_queries");
        Entry reg = endpoint.get("graphql_persisted_queries");
        boolean graphqlLike = family == Family.GRAPHQL || graphqlMessages;
        if (pq != null) {
            if (!graphqlLike) {
                onlyFor(pq, "protocol: graphql");
            } else {
                Optional<String> text = yaml.string(pq);
                if (text.isPresent()) {
                    switch (text.get()) {
                        case "deny" -> allowRegistered = false;
                        case "allow_registered" -> allowRegistered = true;
                        default -> problems.error(yaml.at(pq.value()), pq.path(), "unknown persisted_queries value "
                                + Texts.quote(text.get()) + "; expected deny or allow_registered");
                    }
                }
            }
        }
        if (reg != null) {
            if (!graphqlLike) {
                onlyFor(reg, "protocol: graphql");
            } else {
                Map<String, Entry> entries = yaml.mapping(reg.value(), reg.path());
                if (entries != null) {
                    for (Entry e : entries.values()) {
                        registered(e).ifPresent(spec -> registry.put(e.key(), spec));
                    }
                }
                if (!allowRegistered && (pq == null || yaml.string(pq).isPresent())) {
                    problems.error(yaml.at(reg.keyNode()), reg.path(), "graphql_persisted_queries has no effect"
                            + " unless persisted_queries: allow_registered");
                }
            }
        }
        MethodOverride override = methodOverride(endpoint.get("method_override"), p);
        if (problems.errorCount() != errors) {
            return Optional.empty();
        }
        return Optional.of(new L7Endpoint(p, enforcement, Lists.immutable.withAll(allow),
                Lists.immutable.withAll(deny), path, encodedSlash, maxBody, strictTools, allowAllMcp,
                allowRegistered, Maps.immutable.withAll(registry), graphqlMessages, override));
    }

    /** {@return the endpoint's {@code method_override}: refuse unless given; rest and websocket endpoints only} */
    private MethodOverride methodOverride(Entry e, EndpointProtocol p) {
        if (e == null) {
            return MethodOverride.REFUSE;
        }
        if (p != EndpointProtocol.REST && p != EndpointProtocol.WEBSOCKET) {
            onlyFor(e, "protocol: rest and websocket");
            return MethodOverride.REFUSE;
        }
        Optional<String> text = yaml.string(e);
        for (MethodOverride m : MethodOverride.values()) {
            if (text.isPresent() && m.policyName().equals(text.get())) {
                return m;
            }
        }
        text.ifPresent(t -> problems.error(yaml.at(e.value()), e.path(), "unknown method_override value "
                + Texts.quote(t) + "; expected refuse, evaluate or ignore"));
        return MethodOverride.REFUSE;
    }

    private void onlyFor(Entry e, String what) {
        problems.error(yaml.at(e.keyNode()), e.path(), e.key() + " applies to " + what + " endpoints only");
    }

    private Optional<AccessPreset> preset(Entry acc) {
        Optional<String> text = yaml.string(acc);
        if (text.isEmpty()) {
            return Optional.empty();
        }
        for (AccessPreset a : AccessPreset.values()) {
            if (a.policyName().equals(text.get())) {
                return Optional.of(a);
            }
        }
        problems.error(yaml.at(acc.value()), acc.path(), "unknown access value " + Texts.quote(text.get())
                + Texts.suggestion(text.get(), List.of("read-only", "read-write", "full"))
                + "; expected read-only, read-write or full");
        return Optional.empty();
    }

    /** OpenShell's preset expansion (MOD:1580-1620), per protocol. */
    static List<L7Rule> expand(AccessPreset preset, Family family, boolean graphqlMessages) {
        List<L7Rule> out = new ArrayList<>();
        if (family == Family.GRAPHQL) {
            List<String> types = switch (preset) {
                case READ_ONLY -> List.of("query");
                case READ_WRITE -> List.of("query", "mutation");
                case FULL -> List.of("*");
            };
            types.forEach(t -> out.add(operationRule(t)));
            return out;
        }
        List<String> methods;
        if (family == Family.WEBSOCKET) {
            methods = switch (preset) {
                case READ_ONLY -> List.of("GET");
                case READ_WRITE -> graphqlMessages ? List.of("GET") : List.of("GET", "WEBSOCKET_TEXT");
                case FULL -> graphqlMessages ? List.of("GET") : List.of("*");
            };
            if (graphqlMessages && preset != AccessPreset.READ_ONLY) {
                out.add(operationRule(preset == AccessPreset.FULL ? "*" : "query"));
                if (preset == AccessPreset.READ_WRITE) {
                    out.add(operationRule("mutation"));
                }
            }
        } else {
            methods = switch (preset) {
                case READ_ONLY -> List.of("GET", "HEAD", "OPTIONS");
                case READ_WRITE -> List.of("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH");
                case FULL -> List.of("*");
            };
        }
        for (String m : methods) {
            out.add(new L7Rule(m + " **", Optional.of(m), Optional.of(Glob.path("**")), OrderedMaps.adapt(
                    new LinkedHashMap<String, ValueMatcher>()).toImmutable(), Optional.empty(), Optional.empty(),
                    Lists.immutable.empty(), Optional.empty(), Optional.empty()));
        }
        return out;
    }

    private static L7Rule operationRule(String type) {
        return new L7Rule(type + " *", Optional.empty(), Optional.empty(),
                OrderedMaps.adapt(new LinkedHashMap<String, ValueMatcher>()).toImmutable(), Optional.of(type),
                Optional.empty(), Lists.immutable.empty(), Optional.empty(), Optional.empty());
    }

    private static boolean mentionsOperations(Entry rules) {
        if (rules == null || !(rules.value() instanceof SequenceNode seq)) {
            return false;
        }
        for (Node n : seq.getValue()) {
            if (hasOperationKey(n)) {
                return true;
            }
            if (n instanceof MappingNode m) {
                for (var t : m.getValue()) {
                    if (t.getKeyNode() instanceof ScalarNode k && k.getValue().equals("allow")
                            && hasOperationKey(t.getValueNode())) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    private static boolean hasOperationKey(Node n) {
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

    // ----------------------------------------------------------------------------------------------------- rules

    private Optional<L7Rule> rule(Node node, KeyPath path, Family family, boolean deny, boolean graphqlMessages,
                                  boolean strictTools, boolean allowAllMcp) {
        Map<String, Entry> f = yaml.mapping(node, path);
        if (f == null) {
            return Optional.empty();
        }
        int errors = problems.errorCount();
        boolean operation = family == Family.GRAPHQL
                || (family == Family.WEBSOCKET && graphqlMessages && hasOperationKey(node));
        List<String> allowed = switch (family) {
            case REST -> List.of("method", "path", "query");
            case WEBSOCKET -> operation ? List.of("operation_type", "operation_name", "fields")
                    : List.of("method", "path", "query");
            case GRAPHQL -> List.of("operation_type", "operation_name", "fields");
            case JSON_RPC -> List.of("method");
            case MCP -> List.of("method", "tool", "params");
            case SQL -> List.of("command");
        };
        if (family == Family.WEBSOCKET && operation) {
            for (String k : List.of("method", "path", "query")) {
                Entry e = f.get(k);
                if (e != null) {
                    problems.error(yaml.at(e.keyNode()), e.path(), "a GraphQL operation rule cannot also match " + k
                            + "; write the upgrade's method and path in a separate rule");
                }
            }
            f = new LinkedHashMap<>(f);
            f.keySet().removeAll(List.of("method", "path", "query"));
        }
        yaml.rejectUnknown(f, allowed);
        if (family == Family.SQL) {
            Entry c = f.get("command");
            if (c != null) {
                yaml.string(c);
            }
            return Optional.empty();
        }
        Optional<String> method = Optional.empty();
        Optional<Glob> pathGlob = Optional.empty();
        Map<String, ValueMatcher> query = new LinkedHashMap<>();
        Optional<String> opType = Optional.empty();
        Optional<Glob> opName = Optional.empty();
        List<Glob> fields = new ArrayList<>();
        Optional<Glob> rpcMethod = Optional.empty();
        Optional<ValueMatcher> tool = Optional.empty();
        StringBuilder source = new StringBuilder();
        if (operation) {
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
                        opType = Optional.of(lower);
                    }
                }
            }
            Entry n = f.get("operation_name");
            if (n != null) {
                opName = yaml.string(n).flatMap(s -> valueGlob(s, n.value(), n.path()));
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
                                .ifPresent(fields::add);
                    }
                }
            }
            source.append(opType.orElse("?"));
            opName.ifPresent(g -> source.append(' ').append(g.source()));
            if (!fields.isEmpty()) {
                source.append(fields.stream().map(Glob::source).reduce((a, b) -> a + "," + b)
                        .map(s -> " {" + s + "}").orElse(""));
            }
        } else if (family == Family.REST || family == Family.WEBSOCKET) {
            Entry m = f.get("method");
            if (m == null) {
                problems.error(yaml.at(node), path, "method is required (an HTTP method, or * for any)"
                        + (deny ? "; a deny rule without a method would never fire" : ""));
            } else {
                method = yaml.string(m).flatMap(s -> httpMethod(s, m, family));
                if (graphqlMessages && method.filter("WEBSOCKET_TEXT"::equals).isPresent()) {
                    problems.error(yaml.at(m.value()), m.path(), "this websocket endpoint carries GraphQL messages"
                            + " (its rules name operations), which are matched by operation rules; a WEBSOCKET_TEXT"
                            + " rule would bypass them");
                    method = Optional.empty();
                }
            }
            Entry p = f.get("path");
            if (p == null) {
                problems.error(yaml.at(node), path, "path is required (a path glob such as /repos/** or **)"
                        + (deny ? "" : "; an allow rule without a path would never match"));
            } else {
                pathGlob = yaml.string(p).flatMap(s -> pathGlob(s, p.value(), p.path()));
            }
            Entry q = f.get("query");
            if (q != null) {
                Map<String, Entry> keys = yaml.mapping(q.value(), q.path());
                if (keys != null) {
                    for (Entry k : keys.values()) {
                        valueMatcher(k, false).ifPresent(v -> query.put(k.key(), v));
                    }
                }
            }
            source.append(method.orElse("?")).append(' ').append(pathGlob.map(Glob::source).orElse("?"));
            if (!query.isEmpty()) {
                source.append(query.keySet().stream().reduce((a, b) -> a + "&" + b).map(s -> "?" + s).orElse(""));
            }
        } else {
            Entry m = f.get("method");
            Entry t = family == Family.MCP ? f.get("tool") : null;
            Entry params = f.get("params");
            if (family == Family.MCP && params != null) {
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
                tool = valueMatcher(t, strictTools);
            }
            if (m == null) {
                if (family == Family.MCP && allowAllMcp) {
                    rpcMethod = Optional.of(Glob.value(tool.isPresent() ? "tools/call" : "*"));
                } else {
                    problems.error(yaml.at(node), path, "method is required (a JSON-RPC method name, or * for any)");
                }
            } else {
                Optional<String> text = yaml.string(m);
                if (text.isPresent()) {
                    rpcMethod = rpcMethod(text.get(), m, family);
                }
            }
            if (tool.isPresent() && rpcMethod.isPresent() && !rpcMethod.get().matches("tools/call")) {
                problems.error(yaml.at(t.keyNode()), t.path(), "a tool selector applies to tools/call only, and"
                        + " method " + Texts.quote(rpcMethod.get().source()) + " does not cover tools/call");
            }
            source.append(rpcMethod.map(Glob::source).orElse("?"));
            tool.ifPresent(v -> source.append(" tool=").append(v));
        }
        if (problems.errorCount() != errors) {
            return Optional.empty();
        }
        return Optional.of(new L7Rule(source.toString(), method, pathGlob,
                OrderedMaps.adapt(query).toImmutable(), opType, opName, Lists.immutable.withAll(fields), rpcMethod,
                tool));
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

    private Optional<GraphQlOperationSpec> registered(Entry e) {
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

    /**
     * OpenShell MOD:1363-1373, 1516-1530: a rule whose method covers {@code tools/call} without a tool selector would
     * make the tool-specific allow rules meaningless (allow side), or block them all (deny side).
     */
    private void checkMcpConflicts(List<L7Rule> allow, List<L7Rule> deny, Entry rulesEntry, Entry denyEntry) {
        boolean toolSpecificAllow = allow.stream().anyMatch(r -> r.tool().isPresent());
        if (!toolSpecificAllow) {
            return;
        }
        for (L7Rule r : allow) {
            if (r.tool().isEmpty() && r.rpcMethod().map(g -> g.matches("tools/call")).orElse(false)) {
                problems.error(yaml.at(rulesEntry.keyNode()), rulesEntry.path(), "allow rule " + Texts.quote(
                        r.source()) + " admits every tools/call, so the tool-specific allow rules would have no"
                        + " effect; name the tools or remove the broad rule");
            }
        }
        for (L7Rule r : deny) {
            if (r.tool().isEmpty() && r.rpcMethod().map(g -> g.matches("tools/call")).orElse(false)) {
                problems.error(yaml.at(denyEntry.keyNode()), denyEntry.path(), "deny rule " + Texts.quote(
                        r.source()) + " denies every tools/call, so the tool-specific allow rules could never"
                        + " apply; name the tools to deny");
            }
        }
    }
}
