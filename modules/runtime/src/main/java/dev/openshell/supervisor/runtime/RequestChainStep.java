package dev.openshell.supervisor.runtime;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.supervisor.engine.chain.BodyRecheck;
import dev.openshell.supervisor.engine.chain.ChainEngine;
import dev.openshell.supervisor.engine.chain.ChainOutcome;
import dev.openshell.supervisor.engine.chain.ChainRequest;
import dev.openshell.supervisor.engine.chain.ChainResult;
import dev.openshell.supervisor.engine.chain.DenyResponse;
import dev.openshell.supervisor.engine.chain.HeaderRules;
import dev.openshell.supervisor.engine.chain.RecheckRecord;
import dev.openshell.supervisor.engine.chain.StageSpec;
import dev.openshell.supervisor.proxy.Answer;
import dev.openshell.supervisor.proxy.PolicySteps;
import dev.openshell.supervisor.proxy.ProxyRequest;
import dev.openshell.supervisor.proxy.RequestVerdict;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The pre-credentials chain on a buffered body ({@link PolicySteps.RequestChain}; RFC 0009, "Chain semantics"), with
 * the L7 decision on the body before it and the body-aware L7 re-check after every replacement, recorded as one event
 * unless a re-check's result differs ({@link L7Step#withChain}, {@link L7BodyDecisions}). Sandbox-supplied
 * {@code x-openshell-middleware-*} fields are stripped first. Every stage invocation becomes an OCSF HTTP Activity
 * event and a metric; failures, bypasses and body-policy failures become Detection Findings.
 *
 * @param engine the chain engine
 * @param l7 the L7 step, for the re-check
 * @param audit where records go
 */
record RequestChainStep(ChainEngine engine, L7Step l7, ExchangeAudit audit)
        implements PolicySteps.RequestChain<ExchangePlan> {
    private static final System.Logger LOG = System.getLogger(RequestChainStep.class.getName());

    @Override
    public RequestVerdict run(ExchangePlan p, ProxyRequest request, Body body) {
        var stripped = HeaderRules.stripMiddlewareNamespace(request.headers());
        if (stripped.spoofed()) {
            LOG.log(System.Logger.Level.DEBUG, "request {0}: {1} sandbox-supplied x-openshell-middleware-* fields "
                    + "stripped", request.requestId(), stripped.stripped());
        }
        if (p.chain().isEmpty()) {
            return new RequestVerdict.Forward(stripped.headers(), body);
        }
        Optional<L7BodyDecisions> decisions = l7.withChain(p, request, body);
        ChainResult result;
        try {
            if (decisions.isPresent() && !decisions.get().first().forwards()) {
                return new RequestVerdict.Refuse(L7Step.answer(decisions.get().first()));
            }
            result = engine.run(p.chain(), new ChainRequest(p.target(request.target()), stripped.headers(), body,
                    new RequestContext(request.requestId(), "", "", "", p.process())),
                    decisions.<BodyRecheck>map(d -> d::recheck).orElse(BodyRecheck.none()));
        } finally {
            decisions.ifPresent(L7BodyDecisions::record); // exactly once, however the chain ended
        }
        audit.stages(request.client(), p.facts(), result.stages());
        for (StageSpec s : result.skipped()) {
            audit.metrics().stageSkipped(s.configKey(), s.bindingId().value());
        }
        for (RecheckRecord r : result.rechecks()) {
            if (r.result() == RecheckRecord.Result.FAILED || r.result() == RecheckRecord.Result.DENIED) {
                String code = r.reasonCode().isEmpty() ? "body_policy_failed" : r.reasonCode();
                audit.emit(request.client(), audit.events().bodyPolicyFailure(p.facts(), r.configKey(),
                        r.bindingId().value(), code));
                audit.metrics().failure(code);
            }
        }
        if (result.outcome() instanceof ChainOutcome.Deny d) {
            return new RequestVerdict.Refuse(decisions.flatMap(L7BodyDecisions::denied).map(L7Step::answer)
                    .orElseGet(() -> answer(d.response())));
        }
        return new RequestVerdict.Forward(result.headers(), result.body());
    }

    /** {@return the client's answer to a chain's denial: the platform code, naming the config and binding} */
    private static Answer answer(DenyResponse d) {
        Map<String, String> extra = new LinkedHashMap<>();
        d.configKey().ifPresent(k -> extra.put("config_key", k));
        d.bindingId().ifPresent(b -> extra.put("binding_id", b.value()));
        extra.put("reason_code", d.reasonCode());
        return new Answer(d.status(), d.error(), d.detail(), extra);
    }
}
