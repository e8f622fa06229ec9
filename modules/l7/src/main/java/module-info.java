/**
 * L7 policy for the supervisor: request-target canonicalization ({@link dev.openshell.supervisor.l7.RequestTarget})
 * and the decision engine ({@link dev.openshell.supervisor.l7.L7Engine}) that evaluates the REST, GraphQL, JSON-RPC,
 * MCP and WebSocket rules of OpenShell network policies, in native Java. GraphQL documents are parsed with
 * graphql-java's parser; JSON bodies with jakarta.json (duplicate keys refused).
 */
module dev.openshell.supervisor.l7 {
    requires transitive dev.openshell.supervisor.policy;
    requires com.graphqljava;

    exports dev.openshell.supervisor.l7;
}
