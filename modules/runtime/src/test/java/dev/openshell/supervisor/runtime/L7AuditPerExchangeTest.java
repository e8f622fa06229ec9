package dev.openshell.supervisor.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import java.io.IOException;
import java.io.StringReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One L7 OCSF event per exchange (issue 41; {@code docs/policy-reference.md}, "L7 policy", "Audit records and
 * metrics"): the decision on a body that goes through a chain and an allowing re-check of the body a stage put in place
 * are one event, which lists the stage ({@code rechecked_after_config_keys}); a re-check that denies is a second event;
 * a stage's denial leaves the decision's event and the stage's; without a stage there is one event. A real supervisor
 * on loopback, in-process, with its audit log; every line about an exchange is written before its response reaches the
 * client, so the lines read after the response are that exchange's.
 */
class L7AuditPerExchangeTest {
    private static final String KEY = "sk-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7cF0iL";

    @TempDir
    Path dir;

    private RecordingUpstream upstream;
    private Supervisor supervisor;
    private Path audit;
    private HttpClient client;

    @BeforeEach
    void setUp() throws IOException {
        upstream = new RecordingUpstream();
        LoopbackSupervisor.writeGateway(dir, "", "redact.test", "plain.test", "keyed.test", "deny.test");
        Files.writeString(dir.resolve("policy.yaml"), """
                version: 1
                network_policies:
                  api:
                    endpoints:
                      - { host: redact.test, port: %1$d, protocol: rest, enforcement: enforce, access: read-write }
                      - { host: plain.test, port: %1$d, protocol: rest, enforcement: enforce, access: read-write }
                      - { host: deny.test, port: %1$d, protocol: rest, enforcement: enforce, access: read-write }
                  keyed:
                    endpoints:
                      - { host: keyed.test, port: %1$d, path: /rpc, protocol: json-rpc, enforcement: enforce,
                          rules: [{ allow: { method: "%2$s" } }] }
                network_middlewares:
                  secrets:
                    middleware: openshell/regex
                    order: 10
                    config: { mode: redact }
                    on_error: fail_closed
                    endpoints: { include: ["redact.test", "keyed.test"] }
                  blocker:
                    middleware: openshell/regex
                    order: 20
                    config: { mode: deny }
                    on_error: fail_closed
                    endpoints: { include: ["deny.test"] }
                """.formatted(upstream.port(), KEY));
        audit = LoopbackSupervisor.audit(dir);
        supervisor = LoopbackSupervisor.start(dir, dir.resolve("policy.yaml"), Optional.empty(), Optional.empty());
        client = LoopbackSupervisor.client(supervisor);
    }

    @AfterEach
    void tearDown() {
        if (supervisor != null) {
            supervisor.close();
        }
        upstream.close();
    }

    /** The response and the audit lines written for its exchange. */
    private record Exchange(HttpResponse<String> response, List<JsonObject> events) {
        List<JsonObject> l7() {
            return events.stream().filter(e -> "l7".equals(openshell(e).getString("layer", ""))).toList();
        }

        List<JsonObject> stage(String configKey) {
            return events.stream().filter(e -> e.getInt("class_uid") == 4002
                    && configKey.equals(openshell(e).getString("config_key", ""))
                    && !openshell(e).containsKey("layer")).toList();
        }
    }

    private static JsonObject openshell(JsonObject e) {
        return e.getJsonObject("unmapped").getJsonObject("openshell");
    }

    private Exchange post(String host, String path, String json) throws Exception {
        int before = Files.readAllLines(audit).size();
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://" + host + ":"
                        + upstream.port() + path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).timeout(Duration.ofSeconds(20)).build(),
                HttpResponse.BodyHandlers.ofString());
        List<String> lines = Files.readAllLines(audit);
        return new Exchange(r, lines.subList(before, lines.size()).stream()
                .map(l -> Json.createReader(new StringReader(l)).readObject()).toList());
    }

    private static List<String> rechecked(JsonObject l7) {
        return openshell(l7).containsKey("rechecked_after_config_keys") ? openshell(l7)
                .getJsonArray("rechecked_after_config_keys").getValuesAs(JsonString::getString) : List.of();
    }

    @Test
    void anAllowingRecheckOfARedactedBodyIsRecordedInTheDecisionsOneEvent() throws Exception {
        Exchange x = post("redact.test", "/v1/chat", "{\"model\":\"m\",\"content\":\"key " + KEY + "\"}");
        assertEquals(200, x.response().statusCode(), x.response().body());
        String forwarded = upstream.hits("/v1/chat").getFirst().body();
        assertFalse(forwarded.contains(KEY), "the stage's replacement is what is forwarded: " + forwarded);
        assertEquals(1, x.l7().size(), "one L7 event for the decision and its allowing re-check: " + x.events());
        JsonObject d = openshell(x.l7().getFirst());
        assertEquals("allow", d.getString("decision"));
        assertFalse(d.containsKey("after_config_key"), d.toString());
        assertEquals(List.of("secrets"), rechecked(x.l7().getFirst()), "the re-check is recorded: " + d);
        assertEquals(1, x.stage("secrets").size(), x.events().toString());
        assertTrue(openshell(x.stage("secrets").getFirst()).getBoolean("transformed"));
    }

    @Test
    void aBodyTheStageLeavesIsOneEventWithoutARecheck() throws Exception {
        Exchange x = post("redact.test", "/v1/chat", "{\"model\":\"m\",\"content\":\"no key\"}");
        assertEquals(200, x.response().statusCode(), x.response().body());
        assertEquals(1, x.l7().size(), x.events().toString());
        assertEquals(List.of(), rechecked(x.l7().getFirst()));
        assertEquals(1, x.stage("secrets").size(), x.events().toString());
    }

    @Test
    void aDenyingRecheckIsASecondEventAfterTheDecisions() throws Exception {
        int before = upstream.hits().size();
        Exchange x = post("keyed.test", "/rpc", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"" + KEY + "\"}");
        assertEquals(403, x.response().statusCode(), x.response().body());
        assertTrue(x.response().body().contains("\"layer\":\"l7\""), x.response().body());
        assertEquals(before, upstream.hits().size(), "nothing forwarded");
        assertEquals(2, x.l7().size(), x.events().toString());
        JsonObject first = openshell(x.l7().get(0));
        JsonObject second = openshell(x.l7().get(1));
        assertEquals("allow", first.getString("decision"));
        assertFalse(first.containsKey("after_config_key"), first.toString());
        assertEquals(List.of(), rechecked(x.l7().get(0)));
        assertEquals("deny", second.getString("decision"));
        assertEquals("secrets", second.getString("after_config_key"));
        assertEquals("Denied", x.l7().get(1).getString("action"));
    }

    @Test
    void aStagesDenialLeavesTheDecisionsEventAndTheStages() throws Exception {
        int before = upstream.hits().size();
        Exchange x = post("deny.test", "/v1/chat", "{\"content\":\"key " + KEY + "\"}");
        assertEquals(403, x.response().statusCode(), x.response().body());
        assertEquals(before, upstream.hits().size(), "nothing forwarded");
        assertEquals(1, x.l7().size(), x.events().toString());
        assertEquals("allow", openshell(x.l7().getFirst()).getString("decision"));
        assertEquals(List.of(), rechecked(x.l7().getFirst()));
        assertEquals(1, x.stage("blocker").size(), x.events().toString());
        assertEquals("denied", openshell(x.stage("blocker").getFirst()).getString("decision"));
    }

    @Test
    void withoutAStageTheDecisionIsOneEvent() throws Exception {
        Exchange x = post("plain.test", "/v1/chat", "{\"content\":\"key " + KEY + "\"}");
        assertEquals(200, x.response().statusCode(), x.response().body());
        assertEquals(1, x.l7().size(), x.events().toString());
        assertEquals("allow", openshell(x.l7().getFirst()).getString("decision"));
        assertEquals(List.of(), rechecked(x.l7().getFirst()));
    }

    /** The decision on the body made with the chain denies before any stage runs, answered as an L7 denial. */
    @Test
    void aDenialOfTheBodyBeforeTheChainIsOneEventAndNoStageRuns() throws Exception {
        int before = upstream.hits().size();
        Exchange x = post("redact.test", "/v1/items", "{\"_method\":\"DELETE\",\"content\":\"" + KEY + "\"}");
        assertEquals(400, x.response().statusCode(), x.response().body());
        assertTrue(x.response().body().contains("\"layer\":\"l7\""), x.response().body());
        assertTrue(x.response().body().contains("\"code\":\"method_override\""), x.response().body());
        assertEquals(before, upstream.hits().size(), "nothing forwarded");
        assertEquals(1, x.l7().size(), x.events().toString());
        assertEquals("deny", openshell(x.l7().getFirst()).getString("decision"));
        assertEquals(List.of(), x.stage("secrets"), "the chain did not run");
    }
}
