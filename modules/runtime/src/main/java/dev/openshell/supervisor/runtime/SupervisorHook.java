package dev.openshell.supervisor.runtime;

import dev.openshell.middleware.spi.internal.StageResult;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.OriginatingProcess;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.middleware.spi.host.OutboundRequest;
import dev.openshell.supervisor.audit.AuditSink;
import dev.openshell.supervisor.audit.OcsfEvents;
import dev.openshell.supervisor.audit.RefusalAudit;
import dev.openshell.supervisor.audit.RefusalFacts;
import dev.openshell.supervisor.audit.RequestFacts;
import dev.openshell.supervisor.audit.StageOutcome;
import dev.openshell.supervisor.audit.SupervisorMetrics;
import dev.openshell.supervisor.engine.chain.Chain;
import dev.openshell.supervisor.engine.chain.ChainOutcome;
import dev.openshell.supervisor.engine.chain.ChainRequest;
import dev.openshell.supervisor.engine.chain.ChainResult;
import dev.openshell.supervisor.engine.chain.DenyResponse;
import dev.openshell.supervisor.engine.chain.HeaderRules;
import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.supervisor.engine.chain.RecheckRecord;
import dev.openshell.supervisor.engine.chain.StageRecord;
import dev.openshell.supervisor.engine.chain.StageSpec;
import dev.openshell.supervisor.engine.chain.UninspectableVerdict;
import dev.openshell.supervisor.engine.credentials.CredentialInjector;
import dev.openshell.supervisor.engine.chain.BodyRecheck;
import dev.openshell.supervisor.l7.L7Decision;
import dev.openshell.supervisor.l7.L7Engine;
import dev.openshell.supervisor.l7.L7Request;
import dev.openshell.supervisor.l7.RequestTarget;
import dev.openshell.supervisor.policy.EndpointProtocol;
import dev.openshell.supervisor.policy.Caller;
import dev.openshell.supervisor.policy.HostPattern;
import dev.openshell.supervisor.proxy.AdmissionDecision;
import dev.openshell.supervisor.proxy.ChainSelection;
import dev.openshell.supervisor.proxy.ClientConnection;
import dev.openshell.supervisor.proxy.CredentialInjection;
import dev.openshell.supervisor.proxy.EndpointFacts;
import dev.openshell.supervisor.proxy.HookResult;
import dev.openshell.supervisor.proxy.InjectedCredentials;
import dev.openshell.supervisor.proxy.NetworkAdmission;
import dev.openshell.supervisor.proxy.ProxyRefusal;
import dev.openshell.supervisor.proxy.ProxyRequest;
import dev.openshell.supervisor.proxy.RequestHook;
import dev.openshell.supervisor.proxy.RequestPlan;
import dev.openshell.supervisor.proxy.Uninspectable;
import dev.openshell.supervisor.proxy.WebSocketMessages;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The proxy's admission, middleware hook and credential step over the current {@link Generation} (RFC 0009,
 * "Operation phases and placement": L4 admission, chain after admission, body-aware re-check after every replacement,
 * then credential injection, then the restricted post-credentials built-ins, then forwarding).
 *
 * <p>One request, one generation (RFC 0009, "Registration and delivery"): {@link #plan} reads the current generation
 * once and returns a {@link Plan} holding it with the selected chain and post-credentials stages; the proxy hands
 * that plan back to {@link #evaluate}, {@link #uninspectable} and {@link #inject}, which use nothing else, so a
 * reload never mixes generations within a request and no state outlives the request (nothing is kept per thread).
 * Admission is part of the plan: when the generation that admitted the destination
 * ({@link ProxyRequest#admissionGeneration()}) is not the one serving the request (a reload in between, or a request
 * inside a tunnel admitted at {@code CONNECT} time), the serving generation admits the destination again, and a
 * request it no longer admits gets a plan whose admission is a denial: the proxy answers 403 {@code policy_denied}
 * before anything is sent upstream. (The SSRF check of a tunnel's addresses stays the one made at {@code CONNECT}.)
 *
 * <p>L7 policy ({@code docs/policy-reference.md}, "L7 policy"; RFC 0009: "L7 policy (when protocol set)" after L4
 * and SSRF admission, before the middleware chain): when an endpoint with an L7 {@code protocol} governs the
 * destination (for the calling binary), {@link #plan} makes the request-target canonical and decides on the head;
 * a denial becomes the plan's {@link RequestPlan#refusal()} and nothing is read or forwarded. For GraphQL, JSON-RPC
 * and MCP the decision needs the body: the plan asks the proxy to buffer it (up to the endpoint's limit, never
 * streaming past it), {@link #evaluate} decides on it before the chain runs, and again on every body a stage puts
 * in its place (decision 7: an enforced denial denies, an audited one stops the chain and forwards, an unparseable
 * replacement is a hard denial). The canonical path is what stages see and what is forwarded. A WebSocket upgrade
 * to a {@code protocol: websocket} endpoint gets a message policy ({@link RequestPlan#websocketMessages()}) that
 * decides on every client text message. Every L7 decision is one OCSF HTTP Activity event and one count of
 * {@code supervisor_l7_decisions_total}.
 *
 * <p>Every stage invocation becomes an OCSF HTTP Activity event and a metric; failures, bypasses, uninspectable
 * requests and body-policy failures become Detection Findings.
 */
final class SupervisorHook implements NetworkAdmission, RequestHook, CredentialInjection {
    private static final System.Logger LOG = System.getLogger(SupervisorHook.class.getName());

    private final Supplier<Generation> current;
    private final dev.openshell.supervisor.engine.chain.ChainEngine engine;
    private final OcsfEvents events;
    private final AuditSink audit;
    private final SupervisorMetrics metrics;
    private final Identities identities;
    private final RefusalAudit refusals;

    /**
     * The plan of one request, fixed by {@link #plan}: the serving generation and everything chosen from it. Used by
     * the one request it was made for, on that request's thread; {@code chainRan} is the only part that changes.
     */
    static final class Plan implements RequestPlan {
        final Generation generation;
        final Chain chain;
        final Chain post;
        final RequestFacts facts;
        final String host;
        final EndpointFacts endpoint;
        final AdmissionDecision admission;
        final ChainSelection selection;
        /** The originating process for the middleware contract, when the connection's process is known. */
        final Optional<OriginatingProcess> process;
        /** The L7 route, when an L7 endpoint governs the request. */
        Optional<L7Engine.Route> l7 = Optional.empty();
        /** Whether the L7 decision waits for the body (GraphQL, JSON-RPC, MCP). */
        boolean l7NeedsBody;
        /** The L7 denial of the head, if any. */
        Optional<HookResult.Deny> refusal = Optional.empty();
        /** The canonical path, when it differs from the one received. */
        Optional<String> forwardPath = Optional.empty();
        /** The policy on WebSocket text messages, for an upgrade to a websocket endpoint. */
        Optional<WebSocketMessages> websocket = Optional.empty();
        boolean chainRan;

        Plan(Generation generation, Chain chain, Chain post, RequestFacts facts, String host,
             EndpointFacts endpoint, AdmissionDecision admission, ChainSelection selection,
             Optional<OriginatingProcess> process) {
            this(generation, chain, post, facts, host, endpoint, admission, selection, process, Optional.empty());
        }

        Plan(Generation generation, Chain chain, Chain post, RequestFacts facts, String host,
             EndpointFacts endpoint, AdmissionDecision admission, ChainSelection selection,
             Optional<OriginatingProcess> process, Optional<L7Engine.Route> l7) {
            this.l7 = l7;
            this.process = process;
            this.generation = generation;
            this.chain = chain;
            this.post = post;
            this.facts = facts;
            this.host = host;
            this.endpoint = endpoint;
            this.admission = admission;
            this.selection = selection;
        }

        @Override
        public long generation() {
            return generation.number();
        }

        @Override
        public AdmissionDecision admission() {
            return admission;
        }

        @Override
        public ChainSelection selection() {
            return selection;
        }

        @Override
        public Optional<HookResult.Deny> refusal() {
            return refusal;
        }

        @Override
        public Optional<String> forwardPath() {
            return forwardPath;
        }

        @Override
        public Optional<WebSocketMessages> websocketMessages() {
            return websocket;
        }

        /** {@return the target as stages and post-credentials stages see it: with the canonical path} */
        HttpRequestTarget target(HttpRequestTarget received) {
            return forwardPath.map(path -> new HttpRequestTarget(received.scheme(), received.host(), received.port(),
                    received.method(), path, received.query())).orElse(received);
        }

        /** {@return the request ID and generation only} */
        @Override
        public String toString() {
            return "Plan[" + facts.requestId() + ", generation " + generation.number() + ", " + chain + "]";
        }
    }

    SupervisorHook(Supplier<Generation> current,
                   dev.openshell.supervisor.engine.chain.ChainEngine engine,
                   OcsfEvents events, AuditSink audit, SupervisorMetrics metrics, Identities identities,
                   RefusalAudit refusals) {
        this.identities = identities;
        this.refusals = refusals;
        this.current = current;
        this.engine = engine;
        this.events = events;
        this.audit = audit;
        this.metrics = metrics;
    }

    /** L4 admission by the current generation, without a connection: binary-scoped policies do not admit. */
    @Override
    public AdmissionDecision admit(String host, int port) {
        return current.get().admission().admit(host, port);
    }

    /**
     * L4 admission by the current generation for the process behind the connection; the decision names that
     * generation's number. The process is identified only when a binary-scoped policy could admit the destination,
     * and then once per connection.
     */
    @Override
    public AdmissionDecision admit(String host, int port, ClientConnection client) {
        return admit(current.get(), host, port, client);
    }

    private AdmissionDecision admit(Generation g, String host, int port, ClientConnection client) {
        if (!g.admission().scoped(host, port)) {
            return g.admission().admit(host, port, Caller.unscoped()); // the caller cannot change the verdict
        }
        return g.admission().admit(host, port, identity(client, host, port).caller());
    }

    /**
     * {@return the identity of the process behind a connection, computed on the first call for that connection} A
     * changed binary is reported then, once, as a High finding.
     */
    private Identities.ConnectionIdentity identity(ClientConnection client, String host, int port) {
        return client.attachment(Identities.ConnectionIdentity.class, c -> {
            Identities.ConnectionIdentity id = identities.identify(c);
            metrics.identification(id.violation().isPresent() ? "integrity_violation"
                    : id.process().isPresent() ? "identified" : "unidentified");
            id.violation().ifPresent(v -> {
                LOG.log(System.Logger.Level.WARNING, "connection refused: {0}", v.reason());
                audit.emit(events.binaryIntegrityViolation(new RequestFacts("connection", "CONNECT", "http",
                        HostPattern.canonicalHost(host), port, Optional.empty()), v.pid(), v.binary(),
                        v.trustedSha256(), v.observedSha256()));
            });
            return id;
        });
    }

    /**
     * {@return the identity for a request's audit facts and middleware context} Computed (once per connection: a
     * {@code /proc} search) when a stage may be invoked, since the middleware contract carries it; otherwise only
     * what admission already computed. A request without a body whose every stage skips an empty body
     * ({@link Chain#skipsEveryStageOnEmptyBody()}: a GET through {@code openshell/regex}) invokes none.
     */
    private Optional<Identities.ConnectionIdentity> identityFor(ProxyRequest request, String host, boolean stages) {
        if (stages) {
            return Optional.of(identity(request.client(), host, request.target().port()));
        }
        return request.client().attachmentIfPresent(Identities.ConnectionIdentity.class);
    }

    @Override
    public RequestPlan plan(ProxyRequest request) {
        Generation g = current.get();
        HttpRequestTarget t = request.target();
        EndpointFacts endpoint = request.endpoint();
        AdmissionDecision admission = AdmissionDecision.allow(endpoint, g.number());
        if (request.admissionGeneration() != g.number()) {
            // admitted by another generation (a reload since, or a tunnel admitted at CONNECT): this one decides
            admission = admit(g, t.host(), t.port(), request.client());
            if (admission instanceof AdmissionDecision.Allowed allowed) {
                endpoint = allowed.endpoint();
            }
        }
        String host = HostPattern.canonicalHost(t.host());
        boolean denied = admission instanceof AdmissionDecision.Denied;
        Chain chain = denied ? Chain.empty() : g.selector().select(host);
        Chain post = denied ? Chain.empty() : g.postCredentials().select(host);
        boolean bodiless = !request.chunked() && request.contentLength().orElse(0) == 0 && !request.websocketUpgrade();
        boolean invokes = !post.isEmpty() || (!chain.isEmpty() && !(bodiless && chain.skipsEveryStageOnEmptyBody()));
        Optional<Identities.ConnectionIdentity> id = identityFor(request, host, invokes);
        RequestFacts facts = new RequestFacts(request.requestId(), t.method(), t.scheme(), host, t.port(),
                Optional.of(endpoint.policyName()), id.flatMap(Identities.ConnectionIdentity::facts));
        Optional<OriginatingProcess> process = id.flatMap(Identities.ConnectionIdentity::originatingProcess);
        if (denied) {
            metrics.request("denied_network");
            return new Plan(g, chain, post, facts, host, endpoint, admission, ChainSelection.none(), process);
        }
        metrics.request("admitted");
        Optional<L7Engine.Route> route = l7Route(g, request, host);
        Plan plan = new Plan(g, chain, post, facts, host, endpoint, admission, l7Selection(route, chain, post),
                process, route);
        route.ifPresent(r -> l7Head(plan, request, r));
        return plan;
    }

    /**
     * {@return the L7 route of a request, when an L7 endpoint of a policy admitting the caller governs its host and
     * port} Which policies match is decided as admission decides it: by host and port, and by the binary when a
     * binary-scoped policy could match.
     */
    private Optional<L7Engine.Route> l7Route(Generation g, ProxyRequest request, String host) {
        int port = request.target().port();
        var governing = g.l7().governing(host, port, g.admission().scoped(host, port)
                ? p -> p.admitsCaller(identity(request.client(), host, port).caller())
                : p -> p.admitsCaller(Caller.unscoped()));
        return L7Engine.route(governing, request.target().method(), rawTarget(request.target()));
    }

    /** {@return the request-target as received: path, and query when there is one} */
    private static String rawTarget(HttpRequestTarget t) {
        return t.query().isEmpty() ? t.path() : t.path() + "?" + t.query();
    }

    /**
     * {@return the selection with the L7 body added} A body-aware route needs the body buffered up to its endpoint's
     * limit (at most the 4 MiB platform maximum), and a body over it is refused (413), never streamed uninspected.
     */
    static ChainSelection l7Selection(Optional<L7Engine.Route> route, Chain chain, Chain post) {
        ChainSelection s = selection(chain, post);
        if (route.isEmpty() || !route.get().needsBody()) {
            return s;
        }
        int l7Cap = Math.min(route.get().bodyLimit(), dev.openshell.middleware.spi.EnvelopeLimits.MAX_BODY_BYTES);
        int cap = s instanceof ChainSelection.Selected sel ? Math.max(sel.bodyCapBytes(), l7Cap) : l7Cap;
        return ChainSelection.selected(cap, false);
    }

    /** Decides the head of an L7 request: the canonical path, a denial, or the WebSocket message policy. */
    private void l7Head(Plan p, ProxyRequest request, L7Engine.Route route) {
        route.target().map(RequestTarget::path).filter(path -> !path.equals(request.target().path()))
                .ifPresent(path -> p.forwardPath = Optional.of(path));
        if (route.needsBody()) {
            p.l7NeedsBody = true;
            return;
        }
        L7Decision d = L7Engine.decide(route, l7Request(request.target(), request.headers(), Optional.empty()));
        recordL7(p.facts, d, Optional.empty());
        if (!d.forwards()) {
            p.refusal = Optional.of(l7Deny(d));
            return;
        }
        if (request.websocketUpgrade() && route.protocol().filter(x -> x == EndpointProtocol.WEBSOCKET).isPresent()) {
            RequestFacts messageFacts = new RequestFacts(p.facts.requestId(), "WEBSOCKET_TEXT", p.facts.scheme(),
                    p.facts.host(), p.facts.port(), p.facts.networkPolicy(), p.facts.process());
            p.websocket = Optional.of(new WebSocketMessages() {
                @Override
                public boolean allow(String message) {
                    L7Decision m = L7Engine.decideText(route, message);
                    recordL7(messageFacts, m, Optional.empty());
                    // this relay thread writes to the upstream, not the client: it waits here for its line, so
                    // that no message (nor its answer, nor the close a denial brings) goes on before its audit line
                    audit.awaitOwn();
                    return m.forwards();
                }

                @Override
                public void closed(int closeStatus, String reason) {
                    // an RFC 6455 violation by the client: refused, and the operator sees it
                    metrics.failure(WEBSOCKET_PROTOCOL_ERROR);
                    audit.emit(events.requestRefused(messageFacts, WEBSOCKET_PROTOCOL_ERROR, "WebSocket closed with "
                            + closeStatus + ": " + reason));
                    audit.awaitOwn(); // as in allow: the close frame follows on another thread
                }
            });
        }
    }

    private static L7Request l7Request(HttpRequestTarget t, List<HttpHeader> headers, Optional<byte[]> body) {
        List<L7Request.Header> h = new java.util.ArrayList<>(headers.size());
        for (HttpHeader x : headers) {
            h.add(new L7Request.Header(x.name(), x.value()));
        }
        return new L7Request(t.method(), rawTarget(t), h, body);
    }

    /** One OCSF HTTP Activity event and one count per L7 decision. */
    private void recordL7(RequestFacts facts, L7Decision d, Optional<String> afterStage) {
        String decision = d.outcome().label();
        audit.emit(events.l7Decision(facts, new OcsfEvents.L7Outcome(decision, d.hard(), d.status(),
                d.protocol().policyName(), d.engine(), d.policyKey(), d.rule(), d.reason(), d.path(), afterStage)));
        metrics.l7Decision(d.policyKey(), d.protocol().policyName(), decision);
    }

    /**
     * {@return the client's answer to an L7 denial} ({@code docs/policy-reference.md}, "L7 policy", decision 5):
     * {@code 403 policy_denied}, {@code 400 invalid_request} or {@code 413 body_too_large}, naming the layer, the
     * endpoint's real protocol, the policy key, the rule and the canonical path, with a fixed reason code; the
     * connection closes.
     */
    static HookResult.Deny l7Deny(L7Decision d) {
        String error = switch (d.status()) {
            case 400 -> "invalid_request";
            case 413 -> "body_too_large";
            default -> "policy_denied";
        };
        Map<String, String> extra = new LinkedHashMap<>();
        extra.put("layer", "l7");
        extra.put("protocol", d.protocol().policyName());
        extra.put("policy", d.policyKey());
        d.rule().ifPresent(r -> extra.put("rule", r));
        extra.put("path", d.path());
        extra.put("reason_code", d.hard() ? L7_HARD_DENIED : L7_DENIED);
        int status = d.status() >= 400 && d.status() <= 599 ? d.status() : 403;
        return new HookResult.Deny(status, error, d.reason(), extra, true);
    }

    /** The code of a WebSocket connection the supervisor closed because the client broke RFC 6455. */
    static final String WEBSOCKET_PROTOCOL_ERROR = "websocket_protocol_error";

    /** The reason code of an L7 policy denial (a rule denies, or none allows). */
    static final String L7_DENIED = "l7_policy_denied";
    /** The reason code of a hard L7 denial (refused target, unparseable body, ...), which audit mode does not lift. */
    static final String L7_HARD_DENIED = "l7_hard_denied";

    /**
     * {@return what the proxy must buffer for a chain and post-credentials stages} A post-credentials stage needs the
     * body unless its config says {@code payload: unsigned} (the SigV4 signer's key).
     */
    static ChainSelection selection(Chain chain, Chain post) {
        List<StageSpec> signing = post.stages().stream()
                .filter(s -> !"unsigned".equals(s.config().getString("payload", "signed"))).toList();
        if (chain.isEmpty() && signing.isEmpty()) {
            return ChainSelection.none();
        }
        int cap = chain.isEmpty() ? 0 : chain.refused() ? 0 : chain.bodyBufferLimit();
        for (StageSpec s : signing) {
            cap = Math.max(cap, s.maxBodyBytes());
        }
        boolean allFailOpen = chain.stages().stream().allMatch(s -> s.onError() == OnError.FAIL_OPEN)
                && post.stages().stream().allMatch(s -> s.onError() == OnError.FAIL_OPEN);
        return ChainSelection.selected(cap, allFailOpen);
    }

    /**
     * Counts an admission refusal by outcome: {@code denied_network}, {@code denied_ssrf}, {@code unresolvable_host}.
     */
    @Override
    public void admissionRefused(String error) {
        metrics.request(switch (error) {
            case "policy_denied" -> "denied_network";
            case "ssrf_blocked" -> "denied_ssrf";
            case "unresolvable_host" -> "unresolvable_host";
            default -> "refused";
        });
    }

    /** Counts a request the proxy answered itself and records it for the operator (rate-limited). */
    @Override
    public void answeredLocally(RequestPlan plan, ProxyRequest request, int status, String code) {
        Plan p = plan(plan, request);
        metrics.failure(code);
        refusals.refused(new RefusalFacts(code.startsWith("credential_") ? "credential" : "method", code,
                Optional.empty(), status, switch (code) {
                    case "method_not_allowed" -> "TRACE answered 405 by the supervisor, not forwarded (no trace: allow)";
                    case "credential_trace_not_allowed" -> "TRACE carrying a credential refused, not forwarded";
                    default -> request.target().method()
                            + " with Max-Forwards: 0 answered by the supervisor, not forwarded";
                }, clientIp(request.client()), Optional.of(p.facts)));
    }

    /**
     * Audits a refusal by one of the proxy's own rules ({@link RefusalAudit}: an OCSF event per refusal,
     * rate-limited per client and code). The event names the destination host and port (canonical), the method
     * when it is a standard one, and the process when the connection was identified; nothing else of the request.
     */
    @Override
    public void refused(ProxyRefusal r) {
        Optional<RequestFacts> facts = r.destination().map(d -> new RequestFacts(r.requestId().orElse("-"),
                r.method().orElse("UNKNOWN"), d.scheme(), HostPattern.canonicalHost(d.host()), d.port(),
                Optional.empty(), r.client().attachmentIfPresent(Identities.ConnectionIdentity.class)
                        .flatMap(Identities.ConnectionIdentity::facts)));
        refusals.refused(new RefusalFacts(r.kind().category(), r.code(), r.cause(), r.status(), r.detail(),
                clientIp(r.client()), facts));
    }

    private static Optional<String> clientIp(ClientConnection c) {
        return c.client().map(a -> a.getAddress().getHostAddress());
    }

    /** Holds a client write until the audit lines this thread emitted are written ({@link AuditSink#awaitOwn}). */
    @Override
    public void beforeClientOutput() {
        audit.awaitOwn();
    }

    /** Observes a buffered body's wait for budget room in {@code supervisor_body_buffer_wait_seconds}. */
    @Override
    public void bodyBufferWaited(long nanos) {
        metrics.bodyBufferWait(nanos);
    }

    /** Counts work refused by a resource limit in {@code supervisor_refused_total{reason}}. */
    @Override
    public void limitRefused(String reason) {
        metrics.refused(reason);
    }

    /** {@return the hook's own plan for {@code request}} @throws IllegalStateException for any other plan */
    private static Plan plan(RequestPlan plan, ProxyRequest request) {
        if (!(plan instanceof Plan p) || !p.facts.requestId().equals(request.requestId())) {
            throw new IllegalStateException("no plan of this hook for request " + request.requestId());
        }
        return p;
    }

    @Override
    public HookResult evaluate(RequestPlan plan, ProxyRequest request, Body body) {
        Plan p = plan(plan, request);
        p.chainRan = true;
        metrics.bodyBuffered(body.size());
        var stripped = HeaderRules.stripMiddlewareNamespace(request.headers());
        if (stripped.spoofed()) {
            LOG.log(System.Logger.Level.DEBUG, "request {0}: {1} sandbox-supplied x-openshell-middleware-* fields "
                    + "stripped", request.requestId(), stripped.stripped());
        }
        BodyRecheck recheck = BodyRecheck.none();
        L7Decision[] denied = new L7Decision[1];
        if (p.l7NeedsBody) {
            L7Engine.Route route = p.l7.orElseThrow();
            L7Decision d = L7Engine.decide(route, l7Request(request.target(), request.headers(),
                    Optional.of(body.toByteArray())));
            recordL7(p.facts, d, Optional.empty());
            if (!d.forwards()) {
                return l7Deny(d);
            }
            // decision 7: every body a stage puts in place is decided again, on the headers it left
            recheck = r -> {
                L7Decision again = L7Engine.decide(route, l7Request(request.target(), r.headers(),
                        Optional.of(r.body().toByteArray())));
                recordL7(p.facts, again, Optional.of(r.configKey()));
                return switch (again.outcome()) {
                    case ALLOW -> BodyRecheck.Verdict.PASS;
                    case AUDIT -> new BodyRecheck.Verdict.AuditDeny(L7_DENIED);
                    case DENY -> {
                        denied[0] = again;
                        yield new BodyRecheck.Verdict.Deny(again.hard() ? L7_HARD_DENIED : L7_DENIED);
                    }
                };
            };
        }
        if (p.chain.isEmpty()) {
            return new HookResult.Forward(stripped.headers(), body);
        }
        ChainResult result = engine.run(p.chain,
                new ChainRequest(p.target(request.target()), stripped.headers(), body,
                        new RequestContext(request.requestId(), "", "", "", p.process)), recheck);
        record(p.facts, result.stages());
        for (StageSpec s : result.skipped()) {
            metrics.stageSkipped(s.configKey(), s.bindingId().value());
        }
        for (RecheckRecord r : result.rechecks()) {
            if (r.result() == RecheckRecord.Result.FAILED || r.result() == RecheckRecord.Result.DENIED) {
                audit.emit(events.bodyPolicyFailure(p.facts, r.configKey(), r.bindingId().value(),
                        r.reasonCode().isEmpty() ? "body_policy_failed" : r.reasonCode()));
                metrics.failure(r.reasonCode().isEmpty() ? "body_policy_failed" : r.reasonCode());
            }
        }
        if (result.outcome() instanceof ChainOutcome.Deny d) {
            return denied[0] != null ? l7Deny(denied[0]) : deny(d.response());
        }
        return new HookResult.Forward(result.headers(), result.body());
    }

    @Override
    public void uninspectable(RequestPlan plan, ProxyRequest request, Uninspectable what) {
        Plan p = plan(plan, request);
        String code = switch (what.kind()) {
            case CHUNKED_OVER_CAP -> "chunked_body_over_capacity";
            case CONTENT_LENGTH_OVER_CAP -> "body_over_capacity";
            case UPGRADE -> "upgrade_uninspectable";
        };
        if (p.l7NeedsBody && what.kind() != Uninspectable.Kind.UPGRADE) {
            // the L7 decision could not read the body: a hard denial of the L7 layer (the proxy answered 413)
            L7Engine.Governing g = p.l7.orElseThrow().selected().orElseThrow();
            recordL7(p.facts, new L7Decision(L7Decision.Outcome.DENY, true, 413, g.l7().protocol(),
                    L7Decision.engineFor(g.l7().protocol()), g.policyKey(), Optional.empty(),
                    "request body is larger than the endpoint's limit of " + g.l7().maxBodyBytes() + " bytes",
                    p.l7.get().target().map(RequestTarget::path).orElse("-"), ""), Optional.empty());
            if (p.chain.isEmpty()) {
                return;
            }
        }
        UninspectableVerdict verdict = p.chain.uninspectable(code);
        List<String> keys = p.chain.stages().stream().map(s -> s.configKey()).toList();
        audit.emit(events.uninspectable(p.facts, keys, !what.relayed(), code));
        // each stage's record counts the failure code once (metrics.stage); counting it here too doubled it
        record(p.facts, verdict.stages());
    }

    @Override
    public Outcome inject(RequestPlan plan, ProxyRequest request, List<HttpHeader> headers, String rawQuery,
                          Optional<Body> body) {
        Plan p = plan(plan, request);
        if (p.admission instanceof AdmissionDecision.Denied) {
            return new Outcome.Refuse(403, "policy_denied", PolicyAdmission.DENIED);
        }
        if (p.refusal.isPresent()) {
            return new Outcome.Refuse(p.refusal.get().status(), p.refusal.get().error(), p.refusal.get().detail());
        }
        List<HttpHeader> base = p.chainRan ? headers : HeaderRules.stripMiddlewareNamespace(headers).headers();
        if (p.websocket.isPresent()) {
            // the frames are parsed for the L7 policy: no extension (permessage-deflate) may change their payloads
            base = base.stream().filter(h -> !h.name().equalsIgnoreCase("sec-websocket-extensions")).toList();
        }
        HttpRequestTarget target = request.target();
        CredentialInjector.Result r = p.generation.credentials().inject(
                new CredentialInjector.Destination(target.scheme(), p.host, target.port()), base,
                request.connectionNominated(), rawQuery);
        if (r instanceof CredentialInjector.Result.Refused refused) {
            metrics.failure(refused.code());
            // the operator's event names the credential and where it was; the client's answer names neither
            refusals.refused(new RefusalFacts("credential", refused.code(), Optional.empty(), 403, refused.detail(),
                    clientIp(request.client()), Optional.of(p.facts)));
            return new Outcome.Refuse(403, refused.code(), refused.message());
        }
        CredentialInjector.Result.Injected injected = (CredentialInjector.Result.Injected) r;
        Generation g = p.generation;
        Set<String> used = new TreeSet<>(injected.used());
        // a response is scrubbed of every value sent: narrow the request first, so that it is signed as sent
        List<HttpHeader> sent = used.isEmpty() && p.post.isEmpty() ? injected.headers()
                : InjectedCredentials.narrowForScrubbing(injected.headers());
        if (p.post.isEmpty()) {
            return new Outcome.Forward(sent, injected.query(), injectedCredentials(g, used));
        }
        HttpRequestTarget t = p.target(request.target());
        OutboundRequest outbound = new OutboundRequest(new HttpRequestTarget(t.scheme(), t.host(), t.port(),
                t.method(), t.path(), injected.query()), sent, body.orElse(Body.empty()));
        Set<String> resolved = java.util.concurrent.ConcurrentHashMap.newKeySet();
        ChainResult result = engine.runPostCredentials(p.post, outbound,
                (name, h) -> {
                    var secret = g.credentials().lookup(name, h);
                    if (secret.isPresent()) {
                        resolved.add(name); // a signer's key ID or token is sent too: scrubbed from the response
                    }
                    return secret;
                }, new RequestContext(request.requestId(), "", "", "", p.process));
        used.addAll(resolved);
        record(p.facts, result.stages());
        if (result.outcome() instanceof ChainOutcome.Deny d) {
            // the code only: a post-credentials stage's message may be about the credentials it holds
            DenyResponse response = d.response();
            return new Outcome.Refuse(response.status(), response.error(),
                    response.error() + ": " + response.reasonCode());
        }
        return new Outcome.Forward(result.headers(), injected.query(), injectedCredentials(g, used));
    }

    /** {@return the values of the credentials named, for the response scrub} */
    private static InjectedCredentials injectedCredentials(Generation g, Set<String> names) {
        List<InjectedCredentials.Entry> entries = new java.util.ArrayList<>(names.size());
        for (String name : names) {
            g.credentials().declared(name).ifPresent(c -> entries.add(new InjectedCredentials.Entry(name,
                    c.value().reveal(), "openshell:resolve:env:" + name, c.allowUnscannedResponses())));
        }
        return InjectedCredentials.of(entries);
    }

    /** Records a response the proxy scrubbed of injected values: a High finding and a metric per credential. */
    @Override
    public void responseScrubbed(RequestPlan plan, ProxyRequest request, Set<String> credentials,
                                 long headerMatches, long bodyMatches) {
        Plan p = plan(plan, request);
        for (String c : credentials) {
            metrics.responseScrubbed(c);
        }
        LOG.log(System.Logger.Level.DEBUG, "request {0}: the upstream echoed injected credentials {1}; removed"
                + " from its response ({2} in the head, {3} in the body)", request.requestId(), credentials,
                headerMatches, bodyMatches);
        audit.emit(events.responseScrubbed(p.facts, List.copyOf(credentials), headerMatches, bodyMatches));
    }

    /** Records a response whose body could not be scanned: a finding and {@code supervisor_failures_total}. */
    @Override
    public void responseUninspectable(RequestPlan plan, ProxyRequest request, String code, boolean relayed) {
        Plan p = plan(plan, request);
        metrics.failure(code);
        audit.emit(events.responseUninspectable(p.facts, code, relayed));
    }

    private void record(RequestFacts facts, List<StageRecord> stages) {
        for (StageRecord r : stages) {
            Optional<String> code = r.failure().map(f -> f.code()).or(() -> r.reasonCode());
            emitStage(facts, new StageOutcome(r.configKey(), r.bindingId().value(), r.outcome(), r.transformed(),
                    r.latencyNanos(), code.map(SupervisorHook::safeCode), r.onError() == OnError.FAIL_CLOSED),
                    r.findings());
        }
    }

    private void emitStage(RequestFacts facts, StageOutcome o, List<Finding> findings) {
        audit.emit(events.httpActivity(facts, o));
        if (o.result() == StageResult.FAILED_CLOSED || o.result() == StageResult.BYPASSED) {
            audit.emit(events.stageFailure(facts, o));
        }
        for (Finding f : findings) {
            audit.emit(events.middlewareFinding(facts, o.configKey(), o.bindingId(), f.type(), f.count()));
        }
        metrics.stage(o);
    }

    private static HookResult deny(DenyResponse d) {
        Map<String, String> extra = new LinkedHashMap<>();
        d.configKey().ifPresent(k -> extra.put("config_key", k));
        d.bindingId().ifPresent(b -> extra.put("binding_id", b.value()));
        extra.put("reason_code", d.reasonCode());
        return new HookResult.Deny(d.status(), d.error(), d.detail(), extra);
    }

    private static String safeCode(String code) {
        String c = code.toLowerCase(Locale.ROOT);
        return c.matches("[a-z][a-z0-9_]{0,63}") ? c : "middleware_error";
    }
}

