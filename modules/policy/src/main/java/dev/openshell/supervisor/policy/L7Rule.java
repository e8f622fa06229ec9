package dev.openshell.supervisor.policy;

import java.util.Objects;
import java.util.Optional;

import org.eclipse.collections.api.list.ImmutableList;
import org.eclipse.collections.api.map.ImmutableOrderedMap;

/**
 * One L7 allow rule ({@code rules[i].allow}) or deny rule ({@code deny_rules[i]}) of an endpoint, validated at load
 * time. Which components are present depends on the endpoint's protocol ({@code docs/policy-reference.md}, "L7
 * rules"):
 *
 * <ul>
 *   <li>{@code rest} and {@code websocket}: {@code method} and {@code path} (both required), optional {@code query};
 *   </li>
 *   <li>{@code graphql} (and GraphQL-over-WebSocket rules): {@code operationType} (required), optional
 *       {@code operationName} and {@code fields};</li>
 *   <li>{@code json-rpc}: {@code rpcMethod} ({@code *} or an exact name);</li>
 *   <li>{@code mcp}: {@code rpcMethod} (a value glob) and optional {@code tool} (the {@code tools/call} tool name,
 *       written {@code tool} or {@code params.name}).</li>
 * </ul>
 *
 * @param source how the rule reads in logs and denial bodies, such as {@code GET /repos/**} or
 *     {@code mutation createIssue}
 * @param method the HTTP method, upper case, or {@code *} for any (REST and WebSocket rules; {@code WEBSOCKET_TEXT}
 *     names a WebSocket text message)
 * @param path the path glob ({@link Glob#path(String)})
 * @param query per query key, the matcher its values must satisfy; in file order
 * @param operationType the GraphQL operation type, lower case: {@code query}, {@code mutation},
 *     {@code subscription} or {@code *}
 * @param operationName the GraphQL operation name glob
 * @param fields the GraphQL root field globs; empty means "not constrained"
 * @param rpcMethod the JSON-RPC or MCP method glob
 * @param tool the MCP tool name matcher
 */
public record L7Rule(String source, Optional<String> method, Optional<Glob> path,
                     ImmutableOrderedMap<String, ValueMatcher> query, Optional<String> operationType,
                     Optional<Glob> operationName, ImmutableList<Glob> fields, Optional<Glob> rpcMethod,
                     Optional<ValueMatcher> tool) {
    /** Checks the components. @throws NullPointerException if any is {@code null} */
    public L7Rule {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(query, "query");
        Objects.requireNonNull(operationType, "operationType");
        Objects.requireNonNull(operationName, "operationName");
        Objects.requireNonNull(fields, "fields");
        Objects.requireNonNull(rpcMethod, "rpcMethod");
        Objects.requireNonNull(tool, "tool");
    }

    /** {@return whether this is a GraphQL operation rule (it names an operation type)} */
    public boolean isOperationRule() {
        return operationType.isPresent();
    }

    @Override
    public String toString() {
        return source;
    }
}
