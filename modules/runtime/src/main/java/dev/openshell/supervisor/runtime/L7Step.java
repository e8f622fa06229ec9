package dev.openshell.supervisor.runtime;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.supervisor.audit.RequestFacts;
import dev.openshell.supervisor.l7.L7Decision;
import dev.openshell.supervisor.l7.L7Engine;
import dev.openshell.supervisor.l7.L7Request;
import dev.openshell.supervisor.policy.EndpointProtocol;
import dev.openshell.supervisor.proxy.Answer;
import dev.openshell.supervisor.proxy.ClientConnection;
import dev.openshell.supervisor.proxy.L7Verdict;
import dev.openshell.supervisor.proxy.PolicySteps;
import dev.openshell.supervisor.proxy.ProxyRequest;
import dev.openshell.supervisor.proxy.WebSocketMessages;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * L7 policy ({@link PolicySteps.L7}; {@code docs/policy-reference.md}, "L7 policy"; RFC 0009: "L7 policy (when
 * protocol set)" after admission, before the middleware chain), decided once per request from the route the plan
 * holds: on the head, the canonical request-target and a denial; for GraphQL, JSON-RPC and MCP, the need for the body
 * (buffered up to the endpoint's limit, never streamed past it) and then the decision on it. A WebSocket upgrade to a
 * {@code protocol: websocket} endpoint gets a message policy that decides on every client text message. Every L7
 * decision is one OCSF HTTP Activity event and one count of {@code supervisor_l7_decisions_total}, except that the
 * decision on a body that goes through a chain is made with the chain ({@link #withChain}): every body a stage puts in
 * place is decided again (decision 7), and a re-check with the decision's result is recorded in its event.
 *
 * @param audit where decisions go
 */
record L7Step(ExchangeAudit audit) implements PolicySteps.L7<ExchangePlan> {
    /** The reason code of an L7 policy denial (a rule denies, or none allows). */
    static final String L7_DENIED = "l7_policy_denied";
    /** The reason code of a hard L7 denial (refused target, unparseable body, ...), which audit mode does not lift. */
    static final String L7_HARD_DENIED = "l7_hard_denied";

    @Override
    public L7Verdict decide(ExchangePlan plan, ProxyRequest request, Optional<Body> body) {
        if (plan.l7().isEmpty()) {
            return new L7Verdict.Unruled();
        }
        L7Engine.Route route = plan.l7().get();
        Optional<String> forwardPath = plan.forwardPath(request.target());
        L7Request head = l7Request(request.target(), request.headers(), Optional.empty());
        int need = L7Engine.bodyLimit(route, head);
        if (body.isEmpty() && need > 0) {
            return new L7Verdict.NeedsBody(forwardPath, Math.min(need, EnvelopeLimits.MAX_BODY_BYTES));
        }
        if (body.isPresent() && need > 0 && !plan.chain().isEmpty()) {
            return new L7Verdict.Allow(forwardPath, Optional.empty()); // decided by the chain step (withChain)
        }
        L7Decision d = L7Engine.decide(route, body.map(b -> withBody(head, b)).orElse(head));
        audit.l7(request.client(), plan.facts(), d, Optional.empty());
        if (!d.forwards()) {
            return new L7Verdict.Deny(answer(d));
        }
        boolean messages = body.isEmpty() && request.websocketUpgrade()
                && route.protocol().filter(p -> p == EndpointProtocol.WEBSOCKET).isPresent();
        return new L7Verdict.Allow(forwardPath, messages ? Optional.of(messages(plan, request.client(), route))
                : Optional.empty());
    }

    /** {@return the policy on a WebSocket session's client text messages, audited per message} */
    private WebSocketMessages messages(ExchangePlan plan, ClientConnection client, L7Engine.Route route) {
        RequestFacts f = plan.facts();
        RequestFacts messageFacts = new RequestFacts(f.requestId(), "WEBSOCKET_TEXT", f.scheme(), f.host(), f.port(),
                f.networkPolicy(), f.process());
        return new WebSocketMessages() {
            @Override
            public boolean allow(String message) {
                L7Decision m = L7Engine.decideText(route, message);
                audit.l7(client, messageFacts, m, Optional.empty());
                return m.forwards();
            }
        };
    }

    /**
     * {@return the L7 decisions on the body of a request that goes through the chain, the first one made} When a
     * chain is selected and the route reads the body, the decision on the body is made here, by the request chain
     * step, rather than by {@link #decide} (which lets such a body through to the chain undecided): it and the
     * re-checks of the bodies the stages put in place are one record ({@link L7BodyDecisions}). Empty when the route
     * does not read the body or no chain is selected: {@link #decide} decided alone, and nothing is re-checked.
     *
     * @param plan the exchange's plan
     * @param request the request
     * @param body the buffered body
     */
    Optional<L7BodyDecisions> withChain(ExchangePlan plan, ProxyRequest request, Body body) {
        if (plan.chain().isEmpty() || plan.l7().isEmpty()) {
            return Optional.empty();
        }
        L7Request head = l7Request(request.target(), request.headers(), Optional.empty());
        if (L7Engine.bodyLimit(plan.l7().get(), head) == 0) {
            return Optional.empty();
        }
        return Optional.of(new L7BodyDecisions(audit, plan, request, plan.l7().get(), withBody(head, body)));
    }

    /**
     * {@return the client's answer to an L7 denial} ({@code docs/policy-reference.md}, "L7 policy", decision 5):
     * {@code 403 policy_denied}, {@code 400 invalid_request} or {@code 413 body_too_large}, naming the layer, the
     * endpoint's real protocol, the policy key, the rule and the canonical path, with a fixed reason code (and the
     * refusal's own {@code code} when it has one, such as {@code method_override}); the connection closes.
     */
    static Answer answer(L7Decision d) {
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
        d.code().ifPresent(c -> extra.put("code", c));
        int status = d.status() >= 400 && d.status() <= 599 ? d.status() : 403;
        return new Answer(status, error, d.reason(), extra, true);
    }

    static L7Request l7Request(HttpRequestTarget t, List<HttpHeader> headers, Optional<Body> body) {
        List<L7Request.Header> h = new ArrayList<>(headers.size());
        for (HttpHeader x : headers) {
            h.add(new L7Request.Header(x.name(), x.value()));
        }
        return new L7Request(t.method(), rawTarget(t), h, body);
    }

    /** {@return {@code head} with a body: its header list shared, not copied} */
    static L7Request withBody(L7Request head, Body body) {
        return new L7Request(head.method(), head.target(), head.headers(), Optional.of(body));
    }

    /** {@return the request-target as received: path, and query when there is one} */
    static String rawTarget(HttpRequestTarget t) {
        return t.query().isEmpty() ? t.path() : t.path() + "?" + t.query();
    }
}
