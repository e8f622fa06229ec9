package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.StringReader;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 15 phase B end to end: L7 policy enforced by {@code supervisor run} (the image), with real {@code curl} over
 * plain HTTP and intercepted HTTPS to recording loopback upstreams. Per protocol: REST {@code access: read-only}
 * (GET passes, POST and DELETE are 403 and never reach the upstream), REST {@code rules} with {@code deny_rules},
 * GraphQL (a query passes, a mutation is denied), JSON-RPC (a method and a batch), MCP (a tool), audit mode (the
 * violation is forwarded and recorded), the canonical request-target (what is forwarded; a target the
 * canonicalization refuses is 400), a body replacement by {@code openshell/regex} that breaks a JSON-RPC endpoint's
 * rules (denied under {@code enforce}, forwarded with an audit record under {@code audit}: RFC 0009's
 * post-transformation re-evaluation), and WebSocket text messages (a denied message closes with 1008 and never
 * reaches the upstream). Every decision is an OCSF HTTP Activity event with {@code layer: l7} and a count of
 * {@code supervisor_l7_decisions_total}.
 */
class L7EnforcementIT {
    static final String REST = "rest.l7.test";
    static final String RULES = "rules.l7.test";
    static final String AUDIT = "audit.l7.test";
    static final String GQL = "gql.l7.test";
    static final String RPC = "rpc.l7.test";
    static final String MCP = "mcp.l7.test";
    static final String WS = "ws.l7.test";
    static final String REDACT = "rpc-redact.l7.test";
    static final String REDACT_AUDIT = "rpc-redact-audit.l7.test";
    static final List<String> HOSTS = List.of(REST, RULES, AUDIT, GQL, RPC, MCP, WS, REDACT, REDACT_AUDIT);
    /** A fake key in the OpenAI project-key format (never a real secret); {@code openshell/regex} redacts it. */
    static final String KEY = "sk-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7cF0iL";

    @TempDir
    static Path work;
    static RawUpstream plain;
    static RawUpstream tls;
    static StackProcess supervisor;

    /**
     * An HTTPS upstream on 127.0.0.1 whose certificate (from a test CA) names {@code hosts}, and the gateway
     * configuration that points those names at 127.0.0.1 and trusts the CA.
     *
     * @param tls the upstream
     * @param gateway the gateway TOML: network and TLS sections, to which a test may append
     */
    record LoopbackTls(RawUpstream tls, String gateway) {
        static LoopbackTls create(Path dir, List<String> hosts) throws Exception {
            Path pki = Files.createDirectories(dir.resolve("pki"));
            TestPki.Issued ca = TestPki.ca(pki, "upstream-ca");
            TestPki.Issued leaf = TestPki.leaf(pki, "upstream", ca, hosts.toArray(String[]::new));
            StringBuilder b = new StringBuilder("""
                    [openshell.supervisor.network]
                    allow_loopback_upstreams = true

                    [openshell.supervisor.network.static_hosts]
                    """);
            for (String h : hosts) {
                b.append('"').append(h).append("\" = \"127.0.0.1\"\n");
            }
            b.append("\n[openshell.supervisor.tls]\nupstream_ca_bundle = \"").append(ca.certFile().toAbsolutePath())
                    .append("\"\n");
            return new LoopbackTls(RawUpstream.tls(ProxyWorld.serverContext(leaf)), b.toString());
        }
    }

    @BeforeAll
    static void start() throws Exception {
        LoopbackTls loopback = LoopbackTls.create(work, HOSTS);
        tls = loopback.tls();
        plain = RawUpstream.plain();
        Path gateway = Files.writeString(work.resolve("gateway.toml"), loopback.gateway());
        Path policy = Files.writeString(work.resolve("policy.yaml"), """
                version: 1
                network_policies:
                  readonly:
                    endpoints:
                      - { host: %3$s, ports: [%1$d, %2$d], protocol: rest, enforcement: enforce, access: read-only }
                  repos:
                    endpoints:
                      - host: %4$s
                        ports: [%1$d, %2$d]
                        protocol: REST
                        enforcement: enforce
                        rules:
                          - allow: { method: GET, path: "/repos/**" }
                          - allow: { method: POST, path: "/repos/*/issues" }
                        deny_rules:
                          - { method: POST, path: "/repos/locked/issues" }
                  audited:
                    endpoints:
                      - { host: %5$s, ports: [%1$d, %2$d], protocol: rest, enforcement: audit, access: read-only }
                  graph:
                    endpoints:
                      - host: %6$s
                        ports: [%1$d, %2$d]
                        path: /graphql
                        protocol: graphql
                        enforcement: enforce
                        rules:
                          - allow: { operation_type: query }
                  rpc:
                    endpoints:
                      - host: %7$s
                        ports: [%1$d, %2$d]
                        path: /rpc
                        protocol: json-rpc
                        enforcement: enforce
                        rules:
                          - allow: { method: reports.search }
                  tools:
                    endpoints:
                      - host: %8$s
                        ports: [%1$d, %2$d]
                        path: /mcp
                        protocol: mcp
                        enforcement: enforce
                        rules:
                          - allow: { method: initialize }
                          - allow: { method: tools/call, tool: read_status }
                  realtime:
                    endpoints:
                      - host: %9$s
                        port: %1$d
                        protocol: websocket
                        enforcement: enforce
                        access: read-write
                        deny_rules:
                          - { method: WEBSOCKET_TEXT, path: "/admin/**" }
                  keyed:
                    endpoints:
                      - { host: %10$s, port: %1$d, path: /rpc, protocol: json-rpc, enforcement: enforce,
                          rules: [{ allow: { method: "%12$s" } }] }
                  keyed_audit:
                    endpoints:
                      - { host: %11$s, port: %1$d, path: /rpc, protocol: json-rpc, enforcement: audit,
                          rules: [{ allow: { method: "%12$s" } }] }
                network_middlewares:
                  secrets:
                    middleware: openshell/regex
                    order: 10
                    config: { mode: redact }
                    on_error: fail_closed
                    endpoints: { include: ["%10$s", "%11$s"] }
                """.formatted(plain.port(), tls.port(), REST, RULES, AUDIT, GQL, RPC, MCP, WS, REDACT, REDACT_AUDIT,
                KEY));
        supervisor = StackProcess.start(work.resolve("supervisor"), policy, gateway, Map.of());
    }

    @AfterAll
    static void stop() throws Exception {
        for (AutoCloseable c : new AutoCloseable[] {supervisor, plain, tls}) {
            if (c != null) {
                c.close();
            }
        }
    }

    private static Path ca() {
        return work.resolve("supervisor").resolve("state").resolve("ca").resolve("supervisor-ca.pem");
    }

    /** curl through the proxy: {@code METHOD host target} over plain HTTP or intercepted HTTPS, optional JSON body. */
    static Curl.Result curl(boolean https, String method, String host, String target, String json)
            throws Exception {
        List<String> args = new ArrayList<>(List.of("--path-as-is", "-X", method));
        if (json != null) {
            args.addAll(List.of("-H", "Content-Type: application/json", "--data-binary", json));
        }
        if (https) {
            args.addAll(List.of("--cacert", ca().toString(), "https://" + host + ":" + tls.port() + target));
            return Curl.run(Map.of("HTTPS_PROXY", "http://127.0.0.1:" + supervisor.port()),
                    args.toArray(String[]::new));
        }
        args.addAll(0, List.of("-x", "http://127.0.0.1:" + supervisor.port()));
        args.add("http://" + host + ":" + plain.port() + target);
        return Curl.run(args.toArray(String[]::new));
    }

    static RawUpstream upstream(boolean https) {
        return https ? tls : plain;
    }

    static JsonObject json(String body) {
        return Json.createReader(new StringReader(body)).readObject();
    }

    /** Asserts a 403 L7 denial in the documented shape, and that nothing reached the upstream. */
    static JsonObject deniedBeforeUpstream(Curl.Result r, RawUpstream up, int before, String protocol,
                                           String policy) {
        assertEquals(403, r.status(), r.toString());
        JsonObject o = json(r.body());
        assertEquals("policy_denied", o.getString("error"), r.body());
        assertEquals("l7", o.getString("layer"));
        assertEquals(protocol, o.getString("protocol"), "the denial names the endpoint's real protocol");
        assertEquals(policy, o.getString("policy"));
        assertTrue(o.getString("reason_code").startsWith("l7_"), r.body());
        assertEquals(before, up.count(), "the denied request never reached the upstream");
        return o;
    }

    /** {@return the L7 decision events of the audit log} */
    static List<JsonObject> l7Events() throws Exception {
        return l7EventsOf(supervisor);
    }

    /** {@return the L7 decision events of a supervisor's audit log} */
    static List<JsonObject> l7EventsOf(StackProcess s) throws Exception {
        return s.auditEvents().stream().filter(e -> e.getInt("class_uid") == 4002)
                .filter(e -> AuditLog.openshell(e).getString("layer", "").equals("l7")).toList();
    }

    @Test
    void readOnlyRestAdmitsGetAndDeniesPostAndDeleteOverHttpAndHttps() throws Exception {
        for (boolean https : new boolean[] {false, true}) {
            RawUpstream up = upstream(https);
            up.drain();
            Curl.Result get = curl(https, "GET", REST, "/repos/a", null);
            assertEquals(200, get.status(), get.toString());
            assertTrue(up.take().requestLine().startsWith("GET /repos/a "));
            for (String method : List.of("POST", "DELETE")) {
                int before = up.count();
                Curl.Result r = curl(https, method, REST, "/repos/a", method.equals("POST") ? "{}" : null);
                JsonObject o = deniedBeforeUpstream(r, up, before, "rest", "readonly");
                assertEquals("/repos/a", o.getString("path"));
                assertEquals(method + " /repos/a", o.getString("rule"), "the rule that was missing");
            }
        }
        assertTrue(l7Events().stream().anyMatch(e -> AuditLog.openshell(e).getString("decision").equals("deny")
                && e.getJsonObject("firewall_rule").getString("uid").equals("readonly")
                && e.getJsonObject("http_request").getJsonObject("url").getString("path").equals("/repos/a")
                && e.getString("action").equals("Denied")), "every denial is an HTTP Activity event");
        Prometheus m = Prometheus.parse(supervisor.metrics());
        assertTrue(m.value("supervisor_l7_decisions_total", Map.of("policy", "readonly", "protocol", "rest",
                "decision", "deny")) >= 4, "denials are counted");
        assertTrue(m.value("supervisor_l7_decisions_total", Map.of("policy", "readonly", "protocol", "rest",
                "decision", "allow")) >= 2, "and so are allowed requests");
    }

    @Test
    void aDeniedRequestGetsConnectionCloseOnARawSocket() throws Exception {
        String authority = REST + ":" + plain.port();
        RawClient.Response r = RawClient.exchange("127.0.0.1", supervisor.port(), "DELETE http://" + authority
                + "/x HTTP/1.1\r\nHost: " + authority + "\r\n\r\n");
        assertEquals(403, r.status(), r.head());
        assertTrue(r.closes(), "an L7 denial closes the connection: " + r.head());
    }

    @Test
    void rulesAllowAndDenyRulesWinOverHttpAndHttps() throws Exception {
        for (boolean https : new boolean[] {false, true}) {
            RawUpstream up = upstream(https);
            up.drain();
            assertEquals(200, curl(https, "POST", RULES, "/repos/open/issues", "{}").status());
            assertTrue(up.take().requestLine().startsWith("POST /repos/open/issues "));
            int before = up.count();
            JsonObject o = deniedBeforeUpstream(curl(https, "POST", RULES, "/repos/locked/issues", "{}"), up, before,
                    "rest", "repos");
            assertEquals("POST /repos/locked/issues", o.getString("rule"), "the deny rule that fired");
            deniedBeforeUpstream(curl(https, "DELETE", RULES, "/repos/open", null), up, before, "rest", "repos");
            deniedBeforeUpstream(curl(https, "GET", RULES, "/users/x", null), up, before, "rest", "repos");
        }
    }

    @Test
    void theCanonicalTargetIsWhatIsForwardedAndARefusedTargetIs400() throws Exception {
        for (boolean https : new boolean[] {false, true}) {
            RawUpstream up = upstream(https);
            up.drain();
            Curl.Result r = curl(https, "GET", RULES, "/repos//a/./b/%7Euser/x;v=1/../c?q=%41", null);
            assertEquals(200, r.status(), r.toString());
            assertEquals("GET /repos/a/b/~user/c?q=%41 HTTP/1.1", up.take().requestLine(),
                    "dot segments, // and ;params resolved, unreserved decoded, the query verbatim");
            int before = up.count();
            // a deny rule must not be escaped by encoding: /repos/locked/issues in disguise
            JsonObject o = deniedBeforeUpstream(curl(https, "POST", RULES, "/repos/x/%2e%2e/locked/./issues", "{}"),
                    up, before, "rest", "repos");
            assertEquals("/repos/locked/issues", o.getString("path"));
            Curl.Result refused = curl(https, "GET", RULES, "/repos/a%2Fb", null);
            assertEquals(400, refused.status(), refused.toString());
            assertEquals("invalid_request", json(refused.body()).getString("error"));
            Curl.Result above = curl(https, "GET", RULES, "/repos/../..", null);
            assertEquals(400, above.status(), above.toString());
            assertEquals(before, up.count(), "refused targets never reach the upstream");
        }
    }

    @Test
    void auditModeForwardsTheViolationAndRecordsIt() throws Exception {
        for (boolean https : new boolean[] {false, true}) {
            RawUpstream up = upstream(https);
            up.drain();
            Curl.Result r = curl(https, "DELETE", AUDIT, "/things/1", null);
            assertEquals(200, r.status(), "audit forwards: " + r);
            assertTrue(up.take().requestLine().startsWith("DELETE /things/1 "));
        }
        assertTrue(l7Events().stream().anyMatch(e -> AuditLog.openshell(e).getString("decision").equals("audit")
                && e.getJsonObject("firewall_rule").getString("uid").equals("audited")
                && e.getString("action").equals("Allowed") && e.getInt("severity_id") == 2),
                "the audited violation is an HTTP Activity event, Low");
    }

    @Test
    void graphQlQueriesPassAndMutationsAreDenied() throws Exception {
        for (boolean https : new boolean[] {false, true}) {
            RawUpstream up = upstream(https);
            up.drain();
            String query = "{\"query\":\"query Viewer { viewer { login } }\"}";
            assertEquals(200, curl(https, "POST", GQL, "/graphql", query).status());
            assertEquals(query, up.take().bodyText(), "the body read for the decision is the body forwarded");
            int before = up.count();
            JsonObject o = deniedBeforeUpstream(curl(https, "POST", GQL, "/graphql",
                    "{\"query\":\"mutation { deleteRepository(id: 1) { id } }\"}"), up, before, "graphql", "graph");
            assertTrue(o.getString("detail").contains("GraphQL operation not permitted"), o.toString());
            deniedBeforeUpstream(curl(https, "POST", GQL, "/graphql",
                    "[{\"query\":\"{ viewer { login } }\"},{\"query\":\"mutation { a }\"}]"), up, before, "graphql",
                    "graph");
            Curl.Result notJson = curl(https, "POST", GQL, "/graphql", "query { viewer { login } }");
            assertEquals(400, notJson.status(), "a body that is not a GraphQL request is refused: " + notJson);
            assertEquals(before, up.count());
        }
    }

    @Test
    void jsonRpcMethodsAndBatchesAreDecidedOnTheBody() throws Exception {
        for (boolean https : new boolean[] {false, true}) {
            RawUpstream up = upstream(https);
            up.drain();
            String ok = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"reports.search\",\"params\":{}}";
            assertEquals(200, curl(https, "POST", RPC, "/rpc", ok).status());
            assertEquals(ok, up.take().bodyText());
            int before = up.count();
            deniedBeforeUpstream(curl(https, "POST", RPC, "/rpc",
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"reports.delete\"}"), up, before, "json-rpc", "rpc");
            deniedBeforeUpstream(curl(https, "POST", RPC, "/rpc", "[" + ok
                    + ",{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"reports.delete\"}]"), up, before, "json-rpc", "rpc");
            Curl.Result junk = curl(https, "POST", RPC, "/rpc", "{\"jsonrpc\":\"2.0\",\"method\":");
            assertEquals(400, junk.status(), "an unparseable body is a hard denial: " + junk);
            assertEquals("invalid_request", json(junk.body()).getString("error"));
            assertEquals("l7_hard_denied", json(junk.body()).getString("reason_code"));
            assertEquals(before, up.count());
        }
    }

    @Test
    void mcpToolsAreDecidedByName() throws Exception {
        for (boolean https : new boolean[] {false, true}) {
            RawUpstream up = upstream(https);
            up.drain();
            String read = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                    + "\"params\":{\"name\":\"read_status\"}}";
            assertEquals(200, curl(https, "POST", MCP, "/mcp", read).status());
            up.take();
            int before = up.count();
            JsonObject o = deniedBeforeUpstream(curl(https, "POST", MCP, "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":2,"
                    + "\"method\":\"tools/call\",\"params\":{\"name\":\"delete_resource\"}}"), up, before, "mcp",
                    "tools");
            assertEquals("/mcp", o.getString("path"));
        }
    }

    @Test
    void aBodyReplacementThatBreaksTheRulesIsDeniedUnderEnforceAndForwardedAndRecordedUnderAudit()
            throws Exception {
        String call = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"" + KEY + "\"}";
        int before = plain.count();
        Curl.Result enforced = curl(false, "POST", REDACT, "/rpc", call);
        JsonObject o = deniedBeforeUpstream(enforced, plain, before, "json-rpc", "keyed");
        assertEquals("l7_policy_denied", o.getString("reason_code"));
        plain.drain();
        Curl.Result audited = curl(false, "POST", REDACT_AUDIT, "/rpc", call);
        assertEquals(200, audited.status(), audited.toString());
        String forwarded = plain.take().bodyText();
        assertFalse(forwarded.contains(KEY), "the stage's replacement is what is forwarded: " + forwarded);
        assertTrue(forwarded.contains("[REDACTED:"), forwarded);
        List<JsonObject> events = l7Events();
        assertTrue(events.stream().anyMatch(e -> AuditLog.openshell(e).getString("decision").equals("allow")
                && AuditLog.openshell(e).getString("policy").equals("keyed_audit")
                && !AuditLog.openshell(e).containsKey("after_config_key")), "the original body was allowed");
        assertTrue(events.stream().anyMatch(e -> AuditLog.openshell(e).getString("decision").equals("audit")
                && AuditLog.openshell(e).getString("after_config_key", "").equals("secrets")),
                "the re-evaluation after the stage's replacement is recorded: " + events);
        assertTrue(events.stream().anyMatch(e -> AuditLog.openshell(e).getString("decision").equals("deny")
                && AuditLog.openshell(e).getString("policy").equals("keyed")
                && AuditLog.openshell(e).getString("after_config_key", "").equals("secrets")));
    }

    // ---------------------------------------------------------------------------------------------- WebSocket

    private static byte[] upgrade(String path) {
        String authority = WS + ":" + plain.port();
        return ("GET http://" + authority + path + " HTTP/1.1\r\nHost: " + authority + "\r\nUpgrade: websocket\r\n"
                + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void webSocketTextMessagesAreDecidedAndADeniedOneClosesWith1008() throws Exception {
        plain.drain();
        byte[] hello = InspectionIntegrityIT.frame("hello");
        try (Socket s = new Socket("127.0.0.1", supervisor.port())) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write(upgrade("/v1/stream"));
            out.flush();
            assertTrue(InspectionIntegrityIT.headOf(s.getInputStream()).startsWith("HTTP/1.1 101"));
            assertFalse(plain.take().header("sec-websocket-extensions").isPresent(),
                    "no extension may change the payloads the policy reads");
            out.write(hello);
            out.flush();
            assertArrayEquals(hello, plain.upgradedBytes(30_000), "an allowed message is relayed as sent");
        }
        try (Socket s = new Socket("127.0.0.1", supervisor.port())) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write(upgrade("/admin/console"));
            out.flush();
            InputStream in = s.getInputStream();
            assertTrue(InspectionIntegrityIT.headOf(in).startsWith("HTTP/1.1 101"),
                    "the upgrade itself is a GET the rules allow");
            out.write(InspectionIntegrityIT.frame("drop table"));
            out.flush();
            byte[] close = in.readNBytes(4);
            assertArrayEquals(new byte[] {(byte) 0x88, 2, 0x03, (byte) 0xF0}, close, "close frame, status 1008");
            byte[] up = plain.upgradedBytes(30_000);
            assertTrue(up != null && (up[0] & 0xFF) == 0x88, "the upstream gets a close frame, not the message");
            assertNull(plain.upgradedBytes(200), "and nothing else");
        }
        assertTrue(l7Events().stream().anyMatch(e -> e.getString("activity_name").equals("Other")
                && AuditLog.openshell(e).getString("decision").equals("deny")
                && AuditLog.openshell(e).getString("engine").equals("l7-websocket")));
    }

    @Test
    void anUnmaskedClientFrameClosesWith1002AndIsRecorded() throws Exception {
        try (Socket s = new Socket("127.0.0.1", supervisor.port())) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write(upgrade("/v1/raw"));
            out.flush();
            InputStream in = s.getInputStream();
            assertTrue(InspectionIntegrityIT.headOf(in).startsWith("HTTP/1.1 101"));
            out.write(new byte[] {(byte) 0x81, 2, 'h', 'i'}); // RFC 6455 section 5.1: client frames are masked
            out.flush();
            assertArrayEquals(new byte[] {(byte) 0x88, 2, 0x03, (byte) 0xEA}, in.readNBytes(4), "close, 1002");
        }
        byte[] up = plain.upgradedBytes(30_000);
        assertTrue(up != null && (up[0] & 0xFF) == 0x88, "the upstream gets a close frame, not the unmasked one");
        assertTrue(supervisor.auditEvents().stream().anyMatch(e -> e.getInt("class_uid") == 4002
                && AuditLog.openshell(e).getString("code", "").equals("websocket_protocol_error")),
                "the refusal is visible to the operator");
    }

    @Test
    void aNonUpgradeRequestToAWebSocketEndpointIsAHardDenial() throws Exception {
        int before = plain.count();
        Curl.Result r = curl(false, "GET", WS, "/v1/stream", null);
        deniedBeforeUpstream(r, plain, before, "websocket", "realtime");
        assertEquals("l7_hard_denied", json(r.body()).getString("reason_code"));
    }
}
