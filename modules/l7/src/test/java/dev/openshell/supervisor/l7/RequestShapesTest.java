package dev.openshell.supervisor.l7;

import dev.openshell.middleware.spi.Body;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.supervisor.l7.L7Decision.Outcome;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

/**
 * Decisions on what the upstream may read beyond the method, path and first JSON value (issue 39): method overrides
 * under each {@code method_override} mode, GraphQL request shapes, and codes for JSON bodies out of the limits.
 */
class RequestShapesTest {
    static final String REST = """
              r:
                endpoints:
                  - host: api.test
                    port: 443
                    protocol: rest
                    enforcement: %s
                    %s
                    rules:
                      - allow: {method: "*", path: "/**"}
                    deny_rules:
                      - {method: DELETE, path: "/repos/**"}
            """;

    static final String GRAPHQL = """
              g:
                endpoints:
                  - host: api.test
                    port: 443
                    protocol: graphql
                    enforcement: enforce
                    persisted_queries: allow_registered
                    graphql_persisted_queries:
                      v1: {operation_type: query, operation_name: Viewer, fields: [viewer]}
                      m1: {operation_type: mutation, fields: [deleteRepository]}
                    rules:
                      - allow: {operation_type: query, fields: [viewer]}
            """;

    static L7Engine rest(String enforcement, String mode) {
        return L7EngineTest.engine(REST.formatted(enforcement, mode.isEmpty() ? "" : "method_override: " + mode));
    }

    static L7Decision send(L7Engine e, String method, String target, String body, String... headers) {
        List<L7Request.Header> h = new ArrayList<>();
        for (int i = 0; i < headers.length; i += 2) {
            h.add(new L7Request.Header(headers[i], headers[i + 1]));
        }
        if (body != null) {
            h.add(new L7Request.Header("Content-Length", Integer.toString(body.length())));
        }
        return e.decide("api.test", 443, new L7Request(method, target, h,
                body == null ? Optional.empty() : Optional.of(Body.ofUtf8(body)))).orElseThrow();
    }

    static void refused(L7Decision d, int status, String code) {
        assertEquals(Outcome.DENY, d.outcome(), d.toString());
        assertTrue(d.hard(), d.toString());
        assertEquals(status, d.status(), d.toString());
        assertEquals(Optional.of(code), d.code(), d.toString());
    }

    @Test
    void refuseIsTheDefaultAndHoldsEvenUnderAudit() {
        for (String enforcement : List.of("enforce", "audit")) {
            L7Engine e = rest(enforcement, "");
            refused(send(e, "POST", "/repos/x", null, "X-HTTP-Method-Override", "DELETE"), 400, "method_override");
            refused(send(e, "POST", "/other?_method=GET", null), 400, "method_override");
            refused(send(e, "POST", "/repos/x", "_method=DELETE", "Content-Type",
                    "application/x-www-form-urlencoded"), 400, "method_override");
            L7Decision d = send(e, "POST", "/repos/x", null, "X-HTTP-Method", "DELETE");
            assertFalse(d.reason().contains("DELETE"), "the value sent is not repeated: " + d.reason());
            assertTrue(d.reason().contains("header X-HTTP-Method"), d.reason());
            assertEquals(Outcome.ALLOW, send(e, "POST", "/repos/x", "a=1", "Content-Type",
                    "application/x-www-form-urlencoded").outcome());
        }
        refused(send(rest("enforce", "refuse"), "POST", "/repos/x", "{\"_method\":1}", "Content-Type",
                "application/json"), 400, "method_override");
    }

    @Test
    void evaluateJudgesTheOneOverridingMethod() {
        L7Engine e = rest("enforce", "evaluate");
        L7Decision d = send(e, "POST", "/repos/x", null, "X-HTTP-Method-Override", " delete ");
        assertEquals(Outcome.DENY, d.outcome());
        assertFalse(d.hard());
        assertEquals(Optional.of("DELETE /repos/**"), d.rule());
        assertEquals("method_override=DELETE", d.detail());
        assertEquals(Outcome.ALLOW, send(e, "POST", "/repos/x", null, "X-HTTP-Method-Override", "PATCH").outcome());
        assertEquals(Outcome.DENY, send(e, "POST", "/repos/x?_method=DELETE", "_method=DELETE", "Content-Type",
                "application/x-www-form-urlencoded", "X-Method-Override", "delete").outcome(), "the same method thrice");
        refused(send(e, "POST", "/repos/x?_method=PUT", null, "X-HTTP-Method-Override", "DELETE"), 400,
                "method_override_ambiguous");
        refused(send(e, "POST", "/repos/x", null, "X-HTTP-Method-Override", "DELETE, PUT"), 400,
                "method_override_ambiguous");
        refused(send(e, "POST", "/repos/x", null, "X-HTTP-Method-Override", ""), 400, "method_override_ambiguous");
        refused(send(e, "POST", "/repos/x", "--b\r\n", "Content-Type", "multipart/form-data; boundary=b"), 400,
                "method_override_unreadable");
        assertEquals(Outcome.AUDIT, send(rest("audit", "evaluate"), "POST", "/repos/x", null,
                "X-HTTP-Method-Override", "DELETE").outcome(), "a judged override follows the enforcement");
    }

    @Test
    void evaluateAlsoJudgesTheRequestsOwnMethodForAnUpstreamThatIgnoresTheOverride() {
        for (String enforcement : List.of("enforce", "audit")) {
            L7Engine e = L7EngineTest.engine("""
                      r:
                        endpoints:
                          - {host: api.test, port: 443, protocol: rest, enforcement: %s, access: read-only,
                             method_override: evaluate}
                    """.formatted(enforcement));
            Outcome refused = enforcement.equals("enforce") ? Outcome.DENY : Outcome.AUDIT;
            L7Decision d = send(e, "POST", "/repos/x", null, "X-HTTP-Method-Override", "GET");
            assertEquals(refused, d.outcome(), "a POST naming GET on a read-only endpoint: " + d);
            assertEquals("method_override=GET", d.detail());
            assertTrue(d.reason().startsWith("POST /repos/x"), "the request's own method is what fails: " + d);
            assertEquals(refused, send(e, "POST", "/repos/x", "_method=GET", "Content-Type",
                    "application/x-www-form-urlencoded").outcome());
            assertEquals(refused, send(e, "GET", "/repos/x?_method=DELETE", null).outcome(),
                    "the overriding method still fails on its own");
            assertEquals(Outcome.ALLOW, send(e, "GET", "/repos/x?_method=HEAD", null).outcome(),
                    "both methods pass");
        }
        L7Decision both = send(rest("audit", "evaluate"), "DELETE", "/repos/x", null, "X-HTTP-Method-Override",
                "PATCH");
        assertEquals(Outcome.AUDIT, both.outcome(), "the stricter of AUDIT (own) and ALLOW (overriding)");
    }

    @Test
    void ignoreJudgesTheRequestsOwnMethod() {
        L7Engine e = rest("enforce", "ignore");
        assertEquals(Outcome.ALLOW, send(e, "POST", "/repos/x?_method=DELETE", "--b\r\n", "Content-Type",
                "multipart/form-data; boundary=b", "X-HTTP-Method-Override", "DELETE").outcome());
        assertEquals(Outcome.DENY, send(e, "DELETE", "/repos/x", null).outcome());
    }

    @Test
    void theBodyIsNeededOnlyWhereAFrameworkWouldReadAnOverrideFromIt() {
        L7Engine e = rest("enforce", "");
        L7Engine.Route route = L7Engine.route(e.governing("api.test", 443), "POST", "/repos/x").orElseThrow();
        L7Request form = new L7Request("POST", "/repos/x", List.of(new L7Request.Header("Content-Length", "3"),
                new L7Request.Header("Content-Type", "application/x-www-form-urlencoded")), Optional.empty());
        assertEquals(OverrideForms.MAX_BODY_BYTES, L7Engine.bodyLimit(route, form));
        assertEquals(0, L7Engine.bodyLimit(route, new L7Request("POST", "/repos/x", List.of(new L7Request.Header(
                "Content-Length", "3"), new L7Request.Header("Content-Type", "image/png")), Optional.empty())));
        assertEquals(0, L7Engine.bodyLimit(route, new L7Request("PUT", "/repos/x", form.headers(),
                Optional.empty())));
        L7Engine ignoring = rest("enforce", "ignore");
        assertEquals(0, L7Engine.bodyLimit(L7Engine.route(ignoring.governing("api.test", 443), "POST", "/repos/x")
                .orElseThrow(), form));
        L7Engine g = L7EngineTest.engine(GRAPHQL);
        assertEquals(65_536, L7Engine.bodyLimit(L7Engine.route(g.governing("api.test", 443), "POST", "/graphql")
                .orElseThrow(), form));
    }

    @Test
    void aWebSocketUpgradeIsJudgedLikeAnyRestRequest() {
        L7Engine e = L7EngineTest.engine("""
                  w:
                    endpoints:
                      - {host: api.test, port: 443, protocol: websocket, enforcement: enforce, access: read-write}
                """);
        refused(send(e, "GET", "/s", null, "Upgrade", "websocket", "Connection", "Upgrade", "Sec-WebSocket-Key", "k",
                "Sec-WebSocket-Version", "13", "X-HTTP-Method-Override", "DELETE"), 400, "method_override");
    }

    // ------------------------------------------------------------------------------------------------- GraphQL

    private static String q(String v) {
        return URLEncoder.encode(v, StandardCharsets.UTF_8);
    }

    private static String sha256(String text) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                .digest(text.getBytes(StandardCharsets.UTF_8)));
    }

    private static String ext(String hash) {
        return "{\"persistedQuery\":{\"version\":1,\"sha256Hash\":\"" + hash + "\"}}";
    }

    @Test
    void graphqlShapesTheUpstreamCouldReadTwoWaysAreRefused() throws Exception {
        L7Engine e = L7EngineTest.engine(GRAPHQL);
        String viewer = "{ viewer { id } }";
        String amb = GraphQl.AMBIGUOUS;
        refused(send(e, "GET", "/graphql?query=" + q(viewer), "{\"query\":\"mutation { deleteRepository }\"}"),
                400, amb);
        refused(send(e, "POST", "/graphql?query=" + q("mutation { deleteRepository }"), L7EngineTest.gql(viewer)),
                400, amb);
        for (String param : List.of("operationName=A", "extensions=%7B%7D", "id=v1", "documentId=v1", "queryId=v1")) {
            refused(send(e, "POST", "/graphql?" + param, L7EngineTest.gql(viewer)), 400, amb);
        }
        refused(send(e, "GET", "/graphql?id=v1&extensions=" + q(ext("m1")), null), 400, amb);
        refused(send(e, "GET", "/graphql?query=" + q(viewer) + "&extensions=" + q(ext("m1")), null), 400, amb);
        refused(send(e, "POST", "/graphql", "{\"id\":\"v1\",\"extensions\":" + ext("m1") + "}"), 400, amb);
        refused(send(e, "POST", "/graphql", "[{\"query\":\"" + viewer + "\",\"extensions\":" + ext("v1") + "}]"), 400,
                amb);
        refused(send(e, "GET", "/graphql?id=v1&extensions=" + q("{x"), null), 400, amb);
        refused(send(e, "GET", "/graphql?id=v1&extensions=" + q("[]"), null), 400, amb);
        refused(send(e, "POST", "/graphql", "{\"id\":\"v1\",\"extensions\":{\"persistedQuery\":\"m1\"}}"), 400, amb);
        refused(send(e, "POST", "/graphql", "{\"id\":\"v1\",\"extensions\":{\"persistedQuery\":{\"sha256Hash\":1}}}"),
                400, amb);
        refused(send(e, "POST", "/graphql", "{\"id\":\"v1\",\"documentId\":\"m1\"}"), 400, amb);
    }

    @Test
    void graphqlShapesThatNameOneDocumentAreJudgedOnEverythingTheyName() throws Exception {
        L7Engine e = L7EngineTest.engine(GRAPHQL);
        String viewer = "{ viewer { id } }";
        assertEquals(Outcome.ALLOW, send(e, "GET", "/graphql?query=" + q(viewer) + "&extensions="
                + q(ext(sha256(viewer).toUpperCase(java.util.Locale.ROOT))), null).outcome(), "a document with its hash");
        assertEquals(Outcome.ALLOW, send(e, "GET", "/graphql?id=v1&extensions=" + q(ext("v1")), null).outcome());
        assertEquals(Outcome.ALLOW, send(e, "GET", "/graphql?query=" + q(viewer), "").outcome(), "an empty body");
        assertEquals(Outcome.ALLOW, send(e, "POST", "/graphql?trace=1", L7EngineTest.gql(viewer)).outcome());
        assertEquals(Outcome.ALLOW, send(e, "POST", "/graphql", "{\"query\":\"" + viewer + "\",\"id\":\"v1\"}")
                .outcome());
        L7Decision both = send(e, "POST", "/graphql", "{\"query\":\"" + viewer + "\",\"id\":\"m1\"}");
        assertEquals(Outcome.DENY, both.outcome(), "the registered mutation is judged with the document");
        assertFalse(both.hard());
        L7Decision unknown = send(e, "POST", "/graphql", "{\"query\":\"" + viewer + "\",\"id\":\"nope\"}");
        assertEquals(Outcome.DENY, unknown.outcome());
        assertTrue(unknown.reason().contains("persisted query is not registered"), unknown.reason());
        assertEquals(Outcome.ALLOW, send(e, "POST", "/graphql", "{\"query\":\"" + viewer + "\",\"extensions\":null}")
                .outcome());
    }

    @Test
    void graphqlWebSocketPayloadsFollowTheSameShapes() {
        L7Engine e = L7EngineTest.engine("""
                  w:
                    endpoints:
                      - host: api.test
                        port: 443
                        protocol: websocket
                        enforcement: enforce
                        persisted_queries: allow_registered
                        graphql_persisted_queries:
                          v1: {operation_type: query, fields: [viewer]}
                        rules:
                          - allow: {method: GET, path: "/**"}
                          - allow: {operation_type: query, fields: [viewer]}
                """);
        L7Engine.Route route = L7Engine.route(e.governing("api.test", 443), "GET", "/ws").orElseThrow();
        assertEquals(Outcome.ALLOW, L7Engine.decideText(route, "{\"type\":\"subscribe\",\"id\":\"1\",\"payload\":"
                + "{\"id\":\"v1\"}}").outcome());
        refused(L7Engine.decideText(route, "{\"type\":\"subscribe\",\"id\":\"1\",\"payload\":{\"id\":\"v1\","
                + "\"extensions\":" + ext("x") + "}}"), 403, GraphQl.AMBIGUOUS);
        refused(L7Engine.decideText(route, "{\"type\":\"ping\"} {\"type\":\"subscribe\",\"id\":\"1\",\"payload\":"
                + "{\"query\":\"mutation { x }\"}}"), 403, "json_trailing_data");
        refused(L7Engine.decideText(route, "{\"type\":\"ping\",\"payload\":" + "[".repeat(300) + "]".repeat(300)
                + "}"), 403, "json_too_deep");
    }

    @Test
    void longNumbersInAGraphQlDocumentAreRefusedBeforeTheParserSeesThem() {
        L7Engine e = L7EngineTest.engine(GRAPHQL);
        String digits = "9".repeat(60_000);
        for (String literal : List.of(digits, "-" + digits, "1." + digits, "1e" + digits, "0." + "1".repeat(99) + "e5")) {
            long start = System.nanoTime();
            refused(send(e, "POST", "/graphql", L7EngineTest.gql("{ viewer(n: " + literal + ") { id } }")), 400,
                    "graphql_number_too_long");
            assertTrue(System.nanoTime() - start < 30_000_000_000L, "refused without lexing the number");
        }
        // digits in strings, block strings, comments and names are not numbers
        String some = "7".repeat(20_000);
        L7Decision strings = send(e, "POST", "/graphql", L7EngineTest.gql("{ viewer(s: \"" + some + "\", b: \"\"\""
                + some + " \\\"\"\" \"\"\") { id } } # " + some));
        assertEquals(Outcome.ALLOW, strings.outcome(), strings.toString());
        assertEquals(Outcome.ALLOW, send(e, "POST", "/graphql", L7EngineTest.gql("{ viewer(n: " + "1".repeat(100)
                + ", m: -1.5e-3) { id } }")).outcome());
        assertEquals(Outcome.DENY, send(e, "POST", "/graphql", L7EngineTest.gql("{ v" + digits + " { id } }")).outcome(),
                "a long name is a field name (not permitted by the rules), not a number");
    }

    // ------------------------------------------------------------------------------------------ JSON-RPC, MCP

    @Test
    void jsonRpcAndMcpBodiesAreOneValueWithinTheLimits() {
        L7Engine e = L7EngineTest.engine("""
                  rpc:
                    endpoints:
                      - {host: api.test, port: 443, path: /rpc, protocol: json-rpc, enforcement: audit,
                         rules: [{allow: {method: a}}]}
                  mcp:
                    endpoints:
                      - {host: api.test, port: 443, path: /mcp, protocol: mcp, enforcement: audit,
                         rules: [{allow: {method: initialize}}]}
                """);
        String a = "{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"id\":1}";
        for (String path : List.of("/rpc", "/mcp")) {
            refused(send(e, "POST", path, a + "\n" + a), 400, "json_trailing_data");
            refused(send(e, "POST", path, "{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"id\":" + "9".repeat(5_000) + "}"),
                    400, "json_number_too_long");
            refused(send(e, "POST", path, "{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"id\":1,\"params\":{\"p\":"
                    + "[".repeat(3_000) + "]".repeat(3_000) + "}}"), 400, "json_too_deep");
            refused(send(e, "POST", path, "{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"method\":\"b\",\"id\":1}"), 400,
                    "json_duplicate_key");
            refused(send(e, "POST", path, "{\"jsonrpc\":"), 400, "json_invalid");
        }
        assertEquals(Outcome.ALLOW, send(e, "POST", "/rpc", "\r\n" + a + " \t\r\n").outcome());
    }
}
