package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import openshell.published.v1.MiddlewareSessionEndReason;
import openshell.published.v1.SupervisorMiddlewarePhase;
import openshell.published.v1.WebSocketPreflightAction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * WebSocket message middleware end to end through the image ({@code WEBSOCKET_MESSAGE}; docs/external-middleware.md,
 * "WebSocket messages"): services generated from OpenShell's published proto ({@link SessionService}) serving
 * {@code EvaluateWebSocketSession} in both directions, {@code openshell/regex}, the binary-frame rule, the session
 * cap and the uninspectable-upgrade rule. Real peers on 127.0.0.1 ({@link WsPeers}).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class WebSocketSessionIT {
    @TempDir
    static Path work;

    static WsPeers.Upstream upstream;
    static SessionService main;
    static SessionService ret;
    static SessionService down;
    static SessionService http;
    static StackProcess supervisor;

    @BeforeAll
    static void start() throws Exception {
        upstream = new WsPeers.Upstream();
        main = SessionService.start("ws-main", false);
        ret = SessionService.start("ws-return", true);
        down = SessionService.start("ws-down", false);
        http = SessionService.start("ws-http-only", false, false);
        StringBuilder gateway = new StringBuilder("""
                [openshell.supervisor.network]
                allow_loopback_upstreams = true

                [openshell.supervisor.network.static_hosts]
                """);
        for (String h : List.of("closed", "bin", "ret", "down-closed", "down-open", "regex", "plain", "upg")) {
            gateway.append('"').append(h).append(".test\" = \"127.0.0.1\"\n");
        }
        for (SessionService s : List.of(main, ret, down, http)) {
            gateway.append("""

                    [[openshell.supervisor.middleware]]
                    name = "%s"
                    grpc_endpoint = "http://127.0.0.1:%d"
                    max_payload_bytes = 1048576
                    timeout = "2s"
                    allow_insecure = true
                    """.formatted(s.name, s.port()));
        }
        int p = upstream.port();
        Path gw = Files.writeString(work.resolve("gateway.toml"), gateway.toString());
        Path policy = Files.writeString(work.resolve("policy.yaml"), """
                version: 1
                network_policies:
                  ws:
                    endpoints:
                      - { host: closed.test, port: %1$d }
                      - { host: bin.test, port: %1$d, binary_messages: allow_uninspected }
                      - { host: ret.test, port: %1$d }
                      - { host: down-closed.test, port: %1$d }
                      - { host: down-open.test, port: %1$d }
                      - { host: regex.test, port: %1$d }
                      - { host: plain.test, port: %1$d }
                      - { host: upg.test, port: %1$d, upgrades: allow_uninspected }
                network_middlewares:
                  main:
                    middleware: ws-main
                    order: 10
                    on_error: fail_closed
                    endpoints: { include: [closed.test, bin.test, ret.test] }
                  returning:
                    middleware: ws-return
                    order: 20
                    on_error: fail_closed
                    endpoints: { include: [ret.test] }
                  down-closed:
                    middleware: ws-down
                    order: 30
                    on_error: fail_closed
                    endpoints: { include: [down-closed.test] }
                  down-open:
                    middleware: ws-down
                    order: 40
                    on_error: fail_open
                    endpoints: { include: [down-open.test] }
                  secrets:
                    middleware: openshell/regex
                    order: 50
                    on_error: fail_closed
                    config: { mode: redact }
                    endpoints: { include: [regex.test] }
                  request-only:
                    middleware: ws-http-only
                    order: 60
                    on_error: fail_closed
                    endpoints: { include: [plain.test, upg.test] }
                """.formatted(p));
        supervisor = StackProcess.start(work.resolve("supervisor"), policy, gw, Map.of());
    }

    @AfterAll
    static void stop() throws Exception {
        if (supervisor != null) {
            supervisor.close();
        }
        for (AutoCloseable c : new AutoCloseable[] {main, ret, down, http, upstream}) {
            if (c != null) {
                c.close();
            }
        }
    }

    @BeforeEach
    void clean() {
        for (SessionService s : List.of(main, ret, down, http)) {
            s.reset();
        }
        upstream.heads.clear();
        upstream.frames.clear();
    }

    private WsPeers.Client open(String host, String headers) throws Exception {
        return new WsPeers.Client(supervisor.port(), host, upstream.port(), headers);
    }

    private WsPeers.Client session(String host) throws Exception {
        WsPeers.Client c = open(host, "");
        assertTrue(c.upgraded(), c.response + supervisor.stderr());
        upstream.awaitSession();
        return c;
    }

    private static void assertClosedWith(int code, WsPeers.Frame f) {
        assertEquals(8, f.opcode(), "a close frame");
        assertEquals(code, f.closeCode());
    }

    @Test
    @Order(1)
    void aPublishedProtoServiceRedactsAndDeniesTextMessagesAndHearsOneEnd() throws Exception {
        try (WsPeers.Client c = open("closed.test", "Sec-WebSocket-Extensions: permessage-deflate\r\n"
                + "Sec-WebSocket-Protocol: realtime, chat\r\n")) {
            assertTrue(c.upgraded(), c.response + supervisor.stderr());
            upstream.awaitSession();
            assertFalse(upstream.heads.take().toLowerCase().contains("permessage-deflate"),
                    "permessage-deflate is negotiated away: no compressed message can pass a stage");
            c.send(WsPeers.text("hello", true));
            assertEquals("hello", upstream.next().text());
            // a fragmented message with a control frame between its fragments
            c.send(WsPeers.frame(1, false, "my key is sk-live-".getBytes(StandardCharsets.UTF_8), true));
            c.send(WsPeers.frame(9, true, new byte[0], true));
            c.send(WsPeers.frame(0, true, "0123456789".getBytes(StandardCharsets.UTF_8), true));
            assertEquals(9, upstream.next().opcode(), "the ping is relayed");
            assertEquals("my key is [REDACTED]", upstream.next().text(), "the replacement, as one text frame");
            c.send(WsPeers.text("please DENYME", true));
            assertClosedWith(1008, c.read());
            assertClosedWith(1008, upstream.next());
            assertNull(upstream.frames.poll(500, TimeUnit.MILLISECONDS), "nothing after it: the message never went");
        }
        assertEquals(MiddlewareSessionEndReason.MIDDLEWARE_SESSION_END_REASON_MIDDLEWARE_DENIAL, main.nextEnd());
        assertNull(main.ends.poll(500, TimeUnit.MILLISECONDS), "exactly one session_end");
        assertEquals(1, main.preflights.size(), "one preflight: " + main.preflights);
        var pf = main.preflights.getFirst();
        assertEquals(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS, pf.getPhase());
        assertEquals("closed.test", pf.getTarget().getHost());
        assertEquals("GET", pf.getTarget().getMethod());
        assertEquals(List.of("realtime", "chat"), pf.getRequestedSubprotocolsList());
        assertEquals(List.of(1L, 2L, 3L), main.seen.stream().map(SessionService.Seen::sequence).toList());
        List<JsonObject> events = supervisor.auditEvents();
        assertTrue(events.stream().anyMatch(e -> e.toString().contains("marker_denied")
                        && AuditLog.openshell(e).getString("decision", "").equals("denied")
                        && AuditLog.openshell(e).getString("on_error", "").equals("fail_closed")),
                "the denial is audited with the stage's reason code and its config's on_error");
        assertFalse(supervisor.auditText().contains(SessionService.SECRET), "no payload in the audit log");
    }

    @Test
    @Order(2)
    void aPreflightSkipLeavesTheSessionAloneAndADenyRefusesTheUpgrade() throws Exception {
        main.action = WebSocketPreflightAction.WEB_SOCKET_PREFLIGHT_ACTION_SKIP;
        try (WsPeers.Client c = session("closed.test")) {
            c.send(WsPeers.text("key " + SessionService.SECRET, true));
            assertEquals("key " + SessionService.SECRET, upstream.next().text(), "a skipped stage sees nothing");
            assertEquals(MiddlewareSessionEndReason.MIDDLEWARE_SESSION_END_REASON_STAGE_SKIPPED, main.nextEnd());
        }
        assertTrue(main.seen.isEmpty());
        main.action = WebSocketPreflightAction.WEB_SOCKET_PREFLIGHT_ACTION_DENY;
        upstream.heads.clear();
        try (WsPeers.Client c = open("closed.test", "")) {
            assertTrue(c.response.startsWith("HTTP/1.1 403"), c.response);
            assertTrue(c.response.length() > 0);
        }
        assertNull(upstream.heads.poll(500, TimeUnit.MILLISECONDS), "the upstream is never contacted");
        assertEquals(MiddlewareSessionEndReason.MIDDLEWARE_SESSION_END_REASON_MIDDLEWARE_DENIAL, main.nextEnd());
    }

    @Test
    @Order(3)
    void everySessionEndsWithItsReason() throws Exception {
        try (WsPeers.Client c = session("closed.test")) {
            c.send(WsPeers.frame(8, true, new byte[] {0x03, (byte) 0xE8}, true));
            assertEquals(8, upstream.next().opcode());
        }
        assertEquals(MiddlewareSessionEndReason.MIDDLEWARE_SESSION_END_REASON_NORMAL, main.nextEnd());
        WsPeers.Client gone = session("closed.test");
        gone.close();
        assertEquals(MiddlewareSessionEndReason.MIDDLEWARE_SESSION_END_REASON_DOWNSTREAM_DISCONNECT, main.nextEnd());
        try (WsPeers.Client c = session("closed.test")) {
            upstream.disconnect();
            // the upstream left without a close frame: the client gets the proxy's 1001 (never 1006 on the wire,
            // RFC 6455 section 7.4.1), then its connection ends
            assertClosedWith(1001, c.read());
            assertEquals(-1, c.read().opcode(), "the client's connection ends");
        }
        assertEquals(MiddlewareSessionEndReason.MIDDLEWARE_SESSION_END_REASON_UPSTREAM_DISCONNECT, main.nextEnd());
    }

    @Test
    @Order(4)
    void aBinaryMessageIsRefusedUnderFailClosedAndPassesWithTheOptIn() throws Exception {
        byte[] binary = {1, 2, 3, 4};
        try (WsPeers.Client c = session("closed.test")) {
            c.send(WsPeers.frame(2, true, binary, true));
            assertClosedWith(1008, c.read());
            assertClosedWith(1008, upstream.next());
        }
        try (WsPeers.Client c = session("bin.test")) {
            c.send(WsPeers.frame(2, true, binary, true));
            WsPeers.Frame f = upstream.next();
            assertEquals(2, f.opcode());
            assertArrayEquals(binary, f.payload());
        }
        // the audit writer runs on its own thread: the events are awaited, not assumed written
        assertTrue(auditSoon("websocket_binary_refused"), "refusal recorded");
        assertTrue(auditSoon("websocket_binary_uninspected"), "coverage recorded");
    }

    /** {@return whether the audit log holds {@code text} within 10 s} */
    private static boolean auditSoon(String text) throws Exception {
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < deadline) {
            if (supervisor.auditText().contains(text)) {
                return true;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(java.time.Duration.ofMillis(5).toNanos());
        }
        return false;
    }

    @Test
    @Order(5)
    void theReturnPathIsRedactedAndDeniedByTheStageThatAdvertisesIt() throws Exception {
        try (WsPeers.Client c = session("ret.test")) {
            upstream.send(WsPeers.text("back " + SessionService.SECRET, false));
            assertEquals("back [REDACTED]", c.read().text());
            upstream.send(WsPeers.text("DENYME now", false));
            assertClosedWith(1008, c.read());
            assertClosedWith(1008, upstream.next());
        }
        assertTrue(ret.preflights.stream().anyMatch(p -> p.getPhase()
                == SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_RETURN));
        assertTrue(main.preflights.stream().noneMatch(p -> p.getPhase()
                == SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_RETURN),
                "a service without the binding is never sent a return-path event");
        assertTrue(main.seen.stream().noneMatch(s -> s.text().startsWith("back")));
    }

    @Test
    @Order(6)
    void bothDirectionsInterleaveAndKeepTheirOrder() throws Exception {
        int n = 40;
        try (WsPeers.Client c = session("ret.test")) {
            Thread up = Thread.ofVirtual().start(() -> {
                try {
                    for (int i = 1; i <= n; i++) {
                        upstream.send(WsPeers.text("u" + i, false));
                    }
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            for (int i = 1; i <= n; i++) {
                c.send(WsPeers.text("c" + i, true));
            }
            List<String> toClient = new ArrayList<>();
            for (int i = 1; i <= n; i++) {
                toClient.add(c.read().text());
            }
            List<String> toUpstream = new ArrayList<>();
            for (int i = 1; i <= n; i++) {
                toUpstream.add(upstream.next().text());
            }
            up.join();
            for (int i = 1; i <= n; i++) {
                assertEquals("u" + i, toClient.get(i - 1));
                assertEquals("c" + i, toUpstream.get(i - 1));
            }
        }
        List<Long> seqs = ret.seen.stream().map(SessionService.Seen::sequence).toList();
        assertEquals(2 * n, seqs.size());
        assertEquals(seqs.stream().distinct().count(), seqs.size(), "sequence numbers are session-wide");
    }

    @Test
    @Order(7)
    void openshellRegexRedactsAFragmentedSecretAndACompressedFrameCannotPass() throws Exception {
        String key = InspectionIntegrityIT.OPENAI;
        try (WsPeers.Client c = session("regex.test")) {
            String msg = "{\"type\":\"input\",\"text\":\"" + key + "\"}";
            byte[] b = msg.getBytes(StandardCharsets.UTF_8);
            int half = 30;
            c.send(WsPeers.frame(1, false, java.util.Arrays.copyOfRange(b, 0, half), true));
            c.send(WsPeers.frame(0, true, java.util.Arrays.copyOfRange(b, half, b.length), true));
            String got = upstream.next().text();
            assertFalse(got.contains(key), got);
            assertTrue(got.contains("[REDACTED:"), got);
        }
        try (WsPeers.Client c = session("regex.test")) {
            byte[] f = WsPeers.text("compressed " + key, true);
            f[0] |= 0x40; // RSV1: a permessage-deflate message, which was never negotiated
            c.send(f);
            assertClosedWith(1002, c.read());
            assertClosedWith(1002, upstream.next());
        }
        upstream.extra101 = "Sec-WebSocket-Extensions: permessage-deflate\r\n";
        try (WsPeers.Client c = open("regex.test", "Sec-WebSocket-Extensions: permessage-deflate\r\n")) {
            assertTrue(c.response.startsWith("HTTP/1.1 502 "), "an extension the upstream accepted but was never"
                    + " offered to it (RFC 6455 section 4.1): " + c.response);
        } finally {
            upstream.extra101 = "";
        }
    }

    /**
     * Attacker pass 8: on a session whose messages go only through the message chain, the proxy's own closes are
     * refusal events (P8-3: 1007 and 1009 were not recorded), and the message stage's records carry the config's
     * {@code on_error} and what it did (P8-4: {@code fail_open} was written for a {@code fail_closed} config).
     */
    @Test
    @Order(7)
    void aChainOnlySessionRecordsTheProxysClosesAndTheStagesRealSettings() throws Exception {
        try (WsPeers.Client c = session("regex.test")) {
            c.send(WsPeers.text("key " + InspectionIntegrityIT.OPENAI, true));
            assertTrue(upstream.next().text().contains("[REDACTED:"));
            c.send(WsPeers.frame(1, true, new byte[] {(byte) 0xFF, (byte) 0xFE, 'x'}, true));
            assertClosedWith(1007, c.read());
        }
        try (WsPeers.Client c = session("regex.test")) {
            java.io.ByteArrayOutputStream frames = new java.io.ByteArrayOutputStream();
            frames.writeBytes(WsPeers.frame(1, false, new byte[] {'a'}, true));
            for (int i = 0; i < 4096; i++) {
                frames.writeBytes(WsPeers.frame(0, false, new byte[] {'a'}, true));
            }
            c.send(frames.toByteArray());
            assertClosedWith(1009, c.read());
        }
        List<JsonObject> events = supervisor.auditEvents();
        List<JsonObject> stage = events.stream().filter(e -> AuditLog.openshell(e).getString("config_key", "")
                .equals("secrets") && e.getInt("class_uid") == 4002).toList();
        assertFalse(stage.isEmpty(), "the message stage's records");
        assertTrue(stage.stream().allMatch(e -> AuditLog.openshell(e).getString("on_error").equals("fail_closed")),
                "on_error is the config's own: " + stage);
        assertTrue(stage.stream().anyMatch(e -> AuditLog.openshell(e).getBoolean("transformed")
                && AuditLog.openshell(e).getString("decision").equals("allowed")), "the redaction: allowed, transformed");
        List<JsonObject> closes = events.stream().filter(e -> AuditLog.openshell(e).getString("code", "")
                .equals("websocket_protocol_error")).toList();
        for (String cause : List.of("invalid_payload", "message_too_big")) {
            assertEquals(1, closes.stream().filter(e -> AuditLog.openshell(e).getString("cause").equals(cause))
                    .count(), "one refusal per close: " + closes);
        }
        assertTrue(closes.stream().allMatch(e -> AuditLog.openshell(e).getString("category").equals("framing")
                && e.getString("action").equals("Denied")));
    }

    @Test
    @Order(8)
    void aRequestOnlyFailClosedConfigRefusesTheUpgradeUnlessTheEndpointOptsIn() throws Exception {
        try (WsPeers.Client c = open("plain.test", "")) {
            assertTrue(c.response.startsWith("HTTP/1.1 403"), c.response);
        }
        try (WsPeers.Client c = session("upg.test")) {
            c.send(WsPeers.frame(2, true, new byte[] {9}, true));
            assertEquals(2, upstream.next().opcode(), "an uninspected upgrade relays everything");
        }
        assertTrue(supervisor.auditText().contains("upgrade_uninspectable"), "coverage recorded");
        List<String> warnings = supervisor.stderr().lines().filter(l -> l.contains("will be refused")).toList();
        assertEquals(1, warnings.size(), "one load warning, where the operator can act: " + warnings);
        assertTrue(warnings.getFirst().contains("network_middlewares.request-only.endpoints")
                && warnings.getFirst().contains("plain.test"), warnings.getFirst());
    }

    /** An upgrade from another loopback address (another client of the supervisor). */
    private WsPeers.Client sessionFrom(String address) throws Exception {
        WsPeers.Client c = new WsPeers.Client(supervisor.port(), "closed.test", upstream.port(), "", address);
        assertTrue(c.upgraded(), c.response + supervisor.stderr());
        upstream.awaitSession();
        return c;
    }

    /**
     * Session slots are shared fairly: one client address holds at most its share (16 of 32; an identified process
     * holding them takes none beyond it), its next upgrade is refused 429 and audited while other addresses still get slots; the
     * 33rd session at once is refused 503 whoever asks.
     */
    @Test
    @Order(9)
    void oneClientCannotTakeEverySessionSlotAndTheThirtyThirdIsRefused() throws Exception {
        List<WsPeers.Client> open = new ArrayList<>();
        String refused;
        try {
            while (true) {
                WsPeers.Client c = open("closed.test", "");
                if (!c.upgraded()) {
                    refused = c.response;
                    c.close();
                    break;
                }
                upstream.awaitSession();
                open.add(c);
                assertTrue(open.size() <= 16, "one address took more than its share");
            }
            assertTrue(refused.startsWith("HTTP/1.1 429"), refused);
            // identified or not, the process holding the share takes none beyond it (that is for its address's
            // other processes): process_session_limit when identified, client_session_limit when not (audited below)
            assertEquals(16, open.size(), "the address's share");
            int first = open.size();
            for (int i = first; i < 32; i++) { // other clients, 8 sessions each: 127.0.0.2, 127.0.0.3
                open.add(sessionFrom("127.0.0." + (2 + (i - first) / 8)));
            }
            try (WsPeers.Client c = new WsPeers.Client(supervisor.port(), "closed.test", upstream.port(), "",
                    "127.0.0.9")) {
                assertTrue(c.response.startsWith("HTTP/1.1 503"), c.response); // session_capacity: audited below
            }
        } finally {
            for (WsPeers.Client c : open) {
                c.close();
            }
        }
        String audit = supervisor.auditText();
        assertTrue(audit.contains("session_capacity"));
        assertTrue(audit.contains("process_session_limit") || audit.contains("client_session_limit"),
                "the refusal audited");
        assertTrue(supervisor.metrics().contains("_session_limit\""), "counted in supervisor_refused_total");
        for (int i = 0; i < 32; i++) {
            main.nextEnd();
        }
        upstream.frames.clear();
        try (WsPeers.Client c = session("closed.test")) {
            c.send(WsPeers.text("after", true));
            assertEquals("after", upstream.nextText(), "slots are freed when sessions end");
        }
    }

    @Test
    @Order(12)
    void aServiceThatIsDownRefusesUnderFailClosedAndIsBypassedUnderFailOpen() throws Exception {
        down.close();
        try (WsPeers.Client c = open("down-closed.test", "")) {
            assertTrue(c.response.startsWith("HTTP/1.1 403"), c.response);
        }
        try (WsPeers.Client c = session("down-open.test")) {
            c.send(WsPeers.text("through", true));
            assertEquals("through", upstream.next().text());
        }
        assertTrue(supervisor.auditEvents().stream().anyMatch(e -> e.toString().contains("\"bypass\"")),
                "the bypass is a finding");
    }

    @Test
    @Order(10)
    void aPolicyReloadEndsAnOpenSession() throws Exception {
        try (WsPeers.Client c = session("closed.test")) {
            c.send(WsPeers.text("before", true));
            assertEquals("before", upstream.next().text());
            Path policy = work.resolve("policy.yaml");
            Files.writeString(policy, Files.readString(policy).replace("order: 60", "order: 61"));
            supervisor.awaitLog("policy reloaded from", java.time.Duration.ofSeconds(30));
            c.send(WsPeers.text("after", true));
            assertClosedWith(1008, c.read());
            assertClosedWith(1008, upstream.next());
        }
        assertTrue(supervisor.auditEvents().stream().anyMatch(e -> AuditLog.openshell(e).getString("code", "")
                .equals("websocket_policy_reloaded")), "the reload's close is a refusal event");
        // an earlier test's session may report its end late: this session's end is the POLICY_RELOAD among them
        List<MiddlewareSessionEndReason> heard = new ArrayList<>();
        while (!heard.contains(MiddlewareSessionEndReason.MIDDLEWARE_SESSION_END_REASON_POLICY_RELOAD)) {
            heard.add(main.nextEnd());
        }
    }
}
