package dev.openshell.supervisor.runtime;

import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.OriginatingProcess;
import dev.openshell.supervisor.audit.RequestFacts;
import dev.openshell.supervisor.engine.chain.Chain;
import dev.openshell.supervisor.l7.L7Engine;
import dev.openshell.supervisor.l7.RequestTarget;
import java.util.Objects;
import java.util.Optional;

/**
 * The runtime's plan of one exchange ({@link dev.openshell.supervisor.proxy.PolicySteps}' {@code P}): made by the
 * plan step, handed unchanged to the exchange's later steps. Immutable; everything in it was chosen from one
 * {@link Generation}.
 *
 * @param generation the generation serving the exchange
 * @param chain the selected pre-credentials chain
 * @param post the selected post-credentials stages
 * @param facts the exchange as audit events describe it
 * @param host the canonical destination host
 * @param process the contract's originating process, when the connection's process is known
 * @param l7 the L7 route, when an L7 endpoint governs the request
 * @param responses the selected response stages
 */
record ExchangePlan(Generation generation, Chain chain, Chain post, RequestFacts facts, String host,
                    Optional<OriginatingProcess> process, Optional<L7Engine.Route> l7, Chain responses) {
    ExchangePlan {
        Objects.requireNonNull(generation, "generation");
        Objects.requireNonNull(chain, "chain");
        Objects.requireNonNull(post, "post");
        Objects.requireNonNull(facts, "facts");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(process, "process");
        Objects.requireNonNull(l7, "l7");
        Objects.requireNonNull(responses, "responses");
    }

    /**
     * {@return the canonical path, when the L7 route made one that differs from the path received} What the policy
     * matched, what stages see and what is forwarded ({@code docs/policy-reference.md}, "Request-target
     * canonicalization").
     *
     * @param received the target as received
     */
    Optional<String> forwardPath(HttpRequestTarget received) {
        return l7.flatMap(L7Engine.Route::target).map(RequestTarget::path)
                .filter(path -> !path.equals(received.path()));
    }

    /** {@return the target as stages and post-credentials stages see it: with the canonical path} */
    HttpRequestTarget target(HttpRequestTarget received) {
        return forwardPath(received).map(path -> new HttpRequestTarget(received.scheme(), received.host(),
                received.port(), received.method(), path, received.query())).orElse(received);
    }

    /** {@return the request ID and generation only} */
    @Override
    public String toString() {
        return "ExchangePlan[" + facts.requestId() + ", generation " + generation.number() + ", " + chain + "]";
    }
}
