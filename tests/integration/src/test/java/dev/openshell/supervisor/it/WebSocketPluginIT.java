package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * WebSocket messages through an in-process plugin in the image (a pinned drop-in JAR,
 * {@code tests/fixture-plugins/message-marker}): the plugin replaces a marker in a fragmented message, denies another
 * (1008 toward both peers, the upstream never sees it), is asked once per session at preflight, sees increasing
 * sequence numbers and exactly one session end with its reason; its preflight SKIP leaves the session alone and its
 * DENY refuses the upgrade before the upstream is contacted. The plugin logs what it was called with to a file its
 * config names.
 */
class WebSocketPluginIT {
    @TempDir
    static Path work;

    static WsPeers.Upstream upstream;
    static StackProcess supervisor;
    static Path log;

    @BeforeAll
    static void start() throws Exception {
        upstream = new WsPeers.Upstream();
        log = work.resolve("marker.log");
        Path plugins = Files.createDirectories(work.resolve("supervisor").resolve("plugins"));
        Path jar = Files.copy(Image.plugin("fixture-message-marker"), plugins.resolve("fixture-message-marker.jar"));
        Path gateway = Files.writeString(work.resolve("gateway.toml"), """
                [openshell.supervisor.network]
                allow_loopback_upstreams = true

                [openshell.supervisor.network.static_hosts]
                "marked.test" = "127.0.0.1"
                """ + Image.pins(jar));
        Path policy = Files.writeString(work.resolve("policy.yaml"), """
                version: 1
                network_policies:
                  ws:
                    endpoints:
                      - { host: marked.test, port: %d }
                network_middlewares:
                  marker:
                    middleware: fixture/message-marker
                    on_error: fail_closed
                    config: { log: "%s" }
                    endpoints: { include: [marked.test] }
                """.formatted(upstream.port(), log));
        supervisor = StackProcess.start(work.resolve("supervisor"), policy, gateway, Map.of());
    }

    @AfterAll
    static void stop() throws Exception {
        if (supervisor != null) {
            supervisor.close();
        }
        if (upstream != null) {
            upstream.close();
        }
    }

    @BeforeEach
    void clean() throws IOException {
        Files.deleteIfExists(log);
        upstream.heads.clear();
        upstream.frames.clear();
    }

    private WsPeers.Client open(String headers) throws Exception {
        return new WsPeers.Client(supervisor.port(), "marked.test", upstream.port(), headers);
    }

    /** {@return the plugin's log lines once {@code done} holds for them; fails after 10 s} */
    private static List<String> logOnce(Predicate<List<String>> done) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        List<String> lines = List.of();
        while (System.nanoTime() < deadline) {
            lines = Files.exists(log) ? Files.readAllLines(log, StandardCharsets.UTF_8) : List.of();
            if (done.test(lines)) {
                return lines;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(5).toNanos()); // poll the file
        }
        throw new AssertionError("the plugin's log never reached the expected state: " + lines);
    }

    @Test
    void anInProcessPluginRedactsAFragmentedMessageDeniesAnotherAndHearsOneEnd() throws Exception {
        try (WsPeers.Client c = open("")) {
            assertTrue(c.upgraded(), c.response + supervisor.stderr());
            upstream.awaitSession();
            c.send(WsPeers.text("hello", true));
            assertEquals("hello", upstream.next().text());
            c.send(WsPeers.frame(1, false, "a MAR".getBytes(StandardCharsets.UTF_8), true));
            c.send(WsPeers.frame(9, true, new byte[0], true));
            c.send(WsPeers.frame(0, true, "KER here".getBytes(StandardCharsets.UTF_8), true));
            assertEquals(9, upstream.next().opcode(), "the ping is relayed");
            assertEquals("a [MARKED] here", upstream.next().text(), "the plugin saw the whole message");
            c.send(WsPeers.text("please DENYME", true));
            assertEquals(1008, c.read().closeCode());
            assertEquals(1008, upstream.next().closeCode());
            assertNull(upstream.frames.poll(300, TimeUnit.MILLISECONDS), "the denied message never went");
        }
        List<String> lines = logOnce(l -> l.stream().anyMatch(s -> s.startsWith("end ")));
        assertEquals(List.of("preflight marked.test", "message 1", "message 2", "message 3", "end MIDDLEWARE_DENIAL"),
                lines);
        assertTrue(supervisor.auditText().contains("marker_denied"), "the denial is audited with its code");
    }

    @Test
    void thePluginsPreflightSkipLeavesTheSessionAloneAndItsDenyRefusesTheUpgrade() throws Exception {
        try (WsPeers.Client c = open("Sec-WebSocket-Protocol: skip-me\r\n")) {
            assertTrue(c.upgraded(), c.response + supervisor.stderr());
            upstream.awaitSession();
            c.send(WsPeers.text("a MARKER", true));
            assertEquals("a MARKER", upstream.next().text(), "a skipped stage sees nothing");
        }
        assertEquals(List.of("preflight marked.test", "end STAGE_SKIPPED"),
                logOnce(l -> l.stream().anyMatch(s -> s.startsWith("end "))));
        Files.deleteIfExists(log);
        upstream.heads.clear();
        try (WsPeers.Client c = open("Sec-WebSocket-Protocol: deny-me\r\n")) {
            assertTrue(c.response.startsWith("HTTP/1.1 403"), c.response);
        }
        assertNull(upstream.heads.poll(300, TimeUnit.MILLISECONDS), "the upstream is never contacted");
    }
}
