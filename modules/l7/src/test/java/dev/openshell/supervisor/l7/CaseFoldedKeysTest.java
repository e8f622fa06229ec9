package dev.openshell.supervisor.l7;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.supervisor.l7.L7Decision.Outcome;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import jakarta.json.JsonObject;
import jakarta.json.JsonString;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * Governed member names equal without regard to case (attacker pass 3, L1): Go's {@code encoding/json} reads
 * {@code "Query"}, {@code "QUERY"} and {@code "query"} as one field and keeps the last, so two of them in the object an
 * L7 reader looks the member up in are a duplicate and one alone is the member, in every L7 JSON reader (GraphQL,
 * JSON-RPC, MCP, GraphQL over WebSocket). Keys of data no rule judges: {@link CaseFoldedDataKeysTest}.
 */
class CaseFoldedKeysTest {
    static final String ENDPOINTS = """
              g:
                endpoints:
                  - {host: api.test, port: 443, path: /graphql, protocol: graphql, enforcement: enforce,
                     rules: [{allow: {operation_type: query, fields: [viewer]}},
                             {allow: {operation_type: mutation, fields: [createIssue]}}],
                     deny_rules: [{operation_type: mutation, fields: [deleteRepository]}]}
                  - {host: api.test, port: 443, path: /rpc, protocol: json-rpc, enforcement: enforce,
                     rules: [{allow: {method: initialize}}, {allow: {method: reports.search}}],
                     deny_rules: [{method: reports.delete}]}
                  - {host: api.test, port: 443, path: /mcp, protocol: mcp, enforcement: enforce,
                     rules: [{allow: {method: initialize}}, {allow: {method: tools/call, tool: {any: [read_status]}}}],
                     deny_rules: [{method: tools/call, tool: delete_resource}]}
                  - {host: api.test, port: 443, path: /m/ws, protocol: websocket, enforcement: enforce,
                     rules: [{allow: {method: GET, path: /m/ws}}, {allow: {operation_type: query, fields: [viewer]}}],
                     deny_rules: [{operation_type: mutation, fields: [deleteRepository]}]}
            """;
    private static final L7Engine ENGINE = L7EngineTest.engine(ENDPOINTS);

    private static L7Decision post(String path, String body) {
        return L7EngineTest.decide(ENGINE, "POST", path, body);
    }

    private static L7Decision ws(String message) {
        L7Engine.Route route = L7Engine.route(ENGINE.governing("api.test", 443), "GET", "/m/ws").orElseThrow();
        return L7Engine.decideText(route, message);
    }

    private static String code(String text) {
        return assertThrows(Bodies.Malformed.class, () -> Bodies.json(text)).code();
    }

    @Test
    void foldEquatesEveryPairGoEncodingJsonEquates() throws Exception {
        int pairs = 0;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(CaseFoldedKeysTest.class
                .getResourceAsStream("go-fold-pairs.txt"), StandardCharsets.US_ASCII))) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (line.startsWith("#")) {
                    continue;
                }
                String[] hex = line.split(" ");
                String a = Character.toString(Integer.parseInt(hex[0], 16));
                String b = Character.toString(Integer.parseInt(hex[1], 16));
                assertEquals(Bodies.fold(b), Bodies.fold(a), line);
                pairs++;
            }
        }
        assertTrue(pairs > 1_000, "the Go table was read: " + pairs);
        assertEquals(Bodies.fold("params"), Bodies.fold("param\u017f"));
        assertEquals(Bodies.fold("kind"), Bodies.fold("\u212aind"));
        assertNotEquals(Bodies.fold("query"), Bodies.fold("quer y"));
    }

    @Test
    void governedMembersEqualWithoutRegardToCaseAreDuplicates() throws Exception {
        assertEquals("json_duplicate_key", duplicate("{\"query\":\"{viewer}\",\"Query\":\"mutation{x}\"}", "query"));
        assertEquals("json_duplicate_key", duplicate("{\"params\":{},\"param\u017f\":{}}", "params"));
        assertEquals("json_duplicate_key", duplicate("{\"kind\":1,\"\u212aIND\":2}", "kind"));
        assertEquals("json_duplicate_key", duplicate("{\"name\":\"x\",\"NAME\":\"y\"}", "name"));
        assertEquals("json_duplicate_key", duplicate("{\"Id\":1,\"iD\":2}", "id"));
        // an exact duplicate is refused by the reading itself, at every level
        assertEquals("json_duplicate_key", code("[{\"a\":{\"name\":\"x\",\"name\":\"y\"}}]"));
    }

    /** {@return the code {@link Bodies#member} refuses {@code name} of {@code text} with; the text itself reads} */
    private static String duplicate(String text, String name) throws Exception {
        JsonObject o = (JsonObject) Bodies.json(text);
        return assertThrows(Bodies.Malformed.class, () -> Bodies.member(o, name)).code();
    }

    @Test
    void theSameKeyInSeparateObjectsIsNoDuplicate() throws Exception {
        JsonObject o = (JsonObject) Bodies.json("{\"a\":{\"id\":1},\"A\u0301\":{\"ID\":2},\"b\":[{\"id\":1},{\"Id\":2}]}");
        assertEquals(3, o.size());
    }

    @Test
    void aMemberNamedInAnotherCaseIsTheMember() throws Exception {
        JsonObject o = (JsonObject) Bodies.json("{\"Method\":\"m\",\"param\u017f\":{}}");
        assertEquals("m", ((JsonString) Bodies.member(o, "method")).getString());
        assertNotNull(Bodies.member(o, "params"));
        assertEquals(null, Bodies.member(o, "id"));
    }

    @Test
    void theAttackerReportsBodiesAreRefused() {
        List<String> graphql = List.of("{\"query\":\"{viewer}\",\"Query\":\"mutation{deleteRepository}\"}",
                "{\"query\":\"query A{viewer} mutation B{deleteRepository}\",\"operationName\":\"A\","
                        + "\"OperationName\":\"B\"}",
                "{\"Query\":\"mutation{deleteRepository}\"}",
                "{\"QUERY\":\"query A{viewer} mutation B{deleteRepository}\",\"operationname\":\"B\"}");
        for (String body : graphql) {
            assertEquals(Outcome.DENY, post("/graphql", body).outcome(), body);
        }
        assertEquals(Outcome.ALLOW, post("/graphql", "{\"Query\":\"{viewer}\"}").outcome());
        List<String> rpc = List.of("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"Method\":\"reports.delete\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"METHOD\":\"reports.delete\"}",
                "{\"JSONRPC\":\"2.0\",\"iD\":1,\"Method\":\"reports.delete\"}");
        for (String body : rpc) {
            assertEquals(Outcome.DENY, post("/rpc", body).outcome(), body);
        }
        String mcp = "{\"jsonrpc\":\"2.0\",\"id\":1,";
        List<String> mcps = List.of(mcp + "\"method\":\"tools/call\",\"params\":{\"name\":\"read_status\","
                        + "\"Name\":\"delete_resource\"}}",
                mcp + "\"method\":\"tools/call\",\"params\":{\"name\":\"read_status\"},\"param\u017f\":{\"name\":"
                        + "\"delete_resource\"}}",
                mcp + "\"method\":\"initialize\",\"Method\":\"tools/call\",\"params\":{\"name\":\"delete_resource\"}}",
                mcp + "\"Method\":\"tools/call\",\"Params\":{\"NAME\":\"delete_resource\"}}",
                mcp + "\"method\":\"tools/call\",\"param\u017f\":{\"name\":\"delete_resource\"}}");
        for (String body : mcps) {
            assertEquals(Outcome.DENY, post("/mcp", body).outcome(), body);
        }
        assertEquals(Outcome.ALLOW, post("/mcp", mcp + "\"Method\":\"tools/call\",\"PARAMS\":{\"Name\":"
                + "\"read_status\"}}").outcome());
    }

    @Test
    void graphqlWebSocketMessagesAreReadTheSameWay() {
        assertEquals(Outcome.DENY, ws("{\"type\":\"ping\",\"Type\":\"subscribe\",\"id\":\"1\",\"payload\":"
                + "{\"query\":\"mutation{deleteRepository}\"}}").outcome());
        assertEquals(Outcome.DENY, ws("{\"type\":\"subscribe\",\"id\":\"1\",\"payload\":{\"query\":\"{viewer}\","
                + "\"Query\":\"mutation{deleteRepository}\"}}").outcome());
        assertEquals(Outcome.DENY, ws("{\"TYPE\":\"subscribe\",\"Id\":\"1\",\"Payload\":{\"Query\":"
                + "\"mutation{deleteRepository}\"}}").outcome());
        L7Decision dup = ws("{\"type\":\"ping\",\"Type\":\"pong\"}");
        assertEquals(Outcome.DENY, dup.outcome());
        assertEquals("json_duplicate_key", dup.code().orElseThrow());
        assertEquals(Outcome.ALLOW, ws("{\"Type\":\"subscribe\",\"ID\":\"1\",\"payload\":{\"QUERY\":\"{viewer}\"}}")
                .outcome());
    }

    // ------------------------------------------------------------------------------------------------ property

    /** A spelling of {@code key} a Go server reads as {@code key}: each letter in either case or a fold partner. */
    static Arbitrary<String> variants(String key) {
        List<Arbitrary<String>> letters = new ArrayList<>();
        for (char c : key.toCharArray()) {
            List<String> forms = new ArrayList<>(List.of(String.valueOf(Character.toLowerCase(c)),
                    String.valueOf(Character.toUpperCase(c))));
            if (Character.toLowerCase(c) == 's') {
                forms.add("\u017f");
            } else if (Character.toLowerCase(c) == 'k') {
                forms.add("\u212a");
            }
            letters.add(Arbitraries.of(forms));
        }
        return Combinators.combine(letters).as(parts -> String.join("", parts));
    }

    record Case(String path, String key, String benign, String denied, boolean ws) {
    }

    @Provide
    Arbitrary<Object[]> cases() {
        List<Case> all = List.of(
                new Case("/graphql", "query", "{\"query\":\"{viewer}\"}", "{\"%s\":\"mutation{deleteRepository}\"}",
                        false),
                new Case("/rpc", "method", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}",
                        "{\"jsonrpc\":\"2.0\",\"id\":1,\"%s\":\"reports.delete\"}", false),
                new Case("/mcp", "params", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                        + "{\"name\":\"read_status\"}}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                        + "\"%s\":{\"name\":\"delete_resource\"}}", false),
                new Case("/mcp", "name", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                        + "{\"name\":\"read_status\"}}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                        + "\"params\":{\"%s\":\"delete_resource\"}}", false),
                new Case("/m/ws", "query", "{\"type\":\"subscribe\",\"id\":\"1\",\"payload\":{\"query\":\"{viewer}\"}}",
                        "{\"type\":\"subscribe\",\"id\":\"1\",\"payload\":{\"%s\":\"mutation{deleteRepository}\"}}",
                        true));
        return Arbitraries.of(all).flatMap(c -> Combinators.combine(variants(c.key()), Arbitraries.integers()
                .between(0, 2)).as((v, mix) -> new Object[] {c, v, mix}));
    }

    /**
     * Whatever the spelling of the governed key that carries the denied operation, and whether the exact key with
     * an allowed operation sits before it, after it or not at all, the request is never admitted.
     */
    @Property(tries = 600)
    void aFoldedSpellingOfAGovernedKeyNeverCarriesADeniedOperationPast(@ForAll("cases") Object[] drawn) {
        Case c = (Case) drawn[0];
        String variant = (String) drawn[1];
        int mix = (Integer) drawn[2];
        String denied = c.denied().formatted(variant);
        String body = switch (mix) {
            case 0 -> denied;
            // the benign exact member and the variant in one object: merge by inserting the variant's member
            case 1 -> merge(c.benign(), denied, c.key(), variant, true);
            default -> merge(c.benign(), denied, c.key(), variant, false);
        };
        L7Decision d = c.ws() ? ws(body) : post(c.path(), body);
        assertNotEquals(Outcome.ALLOW, d.outcome(), body);
    }

    /** The benign body with the denied body's {@code variant} member put before or after its exact {@code key}. */
    private static String merge(String benign, String denied, String key, String variant, boolean before) {
        int at = denied.indexOf("\"" + variant + "\":");
        String member = denied.substring(at, valueEnd(denied, at + variant.length() + 3));
        int exact = benign.indexOf("\"" + key + "\":");
        int exactEnd = valueEnd(benign, exact + key.length() + 3);
        return before ? benign.substring(0, exact) + member + "," + benign.substring(exact)
                : benign.substring(0, exactEnd) + "," + member + benign.substring(exactEnd);
    }

    /** {@return the index after the string or object value starting at {@code i} (no nesting beyond one level)} */
    private static int valueEnd(String s, int i) {
        return s.charAt(i) == '"' ? s.indexOf('"', i + 1) + 1 : s.indexOf('}', i) + 1;
    }
}
