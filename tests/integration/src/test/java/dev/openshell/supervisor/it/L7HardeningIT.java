package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.JsonObject;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 39, items 5, 6, 7 and 9, through {@code supervisor run} (the image) with real {@code curl} over plain HTTP and
 * intercepted HTTPS to recording loopback upstreams: what an agent sends to get past an L7 rule, and what it gets.
 *
 * <ul>
 *   <li>Method override (item 5): with a REST deny rule on {@code DELETE /repos/**}, a {@code POST} that asks the
 *       upstream's framework to treat it as {@code DELETE} (the {@code X-HTTP-Method-Override},
 *       {@code X-HTTP-Method} and {@code X-Method-Override} headers; a {@code _method} parameter in the query, in a
 *       form, in a multipart form, in a JSON object) is refused by default: 400 with code {@code method_override},
 *       audited, nothing upstream.</li>
 *   <li>Trailing JSON-RPC and MCP messages (item 6): a body is one JSON value with only whitespace after it.</li>
 *   <li>GraphQL request shapes (item 7): a GET body, query-string parameters on a POST, an id and a different hash,
 *       a query with a hash that is not its own, unreadable {@code extensions}: refused; a query with an id is judged
 *       on both.</li>
 *   <li>JSON limits (item 9): a 5,000-digit number or 3,000 levels of nesting is 400 with a code, never a 500 and
 *       never a SEVERE log line.</li>
 * </ul>
 * Nothing of the request's content (a canary in every body) appears in the audit log or the supervisor's log.
 */
class L7HardeningIT {
    static final String REST = "repos.l7.test";
    static final String RPC = "rpc.l7.test";
    static final String MCP = "mcp.l7.test";
    static final String GQL = "gql.l7.test";
    static final List<String> HOSTS = List.of(REST, RPC, MCP, GQL);
    /** In every body sent: must never reach a log or audit line. */
    static final String CANARY = "canary-7f3a9c1e";

    @TempDir
    static Path work;
    static RawUpstream plain;
    static RawUpstream tls;
    static StackProcess supervisor;
    static Client client;

    @BeforeAll
    static void start() throws Exception {
        L7EnforcementIT.LoopbackTls loopback = L7EnforcementIT.LoopbackTls.create(work, HOSTS);
        tls = loopback.tls();
        plain = RawUpstream.plain();
        Path gateway = Files.writeString(work.resolve("gateway.toml"), loopback.gateway());
        Path policy = Files.writeString(work.resolve("policy.yaml"), """
                version: 1
                network_policies:
                  repos:
                    endpoints:
                      - host: %3$s
                        ports: [%1$d, %2$d]
                        protocol: rest
                        enforcement: enforce
                        rules:
                          - allow: { method: "*", path: "/**" }
                        deny_rules:
                          - { method: DELETE, path: "/repos/**" }
                  rpc:
                    endpoints:
                      - host: %4$s
                        ports: [%1$d, %2$d]
                        path: /rpc
                        protocol: json-rpc
                        enforcement: enforce
                        rules:
                          - allow: { method: reports.search }
                  tools:
                    endpoints:
                      - host: %5$s
                        ports: [%1$d, %2$d]
                        path: /mcp
                        protocol: mcp
                        enforcement: enforce
                        rules:
                          - allow: { method: initialize }
                          - allow: { method: tools/call, tool: read_status }
                  graph:
                    endpoints:
                      - host: %6$s
                        ports: [%1$d, %2$d]
                        path: /graphql
                        protocol: graphql
                        enforcement: enforce
                        persisted_queries: allow_registered
                        graphql_persisted_queries:
                          viewer1: { operation_type: query, operation_name: Viewer, fields: [viewer] }
                        rules:
                          - allow: { operation_type: query, fields: [viewer] }
                """.formatted(plain.port(), tls.port(), REST, RPC, MCP, GQL));
        supervisor = StackProcess.start(work.resolve("supervisor"), policy, gateway, Map.of());
        client = Client.of(supervisor, work, plain, tls);
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (supervisor != null) {
                String everything = supervisor.auditText() + supervisor.stderr() + supervisor.stdout();
                assertFalse(everything.contains(CANARY), "no request content in any log or audit line");
                assertFalse(supervisor.stderr().contains("SEVERE"), "no request is an internal error:\n"
                        + supervisor.stderr());
            }
        } finally {
            for (AutoCloseable c : new AutoCloseable[] {supervisor, plain, tls}) {
                if (c != null) {
                    c.close();
                }
            }
        }
    }

    /**
     * curl through one supervisor to its loopback upstreams.
     *
     * @param supervisor the supervisor
     * @param ca its CA certificate, which curl trusts for intercepted HTTPS
     * @param plain the plain HTTP upstream
     * @param tls the HTTPS upstream
     */
    record Client(StackProcess supervisor, Path ca, RawUpstream plain, RawUpstream tls) {
        static Client of(StackProcess supervisor, Path work, RawUpstream plain, RawUpstream tls) {
            return new Client(supervisor, work.resolve("supervisor").resolve("state").resolve("ca")
                    .resolve("supervisor-ca.pem"), plain, tls);
        }

        RawUpstream upstream(boolean https) {
            return https ? tls : plain;
        }

        /**
         * curl through the proxy: {@code METHOD host target} over plain HTTP or intercepted HTTPS.
         *
         * @param headers extra request header lines
         * @param body the body (sent as is), or {@code null}
         * @param more more curl arguments (such as {@code -F} parts)
         */
        Curl.Result send(boolean https, String method, String host, String target, List<String> headers,
                         String body, String... more) throws Exception {
            List<String> args = new ArrayList<>(List.of("--path-as-is", "-g", "-X", method));
            for (String h : headers) {
                args.addAll(List.of("-H", h));
            }
            if (body != null) {
                args.addAll(List.of("--data-binary", body));
            }
            args.addAll(List.of(more));
            if (https) {
                args.addAll(List.of("--cacert", ca.toString(), "https://" + host + ":" + tls.port() + target));
                return Curl.run(Map.of("HTTPS_PROXY", "http://127.0.0.1:" + supervisor.port()),
                        args.toArray(String[]::new));
            }
            args.addAll(0, List.of("-x", "http://127.0.0.1:" + supervisor.port()));
            args.add("http://" + host + ":" + plain.port() + target);
            return Curl.run(args.toArray(String[]::new));
        }
    }

    static Curl.Result send(boolean https, String method, String host, String target, List<String> headers,
                            String body, String... more) throws Exception {
        return client.send(https, method, host, target, headers, body, more);
    }

    static Curl.Result json(boolean https, String method, String host, String target, String body) throws Exception {
        return send(https, method, host, target, List.of("Content-Type: application/json"), body);
    }

    static RawUpstream upstream(boolean https) {
        return client.upstream(https);
    }

    /** Asserts a 400 refusal with {@code code}, and that nothing reached the upstream. */
    static JsonObject refused(Curl.Result r, RawUpstream up, int before, String code) {
        assertEquals(400, r.status(), r.toString());
        JsonObject o = L7EnforcementIT.json(r.body());
        assertEquals("invalid_request", o.getString("error"), r.body());
        assertEquals(code, o.getString("code", ""), "the refusal names its code: " + r.body());
        assertEquals("l7_hard_denied", o.getString("reason_code"), r.body());
        assertEquals("l7", o.getString("layer"));
        assertEquals(before, up.count(), "the refused request never reached the upstream");
        return o;
    }

    /** Asserts the request was forwarded with this request line start and body; {@return what the upstream got} */
    static RawUpstream.Received forwarded(Curl.Result r, RawUpstream up, String requestLine) throws Exception {
        assertEquals(200, r.status(), r.toString());
        RawUpstream.Received got = up.take();
        assertTrue(got.requestLine().startsWith(requestLine), got.requestLine());
        return got;
    }

    static boolean audited(String code) throws Exception {
        return audited(supervisor, code);
    }

    static boolean audited(StackProcess supervisor, String code) throws Exception {
        return L7EnforcementIT.l7EventsOf(supervisor).stream().anyMatch(e -> AuditLog.openshell(e)
                .getString("code", "").equals(code) && AuditLog.openshell(e).getString("decision").equals("deny")
                && e.getString("action").equals("Denied"));
    }

    // ---------------------------------------------------------------------------------------- item 5: override

    @Test
    void everyMethodOverrideFormIsRefusedByDefaultOverHttpAndHttps() throws Exception {
        String form = "application/x-www-form-urlencoded";
        for (boolean https : new boolean[] {false, true}) {
            RawUpstream up = upstream(https);
            up.drain();
            // the report's input: a deny rule on DELETE, escaped by a POST that asks to be read as DELETE
            for (String header : List.of("X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override",
                    "x-http-method-override")) {
                int before = up.count();
                refused(send(https, "POST", REST, "/repos/x", List.of(header + ": DELETE", "Content-Type: " + form),
                        "note=" + CANARY), up, before, "method_override");
            }
            int before = up.count();
            refused(send(https, "POST", REST, "/repos/x?_method=DELETE", List.of(), null), up, before,
                    "method_override");
            refused(send(https, "POST", REST, "/repos/x?a=1&_METHOD=delete", List.of(), null), up, before,
                    "method_override");
            refused(send(https, "POST", REST, "/repos/x?%5Fmethod=DELETE", List.of(), null), up, before,
                    "method_override");
            refused(send(https, "POST", REST, "/repos/x", List.of("Content-Type: " + form),
                    "note=" + CANARY + "&_method=DELETE"), up, before, "method_override");
            refused(send(https, "POST", REST, "/repos/x", List.of("Content-Type: " + form + "; charset=utf-8"),
                    "%5F%6Dethod=DELETE"), up, before, "method_override");
            refused(send(https, "POST", REST, "/repos/x", List.of(), null, "-F", "note=" + CANARY,
                    "-F", "_method=DELETE"), up, before, "method_override");
            refused(send(https, "POST", REST, "/repos/x", List.of("Content-Type: application/json"),
                    "{\"note\":\"" + CANARY + "\",\"_method\":\"DELETE\"}"), up, before, "method_override");
            refused(send(https, "GET", REST, "/repos/x", List.of("X-HTTP-Method-Override: DELETE"), null), up,
                    before, "method_override");
            // and nothing else is taken for an override
            forwarded(send(https, "POST", REST, "/repos/x", List.of("Content-Type: " + form),
                    "note=_method%3DDELETE&x_method=DELETE"), up, "POST /repos/x ");
            forwarded(send(https, "POST", REST, "/repos/x", List.of(), null, "-F", "note=_method"), up,
                    "POST /repos/x ");
            RawUpstream.Received json = forwarded(send(https, "POST", REST, "/repos/x",
                    List.of("Content-Type: application/json"), "{\"note\":{\"_method\":\"DELETE\"}}"), up,
                    "POST /repos/x ");
            assertEquals("{\"note\":{\"_method\":\"DELETE\"}}", json.bodyText(), "the body read is the one sent");
            forwarded(send(https, "DELETE", REST, "/other/x", List.of(), null), up, "DELETE /other/x ");
        }
        assertTrue(audited("method_override"), "every refusal is an L7 decision event with its code");
    }

    @Test
    void overrideNamesAreMatchedAsFrameworksReadThem() throws Exception {
        String form = "Content-Type: application/x-www-form-urlencoded";
        for (boolean https : new boolean[] {false, true}) {
            RawUpstream up = upstream(https);
            up.drain();
            int before = up.count();
            // PHP turns '.' and ' ' in parameter names into '_' and drops leading spaces; '[' starts an array
            refused(send(https, "POST", REST, "/repos/x?.method=DELETE", List.of(), null), up, before,
                    "method_override");
            refused(send(https, "POST", REST, "/repos/x", List.of(form), "+.method=DELETE"), up, before,
                    "method_override");
            refused(send(https, "POST", REST, "/repos/x", List.of(form), "_method[]=DELETE"), up, before,
                    "method_override");
            refused(send(https, "POST", REST, "/repos/x", List.of(), null, "-F", ".METHOD=DELETE"), up, before,
                    "method_override");
            // CGI-style servers read X_HTTP_METHOD_OVERRIDE as X-HTTP-Method-Override
            refused(send(https, "POST", REST, "/repos/x", List.of("X_HTTP_METHOD_OVERRIDE: DELETE"), null), up,
                    before, "method_override");
            // RFC 2231 continuations and RFC 8187 values of a part's name, as Werkzeug and Python's email read them
            for (String name : List.of("name*0=\"_me\"; name*1=\"thod\"", "name*0*=UTF-8''%5Fme; name*1*=thod",
                    "name*0=\"_method\"", "name*00=_me; name*01=thod",
                    "name*=UTF-16LE''%5F%00m%00e%00t%00h%00o%00d%00")) {
                refused(send(https, "POST", REST, "/repos/x", List.of("Content-Type: multipart/form-data; boundary=b"),
                        "--b\r\nContent-Disposition: form-data; " + name + "\r\n\r\nDELETE\r\n--b--\r\n"), up, before,
                        "method_override");
            }
        }
        // a POST without Content-Type is a form to Rack (Rails)
        String authority = REST + ":" + plain.port();
        int before = plain.count();
        RawClient.Response r = RawClient.exchange("127.0.0.1", supervisor.port(), "POST http://" + authority
                + "/repos/x HTTP/1.1\r\nHost: " + authority + "\r\nContent-Length: 14\r\n\r\n_method=DELETE");
        assertEquals(400, r.status(), r.head());
        assertEquals("method_override", L7EnforcementIT.json(r.body()).getString("code", ""), r.body());
        assertEquals(before, plain.count());
    }

    @Test
    void aBodyThatCannotBeReadForAnOverrideIsRefused() throws Exception {
        for (boolean https : new boolean[] {false, true}) {
            RawUpstream up = upstream(https);
            up.drain();
            int before = up.count();
            refused(send(https, "POST", REST, "/repos/x", List.of("Content-Type: multipart/form-data"),
                    "--x\r\n\r\n"), up, before, "method_override_unreadable");
            refused(send(https, "POST", REST, "/repos/x", List.of("Content-Type: multipart/form-data; boundary=x"),
                    "--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n" + CANARY), up, before,
                    "method_override_unreadable");
            // two JSON readers may disagree on duplicate keys or on what is too deep to read
            refused(send(https, "POST", REST, "/repos/x", List.of("Content-Type: application/json"),
                    "{\"_method\":\"GET\",\"_method\":\"DELETE\"}"), up, before, "method_override_unreadable");
            refused(send(https, "POST", REST, "/repos/x", List.of("Content-Type: application/json"),
                    "{\"a\":" + "[".repeat(3_000) + "]".repeat(3_000) + ",\"_method\":\"DELETE\"}"), up, before,
                    "method_override_unreadable");
            refused(send(https, "POST", REST, "/repos/x", List.of("Content-Type: application/x-www-form-urlencoded",
                    "Content-Encoding: gzip"), "x"), up, before, "method_override_unreadable");
            // a body that cannot name _method in any reading goes on as before
            forwarded(send(https, "POST", REST, "/repos/x", List.of("Content-Type: application/json"),
                    "{\"a\":" + "[".repeat(3_000) + "]".repeat(3_000) + "}"), up, "POST /repos/x ");
            forwarded(send(https, "POST", REST, "/repos/x", List.of("Content-Type: application/json"), ""), up,
                    "POST /repos/x ");
            forwarded(send(https, "POST", REST, "/repos/x", List.of("Content-Type: application/x-www-form-urlencoded"),
                    "a=%zz&b=%E9"), up, "POST /repos/x ");
        }
    }

    // ------------------------------------------------------------------------------ item 6: one JSON value

    @Test
    void aJsonRpcOrMcpBodyIsOneMessageOrOneBatchAndNothingAfterIt() throws Exception {
        String search = "{\"jsonrpc\":\"2.0\",\"method\":\"reports.search\",\"id\":1,\"params\":{\"q\":\"" + CANARY
                + "\"}}";
        String delete = "{\"jsonrpc\":\"2.0\",\"method\":\"reports.delete\",\"id\":2}";
        String init = "{\"jsonrpc\":\"2.0\",\"method\":\"initialize\",\"id\":1,\"params\":{}}";
        String tool = "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"id\":2,\"params\":{\"name\":\"delete_all\"}}";
        for (boolean https : new boolean[] {false, true}) {
            RawUpstream up = upstream(https);
            up.drain();
            int before = up.count();
            // the report's input: a second message after the checked one
            refused(json(https, "POST", RPC, "/rpc", search + "\n" + delete), up, before, "json_trailing_data");
            refused(json(https, "POST", RPC, "/rpc", search + delete), up, before, "json_trailing_data");
            refused(json(https, "POST", RPC, "/rpc", "[" + search + "]" + delete), up, before,
                    "json_trailing_data");
            refused(json(https, "POST", RPC, "/rpc", search + " x"), up, before, "json_trailing_data");
            refused(json(https, "POST", MCP, "/mcp", init + "\r\n" + tool), up, before, "json_trailing_data");
            refused(json(https, "POST", MCP, "/mcp", "[" + init + "] [" + tool + "]"), up, before,
                    "json_trailing_data");
            refused(json(https, "POST", GQL, "/graphql", "{\"query\":\"{ viewer { login } }\"}"
                    + "{\"query\":\"mutation { deleteRepository }\"}"), up, before, "json_trailing_data");
            // whitespace after the value is not a message
            RawUpstream.Received got = forwarded(json(https, "POST", RPC, "/rpc", search + " \r\n\t"), up,
                    "POST /rpc ");
            assertEquals(search + " \r\n\t", got.bodyText());
            forwarded(json(https, "POST", MCP, "/mcp", "\n" + init + "\n"), up, "POST /mcp ");
        }
        assertTrue(audited("json_trailing_data"));
    }

    /**
     * Keys equal without regard to case (attacker pass 3, L1): a Go or ASP.NET Core upstream reads {@code Query} as
     * {@code query}, the last one winning, so two of them are a duplicate and one alone is judged as the member.
     */
    @Test
    void keysEqualWithoutRegardToCaseAreOneKeyAsGoServersReadThem() throws Exception {
        for (boolean https : new boolean[] {false, true}) {
            RawUpstream up = upstream(https);
            up.drain();
            int before = up.count();
            refused(json(https, "POST", GQL, "/graphql", "{\"query\":\"{ viewer { login } }\","
                    + "\"Query\":\"mutation { deleteRepository }\"}"), up, before, "json_duplicate_key");
            refused(json(https, "POST", RPC, "/rpc", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"reports.search\","
                    + "\"Method\":\"reports.delete\"}"), up, before, "json_duplicate_key");
            refused(json(https, "POST", MCP, "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                    + "\"params\":{\"name\":\"read_status\"},\"param\u017f\":{\"name\":\"delete_all\"}}"), up, before,
                    "json_duplicate_key");
            Curl.Result lone = json(https, "POST", MCP, "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":1,\"Method\":"
                    + "\"tools/call\",\"Params\":{\"NAME\":\"delete_all\"}}");
            assertEquals(403, lone.status(), lone.toString());
            assertEquals(before, up.count(), "the denied call never reached the upstream");
            forwarded(json(https, "POST", RPC, "/rpc", "{\"jsonrpc\":\"2.0\",\"id\":1,\"METHOD\":"
                    + "\"reports.search\"}"), up, "POST /rpc ");
            // keys of data that differ only in case are data (attacker pass 4, L1-reg): admitted
            for (String body : List.of("{\"payment_method\":\"card\",\"metadata\":{\"Key\":\"a\",\"key\":\"b\"}}",
                    "{\"method\":\"GET\",\"url\":\"https://x\",\"headers\":{\"ETag\":\"1\",\"etag\":\"2\"}}",
                    "{\"text\":\"the method works\",\"tags\":{\"A\":1,\"a\":2}}",
                    "{\"\\u0041\":1,\"a\":2,\"note\":\"\\u00e9\"}")) {
                forwarded(json(https, "POST", REST, "/repos/x", body), up, "POST /repos/x ");
            }
            forwarded(json(https, "POST", GQL, "/graphql", "{\"query\":\"query($a:Int,$A:Int){ viewer { login } }\","
                    + "\"variables\":{\"a\":1,\"A\":2}}"), up, "POST /graphql ");
            forwarded(json(https, "POST", MCP, "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                    + "\"params\":{\"name\":\"read_status\",\"arguments\":{\"headers\":{\"ETag\":\"1\","
                    + "\"etag\":\"2\"}}}}"), up, "POST /mcp ");
        }
        assertTrue(audited("json_duplicate_key"));
    }

    /** A custom method token is written in the safe form of agent-chosen names (attacker pass 4, A1b). */
    @Test
    void aCustomMethodTokenIsNeverWrittenAsSent() throws Exception {
        for (boolean https : new boolean[] {false, true}) {
            RawUpstream up = upstream(https);
            up.drain();
            int before = up.count();
            Curl.Result r = json(https, "AKIAQWERTYUIOP0017ZX", RPC, "/rpc", "{}");
            assertEquals(403, r.status(), r.toString());
            assertEquals(before, up.count(), "the denied request never reached the upstream");
        }
        assertTrue(L7EnforcementIT.l7EventsOf(supervisor).stream().anyMatch(e -> e.toString()
                .contains("[redacted] /rpc not permitted")), "the denial is audited");
        assertFalse(supervisor.auditText().contains("AKIAQWERTYUIOP0017ZX"), "the token is in no audit line");
    }

    // --------------------------------------------------------------------------------- item 7: GraphQL shapes

    private static String q(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    private static String sha256(String text) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                .digest(text.getBytes(StandardCharsets.UTF_8)));
    }

    private static String extensions(String hash) {
        return q("{\"persistedQuery\":{\"version\":1,\"sha256Hash\":\"" + hash + "\"}}");
    }

    @Test
    void everyPartOfAGraphQlRequestTheUpstreamMayReadIsDecidedAndAmbiguousOnesAreRefused() throws Exception {
        String viewer = "{ viewer { login } }";
        String mutation = "{\"query\":\"mutation { deleteRepository(id: 1) { id } }\",\"variables\":{\"n\":\""
                + CANARY + "\"}}";
        String other = "0".repeat(64);
        for (boolean https : new boolean[] {false, true}) {
            RawUpstream up = upstream(https);
            up.drain();
            int before = up.count();
            // the report's inputs: an allowed ?query= with a mutation in the GET's body; an id with another hash
            refused(json(https, "GET", GQL, "/graphql?query=" + q(viewer), mutation), up, before,
                    "graphql_ambiguous_request");
            refused(send(https, "GET", GQL, "/graphql?id=viewer1&extensions=" + extensions(other), List.of(),
                    null), up, before, "graphql_ambiguous_request");
            // the rest of the class
            refused(json(https, "POST", GQL, "/graphql?query=" + q("mutation { deleteRepository }"),
                    "{\"query\":\"" + viewer + "\"}"), up, before, "graphql_ambiguous_request");
            refused(json(https, "POST", GQL, "/graphql?id=viewer1", "{\"query\":\"" + viewer + "\"}"), up, before,
                    "graphql_ambiguous_request");
            refused(send(https, "GET", GQL, "/graphql?query=" + q(viewer) + "&extensions=" + extensions(other),
                    List.of(), null), up, before, "graphql_ambiguous_request");
            refused(json(https, "POST", GQL, "/graphql", "{\"query\":\"" + viewer + "\",\"extensions\":"
                    + "{\"persistedQuery\":{\"version\":1,\"sha256Hash\":\"" + other + "\"}}}"), up, before,
                    "graphql_ambiguous_request");
            refused(json(https, "POST", GQL, "/graphql", "{\"id\":\"viewer1\",\"extensions\":"
                    + "{\"persistedQuery\":{\"version\":1,\"sha256Hash\":\"" + other + "\"}}}"), up, before,
                    "graphql_ambiguous_request");
            refused(send(https, "GET", GQL, "/graphql?id=viewer1&extensions=" + q("{not json"), List.of(), null),
                    up, before, "graphql_ambiguous_request");
            refused(json(https, "POST", GQL, "/graphql", "{\"id\":\"viewer1\",\"extensions\":\"x\"}"), up, before,
                    "graphql_ambiguous_request");
            // a query with an id: the upstream may run either, so both are judged
            JsonObject o = L7EnforcementIT.deniedBeforeUpstream(json(https, "POST", GQL, "/graphql",
                    "{\"query\":\"" + viewer + "\",\"id\":\"unregistered\"}"), up, before, "graphql", "graph");
            assertTrue(o.getString("detail").contains("persisted query is not registered"), o.toString());
            // what stays allowed: a query, a registered id, a query with its own hash (automatic persisted queries)
            forwarded(send(https, "GET", GQL, "/graphql?query=" + q(viewer), List.of(), null), up, "GET /graphql?");
            forwarded(send(https, "GET", GQL, "/graphql?id=viewer1", List.of(), null), up, "GET /graphql?id=viewer1");
            forwarded(send(https, "GET", GQL, "/graphql?query=" + q(viewer) + "&extensions="
                    + extensions(sha256(viewer)), List.of(), null), up, "GET /graphql?");
            forwarded(json(https, "POST", GQL, "/graphql", "{\"query\":\"" + viewer + "\",\"id\":\"viewer1\"}"), up,
                    "POST /graphql ");
            forwarded(json(https, "POST", GQL, "/graphql?trace=1", "{\"query\":\"" + viewer + "\"}"), up,
                    "POST /graphql?trace=1 ");
        }
        assertTrue(audited("graphql_ambiguous_request"));
    }

    // ---------------------------------------------------------------------------------- item 9: JSON limits

    @Test
    void hugeNumbersAndDeepNestingAre400WithACodeNeverAnInternalError() throws Exception {
        String digits = "1".repeat(5_000);
        String deep = "[".repeat(3_000) + "]".repeat(3_000);
        for (boolean https : new boolean[] {false, true}) {
            RawUpstream up = upstream(https);
            up.drain();
            int before = up.count();
            // the report's inputs
            refused(json(https, "POST", RPC, "/rpc", "{\"jsonrpc\":\"2.0\",\"method\":\"reports.search\",\"id\":"
                    + digits + "}"), up, before, "json_number_too_long");
            refused(json(https, "POST", RPC, "/rpc", "{\"jsonrpc\":\"2.0\",\"method\":\"reports.search\",\"id\":1,"
                    + "\"params\":" + deep + "}"), up, before, "json_too_deep");
            // every other JSON reader on the request path
            refused(json(https, "POST", RPC, "/rpc", "{\"jsonrpc\":\"2.0\",\"method\":\"reports.search\",\"id\":1,"
                    + "\"params\":[0." + digits + "e-5]}"), up, before, "json_number_too_long");
            refused(json(https, "POST", MCP, "/mcp", "{\"jsonrpc\":\"2.0\",\"method\":\"initialize\",\"id\":"
                    + digits + "}"), up, before, "json_number_too_long");
            refused(json(https, "POST", MCP, "/mcp", "{\"jsonrpc\":\"2.0\",\"method\":\"initialize\",\"id\":1,"
                    + "\"params\":{\"a\":" + deep + "}}"), up, before, "json_too_deep");
            refused(json(https, "POST", GQL, "/graphql", "{\"query\":\"{ viewer { login } }\",\"variables\":"
                    + "{\"a\":" + deep + "}}"), up, before, "json_too_deep");
            refused(json(https, "POST", GQL, "/graphql", "[" + "{\"query\":\"{ viewer { login } }\",\"variables\":"
                    + "{\"n\":" + digits + "}}]"), up, before, "json_number_too_long");
            refused(json(https, "POST", GQL, "/graphql", "{\"query\":\"{ viewer(first: " + "9".repeat(60_000)
                    + ") { login } }\"}"), up, before, "graphql_number_too_long");
            refused(send(https, "GET", GQL, "/graphql?id=viewer1&extensions=" + q("{\"a\":" + "[".repeat(200)
                    + "]".repeat(200) + "}"),
                    List.of(), null), up, before, "json_too_deep");
            // numbers and nesting within the limits pass
            forwarded(json(https, "POST", RPC, "/rpc", "{\"jsonrpc\":\"2.0\",\"method\":\"reports.search\",\"id\":"
                    + "1".repeat(100) + ",\"params\":" + "[".repeat(100) + "]".repeat(100) + "}"), up, "POST /rpc ");
        }
        assertTrue(audited("json_too_deep"));
        assertTrue(audited("json_number_too_long"));
    }
}
