package dev.openshell.supervisor.policy;

import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.supervisor.policy.YamlTree.Entry;
import dev.openshell.supervisor.policy.YamlTree.Item;
import dev.openshell.supervisor.policy.internal.KeyPath;
import dev.openshell.supervisor.policy.internal.Problems;
import dev.openshell.supervisor.policy.internal.Texts;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.regex.Pattern;

import jakarta.json.JsonObject;
import jakarta.json.JsonValue;

import org.eclipse.collections.api.factory.Lists;
import org.eclipse.collections.api.factory.SortedMaps;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.SequenceNode;

/**
 * Walks a composed policy document into a {@link SandboxPolicy}, recording every problem in a {@link Problems}, then
 * runs the cross-entry rules (order uniqueness, {@code tls: skip} overlap) and, when given a catalog, the binding
 * rules. See {@code docs/policy-reference.md} for every message.
 */
final class PolicyReader {
    static final List<String> TOP_KEYS = List.of("version", "network_policies", "network_middlewares",
            "filesystem_policy", "landlock", "process");
    static final List<String> UNUSED_TOP_KEYS = List.of("filesystem_policy", "landlock", "process");
    static final List<String> POLICY_KEYS = List.of("name", "endpoints", "binaries");
    static final List<String> BINARY_KEYS = List.of("path", "harness");
    static final List<String> MIDDLEWARE_KEYS = List.of("name", "middleware", "order", "config", "on_error",
            "endpoints");
    static final List<String> SELECTOR_KEYS = List.of("include", "exclude");
    /** Config keys namespace metadata ({@code <key>.<name>}), so they are plain words. */
    static final Pattern CONFIG_KEY = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    private final YamlTree yaml;
    private final Problems problems;
    private final Optional<BindingCatalog> catalog;
    private final EndpointReader endpointReader;
    /** The endpoints of network_policies read without error, for the checks of middleware include patterns. */
    private List<EndpointAt> admitted = List.of();

    /** A middleware entry as far as it could be read, for the cross-entry rules. */
    private record MiddlewareDraft(Entry entry, Map<String, Entry> fields, OptionalLong order,
                                   Optional<HostSelector> selector, Optional<NetworkMiddlewareConfig> config,
                                   KeyPath selectorPath, Node selectorNode, Optional<BindingId> binding,
                                   Optional<JsonObject> bindingConfig) {
    }

    /** An endpoint that was read without error, with where it was written. */
    private record EndpointAt(NetworkEndpoint endpoint, KeyPath path) {
    }

    PolicyReader(YamlTree yaml, Optional<BindingCatalog> catalog) {
        this.yaml = yaml;
        this.problems = yaml.problems();
        this.catalog = catalog;
        this.endpointReader = new EndpointReader(yaml);
    }

    /** {@return the policy, or {@code null} when the document is not even a mapping} */
    SandboxPolicy read(Node root) {
        Map<String, Entry> top = yaml.mapping(root, KeyPath.root());
        if (top == null) {
            return null;
        }
        yaml.rejectUnknown(top, TOP_KEYS);
        Entry version = top.get("version");
        if (version == null) {
            problems.error(yaml.at(root), KeyPath.root(),
                    "version is required; this supervisor reads version: " + SandboxPolicy.VERSION);
        } else {
            yaml.integer(version, Integer.MIN_VALUE, Integer.MAX_VALUE).ifPresent(v -> {
                if (v != SandboxPolicy.VERSION) {
                    problems.error(yaml.at(version.value()), version.path(), "unsupported policy version " + v
                            + "; this supervisor reads version " + SandboxPolicy.VERSION);
                }
            });
        }
        for (String unused : UNUSED_TOP_KEYS) {
            Entry e = top.get(unused);
            if (e != null) {
                problems.warning(yaml.at(e.keyNode()), e.path(), "not enforced by this supervisor, which mediates"
                        + " network egress only; the section is ignored");
            }
        }
        SortedMap<String, NetworkPolicy> policies = new TreeMap<>();
        List<EndpointAt> endpoints = new ArrayList<>();
        Entry np = top.get("network_policies");
        if (np != null) {
            Map<String, Entry> entries = yaml.mapping(np.value(), np.path());
            if (entries != null) {
                for (Entry e : entries.values()) {
                    NetworkPolicy p = networkPolicy(e, endpoints);
                    if (p != null) {
                        policies.put(e.key(), p);
                    }
                }
            }
        }
        admitted = endpoints;
        SortedMap<String, NetworkMiddlewareConfig> middlewares = new TreeMap<>();
        List<MiddlewareDraft> drafts = new ArrayList<>();
        Entry nm = top.get("network_middlewares");
        if (nm != null) {
            Map<String, Entry> entries = yaml.mapping(nm.value(), nm.path());
            if (entries != null) {
                if (entries.size() > EnvelopeLimits.MAX_CHAIN_STAGES) {
                    problems.error(yaml.at(nm.keyNode()), nm.path(), entries.size()
                            + " middleware configs; a policy may declare at most "
                            + EnvelopeLimits.MAX_CHAIN_STAGES);
                }
                for (Entry e : entries.values()) {
                    MiddlewareDraft d = middleware(e);
                    drafts.add(d);
                    d.config().ifPresent(c -> middlewares.put(c.key(), c));
                }
            }
        }
        checkUniqueOrders(drafts);
        checkUninspectedOverlap(drafts, endpoints);
        checkRefusedUpgrades(drafts, endpoints);
        catalog.ifPresent(c -> drafts.forEach(d -> d.binding().ifPresent(id -> d.bindingConfig()
                .ifPresent(cfg -> checkBinding(c, d, id, cfg)))));
        return new SandboxPolicy(SandboxPolicy.VERSION, SortedMaps.immutable.withSortedMap(policies),
                SortedMaps.immutable.withSortedMap(middlewares));
    }

    // ---------------------------------------------------------------------------------------- network_policies

    private NetworkPolicy networkPolicy(Entry policy, List<EndpointAt> allEndpoints) {
        Map<String, Entry> fields = yaml.mapping(policy.value(), policy.path());
        if (fields == null) {
            return null;
        }
        yaml.rejectUnknown(fields, POLICY_KEYS);
        int errors = problems.errorCount();
        String name = policy.key();
        Entry nameEntry = fields.get("name");
        if (nameEntry != null) {
            name = yaml.string(nameEntry).orElse(name);
        }
        List<NetworkEndpoint> endpoints = new ArrayList<>();
        Entry eps = fields.get("endpoints");
        if (eps != null) {
            List<Item> items = yaml.sequence(eps);
            if (items != null) {
                for (Item item : items) {
                    NetworkEndpoint ep = endpointReader.endpoint(item);
                    if (ep != null) {
                        endpoints.add(ep);
                        allEndpoints.add(new EndpointAt(ep, item.path()));
                    }
                }
            }
        }
        List<BinaryPattern> binaries = new ArrayList<>();
        Entry bins = fields.get("binaries");
        if (bins != null) {
            List<Item> items = yaml.sequence(bins);
            if (items != null) {
                for (Item item : items) {
                    Map<String, Entry> b = yaml.mapping(item.node(), item.path());
                    if (b == null) {
                        continue;
                    }
                    yaml.rejectUnknown(b, BINARY_KEYS);
                    Entry path = b.get("path");
                    if (path == null) {
                        problems.error(yaml.at(item.node()), item.path(), "path is required");
                    } else {
                        yaml.string(path).flatMap(text -> binary(text, path)).ifPresent(binaries::add);
                    }
                    Entry harness = b.get("harness");
                    if (harness != null) {
                        yaml.bool(harness);
                    }
                }
            }
        }
        if (problems.errorCount() != errors) {
            return null;
        }
        return new NetworkPolicy(policy.key(), name, Lists.immutable.withAll(endpoints),
                Lists.immutable.withAll(binaries));
    }

    /**
     * Parses one {@code binaries[].path}; a literal path that is a symbolic link now is resolved and both are kept
     * (OpenShell resolves them at load time too). A path that does not exist here is kept literally, silently: the
     * policy may be checked on another host than the sandbox's.
     */
    private Optional<BinaryPattern> binary(String text, Entry path) {
        BinaryPattern pattern;
        try {
            pattern = BinaryPattern.parse(text);
        } catch (IllegalArgumentException e) {
            problems.error(yaml.at(path.value()), path.path(), e.getMessage());
            return Optional.empty();
        }
        if (pattern.isGlob()) {
            return Optional.of(pattern);
        }
        try {
            java.nio.file.Path p = java.nio.file.Path.of(text);
            if (java.nio.file.Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                return Optional.of(pattern.withResolved(p.toRealPath().toString()));
            }
        } catch (java.nio.file.InvalidPathException | java.io.IOException e) {
            problems.warning(yaml.at(path.value()), path.path(), "symbolic links in " + Texts.quote(text)
                    + " cannot be resolved (" + e.getClass().getSimpleName() + "); it is matched literally");
        }
        return Optional.of(pattern);
    }

    // ------------------------------------------------------------------------------------- network_middlewares

    private MiddlewareDraft middleware(Entry entry) {
        int errors = problems.errorCount();
        if (!CONFIG_KEY.matcher(entry.key()).matches()) {
            problems.error(yaml.at(entry.keyNode()), entry.path(), "config key " + Texts.quote(entry.key())
                    + " must be 1 to 64 letters, digits, '-' or '_' (it namespaces the config's metadata)");
        }
        Map<String, Entry> f = yaml.mapping(entry.value(), entry.path());
        if (f == null) {
            return new MiddlewareDraft(entry, Map.of(), OptionalLong.empty(), Optional.empty(), Optional.empty(),
                    entry.path(), entry.value(), Optional.empty(), Optional.empty());
        }
        yaml.rejectUnknown(f, MIDDLEWARE_KEYS);

        String name = configName(entry, f.get("name"));
        BindingId binding = bindingId(entry, f.get("middleware"));
        OptionalLong order = OptionalLong.of(0);
        Entry orderEntry = f.get("order");
        if (orderEntry != null) {
            order = yaml.integer(orderEntry, Integer.MIN_VALUE, Integer.MAX_VALUE);
        }

        Optional<JsonObject> configRead = config(f.get("config"));
        JsonObject config = configRead.orElse(JsonValue.EMPTY_JSON_OBJECT);
        OnError onError = onError(f.get("on_error"));

        Optional<HostSelector> selector = Optional.empty();
        KeyPath selectorPath = entry.path().key("endpoints");
        Node selectorNode = entry.value();
        Entry ep = f.get("endpoints");
        if (ep == null) {
            problems.error(yaml.at(entry.value()), entry.path(),
                    "endpoints is required: give endpoints.include with at least one host pattern");
        } else {
            selectorNode = ep.keyNode();
            selector = selector(ep);
        }

        Optional<NetworkMiddlewareConfig> built = Optional.empty();
        if (problems.errorCount() == errors) {
            built = Optional.of(new NetworkMiddlewareConfig(entry.key(), name, binding, (int) order.getAsLong(),
                    config, onError, selector.orElseThrow()));
        }
        // the binding's own validation runs whenever the binding ID and config could be read, even if other fields
        // of the entry have errors: every problem is reported at once
        return new MiddlewareDraft(entry, f, order, selector, built, selectorPath, selectorNode,
                Optional.ofNullable(binding), configRead);
    }

    /** {@return the config's display name: {@code name}, else the config key} */
    private String configName(Entry entry, Entry nameEntry) {
        if (nameEntry == null) {
            return entry.key();
        }
        Optional<String> text = yaml.string(nameEntry);
        if (text.isPresent() && text.get().isBlank()) {
            problems.error(yaml.at(nameEntry.value()), nameEntry.path(),
                    "name must not be empty; leave it out to use the config key");
        }
        return text.orElse(entry.key());
    }

    /** {@return the binding ID named by {@code middleware}, or {@code null} after an error (reported)} */
    private BindingId bindingId(Entry entry, Entry mw) {
        if (mw == null) {
            problems.error(yaml.at(entry.value()), entry.path(),
                    "middleware is required: give the binding ID to run, such as openshell/regex");
            return null;
        }
        Optional<String> id = yaml.string(mw);
        if (id.isEmpty()) {
            return null;
        }
        String problem = BindingId.problem(id.get());
        if (problem != null) {
            problems.error(yaml.at(mw.value()), mw.path(), "invalid binding ID " + Texts.quote(id.get())
                    + ": " + problem);
            return null;
        }
        return new BindingId(id.get());
    }

    /**
     * {@return the config object: empty JSON when {@code config} is absent, empty when it could not be read}
     * A config larger than {@link EnvelopeLimits#MAX_CONFIG_BYTES} as JSON is an error (reported), still returned.
     */
    private Optional<JsonObject> config(Entry cfg) {
        if (cfg == null) {
            return Optional.of(JsonValue.EMPTY_JSON_OBJECT);
        }
        if (!yaml.isMapping(cfg.value(), cfg.path()) || !(yaml.json(cfg.value(), cfg.path()) instanceof JsonObject o)) {
            return Optional.empty();
        }
        int size = o.toString().getBytes(StandardCharsets.UTF_8).length;
        if (size > EnvelopeLimits.MAX_CONFIG_BYTES) {
            problems.error(yaml.at(cfg.keyNode()), cfg.path(), "config is " + size
                    + " bytes as JSON; the limit is " + EnvelopeLimits.MAX_CONFIG_BYTES + " bytes");
        }
        return Optional.of(o);
    }

    private OnError onError(Entry oe) {
        Optional<String> text = oe == null ? Optional.empty() : yaml.string(oe);
        if (text.isEmpty()) {
            return OnError.FAIL_CLOSED;
        }
        switch (text.get()) {
            case "fail_closed" -> {
                return OnError.FAIL_CLOSED;
            }
            case "fail_open" -> {
                return OnError.FAIL_OPEN;
            }
            default -> problems.error(yaml.at(oe.value()), oe.path(), "unknown on_error value "
                    + Texts.quote(text.get()) + "; expected fail_closed or fail_open");
        }
        return OnError.FAIL_CLOSED;
    }

    private Optional<HostSelector> selector(Entry endpoints) {
        Map<String, Entry> f = yaml.mapping(endpoints.value(), endpoints.path());
        if (f == null) {
            return Optional.empty();
        }
        int errors = problems.errorCount();
        yaml.rejectUnknown(f, SELECTOR_KEYS);
        List<HostPattern> include = patterns(f.get("include"), true);
        List<HostPattern> exclude = patterns(f.get("exclude"), false);
        Entry in = f.get("include");
        if (in == null) {
            problems.error(yaml.at(endpoints.value()), endpoints.path(), "include must list at least one host pattern");
        } else if (in.value() instanceof SequenceNode list && list.getValue().isEmpty()) {
            problems.error(yaml.at(in.value()), in.path(), "include must list at least one host pattern");
        }
        int total = count(f.get("include")) + count(f.get("exclude"));
        if (total > EnvelopeLimits.MAX_SELECTOR_PATTERNS) {
            problems.error(yaml.at(endpoints.keyNode()), endpoints.path(), total
                    + " host patterns in include and exclude; a config may have at most "
                    + EnvelopeLimits.MAX_SELECTOR_PATTERNS);
        }
        if (problems.errorCount() != errors) {
            return Optional.empty();
        }
        return Optional.of(new HostSelector(Lists.immutable.withAll(include), Lists.immutable.withAll(exclude)));
    }

    private int count(Entry list) {
        return list != null && list.value() instanceof SequenceNode s ? s.getValue().size() : 0;
    }

    private List<HostPattern> patterns(Entry list, boolean include) {
        List<HostPattern> out = new ArrayList<>();
        if (list == null) {
            return out;
        }
        List<Item> items = yaml.sequence(list);
        if (items == null) {
            return out;
        }
        for (Item item : items) {
            Optional<HostPattern> p = yaml.string(item.node(), item.path())
                    .flatMap(t -> endpointReader.pattern(t, item.node(), item.path()));
            p.ifPresent(out::add);
            p.filter(pattern -> include && selectsNothing(pattern)).ifPresent(pattern -> problems.warning(
                    yaml.at(item.node()), item.path(), "include pattern " + Texts.quote(pattern.source())
                            + " selects no host that an endpoint of network_policies admits, so this middleware"
                            + " never runs for it; name a host of an endpoint"));
        }
        return out;
    }

    /**
     * {@return whether endpoints were read and none admits a host {@code include} matches (undecidable: no)} A
     * policy without endpoints (middleware configs only) admits nothing at all: no warning per pattern then.
     */
    private boolean selectsNothing(HostPattern include) {
        try {
            return !admitted.isEmpty()
                    && admitted.stream().noneMatch(at -> include.overlaps(at.endpoint().reachableHosts()));
        } catch (IllegalStateException tooComplex) {
            return false; // checkUninspectedOverlap reports the analysis budget where it matters
        }
    }

    // ---------------------------------------------------------------------------------------- cross-entry rules

    /** RFC 0009, "Middleware ordering": order values must be unique across the policy, default 0 included. */
    private void checkUniqueOrders(List<MiddlewareDraft> drafts) {
        Map<Long, MiddlewareDraft> first = new LinkedHashMap<>();
        for (MiddlewareDraft d : drafts) {
            if (d.order().isEmpty()) {
                continue;
            }
            long order = d.order().getAsLong();
            MiddlewareDraft earlier = first.putIfAbsent(order, d);
            if (earlier != null) {
                KeyPath orderPath = d.entry().path().key("order");
                Entry written = d.fields().get("order");
                problems.error(written != null ? yaml.at(written.value()) : yaml.at(d.entry().keyNode()), orderPath,
                        "order " + order + (written == null ? " (the default)" : "") + " is also used by "
                                + earlier.entry().path() + "; order values must be unique across the policy");
            }
        }
    }

    /**
     * RFC 0009, "Operation phases and placement": "Policy validation rejects any middleware selector whose possible
     * hosts overlap an endpoint configured with tls: skip". Applied to every config, whatever its on_error, and also
     * to {@code protocol: tcp} endpoints, which are never parsed either.
     */
    private void checkUninspectedOverlap(List<MiddlewareDraft> drafts, List<EndpointAt> endpoints) {
        for (MiddlewareDraft d : drafts) {
            if (d.selector().isEmpty()) {
                continue;
            }
            for (EndpointAt at : endpoints) {
                NetworkEndpoint ep = at.endpoint();
                if (ep.inspectable()) {
                    continue;
                }
                String why = ep.tls() == TlsMode.SKIP ? "tls: skip" : "protocol: tcp";
                String hostText = ep.host().map(h -> "host " + Texts.quote(h.source())).orElse("no host");
                Optional<String> shared;
                try {
                    shared = d.selector().get().sharedHost(ep.reachableHosts());
                } catch (IllegalStateException tooComplex) {
                    problems.error(yaml.at(d.selectorNode()), d.selectorPath(), "could not decide within the analysis"
                            + " budget whether this selector overlaps " + at.path() + " (" + hostText + ", " + why
                            + "); simplify the wildcard patterns");
                    continue;
                }
                shared.ifPresent(host -> problems.error(yaml.at(d.selectorNode()), d.selectorPath(), "selects host "
                        + Texts.quote(host) + ", which " + at.path() + " (" + hostText + ", " + why
                        + ") relays without inspection, so this middleware would be bypassed; exclude those hosts"
                        + " or remove " + why));
            }
        }
    }

    /**
     * RFC 0009, "Operation phases and placement": traffic that becomes uninspectable under a matching chain with any
     * {@code fail_closed} stage is denied. The bytes after a protocol upgrade (WebSocket) are not inspected, so the
     * supervisor refuses {@code Upgrade} requests to an endpoint a {@code fail_closed} config selects, unless the
     * endpoint is {@code protocol: websocket} or says {@code upgrades: allow_uninspected}. That is a warning, once per
     * config and endpoint: ordinary requests still work, but an agent's WebSocket will not. A config whose binding's
     * provider reads WebSocket messages ({@link BindingFacts#readsWebSocketMessages()}) joins the session instead: no
     * warning (the embedded default policy's {@code openshell/regex} is one).
     */
    private void checkRefusedUpgrades(List<MiddlewareDraft> drafts, List<EndpointAt> endpoints) {
        for (MiddlewareDraft d : drafts) {
            if (d.selector().isEmpty() || d.config().isEmpty() || d.config().get().onError() != OnError.FAIL_CLOSED
                    || readsMessages(d.config().get().middleware())) {
                continue; // a config that reads WebSocket messages joins the session instead of refusing it
            }
            for (EndpointAt at : endpoints) {
                NetworkEndpoint ep = at.endpoint();
                if (!ep.inspectable() || ep.upgradesAllowed()) {
                    continue;
                }
                Optional<String> shared;
                try {
                    shared = d.selector().get().sharedHost(ep.reachableHosts());
                } catch (IllegalStateException tooComplex) {
                    continue; // checkUninspectedOverlap reports the budget for the same pair where it matters
                }
                String hostText = ep.host().map(h -> "host " + Texts.quote(h.source())).orElse("no host");
                shared.ifPresent(host -> problems.warning(yaml.at(d.selectorNode()), d.selectorPath(), "selects host "
                        + Texts.quote(host) + " of " + at.path() + " (" + hostText + "), where protocol upgrades"
                        + " (WebSocket) will be refused: this config is fail_closed and the bytes after an upgrade"
                        + " are not inspected; set protocol: websocket or upgrades: allow_uninspected on the endpoint"
                        + " to allow them"));
            }
        }
    }

    /** {@return whether the catalog says the binding's provider reads WebSocket client messages} */
    private boolean readsMessages(BindingId id) {
        try {
            return catalog.flatMap(c -> c.lookup(id)).map(BindingFacts::readsWebSocketMessages).orElse(false);
        } catch (RuntimeException e) {
            return false; // checkBinding reports the lookup failure
        }
    }

    /** RFC 0009, "Contract versioning" and "Registration and delivery": the binding exists and accepts the config. */
    private void checkBinding(BindingCatalog catalog, MiddlewareDraft draft, BindingId id, JsonObject config) {
        Map<String, Entry> f = draft.fields();
        Entry entry = draft.entry();
        Entry mw = f.get("middleware");
        SourceLocation at = yaml.at(mw.value());
        KeyPath path = mw.path();
        Optional<BindingFacts> facts;
        try {
            facts = catalog.lookup(id);
        } catch (RuntimeException e) {
            problems.error(at, path, "the binding catalog failed to look up " + Texts.quote(id.value()) + " ("
                    + e.getClass().getSimpleName() + ")");
            return;
        }
        if (facts.isEmpty()) {
            problems.error(at, path, id.isReserved()
                    ? "binding " + Texts.quote(id.value()) + " is not a built-in of this supervisor; the "
                            + BindingId.RESERVED_PREFIX + " namespace is reserved for built-ins"
                    : "no built-in, plugin or registered middleware service provides binding "
                            + Texts.quote(id.value()));
            return;
        }
        BindingFacts b = facts.get();
        if (id.isReserved() && b.ownerKind() != BindingFacts.OwnerKind.BUILTIN) {
            problems.error(at, path, "binding " + Texts.quote(id.value()) + " is provided by "
                    + b.ownerKind().description() + " " + Texts.quote(b.ownerName()) + ", but the "
                    + BindingId.RESERVED_PREFIX + " namespace is reserved for built-ins");
            return;
        }
        Entry cfg = f.get("config");
        SourceLocation configAt = cfg != null ? yaml.at(cfg.keyNode()) : at;
        KeyPath configPath = entry.path().key("config");
        ConfigValidation answer;
        try {
            answer = b.validate(config);
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            problems.error(configAt, configPath, "binding " + Texts.quote(id.value()) + " of "
                    + b.ownerKind().description() + " " + Texts.quote(b.ownerName())
                    + " could not validate the config (" + e.getClass().getSimpleName() + ")");
            return;
        }
        if (answer == null || answer.valid()) {
            if (answer == null) {
                problems.error(configAt, configPath, "binding " + Texts.quote(id.value())
                        + " gave no answer to the config validation");
            }
            return;
        }
        if (b.ownerKind() == BindingFacts.OwnerKind.BUILTIN) {
            problems.error(configAt, configPath, "rejected by built-in " + Texts.quote(id.value()) + ": "
                    + Texts.printable(answer.reason()));
        } else {
            problems.error(configAt, configPath, "rejected by binding " + Texts.quote(id.value()) + " of "
                    + b.ownerKind().description() + " " + Texts.quote(b.ownerName())
                    + " (its reason is untrusted text, shown separately)", answer.reason());
        }
    }
}
