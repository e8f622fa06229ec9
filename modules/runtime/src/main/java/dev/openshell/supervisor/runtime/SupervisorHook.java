package dev.openshell.supervisor.runtime;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.MiddlewareException;
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
import dev.openshell.supervisor.engine.chain.OnError;
import dev.openshell.supervisor.engine.chain.RecheckRecord;
import dev.openshell.supervisor.engine.chain.StageRecord;
import dev.openshell.supervisor.engine.chain.UninspectableVerdict;
import dev.openshell.supervisor.engine.credentials.CredentialInjector;
import dev.openshell.supervisor.policy.HostPattern;
import dev.openshell.supervisor.proxy.AdmissionDecision;
import dev.openshell.supervisor.proxy.ChainSelection;
import dev.openshell.supervisor.proxy.CredentialInjection;
import dev.openshell.supervisor.proxy.EndpointFacts;
import dev.openshell.supervisor.proxy.HookResult;
import dev.openshell.supervisor.proxy.NetworkAdmission;
import dev.openshell.supervisor.proxy.ProxyRequest;
import dev.openshell.supervisor.proxy.RequestHook;
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
 * <p>One request, one generation (RFC 0009, "Registration and delivery"): a request is served by the generation
 * current when the proxy asked {@link #select} for it, and the plan is kept for the connection's thread until the
 * request's credential step, so a reload never mixes generations within a request. Admission is part of that: when
 * the generation that admitted the destination is no longer current at selection (a reload in between, or a request
 * inside a tunnel admitted at {@code CONNECT} time), the destination is admitted again by the generation that serves
 * the request, and a request it no longer admits is refused with 403 {@code policy_denied} before anything is sent
 * upstream. (The SSRF check of a tunnel's addresses stays the one made at {@code CONNECT}.)
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
    private final ThreadLocal<Plan> plans = new ThreadLocal<>();
    private final ThreadLocal<Admitted> admissions = new ThreadLocal<>();

    /** The generation that last admitted a destination on this thread. */
    private record Admitted(Generation generation, String host, int port) {
    }

    /** The per-request plan, fixed at selection time. */
    private static final class Plan {
        final Generation generation;
        final Chain chain;
        final List<Generation.PostStage> post;
        final RequestFacts facts;
        final String host;
        final EndpointFacts endpoint;
        final boolean admitted;
        boolean chainRan;

        Plan(Generation generation, Chain chain, List<Generation.PostStage> post, RequestFacts facts, String host,
             EndpointFacts endpoint, boolean admitted) {
            this.generation = generation;
            this.chain = chain;
            this.post = post;
            this.facts = facts;
            this.host = host;
            this.endpoint = endpoint;
            this.admitted = admitted;
        }
    }

    SupervisorHook(Supplier<Generation> current,
                   Function<Optional<String>, dev.openshell.supervisor.engine.chain.ChainEngine> engines,
                   OcsfEvents events, AuditSink audit, SupervisorMetrics metrics) {
        this.current = current;
        this.engines = engines;
        this.events = events;
        this.audit = audit;
        this.metrics = metrics;
    }

    /**
     * L4 admission by the current generation; remembers, for this thread, which generation admitted the destination.
     */
    @Override
    public AdmissionDecision admit(String host, int port) {
        Generation g = current.get();
        AdmissionDecision d = g.admission().admit(host, port);
        if (d instanceof AdmissionDecision.Allowed) {
            admissions.set(new Admitted(g, host, port));
        } else {
            admissions.remove();
        }
        return d;
    }

    /** {@return the generation of the request this thread is serving, if it is between selection and credentials} */
    Optional<Generation> servingGeneration() {
        Plan p = plans.get();
        return p == null ? Optional.empty() : Optional.of(p.generation);
    }

    @Override
    public ChainSelection select(ProxyRequest request) {
        Generation g = current.get();
        HttpRequestTarget t = request.target();
        Admitted a = admissions.get();
        admissions.remove();
        EndpointFacts endpoint = request.endpoint();
        boolean admitted = true;
        if (a == null || a.generation() != g || a.port() != t.port() || !a.host().equals(t.host())) {
            // admitted by another generation (a reload since, or a tunnel admitted at CONNECT): this one decides
            AdmissionDecision d = g.admission().admit(t.host(), t.port());
            if (d instanceof AdmissionDecision.Allowed allowed) {
                endpoint = allowed.endpoint();
            } else {
                admitted = false;
            }
        }
        String host = HostPattern.canonicalHost(t.host());
        RequestFacts facts = new RequestFacts(request.requestId(), t.method(), t.scheme(), host, t.port(),
                Optional.of(endpoint.policyName()));
        if (!admitted) {
            plans.set(new Plan(g, Chain.empty(), List.of(), facts, host, endpoint, false));
            metrics.request("denied_network");
            return ChainSelection.none();
        }
        Chain chain = g.selector().select(host);
        List<Generation.PostStage> post = g.postStages().isEmpty() ? List.of() : g.postStages().stream()
                .filter(p -> p.config().selects(host)).toList();
        plans.set(new Plan(g, chain, post, facts, host, endpoint, true));
        metrics.request("admitted");
        boolean signsBody = post.stream().anyMatch(p -> !"unsigned".equals(p.config().config()
                .getString("payload", "signed")));
        if (chain.isEmpty() && !signsBody) {
            return ChainSelection.none();
        }
        int cap = chain.isEmpty() ? 0 : chain.refused() ? 0 : chain.bodyBufferLimit();
        if (signsBody) {
            cap = Math.max(cap, post.stream().mapToInt(p -> (int) p.binding().binding().maxBodyBytes()).max()
                    .orElse(0));
        }
        boolean allFailOpen = chain.stages().stream().allMatch(s -> s.onError() == OnError.FAIL_OPEN)
                && post.stream().allMatch(p -> p.config().onError()
                        == dev.openshell.supervisor.policy.OnError.FAIL_OPEN);
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

    private Plan plan(ProxyRequest request) {
        Plan p = plans.get();
        if (p == null || !p.facts.requestId().equals(request.requestId())) {
            throw new IllegalStateException("no plan for request " + request.requestId());
        }
        return p;
    }

    @Override
    public HookResult evaluate(ProxyRequest request, Body body) {
        Plan p = plan(request);
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
                new ChainRequest(request.target(), stripped.headers(), body, RequestContext.of(request.requestId())));
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
    public void uninspectable(ProxyRequest request, Uninspectable what) {
        Plan p = plan(request);
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
    public Outcome inject(ProxyRequest request, List<HttpHeader> headers, String rawQuery) {
        return inject(request, headers, rawQuery, Optional.empty());
    }

    @Override
    public Outcome inject(ProxyRequest request, List<HttpHeader> headers, String rawQuery, Optional<Body> body) {
        Plan p = plan(request);
        try {
            if (!p.admitted) {
                return new Outcome.Refuse(403, "policy_denied", PolicyAdmission.DENIED);
            }
            List<HttpHeader> base = p.chainRan ? headers : HeaderRules.stripMiddlewareNamespace(headers).headers();
            CredentialInjector.Result r = p.generation.credentials().inject(p.host, base, rawQuery);
            if (r instanceof CredentialInjector.Result.Refused refused) {
                metrics.failure(refused.code());
                return new Outcome.Refuse(403, refused.code(), refused.message());
            }
            CredentialInjector.Result.Injected injected = (CredentialInjector.Result.Injected) r;
            List<HttpHeader> out = injected.headers();
            for (Generation.PostStage s : p.post) {
                long start = System.nanoTime();
                try {
                    HttpRequestTarget t = request.target();
                    OutboundRequest signed = s.provider().evaluatePostCredentials(s.config().middleware(),
                            s.config().config(), new OutboundRequest(new HttpRequestTarget(t.scheme(), t.host(),
                                    t.port(), t.method(), t.path(), injected.query()), out, body.orElse(Body.empty())));
                    out = signed.headers();
                    stage(p.facts, s, StageOutcome.Result.ALLOWED, true, start, Optional.empty());
                } catch (RuntimeException e) {
                    String code = e instanceof MiddlewareException m ? safeCode(m.code()) : "middleware_error";
                    boolean closed = s.config().onError() == dev.openshell.supervisor.policy.OnError.FAIL_CLOSED;
                    stage(p.facts, s, closed ? StageOutcome.Result.FAILED_CLOSED : StageOutcome.Result.BYPASSED,
                            false, start, Optional.of(code));
                    if (closed) {
                        return new Outcome.Refuse(403, DenyResponse.MIDDLEWARE_FAILED, "middleware_failed: " + code);
                    }
                }
            }
            return new Outcome.Forward(out, injected.query());
        } finally {
            plans.remove();
        }
    }

    private void stage(RequestFacts facts, Generation.PostStage s, StageOutcome.Result result, boolean transformed,
                       long startNanos, Optional<String> code) {
        StageOutcome o = new StageOutcome(s.config().key(), s.config().middleware().value(), result, transformed,
                System.nanoTime() - startNanos, code,
                s.config().onError() == dev.openshell.supervisor.policy.OnError.FAIL_CLOSED);
        emitStage(facts, o, List.of());
    }

    private void record(RequestFacts facts, List<StageRecord> stages) {
        for (StageRecord r : stages) {
            StageOutcome.Result result = switch (r.outcome()) {
                case ALLOWED -> StageOutcome.Result.ALLOWED;
                case DENIED -> StageOutcome.Result.DENIED;
                case FAILED_CLOSED -> StageOutcome.Result.FAILED_CLOSED;
                case BYPASSED -> StageOutcome.Result.BYPASSED;
            };
            Optional<String> code = r.failure().map(f -> f.code()).or(() -> r.reasonCode());
            emitStage(facts, new StageOutcome(r.configKey(), r.bindingId().value(), result, r.transformed(),
                    r.latencyNanos(), code.map(SupervisorHook::safeCode), r.onError() == OnError.FAIL_CLOSED),
                    r.findings());
        }
    }

    private void emitStage(RequestFacts facts, StageOutcome o, List<Finding> findings) {
        audit.emit(events.httpActivity(facts, o));
        if (o.result() == StageOutcome.Result.FAILED_CLOSED || o.result() == StageOutcome.Result.BYPASSED) {
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
