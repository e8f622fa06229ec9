package dev.openshell.supervisor.policy;

import dev.openshell.supervisor.policy.YamlTree.Entry;
import dev.openshell.supervisor.policy.YamlTree.Item;
import dev.openshell.supervisor.policy.internal.Problems;
import dev.openshell.supervisor.policy.internal.Texts;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

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

    private final YamlTree yaml;
    private final Problems problems;
    private final L7RuleReader rules;

    L7Reader(YamlTree yaml) {
        this.yaml = yaml;
        this.problems = yaml.problems();
        this.rules = new L7RuleReader(yaml);
    }

    /** The protocol-specific reading of a rule. */
    enum Family {
        REST, WEBSOCKET, GRAPHQL, JSON_RPC, MCP, SQL;

        static Family of(EndpointProtocol p) {
            return switch (p) {
                case REST -> REST;
                case WEBSOCKET -> WEBSOCKET;
                case GRAPHQL -> GRAPHQL;
                case JSON_RPC -> JSON_RPC;
                case MCP -> MCP;
                default -> SQL;
            };
        }
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
        if (protocol.isEmpty() || protocol.get() == EndpointProtocol.TCP) {
            refuseL7Keys(endpoint, protocolGiven, protocol.isPresent());
            return Optional.empty();
        }
        EndpointProtocol p = protocol.get();
        Family family = Family.of(p);
        checkEnforcement(endpoint, at, p, family, concreteHost, enforcement);
        Stanzas stanzas = stanzas(endpoint, p);
        Optional<Glob> path = Optional.empty();
        Entry pathEntry = endpoint.get("path");
        if (pathEntry != null) {
            path = yaml.string(pathEntry).flatMap(t -> rules.pathGlob(t, pathEntry.value(), pathEntry.path()));
        }
        Entry slash = endpoint.get("allow_encoded_slash");
        boolean encodedSlash = slash != null && yaml.bool(slash).orElse(false);
        boolean graphqlMessages = family == Family.WEBSOCKET && (mentionsOperations(endpoint.get("rules"))
                || mentionsOperations(endpoint.get("deny_rules")) || endpoint.containsKey("persisted_queries")
                || endpoint.containsKey("graphql_persisted_queries"));
        L7RuleReader.Context context = new L7RuleReader.Context(family, graphqlMessages, stanzas.strictTools(),
                stanzas.allowAllMcp());
        RuleSets sets = ruleSets(endpoint, at, p, context);
        Persisted persisted = persisted(endpoint, family == Family.GRAPHQL || graphqlMessages);
        MethodOverride override = methodOverride(endpoint.get("method_override"), p);
        if (problems.errorCount() != errors) {
            return Optional.empty();
        }
        return Optional.of(new L7Endpoint(p, enforcement, Lists.immutable.withAll(sets.allow()),
                Lists.immutable.withAll(sets.deny()), path, encodedSlash, stanzas.maxBody(), stanzas.strictTools(),
                stanzas.allowAllMcp(), persisted.allowRegistered(), Maps.immutable.withAll(persisted.registry()),
                graphqlMessages, override));
    }

    /** An endpoint without an L7 protocol takes none of the L7 keys. */
    private void refuseL7Keys(Map<String, Entry> endpoint, boolean protocolGiven, boolean tcp) {
        if (protocolGiven && !tcp) {
            return;
        }
        for (String key : KEYS) {
            Entry e = endpoint.get(key);
            if (e != null) {
                problems.error(yaml.at(e.keyNode()), e.path(), tcp
                        ? key + " has no effect on a protocol: tcp endpoint, which is never parsed"
                        : key + " needs an L7 protocol on the endpoint (protocol: rest, graphql, json-rpc, mcp or"
                                + " websocket); without one the endpoint is admitted at L4 only and the setting would"
                                + " have no effect");
            }
        }
    }

    private void checkEnforcement(Map<String, Entry> endpoint, Item at, EndpointProtocol p, Family family,
                                  boolean concreteHost, Enforcement enforcement) {
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
    }

    /** The body limit and the protocol stanzas' settings. */
    private record Stanzas(int maxBody, boolean strictTools, boolean allowAllMcp) {
    }

    private Stanzas stanzas(Map<String, Entry> endpoint, EndpointProtocol p) {
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
        Map<String, Entry> jsonRpc = stanza(endpoint, "json_rpc", p, EndpointProtocol.JSON_RPC, List.of(
                "max_body_bytes"));
        Map<String, Entry> mcp = stanza(endpoint, "mcp", p, EndpointProtocol.MCP, List.of("max_body_bytes",
                "strict_tool_names", "allow_all_known_mcp_methods"));
        for (Map<String, Entry> s : List.of(jsonRpc, mcp)) {
            Entry m = s.get("max_body_bytes");
            if (m != null) {
                maxBody = (int) yaml.integer(m, 1, L7Endpoint.MAX_BODY_BYTES_LIMIT).orElse(maxBody);
            }
        }
        Entry strict = mcp.get("strict_tool_names");
        if (strict != null) {
            strictTools = yaml.bool(strict).orElse(true);
        }
        Entry all = mcp.get("allow_all_known_mcp_methods");
        if (all != null) {
            allowAllMcp = yaml.bool(all).orElse(false);
        }
        return new Stanzas(maxBody, strictTools, allowAllMcp);
    }

    /** {@return the entries of stanza {@code key}, empty when absent, malformed or written for another protocol} */
    private Map<String, Entry> stanza(Map<String, Entry> endpoint, String key, EndpointProtocol p,
                                      EndpointProtocol owner, List<String> keys) {
        Entry e = endpoint.get(key);
        if (e == null) {
            return Map.of();
        }
        if (p != owner) {
            onlyFor(e, "protocol: " + owner.policyName());
            return Map.of();
        }
        Map<String, Entry> s = yaml.mapping(e.value(), e.path());
        if (s == null) {
            return Map.of();
        }
        yaml.rejectUnknown(s, keys);
        return s;
    }

    /** An endpoint's allow rules (expanded presets included) and deny rules. */
    private record RuleSets(List<L7Rule> allow, List<L7Rule> deny) {
    }

    private RuleSets ruleSets(Map<String, Entry> endpoint, Item at, EndpointProtocol p, L7RuleReader.Context c) {
        Family family = c.family();
        Entry accessEntry = endpoint.get("access");
        Entry rulesEntry = endpoint.get("rules");
        Entry denyEntry = endpoint.get("deny_rules");
        Optional<AccessPreset> access = Optional.empty();
        if (accessEntry != null) {
            if (family == Family.JSON_RPC || family == Family.MCP) {
                problems.error(yaml.at(accessEntry.keyNode()), accessEntry.path(), "access presets are not defined"
                        + " for protocol: " + p.policyName() + "; list the allowed methods in rules");
            } else {
                access = preset(accessEntry);
            }
        }
        if (rulesEntry != null && accessEntry != null) {
            problems.error(yaml.at(rulesEntry.keyNode()), rulesEntry.path(), "give either access or rules, not"
                    + " both (access expands into rules)");
        }
        List<L7Rule> allow = allowRules(rulesEntry, c);
        access.ifPresent(a -> allow.addAll(expand(a, family, c.graphqlMessages())));
        List<L7Rule> deny = denyRules(denyEntry, c);
        if (denyEntry != null && rulesEntry == null && accessEntry == null && family != Family.MCP) {
            problems.error(yaml.at(denyEntry.keyNode()), denyEntry.path(), "deny_rules narrow an allowed set;"
                    + " give rules or access as well");
        }
        boolean mcpAll = family == Family.MCP && c.allowAllMcp();
        if (rulesEntry == null && accessEntry == null && family != Family.SQL && !mcpAll) {
            problems.error(yaml.at(at.node()), at.path(), "an L7 endpoint needs rules or access (or, for mcp,"
                    + " mcp.allow_all_known_mcp_methods: true); without them it would deny every request");
        }
        if (rulesEntry != null && rulesEntry.value() instanceof SequenceNode s && s.getValue().isEmpty()
                && accessEntry == null && !mcpAll) {
            problems.error(yaml.at(rulesEntry.value()), rulesEntry.path(), "rules is empty, so the endpoint would"
                    + " deny every request; list at least one rule");
        }
        if (family == Family.MCP) {
            checkMcpConflicts(allow, deny, rulesEntry, denyEntry);
        }
        return new RuleSets(allow, deny);
    }

    private List<L7Rule> allowRules(Entry rulesEntry, L7RuleReader.Context c) {
        List<L7Rule> allow = new ArrayList<>();
        List<Item> items = rulesEntry == null ? null : yaml.sequence(rulesEntry);
        for (Item item : items == null ? List.<Item>of() : items) {
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
            rules.rule(a.value(), a.path(), c, false).ifPresent(allow::add);
        }
        return allow;
    }

    private List<L7Rule> denyRules(Entry denyEntry, L7RuleReader.Context c) {
        List<L7Rule> deny = new ArrayList<>();
        List<Item> items = denyEntry == null ? null : yaml.sequence(denyEntry);
        if (items == null) {
            return deny;
        }
        if (items.isEmpty()) {
            problems.error(yaml.at(denyEntry.value()), denyEntry.path(), "deny_rules is empty; leave it out"
                    + " or list at least one rule");
        }
        for (Item item : items) {
            rules.rule(item.node(), item.path(), c, true).ifPresent(deny::add);
        }
        return deny;
    }

    /** The persisted-query settings of a GraphQL endpoint. */
    private record Persisted(boolean allowRegistered, Map<String, GraphQlOperationSpec> registry) {
    }

    private Persisted persisted(Map<String, Entry> endpoint, boolean graphqlLike) {
        boolean allowRegistered = false;
        Map<String, GraphQlOperationSpec> registry = new LinkedHashMap<>();
        Entry pq = endpoint.get("persisted_queries");
        Entry reg = endpoint.get("graphql_persisted_queries");
        if (pq != null && !graphqlLike) {
            onlyFor(pq, "protocol: graphql");
        } else if (pq != null) {
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
        if (reg != null && !graphqlLike) {
            onlyFor(reg, "protocol: graphql");
        } else if (reg != null) {
            Map<String, Entry> entries = yaml.mapping(reg.value(), reg.path());
            if (entries != null) {
                for (Entry e : entries.values()) {
                    rules.registered(e).ifPresent(spec -> registry.put(e.key(), spec));
                }
            }
            if (!allowRegistered && (pq == null || yaml.string(pq).isPresent())) {
                problems.error(yaml.at(reg.keyNode()), reg.path(), "graphql_persisted_queries has no effect"
                        + " unless persisted_queries: allow_registered");
            }
        }
        return new Persisted(allowRegistered, registry);
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
            if (L7RuleReader.hasOperationKey(n)) {
                return true;
            }
            if (n instanceof MappingNode m) {
                for (var t : m.getValue()) {
                    if (t.getKeyNode() instanceof ScalarNode k && k.getValue().equals("allow")
                            && L7RuleReader.hasOperationKey(t.getValueNode())) {
                        return true;
                    }
                }
            }
        }
        return false;
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
