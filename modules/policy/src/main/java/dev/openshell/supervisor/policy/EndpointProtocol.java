package dev.openshell.supervisor.policy;

import java.util.Optional;

/**
 * The protocol a network endpoint declares (OpenShell policy {@code protocol}). Declaring an L7 protocol subjects
 * requests to L7 policy; middleware runs on every parsed HTTP/1.x request whatever the protocol (RFC 0009,
 * "Operation phases and placement"). {@link #TCP} marks opaque TCP that is never parsed.
 */
public enum EndpointProtocol {
    /** HTTP method and path rules. */
    REST("rest"),
    /** GraphQL over HTTP. */
    GRAPHQL("graphql"),
    /** Generic JSON-RPC over HTTP. */
    JSON_RPC("json-rpc"),
    /** MCP Streamable HTTP. */
    MCP("mcp"),
    /** RFC 6455 upgrade requests. */
    WEBSOCKET("websocket"),
    /** SQL wire inspection (accepted for OpenShell compatibility). */
    SQL("sql"),
    /** Opaque TCP: never parsed, so never inspected by middleware. */
    TCP("tcp");

    private final String policyName;

    EndpointProtocol(String policyName) {
        this.policyName = policyName;
    }

    /** {@return the spelling in policy files} */
    public String policyName() {
        return policyName;
    }

    /**
     * {@return the protocol spelled {@code name} in a policy file, compared case-insensitively}
     *
     * @param name the spelling
     */
    public static Optional<EndpointProtocol> fromPolicyName(String name) {
        for (EndpointProtocol p : values()) {
            if (p.policyName.equalsIgnoreCase(name)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }
}
