package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.engine.chain.ChainEngine;
import dev.openshell.supervisor.proxy.PolicySteps;
import java.util.function.Supplier;

/**
 * Binds the policy steps of the proxy's exchanges to the serving {@link Generation} ({@link PolicySteps}; RFC 0009,
 * "Registration and delivery": one request, one generation): admission, plan, L7, request chain, credentials and
 * audit, each a small step over that generation and the supervisor's shared services. The steps of a generation are
 * bound once, when the proxy first asks after it was installed, and reused for every exchange it serves.
 */
final class RuntimeSteps implements Supplier<PolicySteps<ExchangePlan>> {
    private final Supplier<Generation> current;
    private final ChainEngine engine;
    private final ExchangeAudit audit;
    private final Identify identify;
    private final L7Step l7;
    private final AuditStep auditStep;
    private final SessionStep sessions;
    /** The steps of the generation that served last, with it; replaced when another generation serves. */
    private volatile Bound bound;

    private record Bound(Generation generation, PolicySteps<ExchangePlan> steps) {
    }

    /**
     * @param current the serving generation
     * @param engine the chain engine
     * @param audit where the steps write what they decide
     * @param identities the supervisor's process identification
     */
    RuntimeSteps(Supplier<Generation> current, ChainEngine engine, ExchangeAudit audit, Identities identities) {
        this.current = current;
        this.engine = engine;
        this.audit = audit;
        this.identify = new Identify(identities, audit);
        this.l7 = new L7Step(audit);
        this.auditStep = new AuditStep(audit);
        this.sessions = new SessionStep(new dev.openshell.supervisor.engine.chain.MessageChain(), audit, current);
    }

    /** {@return the steps of the serving generation} */
    @Override
    public PolicySteps<ExchangePlan> get() {
        Generation g = current.get();
        Bound b = bound;
        if (b == null || b.generation() != g) {
            // a race binds one generation twice: both values are equal in effect, and the last one stays
            b = new Bound(g, bind(g));
            bound = b;
        }
        return b.steps();
    }

    /**
     * {@return the PID of the process behind a connection over its client address's connection cap or body share,
     * when found} ({@link Identities#owner}); empty with {@code endpoint-only}. Blocks on {@code /proc}.
     *
     * @param connection the connection
     */
    java.util.OptionalLong owner(dev.openshell.supervisor.proxy.ClientConnection connection) {
        return identify.identities().owner(connection);
    }

    private PolicySteps<ExchangePlan> bind(Generation g) {
        return new PolicySteps<>(g.number(), new AdmissionStep(g, identify), new PlanStep(g, identify, audit), l7,
                new RequestChainStep(engine, l7, audit), new CredentialStep(g, engine, audit), auditStep, sessions,
                new ResponseChainStep(audit, ResponseChainStep.DEFAULT_ACCUMULATION_DEADLINE));
    }
}
