package dev.openshell.supervisor.runtime;

import dev.openshell.middleware.spi.Phase;
import dev.openshell.supervisor.l7.L7Decision;
import dev.openshell.supervisor.l7.L7Engine;
import dev.openshell.supervisor.l7.L7Request;
import dev.openshell.supervisor.engine.ProviderRegistry;
import dev.openshell.supervisor.engine.RegisteredBinding;
import dev.openshell.middleware.spi.OriginatingProcess;
import dev.openshell.supervisor.policy.BinaryPattern;
import dev.openshell.supervisor.policy.Caller;
import dev.openshell.supervisor.policy.HostPattern;
import dev.openshell.supervisor.policy.NetworkMiddlewareConfig;
import dev.openshell.supervisor.policy.SandboxPolicy;
import dev.openshell.supervisor.policy.gateway.GatewayConfig;
import dev.openshell.supervisor.proxy.AdmissionDecision;
import dev.openshell.supervisor.proxy.EndpointFacts;
import dev.openshell.supervisor.proxy.NetworkSettings;
import dev.openshell.supervisor.proxy.SsrfCheck;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What the supervisor would do with a request to one destination ({@code supervisor explain}): whether L4 network
 * policy admits it and which policy does, whether SSRF protection then refuses it (the proxy's own check, with the
 * gateway's {@code [openshell.supervisor.network]} settings and the endpoint's {@code allowed_ips}), and the chain
 * that would run, computed by the same rules the running supervisor applies (RFC 0009, "Operation phases and
 * placement", "Policy integration", "Middleware ordering").
 *
 * <p>Chain selection depends only on the admitted host (never on the method, path, or which network policy admitted
 * it): a config is selected when one of its {@code endpoints.include} patterns matches the host and none of its
 * {@code endpoints.exclude} patterns does. Selected pre-credentials stages run by ascending {@code order}; selected
 * post-credentials stages (restricted built-ins such as {@code openshell/sigv4}) run after credential injection, also
 * by order, and are listed after them. A request that is not admitted, or whose endpoint is {@code tls: skip}, runs
 * no stage at all.
 *
 * <p>Binary scoping: with a binary ({@code explain --binary PATH}), admission is decided for a process running that
 * executable (no ancestors), as the running supervisor decides it for an identified process; without one, for some
 * process, and {@link #policies()} says which binaries each policy is limited to.
 *
 * @param host the canonical host asked about
 * @param port the port asked about
 * @param binary the executable asked about, as the kernel would report it (symbolic links resolved when it exists
 *     here); empty when none was given
 * @param admitted whether the request would be forwarded: a network policy admits {@code host:port} (for
 *     {@code binary}, when given) and SSRF protection lets it through
 * @param networkPolicy the key of the network policy that admits it; empty when no network policy does
 * @param refusal why the proxy would refuse it, when it would: {@code policy_denied}, {@code ssrf_blocked} or
 *     {@code unresolvable_host}, with the detail the client would get
 * @param ssrf the SSRF check: {@code passed}, {@code refused}, {@code not_resolved} (a DNS name explained without
 *     resolving it: the proxy resolves it and refuses it if any address is blocked) or {@code not_reached} (network
 *     policy refuses first)
 * @param policies every network policy with an endpoint admitting {@code host:port}, in key order, with its binary
 *     scoping
 * @param l7 the L7 decision on the method and path asked about, before the chain; empty when the request is not
 *     admitted or no endpoint with an L7 {@code protocol} governs the host and port (for {@code binary}, when given)
 * @param chain the stages that would run, in run order; empty when none would
 * @param notSelected every other config, in order, with the reason it would not run
 * @param responses the response stages ({@code HTTP_RESPONSE/PRE_RETURN}) that would run on the final response, in
 *     run order; empty when none would
 */
public record Explanation(String host, int port, Optional<String> binary, boolean admitted,
                          Optional<String> networkPolicy, Optional<Refusal> refusal, String ssrf,
                          List<PolicyMatch> policies, Optional<L7> l7, List<Stage> chain,
                          List<NotSelected> notSelected, List<Stage> responses) {
    /**
     * Checks the parts.
     *
     * @throws NullPointerException if a part is {@code null}
     */
    public Explanation {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(binary, "binary");
        Objects.requireNonNull(networkPolicy, "networkPolicy");
        policies = List.copyOf(policies);
        responses = List.copyOf(responses);
        Objects.requireNonNull(refusal, "refusal");
        Objects.requireNonNull(ssrf, "ssrf");
        Objects.requireNonNull(l7, "l7");
        chain = List.copyOf(chain);
        notSelected = List.copyOf(notSelected);
    }

    /**
     * A network policy with an endpoint admitting the destination.
     *
     * @param key the policy key
     * @param binaries its {@code binaries} entries as written; empty when every process may use it
     * @param matchingEntry the entry that admits the binary asked about, when one does
     * @param admitsBinary whether it admits the binary asked about (always, when it has no {@code binaries}); when no
     *     binary was asked about, whether it admits some process (always)
     */
    public record PolicyMatch(String key, List<String> binaries, Optional<String> matchingEntry,
                              boolean admitsBinary) {
        /** @throws NullPointerException if a part is {@code null} */
        public PolicyMatch {
            Objects.requireNonNull(key, "key");
            binaries = List.copyOf(binaries);
            Objects.requireNonNull(matchingEntry, "matchingEntry");
        }
    }

    /**
     * The L7 decision on the request asked about ({@code docs/policy-reference.md}, "L7 policy").
     *
     * @param outcome {@code allow}, {@code audit}, {@code deny}, or {@code body} when the endpoint's protocol
     *     (GraphQL, JSON-RPC, MCP) decides on each request body, which {@code explain} does not have
     * @param protocol the protocol of the endpoint that decides ({@code rest}, {@code graphql}, ...)
     * @param engine the OCSF engine name ({@code l7}, {@code l7-graphql}, ...)
     * @param policyKey the network policy whose endpoint decides
     * @param rule the rule that decided, or that is missing
     * @param reason the reason, as in the audit event
     * @param path the canonical path, or {@code -} when the path is refused
     */
    public record L7(String outcome, String protocol, String engine, String policyKey, Optional<String> rule,
                     String reason, String path) {
        /** @throws NullPointerException if a part is {@code null} */
        public L7 {
            Objects.requireNonNull(outcome, "outcome");
            Objects.requireNonNull(protocol, "protocol");
            Objects.requireNonNull(engine, "engine");
            Objects.requireNonNull(policyKey, "policyKey");
            Objects.requireNonNull(rule, "rule");
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(path, "path");
        }
    }

    /**
     * One stage that would run.
     *
     * @param configKey the {@code network_middlewares} key
     * @param bindingId the binding ID
     * @param owner who provides the binding: {@code built-in MODULE}, {@code plugin MODULE} or
     *     {@code external service NAME}
     * @param onError {@code fail_closed} or {@code fail_open}
     * @param order the config's {@code order}
     * @param maxBodyBytes the effective body limit in bytes: the binding's capability, at most 4 MiB, and for an
     *     external service at most the registration's {@code max_body_bytes}
     * @param postCredentials whether the stage runs after credential injection (restricted built-ins)
     * @param websocketMessages the directions in which the config joins a WebSocket session's message chain
     *     ({@code pre_credentials}: client to upstream, {@code pre_return}: upstream to client); empty when its
     *     binding reads no messages
     */
    public record Stage(String configKey, String bindingId, String owner, String onError, int order,
                        long maxBodyBytes, boolean postCredentials, List<String> websocketMessages) {
        /** @throws NullPointerException if a part is {@code null} */
        public Stage {
            Objects.requireNonNull(configKey, "configKey");
            Objects.requireNonNull(bindingId, "bindingId");
            Objects.requireNonNull(owner, "owner");
            Objects.requireNonNull(onError, "onError");
            websocketMessages = List.copyOf(websocketMessages);
        }

        /**
         * A stage that joins no WebSocket message chain.
         *
         * @param configKey the config key
         * @param bindingId the binding ID
         * @param owner who provides it
         * @param onError the failure policy
         * @param order the order
         * @param maxBodyBytes the body limit
         * @param postCredentials whether it runs after credential injection
         */
        public Stage(String configKey, String bindingId, String owner, String onError, int order,
                     long maxBodyBytes, boolean postCredentials) {
            this(configKey, bindingId, owner, onError, order, maxBodyBytes, postCredentials, List.of());
        }
    }

    /**
     * Why the proxy would refuse the request, as the client would see it.
     *
     * @param error the platform code: {@code policy_denied}, {@code ssrf_blocked} or {@code unresolvable_host}
     * @param status the HTTP status: 403, or 502 for {@code unresolvable_host}
     * @param detail the safe explanation, with what would admit the destination when something would
     */
    public record Refusal(String error, int status, String detail) {
        /** @throws NullPointerException if a part is {@code null} */
        public Refusal {
            Objects.requireNonNull(error, "error");
            Objects.requireNonNull(detail, "detail");
        }
    }

    /**
     * A config that would not run.
     *
     * @param configKey the {@code network_middlewares} key
     * @param reason why, in one sentence: no include pattern matches, an exclude pattern (named) removes the host,
     *     or the config is selected but the request is not admitted or not inspected
     */
    public record NotSelected(String configKey, String reason) {
        /** @throws NullPointerException if a part is {@code null} */
        public NotSelected {
            Objects.requireNonNull(configKey, "configKey");
            Objects.requireNonNull(reason, "reason");
        }
    }

    /**
     * Explains a destination without resolving DNS names (IP literals and {@code static_hosts} are checked).
     *
     * @param policy the validated sandbox policy
     * @param gateway the gateway configuration (for external services' body limits)
     * @param registry the registry the policy was validated against; a binding missing from it is reported as
     *     provided by an external service that was not contacted
     * @param host the destination host, without brackets for an IPv6 literal; canonicalised here
     * @param port the destination port, 1 to 65535
     * @return the explanation
     * @throws IllegalArgumentException if {@code port} is out of range or {@code host} is empty
     */
    public static Explanation of(SandboxPolicy policy, GatewayConfig gateway, ProviderRegistry registry,
                                 String host, int port) {
        return of(policy, gateway, registry, host, port, Optional.empty(), "GET", "/", false);
    }

    /**
     * Explains a destination for a binary, without resolving DNS names.
     *
     * @param policy the validated sandbox policy
     * @param gateway the gateway configuration
     * @param registry the registry the policy was validated against
     * @param host the destination host; canonicalised here
     * @param port the destination port, 1 to 65535
     * @param binary an absolute executable path to decide admission for; resolved through symbolic links when it
     *     exists here, as the kernel reports a running executable; empty for some process
     * @return the explanation
     * @throws IllegalArgumentException if {@code port} is out of range, {@code host} is empty or {@code binary} is
     *     not absolute
     */
    public static Explanation of(SandboxPolicy policy, GatewayConfig gateway, ProviderRegistry registry,
                                 String host, int port, Optional<String> binary) {
        return of(policy, gateway, registry, host, port, binary, "GET", "/", false);
    }

    /**
     * Explains a request: its destination for a binary, with the SSRF check under the gateway's network settings,
     * and the L7 decision on its method and path.
     *
     * @param policy the validated sandbox policy
     * @param gateway the gateway configuration (network settings, external services' body limits)
     * @param registry the registry the policy was validated against
     * @param host the destination host, without brackets for an IPv6 literal; canonicalised here
     * @param port the destination port, 1 to 65535
     * @param binary an absolute executable path to decide admission for; resolved through symbolic links when it
     *     exists here, as the kernel reports a running executable; empty for some process
     * @param method the request method
     * @param target the request-target (path and query), canonicalized as the proxy does
     * @param resolve whether a DNS name may be resolved for the SSRF check (IP literals and {@code static_hosts}
     *     never are); without it a DNS name is reported as not resolved
     * @return the explanation
     * @throws IllegalArgumentException if {@code port} is out of range, {@code host} is empty or malformed or
     *     {@code binary} is not absolute
     */
    public static Explanation of(SandboxPolicy policy, GatewayConfig gateway, ProviderRegistry registry,
                                 String host, int port, Optional<String> binary, String method, String target,
                                 boolean resolve) {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is outside 1..65535");
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException("the host is empty");
        }
        Optional<String> exe = binary.map(Explanation::asRunning);
        Caller caller = exe.<Caller>map(b -> Caller.of(new OriginatingProcess(b, 0, List.of())))
                .orElse(Caller.unscoped());
        String h = HostPattern.canonicalHost(host);
        PolicyAdmission admission = new PolicyAdmission(policy);
        AdmissionDecision d = admission.admit(h, port, caller);
        List<PolicyMatch> matches = new ArrayList<>();
        for (PolicyAdmission.PolicyMatch m : admission.matching(h, port, caller)) {
            matches.add(new PolicyMatch(m.policy().key(),
                    m.policy().binaries().collect(BinaryPattern::source).castToList(),
                    exe.flatMap(b -> m.policy().entryFor(b)).map(BinaryPattern::source), m.callerAdmitted()));
        }
        Optional<EndpointFacts> endpoint = d instanceof AdmissionDecision.Allowed a ? Optional.of(a.endpoint())
                : Optional.empty();
        Optional<Refusal> refusal = Optional.empty();
        String ssrf = "not_reached";
        if (endpoint.isEmpty()) {
            refusal = Optional.of(new Refusal("policy_denied", 403, d instanceof AdmissionDecision.Denied denied
                    ? denied.reason() : "no network policy allows " + h + ":" + port));
        } else {
            NetworkSettings network = Supervisor.networkSettings(gateway);
            switch (SsrfCheck.check(h, port, endpoint.get(), network, resolve)) {
                case SsrfCheck.Result.Admitted ok -> ssrf = "passed";
                case SsrfCheck.Result.NotResolved n -> ssrf = "not_resolved";
                case SsrfCheck.Result.Refused r -> {
                    ssrf = "refused";
                    refusal = Optional.of(new Refusal(r.error(), r.error().equals("ssrf_blocked") ? 403 : 502,
                            r.detail()));
                }
            }
        }
        List<Stage> pre = new ArrayList<>();
        List<Stage> post = new ArrayList<>();
        List<Stage> responses = new ArrayList<>();
        List<NotSelected> not = new ArrayList<>();
        selectStages(policy, gateway, registry, h, port, endpoint, refusal, pre, post, responses, not);
        List<Stage> chain = new ArrayList<>(pre);
        chain.addAll(post);
        Optional<L7> l7 = endpoint.isEmpty() || refusal.isPresent() ? Optional.empty()
                : l7(policy, h, port, caller, method, target);
        return new Explanation(h, port, exe, refusal.isEmpty(), endpoint.map(EndpointFacts::policyName), refusal,
                ssrf, matches, l7, chain, not, responses);
    }

    /**
     * Sorts the policy's middleware configs for one destination: the stages that run (before or after credentials,
     * on the response) and the configs not selected, each with its reason.
     */
    private static void selectStages(SandboxPolicy policy, GatewayConfig gateway, ProviderRegistry registry, String h,
                                     int port, Optional<EndpointFacts> endpoint, Optional<Refusal> refusal,
                                     List<Stage> pre, List<Stage> post, List<Stage> responses,
                                     List<NotSelected> not) {
        for (NetworkMiddlewareConfig c : policy.middlewaresInOrder()) {
            Optional<String> unselected = selectorReason(c, h);
            if (unselected.isPresent()) {
                not.add(new NotSelected(c.key(), unselected.get()));
                continue;
            }
            if (endpoint.isEmpty()) {
                not.add(new NotSelected(c.key(), "its selector matches " + h + ", but no network policy admits "
                        + h + ":" + port + ", so no stage runs"));
                continue;
            }
            if (refusal.isPresent()) {
                not.add(new NotSelected(c.key(), "its selector matches " + h + ", but the proxy refuses the "
                        + "destination (" + refusal.get().error() + ") before any stage runs"));
                continue;
            }
            if (endpoint.get().tlsSkip()) {
                not.add(new NotSelected(c.key(), "its selector matches " + h + ", but the admitting endpoint is "
                        + "tls: skip, so the traffic is tunnelled uninspected"));
                continue;
            }
            registry.lookupResponse(c.middleware()).ifPresent(b -> responses.add(new Stage(c.key(),
                    c.middleware().value(), owner(b), c.onError().policyName(), c.order(),
                    Generation.Limits.of(b, gateway).maxBodyBytes(), false)));
            Optional<RegisteredBinding> rb = registry.lookup(c.middleware());
            if (rb.filter(dev.openshell.supervisor.engine.ProviderRegistry::isResponse).isPresent()) {
                continue; // a response binding only
            }
            boolean postCredentials = rb.map(b -> b.binding().phase() == Phase.POST_CREDENTIALS).orElse(false);
            Stage s = new Stage(c.key(), c.middleware().value(), rb.map(Explanation::owner)
                    .orElse("external service " + ConnectedRegistry.UNCHECKED_OWNER), c.onError().policyName(),
                    c.order(), rb.map(b -> Generation.Limits.of(b, gateway).maxBodyBytes())
                    .orElse((long) dev.openshell.middleware.spi.EnvelopeLimits.MAX_BODY_BYTES), postCredentials,
                    registry.messagePhases(c.middleware()).stream().sorted()
                            .map(ph -> ph.name().toLowerCase(java.util.Locale.ROOT)).toList());
            (postCredentials ? post : pre).add(s);
        }
    }

    /** {@return the path as the kernel would report it running: links resolved when it exists here} */
    private static String asRunning(String binary) {
        if (!binary.startsWith("/")) {
            throw new IllegalArgumentException("the binary must be an absolute path: " + binary);
        }
        try {
            return java.nio.file.Path.of(binary).toRealPath().toString();
        } catch (java.io.IOException | java.nio.file.InvalidPathException e) {
            return binary;
        }
    }

    private static Optional<L7> l7(SandboxPolicy policy, String host, int port, Caller caller, String method,
                                   String target) {
        Optional<L7Engine.Route> route = L7Engine.route(new L7Engine(policy).governing(host, port,
                p -> p.admitsCaller(caller)), method, target);
        if (route.isEmpty()) {
            return Optional.empty();
        }
        L7Engine.Route r = route.get();
        if (r.needsBody()) {
            L7Engine.Governing g = r.selected().orElseThrow();
            return Optional.of(new L7("body", g.l7().protocol().policyName(),
                    L7Decision.engineFor(g.l7().protocol()), g.policyKey(), Optional.empty(),
                    "decided on each request body by the " + g.l7().protocol().policyName() + " rules",
                    r.target().orElseThrow().path()));
        }
        // a websocket endpoint is asked about its upgrade request
        List<L7Request.Header> headers = r.protocol().filter(p -> p == dev.openshell.supervisor.policy
                .EndpointProtocol.WEBSOCKET).isPresent() ? List.of(new L7Request.Header("Upgrade", "websocket"),
                new L7Request.Header("Connection", "Upgrade"), new L7Request.Header("Sec-WebSocket-Key", "x"),
                new L7Request.Header("Sec-WebSocket-Version", "13")) : List.of();
        L7Decision d = L7Engine.decide(r, new L7Request(method, target, headers, Optional.empty()));
        return Optional.of(new L7(d.outcome().label(), d.protocol().policyName(), d.engine(), d.policyKey(),
                d.rule(), d.reason(), d.path()));
    }

    private static Optional<String> selectorReason(NetworkMiddlewareConfig c, String host) {
        if (c.endpoints().include().noneSatisfy(p -> p.matches(host))) {
            return Optional.of("no endpoints.include pattern matches " + host);
        }
        return c.endpoints().exclude().detectOptional(p -> p.matches(host))
                .map(p -> "endpoints.exclude pattern '" + p.source() + "' removes " + host);
    }

    private static String owner(RegisteredBinding rb) {
        return switch (rb.origin().kind()) {
            case BUILT_IN -> "built-in " + rb.origin().name();
            case PLUGIN -> "plugin " + rb.origin().name();
            case EXTERNAL -> "external service " + rb.origin().name();
        };
    }
}
