package dev.openshell.supervisor.l7;

import dev.openshell.middleware.spi.Body;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.openshell.supervisor.l7.L7Decision.Outcome;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import jakarta.json.Json;
import jakarta.json.JsonObjectBuilder;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * Keys that differ only in case in data no rule judges (GraphQL {@code variables}, MCP {@code arguments}, JSON-RPC
 * {@code params} members other than the tool name, REST bodies) are ordinary data (attacker pass 4, L1-reg): a
 * case-insensitive reader takes no governed value from them, so they never refuse a request. Only the governed members
 * at the levels the L7 readers look them up are compared without regard to case ({@link CaseFoldedKeysTest}).
 */
class CaseFoldedDataKeysTest {
    private static final L7Engine ENGINE = L7EngineTest.engine(CaseFoldedKeysTest.ENDPOINTS + """
              r:
                endpoints:
                  - {host: api.test, port: 443, path: /public/**, protocol: rest, enforcement: enforce,
                     rules: [{allow: {method: POST, path: /public/**}}]}
            """);

    private static L7Decision post(String path, String contentType, String body) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        return ENGINE.decide("api.test", 443, new L7Request("POST", path, List.of(new L7Request.Header(
                "Content-Type", contentType), new L7Request.Header("Content-Length", Integer.toString(bytes.length))),
                Optional.of(Body.of(bytes)))).orElseThrow();
    }

    private static L7Decision ws(String message) {
        L7Engine.Route route = L7Engine.route(ENGINE.governing("api.test", 443), "GET", "/m/ws").orElseThrow();
        return L7Engine.decideText(route, message);
    }

    private static void admitted(L7Decision d, String body) {
        assertEquals(Outcome.ALLOW, d.outcome(), body + " -> " + d.reason());
    }

    @Test
    void theAttackersLegitimateRestBodiesAreAdmitted() {
        for (String body : List.of("{\"payment_method\":\"card\",\"metadata\":{\"Key\":\"a\",\"key\":\"b\"}}",
                "{\"method\":\"GET\",\"url\":\"https://x\",\"headers\":{\"ETag\":\"1\",\"etag\":\"2\"}}",
                "{\"text\":\"the method works\",\"tags\":{\"A\":1,\"a\":2}}",
                "{\"\\u0041\":1,\"a\":2,\"note\":\"\\u00e9\"}",
                "{\"metadata\":{\"Key\":\"a\",\"key\":\"b\"}}",
                "{\"Method\":\"x\",\"method\":\"y\",\"_method_\":1}")) {
            admitted(post("/public/x", "application/json", body), body);
        }
    }

    @Test
    void aJsonOverrideIsStillFoundAndExactDuplicatesStillRefused() {
        L7Decision override = post("/public/x", "application/json", "{\"a\":1,\"A\":2,\"_method\":\"DELETE\"}");
        assertEquals(Outcome.DENY, override.outcome(), override.reason());
        assertEquals("method_override", override.code().orElseThrow());
        L7Decision exact = post("/public/x", "application/json", "{\"method\":1,\"method\":2}");
        assertEquals(Outcome.DENY, exact.outcome(), exact.reason());
        assertEquals("json_duplicate_key", assertThrows(Bodies.Malformed.class,
                () -> Bodies.json("{\"a\":{\"k\":1,\"k\":2}}")).code());
    }

    @Test
    void theAttackersLegitimateGraphqlAndMcpBodiesAreAdmitted() {
        String gql = "{\"query\":\"query($a:Int,$A:Int){viewer}\",\"variables\":{\"a\":1,\"A\":2}}";
        admitted(post("/graphql", "application/json", gql), gql);
        String mcp = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"read_status\","
                + "\"arguments\":{\"headers\":{\"ETag\":\"1\",\"etag\":\"2\"},\"Name\":\"x\"}}}";
        admitted(post("/mcp", "application/json", mcp), mcp);
        String rpc = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"reports.search\",\"params\":{\"Method\":\"a\","
                + "\"method\":\"b\",\"ID\":1,\"id\":2}}";
        admitted(post("/rpc", "application/json", rpc), rpc);
        String sub = "{\"type\":\"subscribe\",\"id\":\"1\",\"payload\":{\"query\":\"{viewer}\",\"variables\":"
                + "{\"Query\":\"mutation{deleteRepository}\",\"query\":\"x\"}}}";
        admitted(ws(sub), sub);
    }

    // ------------------------------------------------------------------------------------------------ property

    /** Words data often holds, governed names among them: inside data they are data. */
    private static final List<String> WORDS = List.of("key", "etag", "name", "query", "method", "params", "id",
            "type", "payload", "operationName", "a");

    private static Arbitrary<String> key() {
        return Arbitraries.of(WORDS).flatMap(CaseFoldedKeysTest::variants);
    }

    /** A JSON object of data, nested up to {@code depth} levels, whose first two members' keys fold to one name. */
    private static Arbitrary<String> data(int depth) {
        Arbitrary<String> value = depth == 0 ? Arbitraries.strings().alpha().ofMaxLength(6).map(Json::createValue)
                .map(Object::toString) : Arbitraries.oneOf(Arbitraries.integers().map(String::valueOf), data(depth - 1));
        Arbitrary<String> word = Arbitraries.of(WORDS);
        return Combinators.combine(word, key().list().ofMaxSize(4), value.list().ofSize(6)).as((w, keys, values) -> {
            List<String> names = new ArrayList<>(List.of(w, w.toUpperCase(java.util.Locale.ROOT).equals(w)
                    ? w.toLowerCase(java.util.Locale.ROOT) : w.toUpperCase(java.util.Locale.ROOT)));
            names.addAll(keys);
            JsonObjectBuilder b = Json.createObjectBuilder();
            for (int i = 0; i < names.size(); i++) {
                b.add(names.get(i), Json.createReader(new java.io.StringReader(values.get(i))).readValue());
            }
            return b.build().toString();
        });
    }

    @Provide
    Arbitrary<String> dataObjects() {
        return data(2);
    }

    /**
     * Whatever keys differing only in case a data object holds, at any depth, in GraphQL {@code variables} (over
     * HTTP and WebSocket), MCP {@code arguments}, JSON-RPC {@code params}, a non-governed member or a REST body, the
     * request is admitted when its governed members are allowed.
     */
    @Property(tries = 300)
    void caseCollidingKeysInDataNeverRefuseARequest(@ForAll("dataObjects") String data) {
        String gql = "{\"query\":\"{viewer}\",\"variables\":" + data + ",\"meta\":" + data + "}";
        admitted(post("/graphql", "application/json", gql), gql);
        String mcp = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"read_status\","
                + "\"arguments\":" + data + "},\"meta\":" + data + "}";
        admitted(post("/mcp", "application/json", mcp), mcp);
        String rpc = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"reports.search\",\"params\":[" + data + "]}";
        admitted(post("/rpc", "application/json", rpc), rpc);
        String sub = "{\"type\":\"subscribe\",\"id\":\"1\",\"payload\":{\"query\":\"{viewer}\",\"variables\":" + data
                + "}}";
        admitted(ws(sub), sub);
        String rest = "{\"payment_method\":\"card\",\"metadata\":" + data + ",\"x\":\"\\u00e9\"}";
        admitted(post("/public/x", "application/json", rest), rest);
        admitted(post("/public/x", "application/json", data), data);
    }
}
