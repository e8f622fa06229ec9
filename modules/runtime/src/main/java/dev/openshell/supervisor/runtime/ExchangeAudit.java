package dev.openshell.supervisor.runtime;

import dev.openshell.middleware.spi.internal.Syntax;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.middleware.spi.internal.StageResult;
import dev.openshell.supervisor.audit.AuditSink;
import dev.openshell.supervisor.audit.OcsfEvents;
import dev.openshell.supervisor.audit.RefusalAudit;
import dev.openshell.supervisor.audit.RefusalFacts;
import dev.openshell.supervisor.audit.RequestFacts;
import dev.openshell.supervisor.audit.StageOutcome;
import dev.openshell.supervisor.audit.SupervisorMetrics;
import dev.openshell.supervisor.engine.chain.StageRecord;
import dev.openshell.supervisor.l7.L7Decision;
import dev.openshell.supervisor.proxy.ClientConnection;
import jakarta.json.JsonObject;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * How the policy steps write what they decide: OCSF events to the audit sink (each noted in the connection's
 * {@link dev.openshell.supervisor.proxy.AuditBarrier}, so the client hears nothing before the lines about it are
 * written), rate-limited refusal events, and metrics. One instance for the supervisor's life; thread-safe.
 *
 * @param events builds the events
 * @param sink the audit sink
 * @param metrics the metrics
 * @param refusals the rate-limited refusal audit
 */
record ExchangeAudit(OcsfEvents events, AuditSink sink, SupervisorMetrics metrics, RefusalAudit refusals) {
    /** Emits one event about a connection's exchange, noted in the connection's barrier. */
    void emit(ClientConnection c, JsonObject event) {
        c.auditBarrier().emitted(sink.emit(event));
    }

    /** Writes one refusal (rate-limited per client and code), noted in the connection's barrier. */
    void refused(ClientConnection c, RefusalFacts facts) {
        c.auditBarrier().emitted(refusals.refused(facts));
    }

    /**
     * One OCSF HTTP Activity event per stage invocation, a Detection Finding per failure or bypass and per finding,
     * and the stage metrics.
     */
    void stages(ClientConnection c, RequestFacts facts, List<StageRecord> stages) {
        stages(c, facts, stages, 0);
    }

    /**
     * As {@link #stages(ClientConnection, RequestFacts, List)}, for response stages: each HTTP Activity event carries
     * the upstream's final status ({@code http_response.code}) and phase {@code pre_return}.
     *
     * @param responseStatus the final upstream status; 0 for request stages
     */
    void stages(ClientConnection c, RequestFacts facts, List<StageRecord> stages, int responseStatus) {
        for (StageRecord r : stages) {
            Optional<String> code = r.failure().map(f -> f.code()).or(r::reasonCode);
            StageOutcome o = new StageOutcome(r.configKey(), r.bindingId().value(), r.outcome(), r.transformed(),
                    r.latencyNanos(), code.map(ExchangeAudit::safeCode), r.onError() == OnError.FAIL_CLOSED);
            stage(c, facts, o, r.findings(), responseStatus);
        }
    }

    /**
     * The records of one stage invocation, for every phase (request and response stages, WebSocket session preflight
     * and messages): one OCSF HTTP Activity event (decision {@code allowed}, {@code denied}, {@code failed_closed}
     * or {@code bypassed}; {@code transformed} when the stage replaced what it read; {@code on_error} the stage's
     * setting), a Detection Finding per failure or bypass and per finding, and the stage metrics.
     *
     * @param c the client connection
     * @param facts the request facts
     * @param o what the stage did
     * @param findings what the stage found
     * @param responseStatus the final upstream status for a response stage; 0 otherwise
     */
    void stage(ClientConnection c, RequestFacts facts, StageOutcome o, List<Finding> findings, int responseStatus) {
        emit(c, events.httpActivity(facts, o, responseStatus));
        if (o.result() == StageResult.FAILED_CLOSED || o.result() == StageResult.BYPASSED) {
            emit(c, events.stageFailure(facts, o));
        }
        for (Finding f : findings) {
            emit(c, events.middlewareFinding(facts, o.configKey(), o.bindingId(), f.type(), f.count()));
        }
        metrics.stage(o);
    }

    /** One OCSF HTTP Activity event and one count of {@code supervisor_l7_decisions_total} per L7 decision. */
    void l7(ClientConnection c, RequestFacts facts, L7Decision d, Optional<String> afterStage) {
        l7(c, facts, d, afterStage, List.of());
    }

    /**
     * One OCSF HTTP Activity event for an L7 decision and the re-checks of replaced bodies that had its result
     * ({@link L7BodyDecisions}), and one count of {@code supervisor_l7_decisions_total} for each of them.
     *
     * @param c the client connection
     * @param facts the request facts
     * @param d the decision
     * @param afterStage the config key of the stage whose replacement {@code d} re-checked, for a re-check
     * @param rechecked the config keys of the stages whose replacements were re-checked with {@code d}'s result
     */
    void l7(ClientConnection c, RequestFacts facts, L7Decision d, Optional<String> afterStage,
            List<String> rechecked) {
        String decision = d.outcome().label();
        emit(c, events.l7Decision(facts, new OcsfEvents.L7Outcome(decision, d.hard(), d.status(),
                d.protocol().policyName(), d.engine(), d.policyKey(), d.rule(), d.reason(), d.path(), afterStage,
                d.code(), rechecked)));
        for (int i = 0; i <= rechecked.size(); i++) {
            metrics.l7Decision(d.policyKey(), d.protocol().policyName(), decision);
        }
    }

    /** {@return a stage's code as it may appear in security output, else {@code middleware_error}} */
    static String safeCode(String code) {
        String c = code.toLowerCase(Locale.ROOT);
        return Syntax.isCode(c) ? c : "middleware_error";
    }

    /** {@return the client's address as events carry it} */
    static Optional<String> clientIp(ClientConnection c) {
        return c.client().map(a -> a.getAddress().getHostAddress());
    }
}
