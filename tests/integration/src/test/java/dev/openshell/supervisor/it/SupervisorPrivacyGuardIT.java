package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import java.io.StringReader;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The supervisor and Privacy Guard as separate processes from the runtime image, a loopback upstream that records
 * what it receives, and agent-like requests through the supervisor (issue 6, "Done when").
 *
 * <p>Policy: on {@code chat.test}, {@code openshell/regex} (order 10) then Privacy Guard (order 20,
 * {@code fail_closed}); on {@code open.test}, Privacy Guard alone, {@code fail_open}; on {@code big.test}, Privacy
 * Guard alone, {@code fail_closed}. The registration's timeout is 10 s.
 */
class SupervisorPrivacyGuardIT {
    static final String FAKE_KEY = "sk-proj-" + "IT0123456789abcdefghijklmnopqrstuvwxyzABCDEF";
    private static final String PLACEHOLDER = "image upload is disabled for this model";

    @TempDir
    static Path work;

    private static Upstream upstream;
    private static PrivacyGuardProcess guard;
    private static int guardPort;
    private static StackProcess supervisor;

    @BeforeAll
    static void start() throws Exception {
        upstream = Upstream.start();
        guard = PrivacyGuardProcess.start(0);
        guardPort = guard.port();
        Path gateway = Files.writeString(work.resolve("gateway.toml"), """
                [openshell.supervisor.network]
                allow_loopback_upstreams = true

                [openshell.supervisor.network.static_hosts]
                "chat.test" = "127.0.0.1"
                "open.test" = "127.0.0.1"
                "big.test" = "127.0.0.1"

                [[openshell.supervisor.middleware]]
                name = "privacy-guard"
                grpc_endpoint = "http://127.0.0.1:%d"
                max_body_bytes = 4194304
                timeout = "10s"
                allow_insecure = true
                """.formatted(guardPort));
        supervisor = StackProcess.start(work.resolve("supervisor"), policy(work, upstream.port()), gateway,
                Map.of());
    }

    static Path policy(Path dir, int upstreamPort) throws Exception {
        return Files.writeString(dir.resolve("policy.yaml"), """
                version: 1
                network_policies:
                  model_api:
                    endpoints:
                      - { host: chat.test, port: %1$d }
                      - { host: open.test, port: %1$d }
                      - { host: big.test, port: %1$d }
                network_middlewares:
                  secrets:
                    middleware: openshell/regex
                    order: 10
                    config: { mode: redact }
                    endpoints: { include: [chat.test] }
                  privacy:
                    middleware: examples/privacy-guard
                    order: 20
                    config: { images: redact, pii: redact }
                    on_error: fail_closed
                    endpoints: { include: [chat.test] }
                  privacy-open:
                    middleware: examples/privacy-guard
                    order: 30
                    on_error: fail_open
                    endpoints: { include: [open.test] }
                  privacy-big:
                    middleware: examples/privacy-guard
                    order: 40
                    endpoints: { include: [big.test] }
                """.formatted(upstreamPort));
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable c : new AutoCloseable[] {supervisor, guard, upstream}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                // keep closing the rest
            }
        }
    }

    private static String chatUrl() {
        return "http://chat.test:" + upstream.port() + "/v1/chat/completions";
    }

    private static JsonObject parse(String json) {
        try (JsonReader r = Json.createReader(new StringReader(json))) {
            return r.readObject();
        }
    }

    /** {@return the audit details of one request, in order} */
    private static List<JsonObject> requestEvents(String requestId) throws Exception {
        return supervisor.auditDetails().stream().filter(d -> requestId.equals(d.getString("request_id", "")))
                .toList();
    }

    /** {@return the request ID of the last stage event of {@code configKey}} */
    private static String lastRequestOf(String configKey) throws Exception {
        List<JsonObject> stages = supervisor.auditDetails().stream()
                .filter(d -> configKey.equals(d.getString("config_key", "")) && d.containsKey("decision")).toList();
        assertFalse(stages.isEmpty(), "no audit event for " + configKey);
        return stages.get(stages.size() - 1).getString("request_id");
    }

    private static Map<String, Integer> findings(List<JsonObject> events, String configKey) {
        Map<String, Integer> m = new TreeMap<>();
        events.stream().filter(d -> configKey.equals(d.getString("config_key", "")) && d.containsKey("finding_type"))
                .forEach(d -> m.put(d.getString("finding_type"), d.getInt("count")));
        return m;
    }

    private static Optional<JsonObject> stage(List<JsonObject> events, String configKey) {
        return events.stream().filter(d -> configKey.equals(d.getString("config_key", ""))
                && d.containsKey("transformed")).findFirst();
    }

    @Test
    void anImageAndAnEmailAddressReachTheUpstreamReplacedAndRedactedAndTheDecisionIsAudited() throws Exception {
        HttpResponse<String> r = supervisor.postJson(chatUrl(), PrivacyGuardIT.CHAT);
        assertEquals(200, r.statusCode(), r.body());

        Upstream.Received got = upstream.take();
        String body = got.text();
        assertFalse(body.contains("jane.doe@corp.example"), body);
        assertFalse(body.contains("base64") || body.contains("image_url"), body);
        JsonArray parts = parse(body).getJsonArray("messages").getJsonObject(0).getJsonArray("content");
        assertEquals("Describe this for [email], or call [phone].", parts.getJsonObject(0).getString("text"));
        assertEquals(Json.createObjectBuilder().add("type", "text").add("text", PLACEHOLDER).build(),
                parts.getJsonObject(1));
        assertEquals("redacted", got.header("x-openshell-middleware-privacy-guard"));
        assertEquals(String.valueOf(got.body().length), got.header("content-length"),
                "the replaced body is framed by its own length");

        List<JsonObject> events = requestEvents(lastRequestOf("privacy"));
        JsonObject decision = stage(events, "privacy").orElseThrow();
        assertEquals("examples/privacy-guard", decision.getString("binding_id"));
        assertEquals("allowed", decision.getString("decision"));
        assertTrue(decision.getBoolean("transformed"));
        assertEquals("privacy_redacted", decision.getString("code"));
        assertEquals(Map.of("content.image", 1, "pii.email", 1, "pii.phone", 1), findings(events, "privacy"));

        String metrics = supervisor.metrics();
        assertTrue(metrics.contains("supervisor_stage_invocations_total{binding_id=\"examples/privacy-guard\","
                + "config_key=\"privacy\",decision=\"allowed\"}"), metrics);
        assertFalse(metrics.contains("privacy_redacted"), "a redaction is not a failure: " + metrics);
    }

    @Test
    void theLaterStageSeesTheEarlierStagesBody() throws Exception {
        String chat = """
                {"model":"gpt-4o","messages":[{"role":"user","content":"Deploy with %s and mail ops@corp.example"}]}\
                """.formatted(FAKE_KEY);
        HttpResponse<String> r = supervisor.postJson(chatUrl(), chat);
        assertEquals(200, r.statusCode(), r.body());

        String body = upstream.take().text();
        // Privacy Guard redacts no API keys: had it seen the sandbox's body rather than openshell/regex's, or had
        // its answer been dropped, one of the two values would be here
        assertEquals("Deploy with [REDACTED:openai_api_key] and mail [email]",
                parse(body).getJsonArray("messages").getJsonObject(0).getString("content"), body);

        List<JsonObject> events = requestEvents(lastRequestOf("privacy"));
        assertTrue(stage(events, "secrets").orElseThrow().getBoolean("transformed"));
        assertTrue(stage(events, "privacy").orElseThrow().getBoolean("transformed"));
        assertEquals(Map.of("secret.openai_api_key", 1), findings(events, "secrets"));
        assertEquals(Map.of("pii.email", 1), findings(events, "privacy"));
    }

    @Test
    void aFourMebibyteBodyRoundTripsThroughTheSupervisorAndTheServiceWithinTheDeadline() throws Exception {
        StringBuilder b = new StringBuilder("{\"messages\":[{\"role\":\"user\",\"content\":\"");
        String filler = "Lorem ipsum dolor sit amet, contact ops@corp.example. ";
        int addresses = 0;
        while (b.length() + filler.length() + 8 <= 4 * 1024 * 1024) {
            b.append(filler);
            addresses++;
        }
        String body = b.append("\"}]}").toString();
        assertTrue(body.length() > 4 * 1024 * 1024 - 64 && body.length() <= 4 * 1024 * 1024);

        HttpResponse<String> r = supervisor.postJson("http://big.test:" + upstream.port() + "/v1/chat", body);
        assertEquals(200, r.statusCode(), r.body());
        Upstream.Received got = upstream.take();
        assertFalse(got.text().contains("ops@corp.example"));
        assertEquals(addresses, got.text().split("\\[email\\]", -1).length - 1);
        assertEquals(Map.of("pii.email", addresses), findings(requestEvents(lastRequestOf("privacy-big")),
                "privacy-big"));
    }

    @Test
    void aStoppedServiceFollowsOnErrorAndTheRetryLoopPicksItUpWithoutASupervisorRestart() throws Exception {
        guard.close();
        try {
            HttpResponse<String> closed = supervisor.postJson(chatUrl(), PrivacyGuardIT.CHAT);
            assertEquals(403, closed.statusCode(), closed.body());
            JsonObject deny = StackProcess.json(closed);
            assertEquals("middleware_failed", deny.getString("error"));
            assertEquals("privacy", deny.getString("config_key"));
            assertEquals("service_unavailable", deny.getString("reason_code"));
            assertTrue(upstream.nothingReceived());

            HttpResponse<String> open = supervisor.postJson("http://open.test:" + upstream.port() + "/v1/chat",
                    PrivacyGuardIT.CHAT);
            assertEquals(200, open.statusCode(), open.body());
            assertEquals(PrivacyGuardIT.CHAT, upstream.take().text(), "fail_open: relayed without the stage");
            JsonObject bypass = requestEvents(lastRequestOf("privacy-open")).stream()
                    .filter(d -> "bypass".equals(d.getString("decision", ""))).findFirst().orElseThrow();
            assertEquals("service_unavailable", bypass.getString("code"));

            supervisor.awaitLog("middleware service 'privacy-guard' unavailable", Duration.ofSeconds(30));
            assertTrue(supervisor.metrics().contains("supervisor_external_service_up{service=\"privacy-guard\"} 0.0"));
        } finally {
            guard = PrivacyGuardProcess.start(guardPort);
        }
        supervisor.awaitLog("middleware service 'privacy-guard' recovered after \\d+ probe", Duration.ofSeconds(90));
        assertTrue(supervisor.metrics().contains("supervisor_external_service_up{service=\"privacy-guard\"} 1.0"));

        HttpResponse<String> again = supervisor.postJson(chatUrl(), PrivacyGuardIT.CHAT);
        assertEquals(200, again.statusCode(), again.body());
        assertFalse(upstream.take().text().contains("jane.doe@corp.example"));
        assertEquals(1, supervisor.stdout().split("supervisor listening on", -1).length - 1,
                "the same supervisor process served throughout");
    }

    @Test
    void aMutualTlsRegistrationCarriesTheChain() throws Exception {
        Path dir = Files.createTempDirectory(work, "mtls");
        TestPki.Issued ca = TestPki.ca(dir, "ca");
        TestPki.Issued server = TestPki.leaf(dir, "server", ca);
        TestPki.Issued clientCa = TestPki.ca(dir, "client-ca");
        TestPki.Issued client = TestPki.leaf(dir, "supervisor", clientCa);
        try (PrivacyGuardProcess tls = PrivacyGuardProcess.start(0, "--tls-cert", server.certFile().toString(),
                "--tls-key", server.keyFile().toString(), "--client-ca", clientCa.certFile().toString())) {
            Path gateway = Files.writeString(dir.resolve("gateway.toml"), """
                    [openshell.supervisor.network]
                    allow_loopback_upstreams = true

                    [openshell.supervisor.network.static_hosts]
                    "chat.test" = "127.0.0.1"
                    "open.test" = "127.0.0.1"

                    [[openshell.supervisor.middleware]]
                    name = "privacy-guard"
                    grpc_endpoint = "https://127.0.0.1:%d"
                    max_body_bytes = 4194304
                    timeout = "5s"
                    tls_ca_bundle = "%s"
                    tls_client_cert = "%s"
                    tls_client_key = "%s"
                    """.formatted(tls.port(), ca.certFile(), client.certFile(), client.keyFile()));
            try (StackProcess s = StackProcess.start(dir.resolve("supervisor"), policy(dir,
                    upstream.port()), gateway, Map.of())) {
                HttpResponse<String> r = s.postJson(chatUrl(), PrivacyGuardIT.CHAT);
                assertEquals(200, r.statusCode(), r.body());
                String body = upstream.take().text();
                assertFalse(body.contains("jane.doe@corp.example") || body.contains("base64"), body);
                assertTrue(body.contains(PLACEHOLDER), body);
                assertFalse(s.stderr().contains("INSECURE"), "no plaintext warning for a TLS registration");
                assertTrue(s.auditDetails().stream().noneMatch(d -> "insecure_registration".equals(
                        d.getString("change", ""))));
            }
        }
    }
}
