package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A response that breaks after its head (a malformed chunked body, a body cut short by the upstream's close, a
 * compressed body that stops decoding) from a real hostile upstream on loopback: while nothing of the response has
 * reached the client it is answered 502 with the usual JSON error body; once part of it has, the connection closes
 * without a last chunk. Either way it is audited exactly once with the rule broken, and the injected credential never
 * reaches the client (attacker pass finding F5).
 */
class ResponseCutOffTest {
    static final String SECRET = ResponseScrubTest.SECRET;

    @TempDir
    Path tmp;

    static String request(ProxyFixture fx, String authority) {
        return "GET http://" + authority + "/x HTTP/1.1\r\nHost: " + authority + "\r\nX-Reflect: "
                + ResponseScrubTest.PLACEHOLDER + "\r\n\r\n";
    }

    /** {@return everything the client reads until the proxy closes the connection} */
    static String readToEnd(RawClient c) throws IOException {
        c.socket().setSoTimeout(10_000);
        return new String(c.in().readAllBytes(), StandardCharsets.ISO_8859_1);
    }

    private static ProxyRefusal only(ProxyFixture fx) {
        assertEquals(1, fx.hook.refusals.size(), fx.hook.refusals.toString());
        return fx.hook.refusals.get(0);
    }

    private static void assertNoSecret(String raw) {
        assertFalse(raw.contains(SECRET), () -> "the client read the credential: " + raw);
    }

    /** A scrubbed chunked body whose first chunk breaks its framing: 502 before any byte, audited once. */
    @ParameterizedTest
    @ValueSource(strings = {"bare LF size line", "bad size", "bare LF after data", "size overflow"})
    void aMalformedScrubbedChunkedBodyIs502BeforeAnyByte(String how) throws Exception {
        String chunk = "key " + SECRET;
        String framed = switch (how) {
            case "bare LF size line" -> Integer.toHexString(chunk.length()) + "\n" + chunk + "\r\n0\r\n\r\n";
            case "bad size" -> "zz\r\n" + chunk + "\r\n0\r\n\r\n";
            case "bare LF after data" -> Integer.toHexString(chunk.length()) + "\r\n" + chunk + "\n0\r\n\r\n";
            default -> "10000000000000000\r\n" + chunk + "\r\n0\r\n\r\n";
        };
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = ResponseScrubTest.inject(false))) {
            fx.upstream.respond(r -> TestUpstream.bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + framed));
            try (RawClient c = fx.client()) {
                c.send(request(fx, fx.apiAuthority()));
                String raw = readToEnd(c);
                assertNoSecret(raw);
                assertTrue(raw.startsWith("HTTP/1.1 502 Bad Gateway\r\n"), raw);
                assertTrue(raw.contains("\"error\":\"invalid_upstream_response\""), raw);
                assertTrue(raw.contains("chunked body is malformed"), raw);
            }
            ProxyRefusal r = only(fx);
            assertEquals(ProxyRefusal.Kind.UPSTREAM, r.kind());
            assertEquals(502, r.status());
            assertEquals(Optional.of("invalid_response"), r.cause());
            assertNoSecret(r.toString());
        }
    }

    /** The same through response stages ({@code InspectingRelay}), without a credential. */
    @Test
    void aMalformedChunkedBodyThroughResponseStagesIs502() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.responses = (p, r, response) ->
                new ResponseVerdict.Deliver(response.headers(), Optional.empty()))) {
            fx.upstream.respond(r -> TestUpstream.bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "5\r\nhello\n0\r\n\r\n"));
            try (RawClient c = fx.client()) {
                c.send("GET " + fx.apiUrl("/") + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\n\r\n");
                String raw = readToEnd(c);
                assertTrue(raw.startsWith("HTTP/1.1 502 Bad Gateway\r\n"), raw);
                assertTrue(raw.contains("\"error\":\"invalid_upstream_response\""), raw);
                assertFalse(raw.contains("hello"), raw);
            }
            assertEquals(Optional.of("invalid_response"), only(fx).cause());
        }
    }

    /** The same inside an intercepted CONNECT (HTTPS). */
    @Test
    void aMalformedScrubbedChunkedBodyThroughInterceptionIs502() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = ResponseScrubTest.inject(false))) {
            fx.tlsUpstream.respond(r -> TestUpstream.bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "5\nhello\r\n0\r\n\r\n"));
            String auth = ProxyFixture.API + ":" + fx.tlsUpstream.port();
            String raw = Intercepted.exchange(fx, auth, "GET / HTTP/1.1\r\nHost: " + auth + "\r\nX-Reflect: "
                    + ResponseScrubTest.PLACEHOLDER + "\r\n\r\n");
            assertTrue(raw.startsWith("HTTP/1.1 502 Bad Gateway\r\n"), raw);
            assertTrue(raw.contains("\"error\":\"invalid_upstream_response\""), raw);
            assertEquals(Optional.of("invalid_response"), only(fx).cause());
        }
    }

    /**
     * A scrubbed body whose later chunk breaks its framing: the client has the head and the scrubbed first part, then
     * the connection closes without the last chunk; audited once, status 0.
     */
    @Test
    void aScrubbedChunkedBodyThatBreaksLaterIsCutOffWithoutALastChunk() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = ResponseScrubTest.inject(false))) {
            // past the first 1024 bytes, which are read before the head for a charset the body declares in itself
            String first = ".".repeat(1100) + "first " + SECRET + " part";
            fx.upstream.holdBodyUntil = new java.util.concurrent.CountDownLatch(1);
            fx.upstream.holdAfter = first + "\r\n";
            fx.upstream.respond(r -> TestUpstream.bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + Integer.toHexString(first.length()) + "\r\n" + first + "\r\n5\nlater " + SECRET + "\r\n"
                    + "0\r\n\r\n"));
            try (RawClient c = fx.client()) {
                c.send(request(fx, fx.apiAuthority()));
                assertTrue(c.readHead().startsWith("HTTP/1.1 200 "));
                StringBuilder got = new StringBuilder();
                while (!got.toString().contains(" part")) { // released while the upstream is silent
                    got.append((char) c.in().read());
                }
                fx.upstream.holdBodyUntil.countDown();
                String rest = got + readToEnd(c);
                assertNoSecret(rest);
                assertTrue(rest.contains("first " + ResponseScrubTest.PLACEHOLDER + " part"), rest);
                assertFalse(rest.endsWith("0\r\n\r\n"), "no last chunk may be made up: " + rest);
            } finally {
                fx.upstream.holdBodyUntil = null;
                fx.upstream.holdAfter = null;
            }
            ProxyRefusal r = only(fx);
            assertEquals(0, r.status(), r.toString());
            assertEquals("invalid_upstream_response", r.code());
            assertTrue(r.detail().contains("cut off"), r.detail());
        }
    }

    /** A scrubbed Content-Length body the upstream ends early (it closes): 502 before any byte. */
    @Test
    void aScrubbedBodyCutShortByTheUpstreamIs502() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = ResponseScrubTest.inject(false))) {
            fx.upstream.closeSilentlyAfterResponse = true;
            fx.upstream.respond(r -> TestUpstream.bytes("HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\nshort "
                    + SECRET));
            try (RawClient c = fx.client()) {
                c.send(request(fx, fx.apiAuthority()));
                String raw = readToEnd(c);
                assertNoSecret(raw);
                assertTrue(raw.startsWith("HTTP/1.1 502 Bad Gateway\r\n"), raw);
                assertTrue(raw.contains("\"error\":\"upstream_failed\""), raw);
                assertTrue(raw.contains("before its response was complete"), raw);
            }
            assertEquals(Optional.of("connection_closed"), only(fx).cause());
        }
    }

    /** An unscrubbed Content-Length body the upstream ends early: its head went, so it is cut off and audited. */
    @Test
    void aPlainBodyCutShortIsClosedAndAudited() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp)) {
            fx.upstream.closeSilentlyAfterResponse = true;
            fx.upstream.respond(r -> TestUpstream.bytes("HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\nshort"));
            try (RawClient c = fx.client()) {
                c.send("GET " + fx.apiUrl("/") + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\n\r\n");
                String raw = readToEnd(c);
                assertTrue(raw.startsWith("HTTP/1.1 200 OK\r\n"), raw);
                assertTrue(raw.endsWith("short"), raw);
            }
            ProxyRefusal r = only(fx);
            assertEquals(0, r.status());
            assertEquals(Optional.of("connection_closed"), r.cause());
        }
    }

    /** A gzip body that stops decoding (truncated): refused or cut off, audited once, never the value. */
    @Test
    void aTruncatedGzipBodyIsRefusedOrCutOffAndAuditedOnce() throws Exception {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try (GZIPOutputStream z = new GZIPOutputStream(b)) {
            z.write(("gzipped " + SECRET + " ").repeat(50).getBytes(StandardCharsets.UTF_8));
        }
        byte[] gz = java.util.Arrays.copyOf(b.toByteArray(), b.size() - 12);
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = ResponseScrubTest.inject(false))) {
            fx.upstream.respond(r -> {
                byte[] head = TestUpstream.bytes("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: "
                        + gz.length + "\r\n\r\n");
                byte[] all = java.util.Arrays.copyOf(head, head.length + gz.length);
                System.arraycopy(gz, 0, all, head.length, gz.length);
                return all;
            });
            try (RawClient c = fx.client()) {
                c.send(request(fx, fx.apiAuthority()));
                String raw = readToEnd(c);
                assertNoSecret(raw);
                assertFalse(raw.endsWith("0\r\n\r\n"), raw);
            }
            assertEquals(List.of("response_uninspectable false"), fx.hook.unscannable);
            assertEquals(List.of(), fx.hook.refusals, "audited once, as uninspectable");
        }
    }
}
