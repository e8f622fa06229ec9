package dev.openshell.supervisor.policy;

import dev.openshell.middleware.spi.net.IpRange;
import dev.openshell.supervisor.policy.YamlTree.Entry;
import dev.openshell.supervisor.policy.YamlTree.Item;
import dev.openshell.supervisor.policy.internal.KeyPath;
import dev.openshell.supervisor.policy.internal.Problems;
import dev.openshell.supervisor.policy.internal.Texts;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonValue;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.eclipse.collections.api.factory.Lists;
import org.eclipse.collections.api.factory.primitive.IntLists;
import org.eclipse.collections.api.list.primitive.IntList;
import org.eclipse.collections.api.list.primitive.MutableIntList;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.SequenceNode;

/**
 * Reads one {@code network_policies.*.endpoints[]} entry into a {@link NetworkEndpoint}
 * ({@code docs/policy-reference.md}, "Endpoints"): host, ports, protocol, TLS mode, enforcement, {@code allowed_ips},
 * the L7 keys ({@link L7Reader}) and the endpoint options. Every problem is reported at its node (file:line:col).
 */
final class EndpointReader {
    /** The endpoint keys this reader interprets (the L7 keys are {@link L7Reader#KEYS}). */
    static final List<String> ENDPOINT_KEYS = List.of("host", "port", "ports", "protocol", "tls", "allowed_ips",
            NetworkEndpoint.UPGRADES, NetworkEndpoint.TRACE, NetworkEndpoint.BINARY_MESSAGES);
    /** OpenShell endpoint settings this supervisor keeps in {@link NetworkEndpoint#options()} without interpreting. */
    static final List<String> ENDPOINT_KEPT_KEYS = List.of("websocket_credential_rewrite",
            "request_body_credential_rewrite", "allow_uninspected_credentials", "credential_signing",
            "signing_service", "signing_region");

    private final YamlTree yaml;
    private final Problems problems;

    EndpointReader(YamlTree yaml) {
        this.yaml = yaml;
        this.problems = yaml.problems();
    }

    /** {@return the endpoint, or {@code null} after errors (reported)} @param item the endpoint's node and path */
    NetworkEndpoint endpoint(Item item) {
        Map<String, Entry> f = yaml.mapping(item.node(), item.path());
        if (f == null) {
            return null;
        }
        int errors = problems.errorCount();
        List<String> allowed = new ArrayList<>(ENDPOINT_KEYS);
        allowed.addAll(L7Reader.KEYS);
        allowed.addAll(ENDPOINT_KEPT_KEYS);
        yaml.rejectUnknown(f, allowed);
        Entry hostEntry = f.get("host");
        Optional<HostPattern> host = hostEntry == null ? Optional.empty()
                : yaml.string(hostEntry).flatMap(h -> pattern(h, hostEntry.value(), hostEntry.path()));
        IntList ports = ports(f, item);
        Entry proto = f.get("protocol");
        Optional<EndpointProtocol> protocol = protocol(proto);
        Entry tlsEntry = f.get("tls");
        TlsMode tls = tls(tlsEntry);
        Enforcement enforcement = enforcement(f.get("enforcement"));
        List<IpRange> allowedIps = allowedIps(f, item, hostEntry != null);
        boolean concreteHost = host.map(HostPattern::isLiteral).orElse(false);
        Optional<L7Endpoint> l7 = new L7Reader(yaml).read(f, item, protocol, proto != null, concreteHost,
                enforcement);
        if (tls == TlsMode.SKIP && l7.isPresent() && l7.get().protocol() != EndpointProtocol.SQL) {
            // rules that apply to part of the traffic only are said at load, not left to be found out
            problems.warning(yaml.at(tlsEntry.value()), tlsEntry.path(), "tls: skip relays HTTPS (CONNECT) to"
                    + " this endpoint without terminating it, so its L7 rules (protocol: "
                    + l7.get().protocol().policyName() + ") apply to plain-HTTP requests only");
        }
        JsonObjectBuilder options = options(f);
        if (problems.errorCount() != errors) {
            return null;
        }
        return new NetworkEndpoint(host, ports.toImmutable(), protocol, tls, Lists.immutable.withAll(allowedIps), l7,
                options.build());
    }

    private IntList ports(Map<String, Entry> f, Item item) {
        MutableIntList ports = IntLists.mutable.empty();
        Entry port = f.get("port");
        Entry portList = f.get("ports");
        if (port != null && portList != null) {
            problems.error(yaml.at(portList.keyNode()), portList.path(), "give either port or ports, not both");
        } else if (port != null) {
            yaml.integer(port, 1, 65535).ifPresent(p -> ports.add((int) p));
        } else if (portList != null) {
            List<Item> items = yaml.sequence(portList);
            if (items != null) {
                if (items.isEmpty()) {
                    problems.error(yaml.at(portList.value()), portList.path(), "ports must list at least one port");
                }
                for (Item p : items) {
                    yaml.integer(p.node(), p.path(), 1, 65535).ifPresent(v -> ports.add((int) v));
                }
            }
        } else {
            problems.error(yaml.at(item.node()), item.path(), "port or ports is required");
        }
        return ports;
    }

    private Optional<EndpointProtocol> protocol(Entry proto) {
        Optional<String> text = proto == null ? Optional.empty() : yaml.string(proto);
        if (text.isEmpty()) {
            return Optional.empty();
        }
        Optional<EndpointProtocol> protocol = EndpointProtocol.fromPolicyName(text.get());
        if (protocol.isEmpty()) {
            problems.error(yaml.at(proto.value()), proto.path(), "unknown protocol " + Texts.quote(text.get())
                    + "; expected one of: rest, graphql, json-rpc, mcp, websocket, sql, tcp");
        }
        return protocol;
    }

    private TlsMode tls(Entry tlsEntry) {
        Optional<String> text = tlsEntry == null ? Optional.empty() : yaml.string(tlsEntry);
        if (text.isEmpty()) {
            return TlsMode.TERMINATE;
        }
        switch (text.get()) {
            case "skip" -> {
                return TlsMode.SKIP;
            }
            case "terminate", "passthrough" -> problems.warning(yaml.at(tlsEntry.value()), tlsEntry.path(),
                    "tls: " + text.get() + " is deprecated and has no effect: the supervisor terminates TLS"
                            + " unless tls: skip");
            default -> problems.error(yaml.at(tlsEntry.value()), tlsEntry.path(), "unknown tls value "
                    + Texts.quote(text.get()) + "; expected skip (terminate and passthrough are deprecated"
                    + " and have no effect)");
        }
        return TlsMode.TERMINATE;
    }

    private Enforcement enforcement(Entry enf) {
        Optional<String> text = enf == null ? Optional.empty() : yaml.string(enf);
        if (text.isEmpty()) {
            return Enforcement.ENFORCE;
        }
        switch (text.get()) {
            case "enforce" -> {
                return Enforcement.ENFORCE;
            }
            case "audit" -> {
                return Enforcement.AUDIT;
            }
            default -> problems.error(yaml.at(enf.value()), enf.path(), "unknown enforcement value "
                    + Texts.quote(text.get()) + "; expected enforce or audit");
        }
        return Enforcement.ENFORCE;
    }

    private List<IpRange> allowedIps(Map<String, Entry> f, Item item, boolean hostGiven) {
        List<IpRange> allowedIps = new ArrayList<>();
        Entry ips = f.get("allowed_ips");
        List<Item> items = ips == null ? null : yaml.sequence(ips);
        for (Item ip : items == null ? List.<Item>of() : items) {
            yaml.string(ip.node(), ip.path()).flatMap(t -> allowedRange(t, ip)).ifPresent(allowedIps::add);
        }
        boolean ipsGiven = ips != null && ips.value() instanceof SequenceNode list && !list.getValue().isEmpty();
        if (!hostGiven && !ipsGiven) {
            problems.error(yaml.at(item.node()), item.path(),
                    "host is required unless allowed_ips names the destination addresses");
        }
        return allowedIps;
    }

    /** The endpoint options: the opt-ins this supervisor reads and the OpenShell settings it keeps unread. */
    private JsonObjectBuilder options(Map<String, Entry> f) {
        JsonObjectBuilder options = YamlTree.JSON.createObjectBuilder();
        option(f, options, NetworkEndpoint.UPGRADES, NetworkEndpoint.ALLOW_UNINSPECTED,
                "without it, upgrades under a fail_closed middleware are refused");
        option(f, options, NetworkEndpoint.BINARY_MESSAGES, NetworkEndpoint.ALLOW_UNINSPECTED,
                "without it, WebSocket binary messages under a fail_closed middleware are refused");
        option(f, options, NetworkEndpoint.TRACE, NetworkEndpoint.ALLOW,
                "without it, TRACE is answered 405 by the supervisor");
        for (String kept : ENDPOINT_KEPT_KEYS) {
            Entry e = f.get(kept);
            if (e != null) {
                JsonValue v = yaml.json(e.value(), e.path());
                if (v != null) {
                    options.add(kept, v);
                }
                problems.warning(yaml.at(e.keyNode()), e.path(), "not interpreted by this supervisor; the setting is"
                        + " kept with the endpoint but has no effect");
            }
        }
        return options;
    }

    /** An opt-in option: key {@code key} takes the one value {@code value}; {@code without} says what it changes. */
    private void option(Map<String, Entry> f, JsonObjectBuilder options, String key, String value, String without) {
        Entry e = f.get(key);
        Optional<String> text = e == null ? Optional.empty() : yaml.string(e);
        if (text.isEmpty()) {
            return;
        }
        if (text.get().equals(value)) {
            options.add(key, value);
        } else {
            problems.error(yaml.at(e.value()), e.path(), "unknown " + key + " value " + Texts.quote(text.get())
                    + "; expected " + value + " (" + without + ")");
        }
    }

    private Optional<IpRange> allowedRange(String text, Item at) {
        IpRange range;
        try {
            range = IpRange.parse(text);
        } catch (IllegalArgumentException e) {
            problems.error(yaml.at(at.node()), at.path(), e.getMessage());
            return Optional.empty();
        }
        for (String[] forbidden : new String[][] {{"127.0.0.0/8", "loopback"}, {"::1/128", "loopback"},
                {"169.254.0.0/16", "link-local"}, {"fe80::/10", "link-local"}, {"0.0.0.0/32", "unspecified"},
                {"::/128", "unspecified"}}) {
            if (range.overlaps(IpRange.parse(forbidden[0]))) {
                problems.error(yaml.at(at.node()), at.path(), "address range " + Texts.quote(text) + " includes "
                        + forbidden[1] + " addresses (" + forbidden[0] + "), which allowed_ips never exempts");
                return Optional.empty();
            }
        }
        return Optional.of(range);
    }

    /** {@return a host pattern, or empty after reporting why it is invalid} */
    Optional<HostPattern> pattern(String text, Node node, KeyPath path) {
        String problem = HostPattern.problem(text);
        if (problem != null) {
            problems.error(yaml.at(node), path, "invalid host pattern " + Texts.quote(text) + ": " + problem);
            return Optional.empty();
        }
        return Optional.of(HostPattern.parse(text));
    }
}
