package dev.openshell.supervisor.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
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
        String head;
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), supervisor.port())) {
            s.setSoTimeout(20_000);
            s.getOutputStream().write(("GET http://ws.test:" + upstream.port() + "/socket HTTP/1.1\r\n"
                    + "Host: ws.test:" + upstream.port() + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            head = readHead(s.getInputStream());
        }
        assertTrue(head.startsWith("HTTP/1.1 403"), head);
        assertTrue(head.contains("upgrade_uninspectable"), head);
        List<JsonObject> events = Files.readAllLines(audit).stream()
                .map(l -> Json.createReader(new StringReader(l)).readObject()).toList();
        List<JsonObject> refusals = events.stream().filter(e -> "upgrade_uninspectable".equals(e.getJsonObject(
                "unmapped").getJsonObject("openshell").getString("code", ""))).toList();
        assertTrue(refusals.stream().anyMatch(e -> e.toString().contains("\"responses\"")),
                "the refusal is audited and names the config: " + events);
        assertEquals(0, upstream.hits("/socket").size(), "the upstream is never asked");
    }

    /** {@return the response head, through its empty line} */
    private static String readHead(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder();
        while (!b.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                break;
            }
            b.append((char) c);
        }
        // the body of the 403 names its code
        byte[] rest = in.readNBytes(Math.max(0, contentLength(b.toString())));
        return b + new String(rest, StandardCharsets.ISO_8859_1);
    }

    private static int contentLength(String head) {
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                return Integer.parseInt(line.substring(15).strip());
            }
        }
        return 0;
    }
}
