package dev.openshell.supervisor.policy;

import java.util.Objects;
import java.util.Optional;

import org.eclipse.collections.api.list.ImmutableList;
import org.eclipse.collections.api.map.ImmutableMap;

/**
 * The L7 policy of an endpoint that declares an L7 {@code protocol} ({@code rest}, {@code graphql}, {@code json-rpc},
 * {@code mcp}, {@code websocket}; {@code sql} loads in audit only and is never inspected), validated at load time and
 * with its {@code access} preset already expanded into {@link #allow()} rules. See {@code docs/policy-reference.md},
 * "L7 policy", for every key and limit.
 *
 * @param protocol the declared protocol
 * @param enforcement {@code enforce} (also when omitted: this supervisor fails closed) or {@code audit}
 * @param allow the allow rules, presets expanded; a request is allowed when one matches
 * @param deny the deny rules; one matching denies, whatever the allow rules (of any matching endpoint) say
 * @param path the endpoint-level path glob selecting which requests on the host and port this endpoint governs
 * @param allowEncodedSlash whether {@code %2F} in the request path is kept (as {@code %2F}) instead of refused
 * @param maxBodyBytes the largest request body read for body-aware protocols (GraphQL, JSON-RPC, MCP), bytes
 * @param strictToolNames MCP: tool names must match {@code [A-Za-z0-9_.-]{1,128}} or the request is refused
 * @param allowAllKnownMcpMethods MCP: any method is allowed unless a rule narrows {@code tools/call} by tool name
 * @param allowRegisteredPersistedQueries GraphQL: a request naming only a persisted-query hash or id is evaluated on
 *     its {@link #persistedQueries()} entry (else it is denied)
 * @param persistedQueries GraphQL: the registry by hash or id
 * @param graphqlMessages WebSocket: text messages are GraphQL-over-WebSocket messages, classified as GraphQL
 * @param methodOverride REST and WebSocket: what a request carrying a method-override form gets (refused by default)
 */
public record L7Endpoint(EndpointProtocol protocol, Enforcement enforcement, ImmutableList<L7Rule> allow,
                         ImmutableList<L7Rule> deny, Optional<Glob> path, boolean allowEncodedSlash,
                         int maxBodyBytes, boolean strictToolNames, boolean allowAllKnownMcpMethods,
                         boolean allowRegisteredPersistedQueries,
                         ImmutableMap<String, GraphQlOperationSpec> persistedQueries, boolean graphqlMessages,
                         MethodOverride methodOverride) {
    /** The default body limit of GraphQL, JSON-RPC and MCP endpoints (OpenShell's default), bytes. */
    public static final int DEFAULT_MAX_BODY_BYTES = 65_536;
    /** The largest configurable body limit, bytes. */
    public static final int MAX_BODY_BYTES_LIMIT = 16 * 1024 * 1024;

    /** Checks the components. @throws NullPointerException if any is {@code null} */
    public L7Endpoint {
        Objects.requireNonNull(protocol, "protocol");
        Objects.requireNonNull(enforcement, "enforcement");
        Objects.requireNonNull(allow, "allow");
        Objects.requireNonNull(deny, "deny");
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(persistedQueries, "persistedQueries");
        Objects.requireNonNull(methodOverride, "methodOverride");
        if (maxBodyBytes < 1 || maxBodyBytes > MAX_BODY_BYTES_LIMIT) {
            throw new IllegalArgumentException("maxBodyBytes out of range");
        }
    }

    /** {@return whether requests are judged by method, path and query (REST, and a WebSocket upgrade)} */
    public boolean restShaped() {
        return protocol == EndpointProtocol.REST || protocol == EndpointProtocol.WEBSOCKET;
    }

    /** {@return whether the protocol's policy reads the request body (GraphQL, JSON-RPC, MCP)} */
    public boolean bodyAware() {
        return protocol == EndpointProtocol.GRAPHQL || protocol == EndpointProtocol.JSON_RPC
                || protocol == EndpointProtocol.MCP;
    }
}
