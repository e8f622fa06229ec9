package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.engine.chain.BodyRecheck;
import dev.openshell.supervisor.l7.L7Decision;
import dev.openshell.supervisor.l7.L7Engine;
import dev.openshell.supervisor.l7.L7Request;
import dev.openshell.supervisor.proxy.ProxyRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The L7 decisions on the body of one request that goes through the pre-credentials chain, and their one record
 * ({@code docs/policy-reference.md}, "L7 policy", "Audit records and metrics"): the decision on the body as received,
 * then the re-check of every body a stage puts in place (decision 7), written as <b>one</b> OCSF HTTP Activity event
 * per exchange. A re-check whose result is the decision's (the same decision, rule, reason, status and code) writes no
 * event of its own: its stage's config key is listed in the decision's event
 * ({@code unmapped.openshell.rechecked_after_config_keys}). A re-check with another result (it denies, or another
 * rule, reason or decision) writes its own event ({@code after_config_key}) after the decision's. Each re-check counts
 * in {@code supervisor_l7_decisions_total} as before.
 *
 * <p>Made and used by the request chain step within one call ({@link RequestChainStep#run}): the decision first
 * ({@link #first()}), then the chain with {@link #recheck} as its re-check, then {@link #record()}, which that step
 * calls in a {@code finally}, so the decision is written exactly once however the chain ends (a stage's denial, a
 * failure, a re-check's denial, an exception). Confined to the exchange's thread (the chain engine calls the re-check
 * from its fold); not thread-safe.
 */
final class L7BodyDecisions {
    /** A re-check with its own event: the decision and the config key of the stage whose replacement it judged. */
    private record Own(L7Decision decision, String configKey) {
    }

    private final ExchangeAudit audit;
    private final ExchangePlan plan;
    private final ProxyRequest request;
    private final L7Engine.Route route;
    private final L7Decision first;
    /** The config keys of the re-checks that agreed with {@link #first}, in order; {@code null} while none. */
    private List<String> agreeing;
    /** The re-checks with a result of their own, in order; {@code null} while none. */
    private List<Own> own;
    /** The enforced denial of a re-check, for the client's answer; {@code null} while none. */
    private L7Decision denied;
    private boolean recorded;

    /**
     * Decides the body as received.
     *
     * @param audit where the record goes
     * @param plan the exchange's plan
     * @param request the request
     * @param route the L7 route, which reads the body
     * @param received the request as L7 reads it, with the buffered body
     */
    L7BodyDecisions(ExchangeAudit audit, ExchangePlan plan, ProxyRequest request, L7Engine.Route route,
                    L7Request received) {
        this.audit = Objects.requireNonNull(audit, "audit");
        this.plan = Objects.requireNonNull(plan, "plan");
        this.request = Objects.requireNonNull(request, "request");
        this.route = Objects.requireNonNull(route, "route");
        this.first = L7Engine.decide(route, received);
    }

    /** {@return the decision on the body as received} */
    L7Decision first() {
        return first;
    }

    /** {@return the enforced denial of a re-check, when one denied} */
    Optional<L7Decision> denied() {
        return Optional.ofNullable(denied);
    }

    /**
     * {@return the re-check of a body a stage put in place (decision 7), on the headers it left} An enforced denial
     * denies (and is kept for the client's answer, {@link #denied()}), an audited one stops the chain and forwards,
     * an unparseable replacement is a hard denial. Recorded by {@link #record()}.
     *
     * @param r the transformed request
     */
    BodyRecheck.Verdict recheck(BodyRecheck.Request r) {
        L7Decision again = L7Engine.decide(route, L7Step.l7Request(request.target(), r.headers(),
                Optional.of(r.body())));
        if (sameResult(first, again)) {
            agreeing = agreeing == null ? new ArrayList<>(1) : agreeing;
            agreeing.add(r.configKey());
        } else {
            own = own == null ? new ArrayList<>(1) : own;
            own.add(new Own(again, r.configKey()));
        }
        return switch (again.outcome()) {
            case ALLOW -> BodyRecheck.Verdict.PASS;
            case AUDIT -> new BodyRecheck.Verdict.AuditDeny(L7Step.L7_DENIED);
            case DENY -> {
                denied = again;
                yield new BodyRecheck.Verdict.Deny(again.hard() ? L7Step.L7_HARD_DENIED : L7Step.L7_DENIED);
            }
        };
    }

    /**
     * Writes the record once (later calls do nothing): the decision's event with the agreeing re-checks, then one
     * event per re-check with a result of its own, in the order they ran.
     */
    void record() {
        if (recorded) {
            return;
        }
        recorded = true;
        audit.l7(request.client(), plan.facts(), first, Optional.empty(), agreeing == null ? List.of() : agreeing);
        if (own != null) {
            for (Own o : own) {
                audit.l7(request.client(), plan.facts(), o.decision(), Optional.of(o.configKey()), List.of());
            }
        }
    }

    /**
     * {@return whether a re-check's result is the decision's, as its event would say it}: decision, hard denial,
     * status, policy, rule, reason, code and path
     */
    static boolean sameResult(L7Decision a, L7Decision b) {
        return a.outcome() == b.outcome() && a.hard() == b.hard() && a.status() == b.status()
                && a.policyKey().equals(b.policyKey()) && a.rule().equals(b.rule()) && a.reason().equals(b.reason())
                && a.code().equals(b.code()) && a.path().equals(b.path()) && a.engine().equals(b.engine());
    }
}
