package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Plain-HTTP forwarding through a real proxy to a real upstream on loopback, with raw bytes on both sides. */
class ForwardProxyTest extends SharedProxy {
    @BeforeEach
    void reset() {
        fx.hook.forwardUnchained();
        fx.hook.uninspectable.clear();
        fx.upstream.reset();
    }

    @Test
    void unselectedRequestIsForwardedByteIdentical() throws Exception {
        String fields = "Host: " + fx.apiAuthority() + "\r\n"
                + "X-Mixed-Case:   spaced value  \r\n"
                + "x-dup: one\r\n"
                + "Accept: */*\r\n"
                + "X-Dup: two\r\n"
                + "Authorization: Bearer placeholder\r\n"
                + "Content-Length: 11\r\n";
        try (RawClient c = fx.client()) {
            c.send("POST " + fx.apiUrl("/v1/items?q=a%20b&x=1") + " HTTP/1.1\r\n" + fields
                    + "Proxy-Connection: keep-alive\r\n\r\nhello world");
            RawClient.Response r = c.read();
            assertEquals(200, r.status());
            assertEquals("ok", r.bodyText());
        }
        TestUpstream.Received got = fx.upstream.take();
        assertEquals("POST /v1/items?q=a%20b&x=1 HTTP/1.1\r\n" + fields + "\r\nhello world", got.rawText());
        assertEquals(1, fx.hook.selected.size());
        assertTrue(fx.hook.evaluatedBodies.isEmpty(), "no chain selected: no buffering, no evaluation");
    }

    @Test
    void hookSeesTargetAndHeadersInWireOrder() throws Exception {
        try (RawClient c = fx.client()) {
            c.send("GET " + fx.apiUrl("/p?secret=1") + " HTTP/1.1\r\nHost: " + fx.apiAuthority()
                    + "\r\nX-A: 1\r\nConnection: x-hop\r\nX-Hop: h\r\nX-A: 2\r\n\r\n");
            assertEquals(200, c.read().status());
        }
        ProxyRequest req = fx.hook.selected.get(0);
        assertEquals("http", req.target().scheme());
        assertEquals(ProxyFixture.API, req.target().host());
        assertEquals(fx.upstream.port(), req.target().port());
        assertEquals("/p", req.target().path());
        assertEquals("secret=1", req.target().query());
        assertEquals(List.of("host", "x-a", "connection", "x-hop", "x-a"),
                req.headers().stream().map(HttpHeader::name).toList());
        assertTrue(req.connectionNominated().contains("x-hop"));
        String raw = fx.upstream.take().rawText();
        assertFalse(raw.toLowerCase().contains("x-hop"), "Connection-nominated field forwarded");
        assertFalse(raw.toLowerCase().contains("connection:"), "Connection forwarded");
    }

    @Test
    void keepAliveToClientAndPooledUpstream() throws Exception {
        int before = fx.upstream.connections();
        try (RawClient c = fx.client()) {
            for (int i = 0; i < 3; i++) {
                c.send("GET " + fx.apiUrl("/n" + i) + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\n\r\n");
                RawClient.Response r = c.read();
                assertEquals(200, r.status());
                assertNull(r.header("connection"));
            }
        }
        for (int i = 0; i < 3; i++) {
            assertTrue(fx.upstream.take().head().startsWith("GET /n" + i + " "));
        }
        // an idle pooled connection from an earlier test may serve all three: at most one new connection
        assertTrue(fx.upstream.connections() - before <= 1, "three requests should share one upstream connection");
    }

    @Test
    void concurrentKeepAliveClientsShareThePoolSafely() throws Exception {
        fx.upstream.respond(r -> TestUpstream.ok("echo:" + r.bodyText()));
        int clients = 8;
        int perClient = 60;
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int t = 0; t < clients; t++) {
            int id = t;
            threads.add(Thread.ofVirtual().start(() -> {
                try (RawClient c = fx.client()) {
                    for (int i = 0; i < perClient; i++) {
                        String body = id + "-" + i;
                        c.send("POST " + fx.apiUrl("/c") + " HTTP/1.1\r\nHost: " + fx.apiAuthority()
                                + "\r\nContent-Length: " + body.length() + "\r\n\r\n" + body);
                        RawClient.Response r = c.read();
                        assertEquals(200, r.status());
                        assertEquals("echo:" + body, r.bodyText());
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(List.of(), failures);
        int received = 0;
        while (fx.upstream.poll() != null) {
            received++;
        }
        assertEquals(clients * perClient, received);
    }

    @Test
    void stalePooledConnectionIsRetriedForIdempotentRequests() throws Exception {
        fx.upstream.closeSilentlyAfterResponse = true;
        try (RawClient c = fx.client()) {
            for (int i = 0; i < 3; i++) {
                c.send("GET " + fx.apiUrl("/stale" + i) + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\n\r\n");
                RawClient.Response r = c.read();
                assertEquals(200, r.status(), "a pooled connection the upstream closed must be retried: " + i);
            }
        } finally {
            fx.upstream.closeSilentlyAfterResponse = false;
        }
        for (int i = 0; i < 3; i++) {
            assertTrue(fx.upstream.take().head().startsWith("GET /stale" + i + " "));
        }
    }

    @Test
    void hostThatDisagreesWithTargetIsRefused() throws Exception {
        try (RawClient c = fx.client()) {
            c.send("GET " + fx.apiUrl("/") + " HTTP/1.1\r\nHost: evil.example.test\r\n\r\n");
            RawClient.Response r = c.read();
            assertEquals(400, r.status());
            assertEquals("application/json", r.header("content-type"));
            assertTrue(r.bodyText().contains("\"error\":\"host_mismatch\""), r.bodyText());
            assertFalse(r.bodyText().contains("evil"), "error bodies never echo request content");
            assertTrue(c.closedByPeer());
        }
        assertEquals(0, fx.upstream.pending());
        assertTrue(fx.hook.selected.isEmpty());
    }

    @Test
    void hostWithDefaultPortMatchesTargetWithoutPort() throws Exception {
        // target without port means 80; Host "api.example.test:80" names the same authority. Port 80 is closed on
        // loopback, so the request is admitted and fails upstream with 502, which proves the Host check passed.
        try (RawClient c = fx.client()) {
            c.send("GET http://API.Example.Test./ HTTP/1.1\r\nHost: api.example.test:80\r\n\r\n");
            RawClient.Response r = c.read();
            assertEquals(502, r.status(), r.bodyText());
        }
    }

    @Test
    void originFormOnTheProxyPortIsRefused() throws Exception {
        try (RawClient c = fx.client()) {
            c.send("GET /v1 HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\n\r\n");
            RawClient.Response r = c.read();
            assertEquals(400, r.status());
            assertTrue(r.bodyText().contains("absolute_form_required"));
        }
    }

    @Test
    void networkPolicyDenialIs403AndKeepsTheConnection() throws Exception {
        try (RawClient c = fx.client()) {
            c.send("GET http://denied.example.test:" + fx.upstream.port() + "/ HTTP/1.1\r\nHost: denied.example.test:"
                    + fx.upstream.port() + "\r\n\r\n");
            RawClient.Response r = c.read();
            assertEquals(403, r.status());
            assertEquals("{\"error\":\"policy_denied\",\"detail\":\"no network policy allows this destination\"}",
                    r.bodyText());
            c.send(fx.get("/after"));
            assertEquals(200, c.read().status());
        }
        assertTrue(fx.upstream.take().head().startsWith("GET /after "));
        assertEquals(0, fx.upstream.pending(), "a denied host never reaches the upstream");
    }

    @Test
    void privateAddressIsBlockedBySsrf() throws Exception {
        try (RawClient c = fx.client()) {
            c.send("GET http://lan.example.test/ HTTP/1.1\r\nHost: lan.example.test\r\n\r\n");
            RawClient.Response r = c.read();
            assertEquals(403, r.status());
            assertEquals("{\"error\":\"ssrf_blocked\",\"detail\":\"the destination resolves to a private address; "
                    + "the admitting endpoint's allowed_ips can admit it\"}",
                    r.bodyText());
        }
        assertTrue(fx.hook.selected.isEmpty(), "SSRF runs before the hook");
    }

    @Test
    void hookDenialAnswersWithItsStatusAndNothingReachesUpstream() throws Exception {
        fx.hook.selector = r -> ChainSelection.selected(1024, false);
        fx.hook.evaluator = (r, b) -> new RequestVerdict.Refuse(new Answer(403, "middleware_denied", "blocked by policy"));
        try (RawClient c = fx.client()) {
            c.send("POST " + fx.apiUrl("/") + " HTTP/1.1\r\nHost: " + fx.apiAuthority()
                    + "\r\nContent-Length: 5\r\n\r\nsk-12");
            RawClient.Response r = c.read();
            assertEquals(403, r.status());
            assertEquals("{\"error\":\"middleware_denied\",\"detail\":\"blocked by policy\"}", r.bodyText());
            assertEquals("sk-12", fx.hook.evaluatedBodies.get(0).utf8().orElseThrow());
        }
        assertEquals(0, fx.upstream.pending());
    }

    @Test
    void rebuiltRequestHasOneCorrectContentLengthAndNoStaleFraming() throws Exception {
        fx.hook.selector = r -> ChainSelection.selected(1024, false);
        fx.hook.evaluator = (r, b) -> {
            List<HttpHeader> h = new ArrayList<>(r.headers());
            h.add(new HttpHeader("x-openshell-middleware-tag", "redacted"));
            return new RequestVerdict.Forward(h, Body.ofUtf8("HELLO [REDACTED]"));
        };
        try (RawClient c = fx.client()) {
            c.send("POST " + fx.apiUrl("/chat") + " HTTP/1.1\r\nHost: " + fx.apiAuthority()
                    + "\r\nTransfer-Encoding: chunked\r\nTrailer: X-Checksum\r\nTE: trailers\r\n"
                    + "Connection: keep-alive, X-Hop\r\nX-Hop: secret\r\nExpect: 100-continue\r\n\r\n");
            RawClient.Response cont = new RawClient.Response(0, c.readHead(), new byte[0]);
            assertTrue(cont.head().startsWith("HTTP/1.1 100 Continue\r\n"), cont.head());
            c.send("6\r\nhello \r\n5;ext=1\r\nsk-12\r\n0\r\nX-Checksum: 1\r\nHost: evil\r\n\r\n");
            RawClient.Response r = c.read();
            assertEquals(200, r.status());
        }
        assertEquals("hello sk-12", fx.hook.evaluatedBodies.get(0).utf8().orElseThrow());
        TestUpstream.Received got = fx.upstream.take();
        // the client's own field keeps its spelling; the field the hook added keeps the hook's
        assertEquals("POST /chat HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\n"
                + "x-openshell-middleware-tag: redacted\r\nContent-Length: 16\r\n\r\nHELLO [REDACTED]", got.rawText());
    }

    @Test
    void trailersNeverAddOrOverrideHeaderFields() throws Exception {
        try (RawClient c = fx.client()) {
            c.send("POST " + fx.apiUrl("/t") + " HTTP/1.1\r\nHost: " + fx.apiAuthority()
                    + "\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nHost: evil.example.test\r\n"
                    + "Authorization: Bearer injected\r\n\r\n");
            assertEquals(200, c.read().status());
        }
        TestUpstream.Received got = fx.upstream.take();
        assertEquals("POST /t HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "3\r\nabc\r\n0\r\n\r\n", got.rawText());
        assertEquals(1, fx.hook.selected.size());
        assertFalse(fx.hook.selected.get(0).headers().stream().anyMatch(h -> h.name().equals("authorization")));
    }

    @Test
    void overCapContentLengthIsRefusedUnlessEveryStageIsFailOpen() throws Exception {
        fx.hook.selector = r -> ChainSelection.selected(10, false);
        try (RawClient c = fx.client()) {
            c.send("POST " + fx.apiUrl("/big") + " HTTP/1.1\r\nHost: " + fx.apiAuthority()
                    + "\r\nContent-Length: 20\r\nExpect: 100-continue\r\n\r\n");
            RawClient.Response r = c.read();
            assertEquals(413, r.status(), "413 before any 100 Continue");
            assertTrue(r.bodyText().contains("body_too_large"));
            assertTrue(c.closedByPeer());
        }
        assertEquals(List.of(new Uninspectable(Uninspectable.Kind.CONTENT_LENGTH_OVER_CAP, 10, 20, false)),
                fx.hook.uninspectable);
        assertEquals(0, fx.upstream.pending());
        assertTrue(fx.hook.evaluatedBodies.isEmpty());
    }

    @Test
    void overCapContentLengthStreamsUnprocessedWhenEveryStageIsFailOpen() throws Exception {
        fx.hook.selector = r -> ChainSelection.selected(10, true);
        String req = "POST /big HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\nContent-Length: 20\r\n\r\n";
        try (RawClient c = fx.client()) {
            c.send(req.replace("/big", fx.apiUrl("/big")) + "0123456789abcdefghij");
            assertEquals(200, c.read().status());
        }
        assertEquals(req + "0123456789abcdefghij", fx.upstream.take().rawText());
        assertEquals(List.of(new Uninspectable(Uninspectable.Kind.CONTENT_LENGTH_OVER_CAP, 10, 20, true)),
                fx.hook.uninspectable);
        assertTrue(fx.hook.evaluatedBodies.isEmpty());
    }

    @Test
    void chunkedOverflowAfterConsumptionIsDeniedEvenWhenFailOpen() throws Exception {
        fx.hook.selector = r -> ChainSelection.selected(10, true);
        try (RawClient c = fx.client()) {
            c.send("POST " + fx.apiUrl("/big") + " HTTP/1.1\r\nHost: " + fx.apiAuthority()
                    + "\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n01234567\r\n8\r\n89abcdef\r\n0\r\n\r\n");
            RawClient.Response r = c.read();
            assertEquals(413, r.status());
            assertTrue(c.closedByPeer());
        }
        assertEquals(List.of(new Uninspectable(Uninspectable.Kind.CHUNKED_OVER_CAP, 10, -1, false)),
                fx.hook.uninspectable);
        assertEquals(0, fx.upstream.pending());
    }

    @Test
    void expectContinueIsAnsweredOnlyAfterAdmission() throws Exception {
        try (RawClient c = fx.client()) {
            c.send("POST http://denied.example.test/ HTTP/1.1\r\nHost: denied.example.test\r\n"
                    + "Content-Length: 5\r\nExpect: 100-continue\r\n\r\n");
            RawClient.Response r = c.read();
            assertEquals(403, r.status(), "no 100 Continue for a denied destination");
            assertTrue(c.closedByPeer(), "the unread body forces a close");
        }
        try (RawClient c = fx.client()) {
            c.send("POST " + fx.apiUrl("/") + " HTTP/1.1\r\nHost: " + fx.apiAuthority()
                    + "\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
            assertTrue(c.readHead().startsWith("HTTP/1.1 100 Continue"));
            c.send("hello");
            assertEquals(200, c.read().status());
        }
        String raw = fx.upstream.take().rawText();
        assertFalse(raw.toLowerCase().contains("expect:"), "the proxy answered the expectation itself");
        assertTrue(raw.endsWith("\r\n\r\nhello"));
    }

    @Test
    void unknownExpectationIs417() throws Exception {
        try (RawClient c = fx.client()) {
            c.send("GET " + fx.apiUrl("/") + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\nExpect: magic\r\n\r\n");
            assertEquals(417, c.read().status());
        }
    }

    @Test
    void pipelinedRequestsAreEachEvaluated() throws Exception {
        fx.hook.selector = r -> ChainSelection.selected(100, false);
        String one = "POST " + fx.apiUrl("/1") + " HTTP/1.1\r\nHost: " + fx.apiAuthority()
                + "\r\nContent-Length: 3\r\n\r\none";
        String two = "POST " + fx.apiUrl("/2") + " HTTP/1.1\r\nHost: " + fx.apiAuthority()
                + "\r\nContent-Length: 3\r\n\r\ntwo";
        String bad = "GET " + fx.apiUrl("/3") + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\nX : y\r\n\r\n";
        try (RawClient c = fx.client()) {
            c.send(one + two + bad);
            assertEquals(200, c.read().status());
            assertEquals(200, c.read().status());
            assertEquals(400, c.read().status());
            assertTrue(c.closedByPeer());
        }
        assertEquals(List.of("one", "two"),
                fx.hook.evaluatedBodies.stream().map(b -> b.utf8().orElseThrow()).toList());
        assertEquals("one", fx.upstream.take().bodyText());
        assertEquals("two", fx.upstream.take().bodyText());
        assertEquals(0, fx.upstream.pending());
    }

    private static final String UPGRADE_HEAD = "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

    @Test
    void aWebSocketUpgradeUnderAFailClosedChainIsRefusedBeforeAnythingReachesTheUpstream() throws Exception {
        fx.hook.selector = r -> ChainSelection.selected(1024, false);
        byte[] frame = {(byte) 0x81, (byte) 0x83, 1, 2, 3, 4, 'k' ^ 1, 'e' ^ 2, 'y' ^ 3};
        try (RawClient c = fx.client()) {
            c.send("GET " + fx.apiUrl("/ws") + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + UPGRADE_HEAD);
            c.send(frame);
            RawClient.Response r = c.read();
            assertEquals(403, r.status(), r.head());
            assertTrue(r.bodyText().contains("\"error\":\"upgrade_uninspectable\""), r.bodyText());
        }
        assertEquals(List.of(new Uninspectable(Uninspectable.Kind.UPGRADE, -1, -1, false)), fx.hook.uninspectable);
        assertTrue(fx.hook.evaluatedBodies.isEmpty(), "no stage ran");
        assertEquals(0, fx.upstream.pending(), "nothing reached the upstream");
    }

    @Test
    void aWebSocketUpgradeToAHostOnlyAFailClosedResponseStageSelectsIsRefusedToo() throws Exception {
        fx.hook.responseSelector = r -> ChainSelection.selected(0, false);
        try (RawClient c = fx.client()) {
            c.send("GET " + fx.apiUrl("/ws") + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + UPGRADE_HEAD);
            RawClient.Response r = c.read();
            assertEquals(403, r.status(), r.head());
            assertTrue(r.bodyText().contains("\"error\":\"upgrade_uninspectable\""), r.bodyText());
        }
        assertEquals(List.of(new Uninspectable(Uninspectable.Kind.UPGRADE, -1, -1, false)), fx.hook.uninspectable);
        assertEquals(0, fx.upstream.pending(), "nothing reached the upstream");
        fx.hook.uninspectable.clear();
        fx.hook.responseSelector = r -> ChainSelection.selected(0, true);
        try (RawClient c = fx.client()) {
            c.send("GET " + fx.apiUrl("/ws") + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + UPGRADE_HEAD);
            String head = c.readHead();
            assertTrue(head.startsWith("HTTP/1.1 101 "), "fail_open response stages relay it: " + head);
        }
        assertEquals(List.of(new Uninspectable(Uninspectable.Kind.UPGRADE, -1, -1, true)), fx.hook.uninspectable);
    }

    @Test
    void aWebSocketOrOptedInEndpointRelaysUpgradesUnderAFailClosedChain(@TempDir Path dir) throws Exception {
        for (boolean websocketProtocol : new boolean[] {true, false}) {
            EndpointFacts facts = websocketProtocol
                    ? new EndpointFacts("ws", false, List.of(), java.util.Optional.of("websocket"))
                    : new EndpointFacts("opt-in", false, List.of(), java.util.Optional.empty(), true);
            Path sub = java.nio.file.Files.createDirectories(dir.resolve("p" + websocketProtocol));
            try (ProxyFixture ws = ProxyFixture.withSteps(sub, s -> s.admission = (h, p, c) -> AdmissionDecision.allow(facts))) {
                ws.hook.selector = r -> ChainSelection.selected(1024, false);
                try (RawClient c = ws.client()) {
                    c.send("GET " + ws.apiUrl("/ws") + " HTTP/1.1\r\nHost: " + ws.apiAuthority() + UPGRADE_HEAD);
                    String head = c.readHead();
                    assertTrue(head.startsWith("HTTP/1.1 101 "), head);
                }
                assertTrue(ws.hook.uninspectable.isEmpty(), "allowed: no uninspectable event");
            }
        }
    }

    @Test
    void webSocketUpgradeUnderAnAllFailOpenChainRunsTheHookThenRelaysFramesWithTheBypass() throws Exception {
        fx.hook.selector = r -> ChainSelection.selected(1024, true);
        try (RawClient c = fx.client()) {
            c.send("GET " + fx.apiUrl("/ws") + " HTTP/1.1\r\nHost: " + fx.apiAuthority()
                    + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    + "Sec-WebSocket-Version: 13\r\n\r\n");
            String head = c.readHead();
            assertTrue(head.startsWith("HTTP/1.1 101 "), head);
            assertTrue(head.contains("\r\nUpgrade: websocket\r\n"));
            byte[] frame = {(byte) 0x81, (byte) 0x85, 1, 2, 3, 4, 'h' ^ 1, 'e' ^ 2, 'l' ^ 3, 'l' ^ 4, 'o' ^ 1};
            c.send(frame);
            byte[] echoed = c.in().readNBytes(frame.length);
            assertEquals(new String(frame, StandardCharsets.ISO_8859_1), new String(echoed, StandardCharsets.ISO_8859_1));
        }
        ProxyRequest req = fx.hook.selected.get(0);
        assertTrue(req.websocketUpgrade());
        assertEquals(1, fx.hook.evaluatedBodies.size());
        assertEquals(List.of(new Uninspectable(Uninspectable.Kind.UPGRADE, -1, -1, true)), fx.hook.uninspectable);
        String raw = fx.upstream.take().rawText();
        assertTrue(raw.contains("\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"), raw);
    }

    /** {@return what the client reads for a GET of {@code /} that the upstream answers with {@code response}} */
    private static RawClient.Response answered(String response) throws Exception {
        fx.upstream.respond(r -> TestUpstream.bytes(response));
        try (RawClient c = fx.client()) {
            return c.send(fx.get("/")).read();
        }
    }

    @Test
    void responseStreamsBackWithHopByHopFieldsRemoved() throws Exception {
        RawClient.Response r = answered("HTTP/1.1 201 Created\r\nConnection: X-Up-Hop\r\n"
                + "X-Up-Hop: a\r\nKeep-Alive: timeout=5\r\nX-Custom:  kept as is \r\nTransfer-Encoding: chunked\r\n"
                + "\r\n4\r\nwiki\r\n5\r\npedia\r\n0\r\n\r\n");
        assertEquals(201, r.status());
        assertEquals("HTTP/1.1 201 Created\r\nX-Custom:  kept as is \r\nTransfer-Encoding: chunked\r\n\r\n",
                r.head());
        assertEquals("wikipedia", r.bodyText());
    }

    @Test
    void interimResponsesAreRelayedUpToTheLimitAndMoreEndTheExchange() throws Exception {
        int limit = 16; // ResponseRelay.MAX_INTERIM_RESPONSES
        for (int count : new int[] {limit, limit + 1}) {
            fx.upstream.respond(r -> TestUpstream.bytes("HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n".repeat(count)
                    + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"));
            try (RawClient c = fx.client()) {
                c.send(fx.get("/"));
                for (int i = 0; i < limit; i++) {
                    assertEquals(103, c.read().status());
                }
                if (count == limit) {
                    assertEquals(200, c.read().status());
                } else {
                    // a 502 after the interim heads, or the connection closed: never the upstream's final 200
                    RawClient.Response after;
                    try {
                        after = c.read();
                    } catch (java.io.IOException closed) {
                        after = null;
                    }
                    assertTrue(after == null || after.status() == 502, after == null ? "" : after.head());
                }
            }
        }
    }

    @Test
    void theHeadOfAnOpenEndedBodyReachesTheClientBeforeTheBodyDoes() throws Exception {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        fx.upstream.holdBodyUntil = release;
        fx.upstream.respond(r -> TestUpstream.bytes("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n7\r\ndata: 1\r\n0\r\n\r\n"));
        try (RawClient c = fx.client()) {
            c.send(fx.get("/events"));
            String head = c.readHead(); // the upstream holds its body until this head has arrived
            assertTrue(head.startsWith("HTTP/1.1 200 "), head);
            release.countDown();
            assertEquals("7\r\ndata: 1\r\n0\r\n\r\n", new String(c.in().readNBytes(17), StandardCharsets.US_ASCII));
            assertFalse(fx.upstream.holdTimedOut, "the head came before the body was released, not after 5 s");
        } finally {
            release.countDown();
            fx.upstream.holdBodyUntil = null;
        }
    }

    @Test
    void http10ClientGetsADechunkedCloseDelimitedResponse() throws Exception {
        fx.upstream.respond(r -> TestUpstream.bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "3\r\nabc\r\n0\r\n\r\n"));
        try (RawClient c = fx.client()) {
            c.send("GET " + fx.apiUrl("/") + " HTTP/1.0\r\n\r\n");
            RawClient.Response r = c.read();
            assertEquals(200, r.status());
            assertNull(r.header("transfer-encoding"));
            assertEquals("close", r.header("connection"));
            assertEquals("abc", r.bodyText());
        }
    }

    /** Forwarded as HTTP/1.1, which requires Host (RFC 9112 section 3.2): the target's authority supplies it. */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void anHttp10RequestWithoutHostIsForwardedWithTheTargetsHost(boolean chain) throws Exception {
        if (chain) {
            fx.hook.selector = r -> ChainSelection.selected(4096, false);
        }
        try (RawClient c = fx.client()) {
            c.send("POST " + fx.apiUrl("/ten") + " HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi");
            assertEquals(200, c.read().status());
        }
        TestUpstream.Received r = fx.upstream.take();
        assertTrue(r.head().startsWith("POST /ten HTTP/1.1\r\n"), r.head());
        assertEquals(1, r.head().split("(?i)\r\nhost: ", -1).length - 1, r.head());
        assertTrue(r.head().toLowerCase(java.util.Locale.ROOT).contains("\r\nhost: " + fx.apiAuthority() + "\r\n"),
                r.head());
    }

    /**
     * A name with {@code _} that a CGI-style upstream reads as a framing, routing, credential or hop-by-hop field,
     * or as the middleware namespace, never reaches it; an ordinary one does.
     */
    @ParameterizedTest
    @ValueSource(strings = {"Transfer_Encoding: chunked", "Content_Length: 5", "HOST_: x", "Proxy_Authorization: a",
            "x_openshell_middleware_verdict: allow", "Connection_: close", "Keep_Alive: 5", "Upgrade_: h2c",
            "X_Amz_Security_Token: t", "Proxy_Connection: close"})
    void requestFieldsThatShadowProtectedOnesWithUnderscoresAreRefused(String field) throws Exception {
        String lower = field.toLowerCase(java.util.Locale.ROOT);
        boolean shadows = !lower.startsWith("host_") && !lower.startsWith("connection_")
                && !lower.startsWith("upgrade_");
        try (RawClient c = fx.client()) {
            c.send("GET " + fx.apiUrl("/u") + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\n" + field
                    + "\r\n\r\n");
            RawClient.Response r = c.read();
            if (shadows) {
                assertEquals(400, r.status(), field);
                assertTrue(r.bodyText().startsWith("{\"error\":\"underscore_shadows_protected_field\""),
                        r.bodyText());
            } else {
                assertEquals(200, r.status(), field + ": '" + field.substring(0, field.indexOf(':'))
                        + "' does not read as a protected name");
            }
        }
        if (shadows) {
            assertEquals(0, fx.upstream.pending());
        } else {
            assertTrue(fx.upstream.take().head().contains(field), "an ordinary field is forwarded as is");
        }
    }

    @Test
    void responseFieldsThatShadowProtectedOnesWithUnderscoresAreDropped() throws Exception {
        RawClient.Response r = answered("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
                + "Transfer_Encoding: chunked\r\nX_Openshell_Middleware_Verdict: allow\r\nX_Request_Id: 7\r\n"
                + "\r\nok");
        assertEquals(200, r.status());
        assertNull(r.header("transfer_encoding"), r.head());
        assertNull(r.header("x_openshell_middleware_verdict"), r.head());
        assertEquals("7", r.header("x_request_id"), "an ordinary underscore name is relayed");
        assertEquals("ok", r.bodyText());
    }

    @Test
    void unreachableUpstreamIs502() throws Exception {
        try (RawClient c = fx.client()) {
            c.send("GET http://api.example.test:1/ HTTP/1.1\r\nHost: api.example.test:1\r\n\r\n");
            RawClient.Response r = c.read();
            assertEquals(502, r.status());
            assertEquals("{\"error\":\"upstream_failed\",\"detail\":\"the upstream refused the connection\"}",
                    r.bodyText());
        }
    }

    /**
     * A chunked response whose chunk size wraps a 64-bit counter (16 or 17 hex digits) must not be read as the last
     * chunk: the client would see a complete empty body, and the bytes after it would be parsed as the next response
     * on a reused connection. The head is already relayed, so the supervisor can only cut the connection.
     */
    @ParameterizedTest
    @ValueSource(strings = {"ffffffffffffffff", "10000000000000000", "fffffffffffffffff"})
    void chunkSizeOverflowInAResponseCutsTheConnection(String size) throws Exception {
        fx.upstream.respond(r -> TestUpstream.bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + size
                + "\r\nhello\r\n0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nsmuggled"));
        try (RawClient c = fx.client()) {
            c.send(fx.get("/"));
            String head = c.readHead();
            assertTrue(head.startsWith("HTTP/1.1 200"), head);
            String rest = new String(c.in().readAllBytes(), StandardCharsets.ISO_8859_1);
            assertFalse(rest.contains("0\r\n\r\n"), "no last chunk may be made up: " + rest);
            assertFalse(rest.contains("hello") || rest.contains("smuggled"), rest);
        }
    }

    @Test
    void malformedUpstreamResponseIs502() throws Exception {
        RawClient.Response r = answered("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n"
                + "\r\nok");
        assertEquals(502, r.status());
        assertNotNull(r.header("content-type"));
    }

    /**
     * The proxy never offers a transfer coding, so any but {@code chunked} is an invalid upstream response: relayed
     * after re-framing it would lose its label and reach the client uninspected (compressed bytes past scrubbing).
     */
    @ParameterizedTest
    @ValueSource(strings = {"gzip, chunked", "br, chunked", "gzip", "identity", "chunked, chunked"})
    void aTransferCodingOtherThanChunkedFromTheUpstreamIs502(String codings) throws Exception {
        RawClient.Response r = answered("HTTP/1.1 200 OK\r\nTransfer-Encoding: " + codings
                + "\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
        assertEquals(502, r.status(), codings);
        assertTrue(r.bodyText().contains("invalid_upstream_response"), r.bodyText());
        assertFalse(r.bodyText().contains("hello"), r.bodyText());
    }

    @Test
    void aChunkedResponseInAnyCaseIsStillRelayed() throws Exception {
        RawClient.Response r = answered("HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n"
                + "5\r\nhello\r\n0\r\n\r\n");
        assertEquals(200, r.status());
        assertEquals("hello", r.bodyText());
    }
}
