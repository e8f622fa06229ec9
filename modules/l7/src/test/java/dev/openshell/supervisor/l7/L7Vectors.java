package dev.openshell.supervisor.l7;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.OriginatingProcess;
import dev.openshell.supervisor.policy.Caller;

import static org.junit.jupiter.api.Assertions.fail;

import dev.openshell.supervisor.policy.Loaded;
import dev.openshell.supervisor.policy.SandboxPolicy;
import dev.openshell.supervisor.policy.SandboxPolicyLoader;

import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;

/**
 * The L7 conformance vectors ({@code tests/data/conformance/l7/l7-vectors.tsv}) made executable: each row's endpoint
 * JSON becomes a policy file (JSON is YAML), loaded by the real loader, and each row's request description becomes a
 * concrete request. REST rows are read directly ({@code METHOD TARGET}, with {@code [host=...]}/{@code [port=...]});
 * the compact descriptions of body protocols are translated in {@link #TRANSLATIONS}, one line each.
 */
final class L7Vectors {
    /** The host and port of the e2e harness placeholders {@code {test-server}}/{@code {host}} and {@code {port}}. */
    static final String TEST_HOST = "host.test";
    static final int TEST_PORT = 8080;

    /**
     * One vector.
     *
     * @param line the line in the TSV (1-based), its identity
     * @param protocol the protocol column
     * @param endpointJson the endpoint JSON, placeholders replaced
     * @param request the request description
     * @param expected allow, deny or audit
     * @param source the source column
     */
    record Vector(int line, String protocol, String endpointJson, String request, String expected, String source) {
        @Override
        public String toString() {
            return "line " + line + ": " + protocol + " " + request + " -> " + expected;
        }
    }

    /**
     * A concrete request.
     *
     * @param host the request host
     * @param port the request port
     * @param http the HTTP request, or for a WebSocket text message the upgrade request
     * @param text the WebSocket text message, if the vector is about one
     */
    record Concrete(String host, int port, L7Request http, Optional<String> text) {
    }

    private L7Vectors() {
    }

    static List<Vector> all() {
        Path file = TestData.require("conformance/l7/l7-vectors.tsv");
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<Vector> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i);
            if (l.isBlank() || l.startsWith("#")) {
                continue;
            }
            String[] c = l.split("\t", -1);
            if (c.length != 5) {
                fail("line " + (i + 1) + " has " + c.length + " columns");
            }
            String json = c[1].replace("\"{test-server}\"", "\"" + TEST_HOST + "\"")
                    .replace("\"{port}\"", String.valueOf(TEST_PORT));
            out.add(new Vector(i + 1, c[0], json, c[2], c[3], c[4]));
        }
        return out;
    }

    /**
     * {@return the calling process the vector's request names ({@code [exec.path=...]}, or {@code exe=...} with
     * {@code ancestors=[...]}), or the caller of endpoint-only mode (binaries satisfied) when it names none or an
     * empty path in relaxed mode} Command lines ({@code cmdline_paths}) are not part of it: they never grant access.
     */
    static Caller caller(Vector v) {
        Matcher exec = Pattern.compile("\\[exec\\.path=([^ \\]]*)").matcher(v.request());
        if (exec.find()) {
            String path = exec.group(1);
            return path.isEmpty() || path.equals("''") ? Caller.unscoped()
                    : Caller.of(new OriginatingProcess(path, 0, List.of()));
        }
        Matcher exe = Pattern.compile("exe=(\\S+)").matcher(v.request());
        if (exe.find()) {
            Matcher ancestors = Pattern.compile("ancestors=\\[([^\\]]*)]").matcher(v.request());
            return Caller.of(new OriginatingProcess(exe.group(1), 0,
                    ancestors.find() ? List.of(ancestors.group(1).split(",")) : List.of()));
        }
        return Caller.unscoped();
    }

    /**
     * {@return the policy file for the vector's endpoint JSON: one policy per entry, with the entry's
     * {@code binaries} (or the vector's)}
     */
    static String policyYaml(Vector v) {
        JsonObject root = Json.createReader(new StringReader(v.endpointJson())).readObject();
        Map<String, List<JsonObject>> policies = new LinkedHashMap<>();
        if (root.containsKey("policies")) {
            for (var e : root.getJsonObject("policies").entrySet()) {
                policies.put(e.getKey(), List.of(e.getValue().asJsonObject()));
            }
        } else if (root.containsKey("endpoints")) {
            policies.put("vector", root.getJsonArray("endpoints").getValuesAs(JsonObject.class));
        } else {
            policies.put("vector", List.of(root));
        }
        JsonObjectBuilder np = Json.createObjectBuilder();
        for (var e : policies.entrySet()) {
            var eps = Json.createArrayBuilder();
            var binaries = Json.createArrayBuilder();
            for (JsonObject ep : e.getValue()) {
                JsonObjectBuilder b = Json.createObjectBuilder(ep);
                b.remove("binaries");
                eps.add(b);
                JsonObject source = ep.containsKey("binaries") ? ep : root;
                if (source.containsKey("binaries")) {
                    source.getJsonArray("binaries").getValuesAs(jakarta.json.JsonString::getString)
                            .forEach(path -> binaries.add(Json.createObjectBuilder().add("path", path)));
                }
            }
            JsonObjectBuilder p = Json.createObjectBuilder().add("endpoints", eps);
            jakarta.json.JsonArray list = binaries.build();
            if (!list.isEmpty()) {
                p.add("binaries", list);
            }
            np.add(e.getKey(), p);
        }
        return Json.createObjectBuilder().add("version", 1).add("network_policies", np).build().toString();
    }

    static Loaded<SandboxPolicy> load(Vector v) {
        return SandboxPolicyLoader.parse("vector-line-" + v.line() + ".yaml", policyYaml(v));
    }

    /** {@return the host and port the vector's request goes to: the first endpoint's, unless the request says} */
    static Concrete concrete(Vector v) {
        JsonObject root = Json.createReader(new StringReader(v.endpointJson())).readObject();
        JsonObject first = root.containsKey("policies")
                ? root.getJsonObject("policies").values().iterator().next().asJsonObject()
                : root.containsKey("endpoints") ? root.getJsonArray("endpoints").getJsonObject(0) : root;
        String host = first.getString("host", TEST_HOST);
        int port = first.containsKey("port") ? first.getInt("port")
                : first.getJsonArray("ports").getInt(0);
        Matcher h = Pattern.compile("\\[host=([^\\]]+)]").matcher(v.request());
        if (h.find()) {
            host = h.group(1);
        }
        Matcher p = Pattern.compile("\\[port=(\\d+)]").matcher(v.request());
        if (p.find()) {
            port = Integer.parseInt(p.group(1));
        }
        String[] t = TRANSLATIONS.get(v.request());
        if (t == null) {
            if (!v.protocol().equals("rest") && !v.protocol().equals("l4")) {
                fail("no translation for the request of " + v + "; add one to L7Vectors.TRANSLATIONS");
            }
            String[] words = v.request().split(" ");
            String target = words[1].replace("{host}", TEST_HOST).replace("{port}", String.valueOf(TEST_PORT));
            return new Concrete(host, port, new L7Request(words[0], target, List.of(), Optional.empty()),
                    Optional.empty());
        }
        String method = t[0];
        String target = t[1];
        List<L7Request.Header> headers = new ArrayList<>();
        if (!t[3].isEmpty()) {
            for (String hv : t[3].split(";")) {
                int colon = hv.indexOf(':');
                headers.add(new L7Request.Header(hv.substring(0, colon).trim(), hv.substring(colon + 1).trim()));
            }
        }
        if (method.equals("WS")) {
            headers.addAll(UPGRADE);
            return new Concrete(host, port, new L7Request("GET", target, headers, Optional.empty()),
                    Optional.of(t[2]));
        }
        Optional<Body> body = t[2].isEmpty() ? Optional.empty() : Optional.of(Body.ofUtf8(t[2]));
        return new Concrete(host, port, new L7Request(method, target, headers, body), Optional.empty());
    }

    static final List<L7Request.Header> UPGRADE = List.of(new L7Request.Header("Upgrade", "websocket"),
            new L7Request.Header("Connection", "Upgrade"),
            new L7Request.Header("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
            new L7Request.Header("Sec-WebSocket-Version", "13"));

    private static String rpc(String method) {
        return "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"" + method + "\"}";
    }

    private static String tool(int id, String name) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + name
                + "\",\"arguments\":{}}}";
    }

    private static String gql(String document) {
        return Json.createObjectBuilder().add("query", document).build().toString();
    }

    private static String subscribe(String document) {
        return Json.createObjectBuilder().add("type", "subscribe").add("id", "1")
                .add("payload", Json.createObjectBuilder().add("query", document)).build().toString();
    }

    private static final String GQL_GET_DUPLICATE = "/graphql?query=query+Viewer+%7B+viewer+%7B+login+%7D+%7D"
            + "&query=mutation+Delete+%7B+deleteRepository%28id%3A1%29+%7B+clientMutationId+%7D+%7D";
    private static final String GQL_GET_PERSISTED = "/graphql?operationName=Viewer&extensions="
            + "%7B%22persistedQuery%22%3A%7B%22version%22%3A1%2C%22sha256Hash%22%3A%22abc123%22%7D%7D";
    private static final String EVENT_STREAM = "Accept: text/event-stream";

    /** Request description -> {method (WS: a text message on the upgrade target), target, body or message, headers}. */
    static final Map<String, String[]> TRANSLATIONS = new LinkedHashMap<>();

    private static void tr(String description, String method, String target, String body, String headers) {
        TRANSLATIONS.put(description, new String[] {method, target, body, headers});
    }

    static {
        // GraphQL: Rego-input operations written as documents
        tr("POST /graphql ops=[{type:query,name:RepoLookup,fields:[repository]}]", "POST", "/graphql",
                gql("query RepoLookup { repository(owner: \"o\", name: \"r\") { id } }"), "");
        tr("POST /graphql ops=[{type:query,fields:[viewer,adminAuditLog]}]", "POST", "/graphql",
                gql("{ viewer { login } adminAuditLog { id } }"), "");
        tr("POST /graphql ops=[{mutation,IssueDelete,[deleteRepository]}]", "POST", "/graphql",
                gql("mutation IssueDelete { deleteRepository(id: 1) { clientMutationId } }"), "");
        tr("POST /graphql ops=[{type:'',name:Viewer,persisted:true,hash:abc123}]", "POST", "/graphql",
                "{\"operationName\":\"Viewer\",\"extensions\":{\"persistedQuery\":{\"version\":1,"
                        + "\"sha256Hash\":\"abc123\"}}}", "");
        tr("POST /graphql graphql.error='GraphQL document parse error'", "POST", "/graphql",
                gql("query { viewer { login "), "");
        tr("POST /graphql ops=[{mutation,IssueCreate,[createIssue]}]", "POST", "/graphql",
                gql("mutation IssueCreate { createIssue(title: \"t\") { id } }"), "");
        tr("POST /graphql ops=[{query,[__typename,viewer]}]", "POST", "/graphql",
                gql("query { __typename viewer { login } }"), "");
        tr("POST /graphql ops=[{query,[viewer]}]", "POST", "/graphql", gql("query { viewer { login } }"), "");
        tr("POST /graphql ops=[{subscription,[x]}]", "POST", "/graphql", gql("subscription { x }"), "");
        tr("POST http://host.openshell.internal:8080/graphql Transfer-Encoding: chunked body={\"query\":\"query Viewer"
                + " { viewer { login } }\"}", "POST", "http://host.openshell.internal:8080/graphql",
                gql("query Viewer { viewer { login } }"), "");
        tr("GET /graphql?query=query+Viewer..&query=mutation+Delete.. (duplicate control param)", "GET",
                GQL_GET_DUPLICATE, "", "");
        tr("POST /graphql body={\"query\":\"query A { viewer { login } } query B { rateLimit { limit } }\"}", "POST",
                "/graphql", gql("query A { viewer { login } } query B { rateLimit { limit } }"), "");
        tr("POST /graphql body={\"query\":\"mutation M { safeAlias: deleteRepository(x:1) { id } }\","
                + "\"operationName\":\"M\"}", "POST", "/graphql", "{\"query\":\"mutation M { safeAlias:"
                + " deleteRepository(x:1) { id } }\",\"operationName\":\"M\"}", "");
        tr("PUT /graphql body={...}", "PUT", "/graphql", gql("query { viewer { login } }"), "");
        tr("POST /graphql Content-Type: application/graphql body='query { viewer }' (raw, not JSON)", "POST",
                "/graphql", "query { viewer }", "Content-Type: application/graphql");
        tr("POST /graphql body='not json'", "POST", "/graphql", "not json", "");
        for (String via : List.of("[forward proxy http://]", "[CONNECT tunnel]")) {
            tr("POST /graphql {query:'query Viewer { viewer { login } }'} " + via, "POST", "/graphql",
                    gql("query Viewer { viewer { login } }"), "");
            tr("GET /graphql?query=<viewer>&query=<mutation Delete> " + via, "GET", GQL_GET_DUPLICATE, "", "");
            tr("GET /graphql?operationName=Viewer&extensions={persistedQuery:{version:1,sha256Hash:abc123}} " + via,
                    "GET", GQL_GET_PERSISTED, "", "");
            tr("POST /graphql (chunked) {query:'query Viewer { viewer { login } }'} " + via, "POST", "/graphql",
                    gql("query Viewer { viewer { login } }"), "");
            tr("POST /graphql {query:'query Repo { repository(owner:\"o\", name:\"r\") { id } }'} " + via, "POST",
                    "/graphql", gql("query Repo { repository(owner:\"o\", name:\"r\") { id } }"), "");
            tr("POST /graphql {query:'mutation Delete { deleteRepository(...) { clientMutationId } }'} " + via,
                    "POST", "/graphql", gql("mutation Delete { deleteRepository(id: 1) { clientMutationId } }"),
                    "");
        }
        // WebSocket text messages (on the upgrade target)
        tr("WEBSOCKET_TEXT /graphql ops=[{subscription,NewMessages,[messageAdded]}]", "WS", "/graphql",
                subscribe("subscription NewMessages { messageAdded }"), "");
        tr("WEBSOCKET_TEXT /graphql ops=[{query,[adminAuditLog]}]", "WS", "/graphql",
                subscribe("query { adminAuditLog { id } }"), "");
        tr("WEBSOCKET_TEXT /graphql ops=[{query,[adminAuditLog]}] (raw data; validation would reject this policy)",
                "WS", "/graphql", subscribe("query { adminAuditLog { id } }"), "");
        tr("text frame {\"type\":\"subscribe\",\"id\":\"1\",\"payload\":{\"query\":\"subscription NewMessages {"
                + " messageAdded }\"}}", "WS", "/graphql", subscribe("subscription NewMessages { messageAdded }"), "");
        tr("text frame {\"type\":\"connection_init\",\"payload\":{...}}", "WS", "/graphql",
                "{\"type\":\"connection_init\",\"payload\":{}}", "");
        tr("text frame {\"type\":\"next\",\"id\":\"1\"}", "WS", "/graphql", "{\"type\":\"next\",\"id\":\"1\"}", "");
        tr("text frame {\"type\":\"subscribe\",\"payload\":{\"query\":\"query { viewer }\"}} (no id)", "WS",
                "/graphql", "{\"type\":\"subscribe\",\"payload\":{\"query\":\"query { viewer }\"}}", "");
        tr("WEBSOCKET_TEXT /ws", "WS", "/ws", "hello", "");
        tr("WEBSOCKET_TEXT /v1/chat (upgrade path)", "WS", "/v1/chat", "hello", "");
        tr("WEBSOCKET_TEXT /v1/admin/x (upgrade path)", "WS", "/v1/admin/x", "hello", "");
        // JSON-RPC
        for (String m : List.of("initialize", "reports.list", "reports.archive", "reports.progress")) {
            tr("POST /rpc jsonrpc.method=" + m, "POST", "/rpc", rpc(m), "");
        }
        tr("POST /rpc jsonrpc.method='reports.*'", "POST", "/rpc", rpc("reports.*"), "");
        tr("GET /rpc jsonrpc.method=initialize", "GET", "/rpc", rpc("initialize"), "");
        tr("GET /rpc jsonrpc={method:null,receive_stream:true}", "GET", "/rpc", "", EVENT_STREAM);
        tr("GET /other jsonrpc={method:null,receive_stream:true}", "GET", "/other", "", EVENT_STREAM);
        tr("POST /rpc jsonrpc={method:null,has_response:true}", "POST", "/rpc",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "");
        tr("POST /rpc jsonrpc={method:initialize,has_response:true}", "POST", "/rpc",
                "[" + rpc("initialize") + ",{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}]", "");
        tr("POST /rpc jsonrpc.method=reports.search params={\"query\":\"quarterly\",\"filters.scope\":"
                + "\"workspace/main\"}", "POST", "/rpc", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"reports.search\","
                + "\"params\":{\"query\":\"quarterly\",\"filters\":{\"scope\":\"workspace/main\"}}}", "");
        tr("POST /rpc jsonrpc.method=reports.search params={\"query\":\"blocked\"}", "POST", "/rpc",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"reports.search\",\"params\":{\"query\":\"blocked\"}}", "");
        tr("POST /rpc jsonrpc=null", "POST", "/rpc", "", "");
        tr("POST /rpc body=[{id:1,method:reports.list},{id:2,result:{ok:true}}]", "POST", "/rpc",
                "[" + rpc("reports.list") + ",{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"ok\":true}}]", "");
        tr("POST /rpc body={jsonrpc:2.0,id:2,result:{ok:true}}", "POST", "/rpc",
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"ok\":true}}", "");
        tr("POST /rpc body=[]", "POST", "/rpc", "[]", "");
        tr("POST /rpc body={\"id\":1,\"method\":\"reports.list\"} (no jsonrpc:2.0)", "POST", "/rpc",
                "{\"id\":1,\"method\":\"reports.list\"}", "");
        tr("POST /rpc body={id:1,method:reports.search,params:{query:delete_resource,filters:{scope:"
                + "workspace/secret}}}", "POST", "/rpc", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"reports.search\","
                + "\"params\":{\"query\":\"delete_resource\",\"filters\":{\"scope\":\"workspace/secret\"}}}", "");
        tr("POST /rpc body={id:1,method:reports.search,params:[\"ignored\",{nested:true}]}", "POST", "/rpc",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"reports.search\",\"params\":[\"ignored\","
                        + "{\"nested\":true}]}", "");
        tr("POST /rpc body={jsonrpc:2.0,id:1,method:reports.list}", "POST", "/rpc", rpc("reports.list"), "");
        String fp = "POST http://{host}:{port}/rpc ";
        String abs = "http://" + TEST_HOST + ":" + TEST_PORT + "/rpc";
        tr(fp + "initialize params={protocolVersion:2025-11-25,capabilities:{}} [forward proxy]", "POST", abs,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                        + "\"2025-11-25\",\"capabilities\":{}}}", "");
        tr(fp + "tools/call params={name:read_status} [forward proxy]", "POST", abs, tool(1, "read_status"), "");
        tr(fp + "tools/call params={name:blocked_action,arguments:{scope:ignored}} [forward proxy]", "POST", abs,
                tool(1, "blocked_action"), "");
        tr(fp + "batch [tools/list, tools/call{name:read_status}] [forward proxy]", "POST", abs,
                "[" + rpc("tools/list") + "," + tool(2, "read_status") + "]", "");
        tr(fp + "batch [tools/list, tools/delete{name:purge_cache}] [forward proxy]", "POST", abs,
                "[" + rpc("tools/list") + ",{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/delete\",\"params\":"
                        + "{\"name\":\"purge_cache\"}}]", "");
        tr("POST /rpc initialize [CONNECT tunnel]", "POST", "/rpc", rpc("initialize"), "");
        tr("POST /rpc tools/list [CONNECT tunnel]", "POST", "/rpc", rpc("tools/list"), "");
        tr("POST /rpc tools/call params={name:blocked_action,arguments:{scope:ignored}} [CONNECT tunnel]", "POST",
                "/rpc", tool(1, "blocked_action"), "");
        tr("POST /rpc tools/delete params={name:purge_cache} [CONNECT tunnel]", "POST", "/rpc",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/delete\",\"params\":{\"name\":\"purge_cache\"}}", "");
        tr("POST /rpc {jsonrpc:2.0,id:1,result:{}} [forward proxy]", "POST", "/rpc",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "");
        // MCP
        for (String t : List.of("read_status", "blocked_action", "search_web")) {
            tr("POST /mcp tools/call params.name=" + t, "POST", "/mcp", tool(1, t), "");
        }
        tr("GET /other jsonrpc={method:null,receive_stream:true}", "GET", "/other", "", EVENT_STREAM);
        tr("POST /mcp jsonrpc={method:null,has_response:true}", "POST", "/mcp",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "");
        tr("POST /mcp tools/call params={name:read_status,arguments.scope:workspace/main}", "POST", "/mcp",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"read_status\","
                        + "\"arguments\":{\"scope\":\"workspace/main\"}}}", "");
        tr("POST /mcp tools/call params={name:read_status,arguments.scope:workspace/other}", "POST", "/mcp",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"read_status\","
                        + "\"arguments\":{\"scope\":\"workspace/other\"}}}", "");
        tr("POST /mcp tools/call params={name:blocked_action}", "POST", "/mcp", tool(1, "blocked_action"), "");
        tr("POST /mcp tools/list", "POST", "/mcp", rpc("tools/list"), "");
        tr("POST /mcp initialize", "POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                + "\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"c\","
                + "\"version\":\"1\"}}}", "");
        tr("POST /mcp jsonrpc={method:tools/call,params:null}", "POST", "/mcp",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":null}", "");
        tr("POST /mcp {jsonrpc:2.0,id:2,method:tools/call,params:{name:delete_resource,arguments:{scope:"
                + "workspace/main}}}", "POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                + "\"params\":{\"name\":\"delete_resource\",\"arguments\":{\"scope\":\"workspace/main\"}}}", "");
        tr("POST /mcp {jsonrpc:2.0,id:3,method:tools/call,params:{name:\"read status\",arguments:{}}}", "POST",
                "/mcp", tool(3, "read status"), "");
        tr("POST /mcp batch [tools/list, tools/call{name:delete_resource}]", "POST", "/mcp",
                "[" + rpc("tools/list") + "," + tool(2, "delete_resource") + "]", "");
        tr("any bytes, e.g. 'DROP TABLE x'", "POST", "/", "DROP TABLE x", "");
    }
}
