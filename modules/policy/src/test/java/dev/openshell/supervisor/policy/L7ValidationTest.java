package dev.openshell.supervisor.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Load-time validation of every L7 endpoint key (decisions 3 and 4 of the L7 design): one file with a mistake of
 * each kind, every error reported at once with its line, column and key path.
 */
class L7ValidationTest {
    static final String BAD = """
                version: 1
                network_policies:
                  p:
                    endpoints:
                      - host: a.test
                        port: 443
                        protocol: rest
                        enforcement: enforce
                        access: read-only
                        rules:
                          - allow: {method: GET, path: /x}
                      - host: b.test
                        port: 443
                        protocol: rest
                        enforcement: enforce
                        rules:
                          - allow: {method: GET}
                          - allow: {path: /x, method: "G T"}
                          - allow: {method: GET, path: "/a/[b", query: {tag: {glob: x, any: [y]}}}
                          - allow: {method: GET, path: "x/y", query: {tag: {any: []}}}
                          - deny: {method: GET, path: /x}
                        deny_rules:
                          - {path: /admin/**}
                      - host: c.test
                        port: 443
                        protocol: json-rpc
                        enforcement: enforce
                        access: full
                        rules:
                          - allow: {method: "reports.*"}
                          - allow: {method: x, tool: y}
                        mcp: {strict_tool_names: false}
                      - host: "*.d.test"
                        port: 443
                        protocol: mcp
                        enforcement: audit
                        mcp: {max_body_bytes: 0, bogus: 1}
                        rules:
                          - allow: {method: "resources/*"}
                          - allow: {method: "*"}
                          - allow: {method: tools/call, tool: "bad name!"}
                          - allow: {method: initialize, tool: x}
                      - host: e.test
                        port: 443
                        protocol: graphql
                        rules:
                          - allow: {operation_type: read, fields: []}
                          - allow: {method: GET, path: /graphql}
                        graphql_persisted_queries:
                          h1: {operation_name: X}
                      - host: f.test
                        port: 443
                        protocol: websocket
                        enforcement: enforce
                        rules:
                          - allow: {method: POST, path: /ws}
                          - allow: {method: WEBSOCKET_TEXT, path: /ws}
                          - allow: {operation_type: query, method: GET}
                      - host: g.test
                        port: 443
                        path: v1
                        allow_encoded_slash: yes please
                        deny_rules: []
                      - host: h.test
                        port: 5432
                        protocol: sql
                      - host: i.test
                        port: 443
                        protocol: rest
                        enforcement: enforce
                        rules: []
                        deny_rules:
                          - {method: DELETE, path: /x}
                """;

    @Test
    void everyL7MistakeIsReportedAtOnceWithItsPosition() {
        PolicyException e = assertThrows(PolicyException.class, () -> SandboxPolicyLoader.parse("l7.yaml", BAD));
        List<String> errors = e.errors().collect(ConfigProblem::describe).castToList();
        assertEquals(List.of(
                "l7.yaml:10:9: error: network_policies.p.endpoints[0].rules: give either access or rules, not both (access expands into rules)",
                "l7.yaml:17:20: error: network_policies.p.endpoints[1].rules[0].allow: path is required (a path glob such as /repos/** or **); an allow rule without a path would never match",
                "l7.yaml:18:39: error: network_policies.p.endpoints[1].rules[1].allow.method: method 'G T' is not an HTTP method token (RFC 9110, section 9.1); write the method name or *",
                "l7.yaml:19:40: error: network_policies.p.endpoints[1].rules[2].allow.path: invalid path pattern '/a/[b': unclosed '[' at character 4",
                "l7.yaml:19:72: error: network_policies.p.endpoints[1].rules[2].allow.query.tag.any: give either glob or any, not both",
                "l7.yaml:20:40: error: network_policies.p.endpoints[1].rules[3].allow.path: path pattern 'x/y' can never match: request paths start with /; write /x/y or ** (any path)",
                "l7.yaml:20:66: error: network_policies.p.endpoints[1].rules[3].allow.query.tag.any: any is empty, so nothing would match; list at least one glob",
                "l7.yaml:21:13: error: network_policies.p.endpoints[1].rules[4].deny: unknown key 'deny'; allowed keys: allow",
                "l7.yaml:23:13: error: network_policies.p.endpoints[1].deny_rules[0]: method is required (an HTTP method, or * for any); a deny rule without a method would never fire",
                "l7.yaml:28:9: error: network_policies.p.endpoints[2].access: access presets are not defined for protocol: json-rpc; list the allowed methods in rules",
                "l7.yaml:29:9: error: network_policies.p.endpoints[2].rules: give either access or rules, not both (access expands into rules)",
                "l7.yaml:30:29: error: network_policies.p.endpoints[2].rules[0].allow.method: JSON-RPC methods are matched exactly; 'reports.*' has wildcard characters (only * alone, for any method, is a pattern)",
                "l7.yaml:31:32: error: network_policies.p.endpoints[2].rules[1].allow.tool: unknown key 'tool'; allowed keys: method",
                "l7.yaml:32:9: error: network_policies.p.endpoints[2].mcp: mcp applies to protocol: mcp endpoints only",
                "l7.yaml:33:9: error: network_policies.p.endpoints[3]: protocol: mcp needs a concrete host (no wildcards)",
                "l7.yaml:37:31: error: network_policies.p.endpoints[3].mcp.max_body_bytes: 0 is outside 1..16777216",
                "l7.yaml:37:34: error: network_policies.p.endpoints[3].mcp.bogus: unknown key 'bogus'; allowed keys: max_body_bytes, strict_tool_names, allow_all_known_mcp_methods",
                "l7.yaml:39:29: error: network_policies.p.endpoints[3].rules[0].allow.method: MCP method patterns are allowed in the tools/ family only (such as tools/*); write 'resources/*' as exact method names or *",
                "l7.yaml:41:47: error: network_policies.p.endpoints[3].rules[2].allow.tool: tool name pattern 'bad name!' cannot match a strict tool name (letters, digits, _ . - and the wildcards * ?, at most 128 characters); set mcp.strict_tool_names: false for other names",
                "l7.yaml:42:41: error: network_policies.p.endpoints[3].rules[3].allow.tool: a tool selector applies to tools/call only, and method 'initialize' does not cover tools/call",
                "l7.yaml:47:37: error: network_policies.p.endpoints[4].rules[0].allow.operation_type: unknown operation_type 'read'; expected query, mutation, subscription or *",
                "l7.yaml:47:51: error: network_policies.p.endpoints[4].rules[0].allow.fields: fields is empty; leave it out to allow any root field, or list at least one",
                "l7.yaml:48:20: error: network_policies.p.endpoints[4].rules[1].allow: operation_type is required: query, mutation, subscription or *",
                "l7.yaml:48:21: error: network_policies.p.endpoints[4].rules[1].allow.method: unknown key 'method'; allowed keys: operation_type, operation_name, fields",
                "l7.yaml:48:34: error: network_policies.p.endpoints[4].rules[1].allow.path: unknown key 'path'; allowed keys: operation_type, operation_name, fields",
                "l7.yaml:49:9: error: network_policies.p.endpoints[4].graphql_persisted_queries: graphql_persisted_queries has no effect unless persisted_queries: allow_registered",
                "l7.yaml:50:15: error: network_policies.p.endpoints[4].graphql_persisted_queries.h1: operation_type is required: query, mutation or subscription",
                "l7.yaml:56:29: error: network_policies.p.endpoints[5].rules[0].allow.method: method 'POST' cannot match on a websocket endpoint; expected GET (the upgrade), WEBSOCKET_TEXT (a text message) or *",
                "l7.yaml:57:29: error: network_policies.p.endpoints[5].rules[1].allow.method: this websocket endpoint carries GraphQL messages (its rules name operations), which are matched by operation rules; a WEBSOCKET_TEXT rule would bypass them",
                "l7.yaml:58:44: error: network_policies.p.endpoints[5].rules[2].allow.method: a GraphQL operation rule cannot also match method; write the upgrade's method and path in a separate rule",
                "l7.yaml:61:9: error: network_policies.p.endpoints[6].path: path needs an L7 protocol on the endpoint (protocol: rest, graphql, json-rpc, mcp or websocket); without one the endpoint is admitted at L4 only and the setting would have no effect",
                "l7.yaml:62:9: error: network_policies.p.endpoints[6].allow_encoded_slash: allow_encoded_slash needs an L7 protocol on the endpoint (protocol: rest, graphql, json-rpc, mcp or websocket); without one the endpoint is admitted at L4 only and the setting would have no effect",
                "l7.yaml:63:9: error: network_policies.p.endpoints[6].deny_rules: deny_rules needs an L7 protocol on the endpoint (protocol: rest, graphql, json-rpc, mcp or websocket); without one the endpoint is admitted at L4 only and the setting would have no effect",
                "l7.yaml:64:9: error: network_policies.p.endpoints[7]: protocol: sql loads with enforcement: audit only; the SQL wire protocol is not inspected, so it cannot be enforced",
                "l7.yaml:71:16: error: network_policies.p.endpoints[8].rules: rules is empty, so the endpoint would deny every request; list at least one rule"), errors);
    }

    @Test
    void l7RulesOnATlsSkipEndpointWarnThatTheyApplyToPlainHttpOnly() {
        Loaded<SandboxPolicy> loaded = SandboxPolicyLoader.parse("s.yaml", """
                version: 1
                network_policies:
                  p:
                    endpoints:
                      - {host: a.test, port: 443, tls: skip, protocol: rest, enforcement: enforce, access: read-only}
                      - {host: b.test, port: 443, tls: skip, protocol: sql, enforcement: audit}
                """);
        assertEquals(List.of("s.yaml:5:40: warning: network_policies.p.endpoints[0].tls: tls: skip relays HTTPS"
                + " (CONNECT) to this endpoint without terminating it, so its L7 rules (protocol: rest) apply to"
                + " plain-HTTP requests only"), loaded.warnings().collect(ConfigProblem::describe).castToList(),
                "protocol: sql is never inspected anyway");
    }

    @Test
    void omittedEnforcementEnforcesAndWarns() {
        Loaded<SandboxPolicy> loaded = SandboxPolicyLoader.parse("w.yaml", """
                version: 1
                network_policies:
                  p:
                    endpoints:
                      - {host: a.test, port: 443, protocol: rest, access: read-only}
                """);
        assertEquals(Enforcement.ENFORCE, loaded.value().networkPolicies().get("p").endpoints().getOnly()
                .enforcement());
        assertEquals(List.of("w.yaml:5:9: warning: network_policies.p.endpoints[0]: enforcement is not given, so this"
                + " supervisor enforces the L7 rules (OpenShell audits here; write enforcement: audit to match it)"),
                loaded.warnings().collect(ConfigProblem::describe).castToList());
    }

    @Test
    void presetsExpandPerProtocol() {
        Loaded<SandboxPolicy> loaded = SandboxPolicyLoader.parse("p.yaml", """
                version: 1
                network_policies:
                  p:
                    endpoints:
                      - {host: a.test, port: 443, protocol: rest, enforcement: enforce, access: read-write}
                      - {host: b.test, port: 443, protocol: graphql, enforcement: enforce, access: read-write}
                      - {host: c.test, port: 443, protocol: websocket, enforcement: enforce, access: read-write}
                      - {host: d.test, port: 443, protocol: Rest, enforcement: audit, access: full}
                """);
        var eps = loaded.value().networkPolicies().get("p").endpoints();
        assertEquals(List.of("GET **", "HEAD **", "OPTIONS **", "POST **", "PUT **", "PATCH **"),
                eps.get(0).l7().orElseThrow().allow().collect(L7Rule::source).castToList());
        assertEquals(List.of("query *", "mutation *"),
                eps.get(1).l7().orElseThrow().allow().collect(L7Rule::source).castToList());
        assertEquals(List.of("GET **", "WEBSOCKET_TEXT **"),
                eps.get(2).l7().orElseThrow().allow().collect(L7Rule::source).castToList());
        assertEquals(List.of("* **"), eps.get(3).l7().orElseThrow().allow().collect(L7Rule::source).castToList());
        assertEquals(EndpointProtocol.REST, eps.get(3).protocol().orElseThrow(), "decision 6: case-insensitive");
        assertTrue(loaded.warnings().isEmpty(), () -> loaded.warnings().toString());
    }
}
