package dev.openshell.supervisor.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * L7 policy follows the serving generation: a reload that widens or narrows an endpoint's rules applies to the next
 * request, on the same keep-alive connection, with nothing of the old rules left (RFC 0009, "Registration and
 * delivery": one request, one generation). A real supervisor on loopback, in-process.
 */
class L7ReloadTest {
    @TempDir
    Path dir;

    private RecordingUpstream upstream;
    private Supervisor supervisor;
    private Path policy;
    private HttpClient client;

    @BeforeEach
    void setUp() throws IOException {
        upstream = new RecordingUpstream();
        LoopbackSupervisor.writeGateway(dir, "", "api.test");
        policy = dir.resolve("policy.yaml");
        writePolicy("access: read-only");
        supervisor = LoopbackSupervisor.start(dir, policy, Optional.empty(), Optional.empty());
        client = LoopbackSupervisor.client(supervisor);
    }

    @AfterEach
    void tearDown() {
        if (supervisor != null) {
            supervisor.close();
        }
        upstream.close();
    }

    private void writePolicy(String l7) throws IOException {
        Path tmp = policy.resolveSibling(".policy.yaml.tmp");
        Files.writeString(tmp, """
                version: 1
                network_policies:
                  api:
                    endpoints:
                      - { host: api.test, port: %d, protocol: rest, enforcement: enforce, %s }
                """.formatted(upstream.port(), l7));
        Files.move(tmp, policy, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private HttpResponse<String> send(String method, String path) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://api.test:" + upstream.port() + path))
                .method(method, method.equals("GET") ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString("{}"))
                .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aReloadChangesWhatTheL7RulesAllowFromTheNextRequest() throws Exception {
        assertEquals(200, send("GET", "/items").statusCode());
        HttpResponse<String> denied = send("POST", "/items");
        assertEquals(403, denied.statusCode(), denied.body());
        assertTrue(denied.body().contains("\"layer\":\"l7\""), denied.body());
        assertEquals(0, upstream.hits().stream().filter(h -> !h.body().isEmpty()).count(),
                "the denied POST never reached the upstream");

        writePolicy("rules: [{ allow: { method: POST, path: \"/items\" } }]");
        assertInstanceOf(ReloadOutcome.Installed.class, supervisor.reload());
        assertEquals(200, send("POST", "/items").statusCode(), "the new rules allow the POST");
        assertEquals(403, send("GET", "/items").statusCode(), "and no longer the GET the old preset allowed");
    }

    @Test
    void theCanonicalPathIsWhatTheUpstreamReceives() throws Exception {
        assertEquals(200, send("GET", "/a/./b//c/%7Ex").statusCode());
        assertEquals(1, upstream.hits("/a/b/c/~x").size(), "forwarded canonical: " + upstream.hits());
    }
}
