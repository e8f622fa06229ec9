package dev.openshell.supervisor.l7;

import static dev.openshell.supervisor.l7.L7EngineTest.decide;
import static dev.openshell.supervisor.l7.RequestShapesTest.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.openshell.supervisor.l7.L7Decision.Outcome;

import java.util.List;
import java.util.Optional;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * REST rules judge every reading of the query ({@link QueryReadings}: split at {@code &} and also at {@code ;}, names
 * as sent and as PHP registers them) and both the canonical path and its fold ({@link PathFolds}: {@code \} as
 * {@code /}, trailing dots and spaces of a segment dropped): an allow rule must allow every reading, a deny rule fires
 * on any ({@code docs/policy-reference.md}, "Query readings" and "Path folds").
 */
class QueryAndPathReadingsTest {
    private static final String POLICY = """
              r:
                endpoints:
                  - host: api.test
                    port: 443
                    protocol: rest
                    enforcement: enforce
                    rules:
                      - allow: {method: GET, path: "/public/**"}
                      - allow: {method: GET, path: "/s/search", query: {q: "safe*"}}
                      - allow: {method: GET, path: "/s/dots", query: {a.b: "ok"}}
                    deny_rules:
                      - {method: "*", path: "/public/admin/**"}
                      - {method: GET, path: "/public/q", query: {force: "true"}}
            """;
    private static final L7Engine ENGINE = L7EngineTest.engine(POLICY);

    private static Outcome get(String target) {
        return decide(ENGINE, "GET", target, null).outcome();
    }

    @ParameterizedTest
    @ValueSource(strings = {"/s/search?q=evil", "/s/search?q=safe&q=evil", "/s/search?q=safe;q=evil",
        "/s/search?q=safe&%20q=evil", "/s/search?q=safe&+q=evil", "/s/search?q=safe&q[]=evil",
        "/s/search?q=safe&q%00=evil", "/s/search?q=safe&q%00x=evil", "/s/search?x=1;q=safe", "/s/search?%20q=safe",
        "/s/dots?a.b=ok&a_b=evil", "/s/search", "/s/search?Q=safe"})
    void anAllowRuleMustAllowEveryReading(String target) {
        assertEquals(Outcome.DENY, get(target), target);
    }

    @ParameterizedTest
    @ValueSource(strings = {"/s/search?q=safe", "/s/search?q=safe1&q=safe2", "/s/search?q=safe;x=1",
        "/s/search?q=safe&x=1;y=2", "/s/dots?a.b=ok", "/s/search?q=safe&Q=evil"})
    void anAllowRuleStillAllowsWhatEveryReadingAllows(String target) {
        assertEquals(Outcome.ALLOW, get(target), target);
    }

    @ParameterizedTest
    @ValueSource(strings = {"/public/q?force=true", "/public/q?x=1;force=true", "/public/q?%20force=true",
        "/public/q?force%00=true", "/public/q?force[]=true", "/public/q?force[x]=true", "/public/q?+force=true",
        "/public/q?a=1&force=no;force=true"})
    void aDenyRuleFiresOnAnyReading(String target) {
        assertEquals(Outcome.DENY, get(target), target);
    }

    @ParameterizedTest
    @ValueSource(strings = {"/public/q?force=false", "/public/q?xforce=true", "/public/q?force=true;x",
        "/public/q?force_=true"})
    void aDenyRuleKeepsToItsKeyAndValue(String target) {
        // force=true;x: split at ';' the value is true, as sent it is "true;x": caught by the ';' reading
        Outcome expected = target.endsWith("true;x") ? Outcome.DENY : Outcome.ALLOW;
        assertEquals(expected, get(target), target);
    }

    @ParameterizedTest
    @ValueSource(strings = {"/public/x/..%5cadmin/x", "/public/x/..%5Cadmin/x", "/public/x\\..\\admin/x",
        "/public/admin%5Cx", "/public\\admin\\x", "/public/admin./x", "/public/admin%20/x", "/public/admin.%20./x",
        "/public/admin.../x", "/public/admin%2e/x", "/public/x/..%20/admin/x", "/public/x/.../admin/x"})
    void aDenyRuleFiresOnTheFoldedPath(String target) {
        assertEquals(Outcome.DENY, get(target), target);
    }

    @ParameterizedTest
    @ValueSource(strings = {"/public/U.S.", "/public/v1.2/x", "/public/a%20b", "/public/.well-known/x",
        "/public/x%5Cy"})
    void pathsFoldingToAllowedPathsStayAllowed(String target) {
        assertEquals(Outcome.ALLOW, get(target), target);
    }

    @Test
    void caseIsNotFolded() {
        assertEquals(Outcome.ALLOW, get("/public/Admin/x"), "globs are case-sensitive (documented)");
    }

    @Test
    void aFoldThatChangesTheGoverningEndpointsIsRefused() {
        L7Engine e = L7EngineTest.engine("""
                  r:
                    endpoints:
                      - host: api.test
                        port: 443
                        protocol: rest
                        path: "/open/**"
                        access: full
                      - host: api.test
                        port: 443
                        protocol: rest
                        path: "/open/admin/**"
                        access: read-only
                        deny_rules:
                          - {method: POST, path: "/open/admin/**"}
                """);
        refused(decide(e, "POST", "/open/admin./x", null), 400, "path_ambiguous");
        refused(decide(e, "POST", "/open/x%5C..%5C..%5C..%5Cy", null), 400, "path_ambiguous");
        assertEquals(Outcome.DENY, decide(e, "POST", "/open/admin/x", null).outcome());
        assertEquals(Outcome.ALLOW, decide(e, "POST", "/open/x./y", null).outcome());
    }

    private static String enc(String v) {
        return java.net.URLEncoder.encode(v, java.nio.charset.StandardCharsets.UTF_8);
    }

    /** GraphQL parameters of the query string must read one way: else the upstream may run what was not judged. */
    @Test
    void graphqlParametersReadOtherwiseAreAmbiguous() {
        L7Engine e = L7EngineTest.engine(RequestShapesTest.GRAPHQL);
        String viewer = enc("{ viewer { id } }");
        String mutation = enc("mutation { deleteRepository }");
        for (String query : List.of("query=" + viewer + "&%20query=" + mutation, "query=" + viewer + ";query="
                + mutation, "query=" + viewer + "&query[]=" + mutation, "query=" + viewer + "&query%00=" + mutation,
                "%20query=" + mutation, "id=v1;id=m1")) {
            refused(decide(e, "GET", "/graphql?" + query, null), 400, GraphQl.AMBIGUOUS);
        }
        refused(decide(e, "POST", "/graphql?%20id=m1", L7EngineTest.gql("{ viewer { id } }")), 400,
                GraphQl.AMBIGUOUS);
        assertEquals(Outcome.ALLOW, decide(e, "GET", "/graphql?query=" + viewer + "&x=1;y=2", null).outcome());
        assertEquals(Outcome.ALLOW, decide(e, "GET", "/graphql?id=v1&trace.id=1", null).outcome());
    }

    @Test
    void foldsAndPhpNames() throws Exception {
        assertEquals(Optional.of("/public/admin/x"), PathFolds.folded("/public/x%5C..%5Cadmin/x"));
        assertEquals(Optional.of("/a/b/"), PathFolds.folded("/a./b%20%20./"));
        assertEquals(Optional.empty(), PathFolds.folded("/a/b.c/d"));
        assertEquals(Optional.of("/"), PathFolds.folded("/a/..."));
        assertEquals("a_b", QueryReadings.phpName("  a.b[c]"));
        assertEquals("_method", QueryReadings.phpName("_method\0[x"));
        assertEquals("a_b_c", QueryReadings.phpName("a b.c"));
    }

    // ------------------------------------------------------------------------------------------- properties

    @Provide
    Arbitrary<String> keys() {
        Arbitrary<String> lead = Arbitraries.of("", "%20", "+", "%20%20");
        Arbitrary<String> tail = Arbitraries.of("", "[]", "[x]", "%00", "%00x", "%00[");
        return lead.flatMap(l -> tail.map(t -> l + "force" + t));
    }

    @Provide
    Arbitrary<List<String>> others() {
        return Arbitraries.of("a=1", "b", "force=no", "forcex=true", "x=force%3Dtrue", "q=safe").list().ofMaxSize(4);
    }

    /**
     * However the denied pair is named (PHP's leading spaces, arrays, NUL) and separated ({@code &} or {@code ;}),
     * among other pairs in any order, a deny rule on {@code force=true} fires.
     */
    @Property(tries = 1500)
    void theDeniedPairIsFoundInAnyDress(@ForAll("keys") String key, @ForAll("others") List<String> others,
                                        @ForAll boolean semicolon, @ForAll("position") int at) {
        List<String> pairs = new java.util.ArrayList<>(others);
        pairs.add(at % (pairs.size() + 1), key + "=true");
        String query = String.join(semicolon ? ";" : "&", pairs);
        assertEquals(Outcome.DENY, get("/public/q?" + query), query);
    }

    @Provide
    Arbitrary<Integer> position() {
        return Arbitraries.integers().between(0, 10);
    }

    /**
     * An allow rule on {@code q=safe*} allows a query only when every value any reading gives {@code q} is safe, and
     * every reading gives one: checked against the reference of the four readings made by hand.
     */
    @Property(tries = 1500)
    void anAllowRuleAllowsOnlyWhatEveryReadingAllows(@ForAll("searchPairs") List<String> pairs,
                                                     @ForAll boolean semicolon) {
        String query = String.join(semicolon ? ";" : "&", pairs);
        boolean expected = true;
        for (boolean splitSemicolon : new boolean[] {false, true}) {
            for (boolean php : new boolean[] {false, true}) {
                boolean seen = false;
                for (String pair : query.split(splitSemicolon ? "[&;]" : "&")) {
                    int eq = pair.indexOf('=');
                    String k = pair.substring(0, eq < 0 ? pair.length() : eq).replace("+", " ").replace("%20", " ")
                            .replace("%00", "\0");
                    k = php ? QueryReadings.phpName(k) : k;
                    if (k.equals("q")) {
                        seen = true;
                        expected &= eq >= 0 && pair.substring(eq + 1).startsWith("safe");
                    }
                }
                expected &= seen;
            }
        }
        assertEquals(expected ? Outcome.ALLOW : Outcome.DENY, get("/s/search?" + query), query);
    }

    @Provide
    Arbitrary<List<String>> searchPairs() {
        Arbitrary<String> key = Arbitraries.of("q", "%20q", "q[]", "q%00", "x", "+q", "Q");
        Arbitrary<String> value = Arbitraries.of("safe", "safe1", "evil", "", "safe;q=evil", "x;q=safe");
        return key.flatMap(k -> value.map(v -> k + "=" + v)).list().ofMinSize(1).ofMaxSize(4);
    }
}
