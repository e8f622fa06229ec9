package dev.openshell.supervisor.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A WebSocket upgrade to a host only a response stage selects (attacker pass 15b, P17b-3): a response stage never
 * reads the bytes after a {@code 101}, so under {@code fail_closed} the upgrade is refused 403
 * {@code upgrade_uninspectable}, and the refusal is audited like any other (the uninspectable event naming the
 * config, and the stage's record). Before, the audit step asked the empty request chain for its verdict, which threw:
 * the refusal went unaudited. A real supervisor on loopback, in-process, with its audit log.
 */
class UninspectableUpgradeAuditTest {
    @TempDir
    Path dir;

    private RecordingUpstream upstream;
    private Supervisor supervisor;
    private Path audit;

    @BeforeEach
    void setUp() throws IOException {
        upstream = new RecordingUpstream();
        LoopbackSupervisor.writeGateway(dir, "", "ws.test");
        Files.writeString(dir.resolve("policy.yaml"), """
                version: 1
                network_policies:
                  ws:
                    endpoints:
                      - { host: ws.test, port: %1$d }
                network_middlewares:
                  responses:
                    middleware: openshell/regex-response
                    order: 10
                    config: { mode: deny }
                    on_error: fail_closed
                    endpoints: { include: ["ws.test"] }
                """.formatted(upstream.port()));
        audit = LoopbackSupervisor.audit(dir);
        supervisor = LoopbackSupervisor.start(dir, dir.resolve("policy.yaml"), Optional.empty(), Optional.empty());
    }

    @AfterEach
    void tearDown() {
        if (supervisor != null) {
            supervisor.close();
        }
        upstream.close();
    }

    @Test
    void anUpgradeOnlyAResponseStageSelectsIsRefusedAndAudited() throws Exception {
        RawHttp.Response r;
        try (RawHttp c = new RawHttp(supervisor.port())) {
            c.send("GET http://ws.test:" + upstream.port() + "/socket HTTP/1.1\r\nHost: ws.test:" + upstream.port()
                    + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    + "Sec-WebSocket-Version: 13\r\n\r\n");
            r = c.read();
        }
        assertEquals(403, r.status(), r.head());
        assertTrue(r.body().contains("upgrade_uninspectable"), r.body());
        List<JsonObject> events = Files.readAllLines(audit).stream()
                .map(l -> Json.createReader(new StringReader(l)).readObject()).toList();
        List<JsonObject> refusals = events.stream().filter(e -> "upgrade_uninspectable".equals(e.getJsonObject(
                "unmapped").getJsonObject("openshell").getString("code", ""))).toList();
        assertTrue(refusals.stream().anyMatch(e -> e.toString().contains("\"responses\"")),
                "the refusal is audited and names the config: " + events);
        assertEquals(0, upstream.hits("/socket").size(), "the upstream is never asked");
    }
}
