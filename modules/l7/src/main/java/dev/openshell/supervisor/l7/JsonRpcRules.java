package dev.openshell.supervisor.l7;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.internal.AuditNames;
import dev.openshell.supervisor.l7.L7Decision.Outcome;
import dev.openshell.supervisor.l7.L7Engine.Denial;
import dev.openshell.supervisor.l7.L7Engine.Governing;
import dev.openshell.supervisor.l7.L7Engine.Rest;
import dev.openshell.supervisor.l7.L7Engine.Route;
import dev.openshell.supervisor.policy.EndpointProtocol;
import dev.openshell.supervisor.policy.L7Endpoint;
import dev.openshell.supervisor.policy.L7Rule;
import dev.openshell.supervisor.policy.ValueMatcher;

import java.util.List;
import java.util.Optional;

import org.eclipse.collections.api.list.ImmutableList;

/**
 * The JSON-RPC and MCP rules of the L7 policy ({@code docs/policy-reference.md}, "protocol: json-rpc" and
 * "protocol: mcp"): a request is a {@code POST} whose body is one message or one batch (parsed by {@link JsonRpc}),
 * every call of which a rule of a governing endpoint of the selected protocol must allow and no deny rule of any
 * governing endpoint may name; a client's response frame is a hard denial (JSON-RPC) or allowed (MCP elicitation
 * answers); MCP's receive stream is a bodyless {@code GET} accepting {@code text/event-stream}.
 */
final class JsonRpcRules {
    private JsonRpcRules() {
    }

    static L7Decision decide(Route route, Governing selected, Rest r, L7Request request) {
        L7Endpoint ep = selected.l7();
        boolean mcp = ep.protocol() == EndpointProtocol.MCP;
        Optional<Denial> restDenied = L7Engine.restDeny(route, r);
        if (restDenied.isPresent()) {
            return L7Engine.violation(selected, restDenied.get().rule(), AuditNames.safe(r.method()) + " "
                    + r.path() + " blocked by deny rule", r.path(), "");
        }
        if (!r.method().equals("POST")) {
            if (mcp && r.method().equals("GET") && request.body().map(Body::isEmpty).orElse(true)
                    && request.headerHasToken("Accept", "text/event-stream")) {
                return L7Engine.decision(selected, Outcome.ALLOW, 200, Optional.empty(), "MCP receive stream", r.path(),
                        "receive_stream");
            }
            return L7Engine.violation(selected, Optional.of("POST " + r.path()), AuditNames.safe(r.method()) + " "
                    + r.path() + " not permitted by policy: " + (mcp ? "MCP" : "JSON-RPC") + " requests are POST", r.path(),
                    "");
        }
        List<JsonRpc.Call> calls;
        try {
            calls = JsonRpc.parse(request.body().map(Body::toByteArray).orElse(new byte[0]), mcp, ep.strictToolNames());
        } catch (JsonRpc.Invalid e) {
            return L7Engine.hard(selected, 400, e.getMessage(), r.path(), "", e.code());
        }
        String detail = "rpc_methods=" + String.join(",", calls.stream().map(JsonRpc.Call::describe).toList());
        Optional<String> deciding = Optional.empty();
        for (JsonRpc.Call call : calls) {
            if (call.response()) {
                if (mcp) {
                    continue;
                }
                return L7Engine.hard(selected, 403, "JSON-RPC response frames are not permitted from client to server",
                        r.path(), detail);
            }
            for (Governing g : route.governing()) {
                for (L7Rule rule : g.l7().deny()) {
                    if (rule.rpcMethod().isPresent() && callMatches(rule, call)) {
                        return L7Engine.violation(selected, Optional.of(rule.source()), "JSON-RPC method "
                                + call.describe() + " blocked by deny rule", r.path(), detail);
                    }
                }
            }
            Optional<String> allowedBy = Optional.empty();
            ImmutableList<Governing> same = L7Engine.sameProtocol(route, selected);
            for (Governing g : same) {
                for (L7Rule rule : g.l7().allow()) {
                    if (allowedBy.isEmpty() && rule.rpcMethod().isPresent() && callMatches(rule, call)) {
                        allowedBy = Optional.of(rule.source());
                    }
                }
            }
            if (allowedBy.isEmpty() && mcp && same.anySatisfy(g -> g.l7().allowAllKnownMcpMethods())) {
                boolean narrowed = call.method().orElse("").equals("tools/call")
                        && same.anySatisfy(g -> g.l7().allow().anySatisfy(x -> x.tool().isPresent()));
                if (!narrowed) {
                    allowedBy = Optional.of("mcp.allow_all_known_mcp_methods");
                }
            }
            if (allowedBy.isEmpty()) {
                return L7Engine.violation(selected, Optional.of(call.describe()), "JSON-RPC method " + call.describe()
                        + " not permitted by policy", r.path(), detail);
            }
            if (deciding.isEmpty()) {
                deciding = allowedBy;
            }
        }
        return L7Engine.decision(selected, Outcome.ALLOW, 200, deciding, "allowed by rule", r.path(), detail);
    }

    private static boolean callMatches(L7Rule rule, JsonRpc.Call call) {
        String method = call.method().orElse("");
        if (!rule.rpcMethod().get().matches(method)) {
            return false;
        }
        if (rule.tool().isEmpty()) {
            return true;
        }
        ValueMatcher tool = rule.tool().get();
        return method.equals("tools/call") && call.tool().map(tool::matches).orElse(false);
    }

}
