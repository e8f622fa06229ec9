package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.audit.RefusalFacts;
import dev.openshell.supervisor.audit.RequestFacts;
import dev.openshell.supervisor.engine.chain.Chain;
import dev.openshell.supervisor.engine.chain.StageRecord;
import dev.openshell.supervisor.engine.chain.UninspectableVerdict;
import dev.openshell.supervisor.l7.L7Decision;
import dev.openshell.supervisor.l7.L7Engine;
import dev.openshell.supervisor.l7.RequestTarget;
import dev.openshell.supervisor.policy.HostPattern;
import dev.openshell.supervisor.proxy.ExchangeRecord;
import dev.openshell.supervisor.proxy.PolicySteps;
import dev.openshell.supervisor.proxy.ProxyRefusal;
import dev.openshell.supervisor.proxy.Uninspectable;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The audit of what the proxy decided by its own rules ({@link PolicySteps.Audit}): refusals as rate-limited OCSF
 * events ({@code docs/observability.md}, "Refusals"), the findings of uninspectable bodies and upgrades (RFC 0009,
 * "Observability": bypass or denial), response scrubs, local answers, and their metrics.
 *
 * @param audit where records go
 */
record AuditStep(ExchangeAudit audit) implements PolicySteps.Audit<ExchangePlan> {
    private static final System.Logger LOG = System.getLogger(AuditStep.class.getName());

    @Override
    public void record(Optional<ExchangePlan> plan, ExchangeRecord record) {
        switch (record) {
            case ExchangeRecord.Refused r -> refused(r.refusal());
            case ExchangeRecord.BodyBufferWaited w -> audit.metrics().bodyBufferWait(w.nanos());
            case ExchangeRecord.BodyBuffered b -> audit.metrics().bodyBuffered(b.bytes());
            case ExchangeRecord.AnsweredLocally a -> answeredLocally(plan.orElseThrow(), a);
            case ExchangeRecord.Uninspected u -> uninspected(plan.orElseThrow(), u);
            case ExchangeRecord.ResponseScrubbed s -> {
                s.credentials().forEach(audit.metrics()::responseScrubbed);
                LOG.log(System.Logger.Level.DEBUG, "request {0}: the upstream echoed injected credentials {1};"
                        + " removed from its response ({2} in the head, {3} in the body)", s.request().requestId(),
                        s.credentials(), s.headerMatches(), s.bodyMatches());
                audit.emit(s.request().client(), audit.events().responseScrubbed(plan.orElseThrow().facts(),
                        List.copyOf(s.credentials()), s.headerMatches(), s.bodyMatches()));
            }
            case ExchangeRecord.InterimWithheld w -> interimWithheld(plan.orElseThrow(), w);
            case ExchangeRecord.ResponseFieldsUnreadable u -> {
                audit.metrics().failure(FIELD_UNREADABLE);
                LOG.log(System.Logger.Level.DEBUG, "request {0}: response header fields {1} dropped: a parameter or"
                        + " encoded word in a charset the supervisor cannot decode", u.request().requestId(), u.fields());
                audit.emit(u.request().client(), audit.events().responseFieldsUnreadable(plan.orElseThrow().facts(),
                        u.fields()));
            }
            case ExchangeRecord.ResponseUninspectable u -> {
                audit.metrics().failure(u.code());
                audit.emit(u.request().client(), audit.events().responseUninspectable(plan.orElseThrow().facts(),
                        u.code(), u.relayed()));
            }
        }
    }

    /**
     * Counts and audits a refusal by one of the proxy's own rules ({@code RefusalAudit}: an event per refusal,
     * rate-limited per client and code). The event names the destination host and port (canonical), the method when
     * it is a standard one, and the process when the connection was identified; nothing else of the request.
     */
    private void refused(ProxyRefusal r) {
        switch (r.kind()) {
            case NETWORK_POLICY, SSRF -> audit.metrics().request(switch (r.code()) {
                case "policy_denied" -> "denied_network";
                case "ssrf_blocked" -> "denied_ssrf";
                case "unresolvable_host" -> "unresolvable_host";
                default -> "refused";
            });
            case LIMIT -> audit.metrics().refused(r.code());
            default -> {
            }
        }
        Optional<RequestFacts> facts = r.destination().map(d -> new RequestFacts(r.requestId().orElse("-"),
                r.method().orElse("UNKNOWN"), d.scheme(), HostPattern.canonicalHost(d.host()), d.port(),
                Optional.empty(), r.client().identityIfDecided().flatMap(Identities::facts)));
        audit.refused(r.client(), new RefusalFacts(r.kind().category(), r.code(), r.cause(), r.status(), r.detail(),
                ExchangeAudit.clientIp(r.client()), facts));
    }

    /**
     * Records interim heads withheld because a {@code fail_closed} response stage is selected: a High finding naming
     * the {@code fail_closed} response configs (decision deny, code {@code interim_response_uninspectable}) and the
     * failure counter.
     */
    private void interimWithheld(ExchangePlan p, ExchangeRecord.InterimWithheld w) {
        audit.metrics().failure(INTERIM_WITHHELD);
        List<String> keys = p.responses().stages().stream()
                .filter(s -> s.onError() == dev.openshell.middleware.spi.internal.OnError.FAIL_CLOSED)
                .map(s -> s.configKey()).toList();
        LOG.log(System.Logger.Level.DEBUG, "request {0}: interim {1} head withheld: fail_closed response stages {2}"
                + " cannot inspect it", w.request().requestId(), w.status(), keys);
        audit.emit(w.request().client(), audit.events().uninspectable(p.facts(), keys, true, INTERIM_WITHHELD));
    }

    /** The failure code of response header fields dropped as unreadable by the response scrub. */
    static final String FIELD_UNREADABLE = "response_field_unreadable";

    /** The code of interim heads withheld from the client ({@link #interimWithheld}). */
    static final String INTERIM_WITHHELD = "interim_response_uninspectable";

    /** Counts a request the proxy answered itself and records it for the operator (rate-limited). */
    private void answeredLocally(ExchangePlan p, ExchangeRecord.AnsweredLocally a) {
        audit.metrics().failure(a.code());
        audit.refused(a.request().client(), new RefusalFacts(a.code().startsWith("credential_") ? "credential"
                : "method", a.code(), Optional.empty(), a.status(), switch (a.code()) {
                    case "method_not_allowed" -> "TRACE answered 405 by the supervisor, not forwarded (no trace: allow)";
                    case "credential_trace_not_allowed" -> "TRACE carrying a credential refused, not forwarded";
                    default -> a.request().target().method()
                            + " with Max-Forwards: 0 answered by the supervisor, not forwarded";
                }, ExchangeAudit.clientIp(a.request().client()), Optional.of(p.facts())));
    }

    /**
     * Records a body or upgrade no stage could inspect: a hard L7 denial when the L7 decision needed the body (the
     * proxy answered 413), and each affected stage's outcome ({@link UninspectableVerdict}).
     */
    private void uninspected(ExchangePlan p, ExchangeRecord.Uninspected u) {
        Uninspectable what = u.what();
        String code = switch (what.kind()) {
            case CHUNKED_OVER_CAP -> "chunked_body_over_capacity";
            case CONTENT_LENGTH_OVER_CAP -> "body_over_capacity";
            case UPGRADE -> "upgrade_uninspectable";
        };
        int l7Limit = p.l7().map(r -> L7Engine.bodyLimit(r, L7Step.l7Request(u.request().target(),
                u.request().headers(), Optional.empty()))).orElse(0);
        if (what.kind() != Uninspectable.Kind.UPGRADE && l7Limit > 0) {
            L7Engine.Governing g = p.l7().get().selected().orElseThrow();
            audit.l7(u.request().client(), p.facts(), new L7Decision(L7Decision.Outcome.DENY, true, 413,
                    g.l7().protocol(), L7Decision.engineFor(g.l7().protocol()), g.policyKey(), Optional.empty(),
                    "request body is larger than the endpoint's limit of " + l7Limit + " bytes",
                    p.l7().get().target().map(RequestTarget::path).orElse("-"), ""), Optional.empty());
            if (p.chain().isEmpty()) {
                return;
            }
        }
        // an upgrade is uninspectable to the response stages too (they never read the bytes after a 101): a host only
        // response stages select was refused without a line (attacker pass 15b, P17b-3); one record per config
        List<String> keys = new ArrayList<>();
        List<StageRecord> records = new ArrayList<>();
        List<Chain> chains = what.kind() == Uninspectable.Kind.UPGRADE
                ? List.of(p.chain(), p.responses()) : List.of(p.chain());
        for (Chain c : chains) {
            if (!c.requiresBody()) {
                continue;
            }
            UninspectableVerdict verdict = c.uninspectable(code);
            for (StageRecord r : verdict.stages()) {
                if (!keys.contains(r.configKey())) {
                    keys.add(r.configKey());
                    records.add(r);
                }
            }
        }
        if (keys.isEmpty()) {
            return;
        }
        audit.emit(u.request().client(), audit.events().uninspectable(p.facts(), keys, !what.relayed(), code));
        // each stage's record counts the failure code once (metrics.stage); counting it here too doubled it
        audit.stages(u.request().client(), p.facts(), records);
    }
}
