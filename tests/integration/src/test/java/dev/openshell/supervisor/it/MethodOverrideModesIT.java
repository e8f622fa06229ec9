package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The endpoint key {@code method_override} (issue 39, item 5) through {@code supervisor run}: {@code evaluate} judges
 * a request by the method it asks the upstream to apply (a deny rule on {@code DELETE} denies a {@code POST} with
 * {@code X-HTTP-Method-Override: DELETE} or {@code _method=DELETE}; differing override values are refused), and
 * {@code ignore} (an upstream that honours no override) forwards the request as received. Over plain HTTP and
 * intercepted HTTPS. A misspelt value, or the key on a protocol it does not apply to, is a load error with its
 * location.
 */
class MethodOverrideModesIT {
    static final String EVALUATE = "evaluate.l7.test";
    static final String IGNORE = "ignore.l7.test";
    static final String READ_ONLY = "readonly.l7.test";

    @TempDir
    static Path work;
    static RawUpstream plain;
    static RawUpstream tls;
    static StackProcess supervisor;

    @BeforeAll
    static void start() throws Exception {
        L7EnforcementIT.LoopbackTls loopback = L7EnforcementIT.LoopbackTls.create(work, List.of(EVALUATE, IGNORE, READ_ONLY));
        tls = loopback.tls();
        plain = RawUpstream.plain();
        Path gateway = Files.writeString(work.resolve("gateway.toml"), loopback.gateway());
        Path policy = Files.writeString(work.resolve("policy.yaml"), """
                version: 1
                network_policies:
                  evaluated:
                    endpoints:
                      - host: %3$s
                        ports: [%1$d, %2$d]
                        protocol: rest
                        enforcement: enforce
                        method_override: evaluate
                        rules:
                          - allow: { method: "*", path: "/**" }
                        deny_rules:
                          - { method: DELETE, path: "/repos/**" }
                  ignored:
                    endpoints:
                      - host: %4$s
                        ports: [%1$d, %2$d]
                        protocol: rest
                        enforcement: enforce
                        method_override: ignore
                        rules:
                          - allow: { method: "*", path: "/**" }
                        deny_rules:
                          - { method: DELETE, path: "/repos/**" }
                  read_only:
                    endpoints:
                      - host: %5$s
                        ports: [%1$d, %2$d]
                        protocol: rest
                        enforcement: enforce
                        access: read-only
                        method_override: evaluate
                """.formatted(plain.port(), tls.port(), EVALUATE, IGNORE, READ_ONLY));
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

    private static Curl.Result send(boolean https, String method, String host, String target, List<String> headers,
                                    String body, String... more) throws Exception {
        return L7HardeningIT.Client.of(supervisor, work, plain, tls).send(https, method, host, target, headers, body,
                more);
    }

    @Test
    void evaluateJudgesTheOverridingMethod() throws Exception {
        String form = "Content-Type: application/x-www-form-urlencoded";
        for (boolean https : new boolean[] {false, true}) {
            RawUpstream up = https ? tls : plain;
            up.drain();
            int before = up.count();
            for (List<String> headers : List.of(List.of("X-HTTP-Method-Override: DELETE"),
                    List.of("X-HTTP-Method: delete"), List.of("X-Method-Override: DELETE", form))) {
                JsonObject o = L7EnforcementIT.deniedBeforeUpstream(send(https, "POST", EVALUATE, "/repos/x",
                        headers, headers.size() > 1 ? "a=1" : null), up, before, "rest", "evaluated");
                assertEquals("DELETE /repos/**", o.getString("rule"), "the deny rule judged the overriding method");
            }
            L7EnforcementIT.deniedBeforeUpstream(send(https, "POST", EVALUATE, "/repos/x?_method=DELETE", List.of(),
                    null), up, before, "rest", "evaluated");
            L7EnforcementIT.deniedBeforeUpstream(send(https, "POST", EVALUATE, "/repos/x", List.of(form),
                    "_method=DELETE"), up, before, "rest", "evaluated");
            L7EnforcementIT.deniedBeforeUpstream(send(https, "POST", EVALUATE, "/repos/x", List.of(), null,
                    "-F", "_method=DELETE"), up, before, "rest", "evaluated");
            // the upstream could apply either of two values, or a value that is no method: refused
            L7HardeningIT.refused(send(https, "POST", EVALUATE, "/repos/x?_method=PATCH",
                    List.of("X-HTTP-Method-Override: DELETE"), null), up, before, "method_override_ambiguous");
            L7HardeningIT.refused(send(https, "POST", EVALUATE, "/repos/x", List.of("X-HTTP-Method-Override: DE LETE"),
                    null), up, before, "method_override_ambiguous");
            // an allowed overriding method goes on, with the override as sent
            Curl.Result ok = send(https, "POST", EVALUATE, "/repos/x", List.of("X-HTTP-Method-Override: PATCH"),
                    null);
            assertEquals(200, ok.status(), ok.toString());
            RawUpstream.Received got = up.take();
            assertTrue(got.requestLine().startsWith("POST /repos/x "), got.requestLine());
            assertEquals("PATCH", got.header("x-http-method-override").orElseThrow());
        }
    }

    @Test
    void evaluateAlsoJudgesTheRequestsOwnMethod() throws Exception {
        for (boolean https : new boolean[] {false, true}) {
            RawUpstream up = https ? tls : plain;
            up.drain();
            int before = up.count();
            // an upstream that ignores the override would run a POST on a read-only endpoint
            L7EnforcementIT.deniedBeforeUpstream(send(https, "POST", READ_ONLY, "/repos/x",
                    List.of("X-HTTP-Method-Override: GET"), null), up, before, "rest", "read_only");
            L7EnforcementIT.deniedBeforeUpstream(send(https, "POST", READ_ONLY, "/repos/x?_method=GET", List.of(),
                    null), up, before, "rest", "read_only");
            Curl.Result ok = send(https, "GET", READ_ONLY, "/repos/x?_method=HEAD", List.of(), null);
            assertEquals(200, ok.status(), "both methods pass: " + ok);
            assertTrue(up.take().requestLine().startsWith("GET /repos/x?_method=HEAD "));
        }
    }

    @Test
    void ignoreForwardsTheRequestAsReceived() throws Exception {
        for (boolean https : new boolean[] {false, true}) {
            RawUpstream up = https ? tls : plain;
            up.drain();
            Curl.Result r = send(https, "POST", IGNORE, "/repos/x?_method=DELETE",
                    List.of("X-HTTP-Method-Override: DELETE", "Content-Type: application/x-www-form-urlencoded"),
                    "_method=DELETE");
            assertEquals(200, r.status(), r.toString());
            RawUpstream.Received got = up.take();
            assertTrue(got.requestLine().startsWith("POST /repos/x?_method=DELETE "), got.requestLine());
            assertEquals("_method=DELETE", got.bodyText());
            Curl.Result denied = send(https, "DELETE", IGNORE, "/repos/x", List.of(), null);
            assertEquals(403, denied.status(), "the rules still judge the request's own method: " + denied);
        }
    }

    @Test
    void aWrongValueOrProtocolIsALoadErrorWithItsLocation() throws Exception {
        Path bad = Files.writeString(work.resolve("bad.yaml"), """
                version: 1
                network_policies:
                  api:
                    endpoints:
                      - host: api.example.com
                        port: 443
                        protocol: rest
                        access: read-only
                        method_override: allow
                      - host: rpc.example.com
                        port: 443
                        protocol: json-rpc
                        method_override: evaluate
                        rules: [{ allow: { method: a } }]
                """);
        Image.Run r = Image.run(Image.HOME, "validate", "--policy", bad.toString());
        assertEquals(1, r.exit(), r.out() + r.err());
        String text = r.out() + r.err();
        assertTrue(text.contains("bad.yaml:9:") && text.contains("unknown method_override value 'allow'; expected"
                + " refuse, evaluate or ignore"), text);
        assertTrue(text.contains("bad.yaml:13:") && text.contains("method_override applies to protocol: rest and"
                + " websocket endpoints only"), text);
    }
}
