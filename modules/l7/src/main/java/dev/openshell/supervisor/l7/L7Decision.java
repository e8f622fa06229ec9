package dev.openshell.supervisor.l7;

import dev.openshell.supervisor.policy.EndpointProtocol;

import java.util.Objects;
import java.util.Optional;

/**
 * The L7 decision on one request or WebSocket text message: what happens to it and why, in terms an operator reads
 * in the audit event and the agent reads in the denial body ({@code docs/policy-reference.md}, "L7 decisions").
 *
 * @param outcome allow, audit (a violation logged and forwarded) or deny
 * @param hard whether the denial ignores {@code enforcement: audit} (body-parse failures, response frames, a
 *     non-upgrade request to a websocket endpoint, a refused request-target)
 * @param status the HTTP status a denial answers: 403 for a policy denial, 400 for a refused request (unparseable
 *     target or body), 413 for a body above the endpoint's limit; 200 otherwise
 * @param protocol the endpoint protocol that decided
 * @param engine the OCSF {@code firewall_rule} engine: {@code l7}, {@code l7-graphql}, {@code l7-jsonrpc},
 *     {@code l7-mcp} or {@code l7-websocket}
 * @param policyKey the key of the network policy whose endpoint decided
 * @param rule the rule that decided, as written ({@code GET /repos/**}); for a denial by absence, the rule that was
 *     missing ({@code POST /repos/x}); empty when none applies
 * @param reason a short reason without request content (no query values, bodies or parameters)
 * @param path the canonical path without the query, or {@code "-"} when the target was refused
 * @param detail what was evaluated: GraphQL operations, JSON-RPC methods and tool names (never parameters)
 * @param code for a refusal whose cause has a fixed name, that name ({@code method_override},
 *     {@code method_override_ambiguous}, {@code method_override_unreadable}, {@code path_ambiguous},
 *     {@code graphql_ambiguous_request},
 *     {@code graphql_number_too_long},
 *     {@code json_invalid}, {@code json_trailing_data}, {@code json_too_deep}, {@code json_number_too_long},
 *     {@code json_duplicate_key}); the client's answer and the audit event carry it
 */
public record L7Decision(Outcome outcome, boolean hard, int status, EndpointProtocol protocol, String engine,
                         String policyKey, Optional<String> rule, String reason, String path, String detail,
                         Optional<String> code) {
    /** What happens to the request. */
    public enum Outcome {
        /** The rules allow it. */
        ALLOW,
        /** The rules do not allow it, the endpoint audits: logged and forwarded. */
        AUDIT,
        /** Refused. */
        DENY;

        /** {@return the spelling in logs and events} */
        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** Checks the components. @throws NullPointerException if any is {@code null} */
    public L7Decision {
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(protocol, "protocol");
        Objects.requireNonNull(engine, "engine");
        Objects.requireNonNull(policyKey, "policyKey");
        Objects.requireNonNull(rule, "rule");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(detail, "detail");
        Objects.requireNonNull(code, "code");
    }

    /**
     * A decision without a code.
     *
     * @param outcome allow, audit or deny
     * @param hard whether a denial ignores {@code enforcement: audit}
     * @param status the HTTP status a denial answers
     * @param protocol the endpoint protocol that decided
     * @param engine the OCSF {@code firewall_rule} engine
     * @param policyKey the key of the network policy whose endpoint decided
     * @param rule the rule that decided or was missing
     * @param reason a short reason without request content
     * @param path the canonical path without the query
     * @param detail what was evaluated
     */
    public L7Decision(Outcome outcome, boolean hard, int status, EndpointProtocol protocol, String engine,
                      String policyKey, Optional<String> rule, String reason, String path, String detail) {
        this(outcome, hard, status, protocol, engine, policyKey, rule, reason, path, detail, Optional.empty());
    }

    /** {@return whether the request goes on (allowed or audited)} */
    public boolean forwards() {
        return outcome != Outcome.DENY;
    }

    /** {@return the engine name for a protocol} @param protocol the endpoint protocol */
    public static String engineFor(EndpointProtocol protocol) {
        return switch (protocol) {
            case GRAPHQL -> "l7-graphql";
            case JSON_RPC -> "l7-jsonrpc";
            case MCP -> "l7-mcp";
            case WEBSOCKET -> "l7-websocket";
            default -> "l7";
        };
    }
}
