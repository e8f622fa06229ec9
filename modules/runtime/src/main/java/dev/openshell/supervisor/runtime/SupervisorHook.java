package dev.openshell.supervisor.runtime;

import dev.openshell.middleware.spi.StageResult;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.OriginatingProcess;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.middleware.spi.host.OutboundRequest;
import dev.openshell.supervisor.audit.AuditSink;
import dev.openshell.supervisor.audit.OcsfEvents;
import dev.openshell.supervisor.audit.RequestFacts;
import dev.openshell.supervisor.audit.StageOutcome;
import dev.openshell.supervisor.audit.SupervisorMetrics;
import dev.openshell.supervisor.engine.chain.Chain;
import dev.openshell.supervisor.engine.chain.ChainOutcome;
import dev.openshell.supervisor.engine.chain.ChainRequest;
import dev.openshell.supervisor.engine.chain.ChainResult;
import dev.openshell.supervisor.engine.chain.DenyResponse;
import dev.openshell.supervisor.engine.chain.HeaderRules;
import dev.openshell.middleware.spi.OnError;
import dev.openshell.supervisor.engine.chain.RecheckRecord;
import dev.openshell.supervisor.engine.chain.StageRecord;
import dev.openshell.supervisor.engine.chain.StageSpec;
import dev.openshell.supervisor.engine.chain.UninspectableVerdict;
import dev.openshell.supervisor.engine.credentials.CredentialInjector;
import dev.openshell.supervisor.policy.Caller;
import dev.openshell.supervisor.policy.HostPattern;
import dev.openshell.supervisor.proxy.AdmissionDecision;
import dev.openshell.supervisor.proxy.ChainSelection;
import dev.openshell.supervisor.proxy.ClientConnection;
import dev.openshell.supervisor.proxy.CredentialInjection;
import dev.openshell.supervisor.proxy.EndpointFacts;
import dev.openshell.supervisor.proxy.HookResult;
import dev.openshell.supervisor.proxy.NetworkAdmission;
import dev.openshell.supervisor.proxy.ProxyRequest;
import dev.openshell.supervisor.proxy.RequestHook;
import dev.openshell.supervisor.proxy.RequestPlan;
import dev.openshell.supervisor.proxy.Uninspectable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
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
 * <p>Every stage invocation becomes an OCSF HTTP Activity event and a metric; failures, bypasses, uninspectable
 * requests and body-policy failures become Detection Findings.
 */
final class SupervisorHook implements NetworkAdmission, RequestHook, CredentialInjection {
    private static final System.Logger LOG = System.getLogger(SupervisorHook.class.getName());

    private final Supplier<Generation> current;
    private final Function<Optional<String>, dev.openshell.supervisor.engine.chain.ChainEngine> engines;
    private final OcsfEvents events;
    private final AuditSink audit;
    private final SupervisorMetrics metrics;
    private final Identities identities;

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
        boolean chainRan;

        Plan(Generation generation, Chain chain, Chain post, RequestFacts facts, String host,
             EndpointFacts endpoint, AdmissionDecision admission, ChainSelection selection,
             Optional<OriginatingProcess> process) {
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

        /** {@return the request ID and generation only} */
        @Override
        public String toString() {
            return "Plan[" + facts.requestId() + ", generation " + generation.number() + ", " + chain + "]";
        }
    }

    SupervisorHook(Supplier<Generation> current,
                   Function<Optional<String>, dev.openshell.supervisor.engine.chain.ChainEngine> engines,
                   OcsfEvents events, AuditSink audit, SupervisorMetrics metrics, Identities identities) {
        this.identities = identities;
        this.current = current;
        this.engines = engines;
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
     * {@return the identity for a request's audit facts and middleware context} Computed when a stage will run (the
     * middleware contract carries it); otherwise only what admission already computed.
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
        Optional<Identities.ConnectionIdentity> id = identityFor(request, host, !chain.isEmpty() || !post.isEmpty());
        RequestFacts facts = new RequestFacts(request.requestId(), t.method(), t.scheme(), host, t.port(),
                Optional.of(endpoint.policyName()), id.flatMap(Identities.ConnectionIdentity::facts));
        Optional<OriginatingProcess> process = id.flatMap(Identities.ConnectionIdentity::originatingProcess);
        if (denied) {
            metrics.request("denied_network");
            return new Plan(g, chain, post, facts, host, endpoint, admission, ChainSelection.none(), process);
        }
        metrics.request("admitted");
        return new Plan(g, chain, post, facts, host, endpoint, admission, selection(chain, post), process);
    }

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

    /** Counts a request the proxy answered itself and records it for the operator. */
    @Override
    public void answeredLocally(RequestPlan plan, ProxyRequest request, int status, String code) {
        Plan p = plan(plan, request);
        metrics.failure(code);
        audit.emit(events.requestRefused(p.facts, code, status == 405
                ? "TRACE answered 405 by the supervisor, not forwarded"
                : "OPTIONS with Max-Forwards: 0 answered by the supervisor, not forwarded"));
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
        if (p.chain.isEmpty()) {
            return new HookResult.Forward(stripped.headers(), body);
        }
        ChainResult result = engines.apply(p.endpoint.protocol()).run(p.chain,
                new ChainRequest(request.target(), stripped.headers(), body, new RequestContext(request.requestId(), "", "", "", p.process)));
        record(p.facts, result.stages());
        for (RecheckRecord r : result.rechecks()) {
            if (r.result() == RecheckRecord.Result.FAILED || r.result() == RecheckRecord.Result.DENIED) {
                audit.emit(events.bodyPolicyFailure(p.facts, r.configKey(), r.bindingId().value(),
                        r.reasonCode().isEmpty() ? "body_policy_failed" : r.reasonCode()));
                metrics.failure(r.reasonCode().isEmpty() ? "body_policy_failed" : r.reasonCode());
            }
        }
        if (result.outcome() instanceof ChainOutcome.Deny d) {
            return deny(d.response());
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
        List<HttpHeader> base = p.chainRan ? headers : HeaderRules.stripMiddlewareNamespace(headers).headers();
        HttpRequestTarget target = request.target();
        CredentialInjector.Result r = p.generation.credentials().inject(
                new CredentialInjector.Destination(target.scheme(), p.host, target.port()), base,
                request.connectionNominated(), rawQuery);
        if (r instanceof CredentialInjector.Result.Refused refused) {
            metrics.failure(refused.code());
            // the operator's event names the credential and where it was; the client's answer names neither
            audit.emit(events.requestRefused(p.facts, refused.code(), refused.detail()));
            return new Outcome.Refuse(403, refused.code(), refused.message());
        }
        CredentialInjector.Result.Injected injected = (CredentialInjector.Result.Injected) r;
        if (p.post.isEmpty()) {
            return new Outcome.Forward(injected.headers(), injected.query());
        }
        HttpRequestTarget t = request.target();
        OutboundRequest outbound = new OutboundRequest(new HttpRequestTarget(t.scheme(), t.host(), t.port(),
                t.method(), t.path(), injected.query()), injected.headers(), body.orElse(Body.empty()));
        Generation g = p.generation;
        ChainResult result = engines.apply(p.endpoint.protocol()).runPostCredentials(p.post, outbound,
                (name, h) -> g.credentials().lookup(name, h), new RequestContext(request.requestId(), "", "", "", p.process));
        record(p.facts, result.stages());
        if (result.outcome() instanceof ChainOutcome.Deny d) {
            // the code only: a post-credentials stage's message may be about the credentials it holds
            DenyResponse response = d.response();
            return new Outcome.Refuse(response.status(), response.error(),
                    response.error() + ": " + response.reasonCode());
        }
        return new Outcome.Forward(result.headers(), injected.query());
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

