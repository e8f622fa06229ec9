package dev.openshell.supervisor.runtime;

import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.middleware.spi.OriginatingProcess;
import dev.openshell.supervisor.audit.RequestFacts;
import dev.openshell.supervisor.engine.chain.Chain;
import dev.openshell.supervisor.engine.chain.StageSpec;
import dev.openshell.supervisor.l7.L7Engine;
import dev.openshell.supervisor.policy.Caller;
import dev.openshell.supervisor.policy.HostPattern;
import dev.openshell.supervisor.proxy.ChainSelection;
import dev.openshell.supervisor.proxy.ConnectionIdentity;
import dev.openshell.supervisor.proxy.Planned;
import dev.openshell.supervisor.proxy.PolicySteps;
import dev.openshell.supervisor.proxy.ProxyRequest;
import java.util.List;
import java.util.Optional;

/**
 * The plan of one exchange by one generation ({@link PolicySteps.Plan}; RFC 0009, "Host selector"): the
 * pre-credentials chain and post-credentials stages the admitted host selects, the body they need, the L7 route when
 * an L7 endpoint governs the request, and the exchange's audit facts. The connection's process is identified when a
 * stage may be invoked (the middleware contract carries it): a request without a body whose every stage skips an
 * empty body ({@link Chain#skipsEveryStageOnEmptyBody()}: a GET through {@code openshell/regex}) invokes none.
 *
 * @param generation the generation
 * @param identify the connection identities
 * @param audit where counts go
 */
record PlanStep(Generation generation, Identify identify, ExchangeAudit audit)
        implements PolicySteps.Plan<ExchangePlan> {
    @Override
    public Planned<ExchangePlan> plan(ProxyRequest request) {
        HttpRequestTarget t = request.target();
        String host = HostPattern.canonicalHost(t.host());
        Chain chain = generation.selector().select(host);
        Chain post = generation.postCredentials().select(host);
        Chain responses = generation.responses().select(host);
        boolean bodiless = !request.hasBody() && !request.websocketUpgrade();
        boolean invokes = !post.isEmpty() || !responses.isEmpty() || (!chain.isEmpty() && !(bodiless && chain.skipsEveryStageOnEmptyBody()));
        Optional<ConnectionIdentity> id = invokes ? Optional.of(identify.of(request.client(), host, t.port()))
                : request.client().identityIfDecided();
        RequestFacts facts = new RequestFacts(request.requestId(), t.method(), t.scheme(), host, t.port(),
                Optional.of(request.endpoint().policyName()), id.flatMap(Identities::facts));
        Optional<OriginatingProcess> process = id.flatMap(ConnectionIdentity::originatingProcess);
        audit.metrics().request("admitted");
        ExchangePlan plan = new ExchangePlan(generation, chain, post, facts, host, process, l7Route(request, host),
                responses);
        ChainSelection responseStages = responses.isEmpty() ? ChainSelection.none() : ChainSelection.selected(0,
                responses.stages().stream().allMatch(s -> s.onError() == OnError.FAIL_OPEN));
        return new Planned<>(plan, selection(chain, post), responseStages);
    }

    /**
     * {@return the L7 route of a request, when an L7 endpoint of a policy admitting the caller governs its host and
     * port} Which policies match is decided as admission decides it: by host and port, and by the binary when a
     * binary-scoped policy could match.
     */
    private Optional<L7Engine.Route> l7Route(ProxyRequest request, String host) {
        int port = request.target().port();
        Caller caller = generation.admission().scoped(host, port)
                ? Identities.caller(identify.of(request.client(), host, port)) : Caller.unscoped();
        var governing = generation.l7().governing(host, port, p -> p.admitsCaller(caller));
        return L7Engine.route(governing, request.target().method(), L7Step.rawTarget(request.target()));
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
}
