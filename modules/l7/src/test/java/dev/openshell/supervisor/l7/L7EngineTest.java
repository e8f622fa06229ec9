package dev.openshell.supervisor.l7;

import dev.openshell.middleware.spi.Body;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.supervisor.l7.L7Decision.Outcome;
import dev.openshell.supervisor.policy.SandboxPolicyLoader;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

import jakarta.json.Json;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** The decision engine beyond the vectors: decisions of the L7 design, hostile bodies, properties. */
class L7EngineTest {
    static L7Engine engine(String endpoints) {
        return new L7Engine(SandboxPolicyLoader.parse("t.yaml", "version: 1\nnetwork_policies:\n" + endpoints)
                .value());
    }

    static L7Decision decide(L7Engine e, String method, String target, String body) {
        return e.decide("api.test", 443, new L7Request(method, target, List.of(),
                body == null ? Optional.empty() : Optional.of(Body.ofUtf8(body)))).orElseThrow();
    }

    static String gql(String doc) {
        return Json.createObjectBuilder().add("query", doc).build().toString();
    }

    static final String GRAPHQL = """
              g:
                endpoints:
                  - host: api.test
                    port: 443
                    protocol: graphql
                    enforcement: enforce
                    rules:
                      - allow: {operation_type: query, fields: [viewer, repository]}
                    deny_rules:
                      - {operation_type: query, fields: [secret*]}
            """;

    @Test
    void graphqlAliasesFragmentsAndTypename() {
        L7Engine e = engine(GRAPHQL);
        assertEquals(Outcome.ALLOW, decide(e, "POST", "/graphql", gql("{ a: viewer { login } }")).outcome());
        assertEquals(Outcome.DENY, decide(e, "POST", "/graphql", gql("{ viewer: secretKeys { id } }")).outcome(),
                "an alias does not hide the field");
        assertEquals(Outcome.DENY, decide(e, "POST", "/graphql",
                gql("query { ...F } fragment F on Query { viewer { id } secretKeys { id } }")).outcome());
        assertEquals(Outcome.DENY, decide(e, "POST", "/graphql",
                gql("query { ... on Query { secretKeys { id } } }")).outcome());
        assertEquals(Outcome.ALLOW, decide(e, "POST", "/graphql",
                gql("query { ...A } fragment A on Query { ...B viewer { id } } fragment B on Query { ...A }"))
                .outcome(), "cyclic fragments terminate");
        L7Decision d = decide(e, "POST", "/graphql", gql("{ viewer { id } __typename }"));
        assertEquals(Outcome.DENY, d.outcome());
        assertEquals("l7-graphql", d.engine());
    }

    @Test
    void graphqlBatchesDenyWhenOneOperationIsDenied() {
        L7Engine e = engine(GRAPHQL);
        assertEquals(Outcome.ALLOW, decide(e, "POST", "/graphql", "[" + gql("{ viewer { id } }") + ","
                + gql("{ repository { id } }") + "]").outcome());
        assertEquals(Outcome.DENY, decide(e, "POST", "/graphql", "[" + gql("{ viewer { id } }") + ","
                + gql("mutation { viewer { id } }") + "]").outcome());
        L7Decision empty = decide(e, "POST", "/graphql", "[]");
        assertTrue(empty.hard());
    }

    @Test
    void duplicateJsonKeysAreRefused() {
        L7Engine e = engine(GRAPHQL);
        L7Decision d = decide(e, "POST", "/graphql", "{\"query\":\"{ viewer { id } }\",\"query\":\"{ secretKeys }\"}");
        assertEquals(Outcome.DENY, d.outcome());
        assertTrue(d.hard());
        L7Engine rpc = engine("""
                  r:
                    endpoints:
                      - {host: api.test, port: 443, protocol: json-rpc, enforcement: audit,
                         rules: [{allow: {method: ping}}]}
                """);
        L7Decision two = decide(rpc, "POST", "/", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\","
                + "\"method\":\"drop\"}");
        assertEquals(Outcome.DENY, two.outcome(), "hard even in audit");
        assertTrue(two.hard());
        assertEquals(Outcome.AUDIT, decide(rpc, "POST", "/", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"drop\"}")
                .outcome());
    }

    @Test
    void oversizedBodiesAreHardDenials() {
        L7Engine e = engine("""
                  r:
                    endpoints:
                      - {host: api.test, port: 443, protocol: json-rpc, enforcement: audit, json_rpc: {max_body_bytes: 64},
                         rules: [{allow: {method: '*'}}]}
                """);
        L7Decision d = decide(e, "POST", "/", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"" + "x".repeat(100) + "\"}");
        assertEquals(413, d.status());
        assertTrue(d.hard());
    }

    @Test
    void denyRulesOfOtherPoliciesApply() {
        L7Engine e = engine("""
                  a:
                    endpoints:
                      - {host: api.test, port: 443, protocol: rest, enforcement: enforce, access: full}
                  b:
                    endpoints:
                      - {host: '*.test', port: 443, protocol: rest, enforcement: enforce, access: read-only,
                         deny_rules: [{method: DELETE, path: /repos/**}]}
                """);
        assertEquals(Outcome.ALLOW, decide(e, "DELETE", "/other", null).outcome());
        L7Decision d = decide(e, "DELETE", "/repos/x", null);
        assertEquals(Outcome.DENY, d.outcome());
        assertEquals(Optional.of("DELETE /repos/**"), d.rule());
    }

    @Test
    void decisionSixProtocolNamesAreCaseInsensitive() {
        L7Engine e = engine("""
                  a:
                    endpoints:
                      - {host: api.test, port: 443, protocol: REST, enforcement: enforce, access: read-only}
                """);
        assertEquals(Outcome.DENY, decide(e, "POST", "/x", null).outcome());
        assertEquals(Outcome.ALLOW, decide(e, "HEAD", "/x", null).outcome());
    }

    @Test
    void decisionTwoToolGlobsCoverDottedNames() {
        L7Engine e = engine("""
                  m:
                    endpoints:
                      - {host: api.test, port: 443, path: /mcp, protocol: mcp, enforcement: enforce,
                         rules: [{allow: {method: tools/call, tool: "*"}}]}
                """);
        assertEquals(Outcome.ALLOW, decide(e, "POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                + "\"tools/call\",\"params\":{\"name\":\"github.create_issue\"}}").outcome());
    }

    @Test
    void websocketEndpointsRefuseNonUpgradeRequestsEvenInAudit() {
        L7Engine e = engine("""
                  w:
                    endpoints:
                      - {host: api.test, port: 443, protocol: websocket, enforcement: audit, access: read-write}
                """);
        L7Decision d = decide(e, "GET", "/ws", null);
        assertEquals(Outcome.DENY, d.outcome());
        assertTrue(d.hard());
        assertEquals("l7-websocket", d.engine());
    }

    @Test
    void refusedTargetsAnswer400() {
        L7Engine e = engine("""
                  a:
                    endpoints:
                      - {host: api.test, port: 443, protocol: rest, enforcement: audit, access: full}
                """);
        L7Decision d = decide(e, "GET", "/a/../..", null);
        assertEquals(400, d.status());
        assertTrue(d.hard());
        assertEquals("-", d.path());
    }

    // ------------------------------------------------------------------------------------------------ properties

    @Provide
    Arbitrary<String> methods() {
        return Arbitraries.oneOf(Arbitraries.of("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE", "TRACE",
                "CONNECT", "get", "Head", "PROPFIND"), Arbitraries.strings().withCharRange('A', 'Z').ofMinLength(1)
                .ofMaxLength(8));
    }

    @Provide
    Arbitrary<String> paths() {
        return Arbitraries.of("a", "b", "repos", "x", "admin").list().ofMinSize(0).ofMaxSize(4)
                .map(p -> "/" + String.join("/", p));
    }

    @Property(tries = 500)
    void readOnlyNeverAdmitsAnUnsafeMethod(@ForAll("methods") String method, @ForAll("paths") String path) {
        L7Engine e = engine("""
                  a:
                    endpoints:
                      - {host: api.test, port: 443, protocol: rest, enforcement: enforce, access: read-only}
                """);
        L7Decision d = decide(e, method, path, null);
        boolean safe = List.of("GET", "HEAD", "OPTIONS").contains(method.toUpperCase(java.util.Locale.ROOT));
        assertEquals(safe, d.outcome() == Outcome.ALLOW, method + " " + path);
    }

    @Property(tries = 500)
    void aMatchingDenyRuleDeniesWhateverTheAllowRules(@ForAll("methods") String method, @ForAll("paths") String path,
                                                      @ForAll boolean audit) {
        String denyMethod = method.toUpperCase(java.util.Locale.ROOT).equals("HEAD") ? "GET" : method;
        L7Engine e = engine("""
                  a:
                    endpoints:
                      - host: api.test
                        port: 443
                        protocol: rest
                        enforcement: %s
                        rules:
                          - allow: {method: '*', path: '**'}
                          - allow: {method: %s, path: '%s'}
                        deny_rules:
                          - {method: '%s', path: '%s'}
                """.formatted(audit ? "audit" : "enforce", denyMethod, path, denyMethod, path));
        L7Decision d = decide(e, method, path, null);
        assertEquals(audit ? Outcome.AUDIT : Outcome.DENY, d.outcome(), method + " " + path);
        assertTrue(d.rule().orElseThrow().startsWith(denyMethod.toUpperCase(java.util.Locale.ROOT) + " "));
    }
}
