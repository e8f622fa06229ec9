package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The HTTP version and framing rules of the relay, both ways, through the real proxy and a loopback upstream that
 * answers with scripted raw bytes ({@link TestUpstream}), plain and intercepted HTTPS, on each relay of a response:
 * as received, scrubbed of an injected credential, and through a response stage.
 *
 * <ul>
 *   <li>Every status line the client reads carries the proxy's version, {@code HTTP/1.1} (RFC 9110 section 2.5,
 *       RFC 9112 section 2.3), whatever the upstream's; a body the proxy re-frames chunked is thus never labelled
 *       HTTP/1.0 (attacker pass 9, P9-7: {@code HTTP/1.0 200} with {@code Transfer-Encoding: chunked}).</li>
 *   <li>The request goes upstream as {@code HTTP/1.1} whatever the client sent, and an HTTP/1.0 client never gets
 *       chunked (RFC 9112 section 7.1).</li>
 *   <li>Transfer-Encoding in an HTTP/1.0 message is faulty framing (RFC 9112 section 6.1): 502
 *       {@code invalid_upstream_response} for a response, 400 for a request, each one audited refusal.</li>
 *   <li>An interim (1xx) response in HTTP/1.0 is 502 {@code invalid_upstream_response} (RFC 9110 section 15.2);
 *       HTTP/1.1 interims still work.</li>
 * </ul>
 */
class HttpVersionTest {
    @TempDir
    Path tmp;

    /** Which relay the response takes. */
    enum Relay {
        /** As received ({@code ResponseRelay}). */
        AS_RECEIVED,
        /** Scrubbed of an injected credential ({@code ScrubbingRelay}). */
        SCRUBBED,
        /** Through a response stage that delivers it unchanged ({@code InspectingRelay}). */
        STAGE
    }

    private ProxyFixture fixture(Relay relay) throws Exception {
        ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> {
            if (relay == Relay.SCRUBBED) {
                s.credentials = ResponseScrubTest.inject(false);
            } else if (relay == Relay.STAGE) {
                s.responses = (plan, request, response) ->
                        new ResponseVerdict.Deliver(response.headers(), Optional.empty());
            }
        });
        fx.upstream.closeSilentlyAfterResponse = true; // a close-delimited body ends
        fx.tlsUpstream.closeSilentlyAfterResponse = true;
        return fx;
    }

    /** {@return one request: its line in {@code version}, the placeholder a credential replaces when scrubbed} */
    private static String request(ProxyFixture fx, boolean tls, String version, String extra) {
        return "GET " + fx.apiTarget(tls, "/v") + " " + version + "\r\nHost: " + fx.apiAuthority(tls)
                + "\r\nX-Reflect: " + ResponseScrubTest.PLACEHOLDER + "\r\n" + extra + "\r\n";
    }

    /**
     * Sends one request the upstream answers with {@code response}; the client must get 502
     * {@code invalid_upstream_response} without the body {@code hello}. {@return the one refusal audited for it}
     */
    private static ProxyRefusal refusedAsInvalid(ProxyFixture fx, boolean tls, String response) throws Exception {
        fx.hook.refusals.clear();
        fx.apiUpstream(tls).respond(r -> TestUpstream.bytes(response));
        try (RawClient c = fx.apiClient(tls)) {
            RawClient.Response r = c.send(request(fx, tls, "HTTP/1.1", "")).read();
            assertEquals(502, r.status(), response + " answered " + r.head());
            assertTrue(r.bodyText().contains("invalid_upstream_response"), r.bodyText());
            assertFalse(r.bodyText().contains("hello"), r.bodyText());
        }
        assertEquals(1, fx.hook.refusals.size(), fx.hook.refusals.toString());
        return fx.hook.refusals.get(0);
    }

    static Stream<Arguments> relays() {
        List<Arguments> out = new ArrayList<>();
        for (Relay r : Relay.values()) {
            for (boolean tls : new boolean[] {false, true}) {
                out.add(Arguments.of(r, tls));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} tls={1}")
    @MethodSource("relays")
    void anHttp10ResponseReachesAnHttp11ClientWithTheProxysVersion(Relay relay, boolean tls) throws Exception {
        try (ProxyFixture fx = fixture(relay)) {
            for (String response : List.of(
                    "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nhello",
                    "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello",
                    "HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello",
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nhello")) {
                fx.apiUpstream(tls).respond(r -> TestUpstream.bytes(response));
                try (RawClient c = fx.apiClient(tls)) {
                    RawClient.Response r = c.send(request(fx, tls, "HTTP/1.1", "")).read();
                    String line = r.head().substring(0, r.head().indexOf("\r\n"));
                    assertEquals("HTTP/1.1 " + response.substring(9, response.indexOf("\r\n")), line,
                            "the proxy's version, the upstream's code and reason: " + r.head());
                    assertEquals("hello", r.bodyText(), r.head());
                }
                assertTrue(fx.apiUpstream(tls).take().head().startsWith("GET /v HTTP/1.1\r\n"));
            }
            assertEquals(List.of(), fx.hook.refusals);
        }
    }

    @ParameterizedTest(name = "{0} tls={1}")
    @MethodSource("relays")
    void anHttp10ClientIsForwardedAsHttp11AndNeverGetsChunked(Relay relay, boolean tls) throws Exception {
        try (ProxyFixture fx = fixture(relay)) {
            for (String response : List.of(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
                            + "2\r\nhe\r\n3\r\nllo\r\n0\r\n\r\n",
                    "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nhello",
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello")) {
                fx.apiUpstream(tls).respond(r -> TestUpstream.bytes(response));
                try (RawClient c = fx.apiClient(tls)) {
                    // an HTTP/1.0 request may omit Host; its Upgrade is ignored (RFC 9110 section 7.8)
                    c.send("GET " + fx.apiTarget(tls, "/v") + " HTTP/1.0\r\nHost: " + fx.apiAuthority(tls)
                            + "\r\nX-Reflect: " + ResponseScrubTest.PLACEHOLDER + "\r\nConnection: Upgrade\r\n"
                            + "Upgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                            + "Sec-WebSocket-Version: 13\r\n\r\n");
                    String head = c.readHead();
                    assertTrue(head.startsWith("HTTP/1.1 200 "), head);
                    assertFalse(head.toLowerCase(Locale.ROOT).contains("transfer-encoding"), head);
                    byte[] body = c.in().readAllBytes(); // close-delimited or Content-Length, then closed
                    assertEquals("hello", new String(body, java.nio.charset.StandardCharsets.ISO_8859_1), head);
                }
                String forwarded = fx.apiUpstream(tls).take().head();
                assertTrue(forwarded.startsWith("GET /v HTTP/1.1\r\n"), forwarded);
                assertFalse(forwarded.toLowerCase(Locale.ROOT).contains("upgrade"), forwarded);
            }
            assertEquals(List.of(), fx.hook.refusals);
        }
    }

    @ParameterizedTest(name = "{0} tls={1}")
    @MethodSource("relays")
    void transferEncodingInAnHttp10ResponseIsRefusedAndAudited(Relay relay, boolean tls) throws Exception {
        try (ProxyFixture fx = fixture(relay)) {
            for (String response : List.of(
                    "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
                    "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello",
                    "HTTP/1.0 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n")) {
                ProxyRefusal refused = refusedAsInvalid(fx, tls, response);
                assertEquals("invalid_upstream_response", refused.code());
                assertEquals(ProxyRefusal.Kind.UPSTREAM, refused.kind());
                assertTrue(refused.detail().contains("Transfer-Encoding in an HTTP/1.0 response"), refused.detail());
            }
        }
    }

    @ParameterizedTest(name = "{0} tls={1}")
    @MethodSource("relays")
    void transferEncodingInAnHttp10RequestIsRefusedAndAudited(Relay relay, boolean tls) throws Exception {
        try (ProxyFixture fx = fixture(relay); RawClient c = fx.apiClient(tls)) {
            c.send("POST " + fx.apiTarget(tls, "/v") + " HTTP/1.0\r\nHost: " + fx.apiAuthority(tls)
                    + "\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
            RawClient.Response r = c.read();
            assertEquals(400, r.status());
            assertTrue(r.head().startsWith("HTTP/1.1 400 "), r.head());
            assertTrue(r.bodyText().contains("transfer_encoding_in_http10"), r.bodyText());
            assertEquals(1, fx.hook.refusals.size(), fx.hook.refusals.toString());
            ProxyRefusal refused = fx.hook.refusals.get(0);
            assertEquals(400, refused.status());
            assertEquals(ProxyRefusal.Kind.FRAMING, refused.kind());
            assertTrue(refused.code().equals("transfer_encoding_in_http10")
                    || refused.cause().equals(Optional.of("transfer_encoding_in_http10")), refused.toString());
            assertNull(fx.apiUpstream(tls).poll(), "nothing was forwarded");
        }
    }

    @ParameterizedTest(name = "{0} tls={1}")
    @MethodSource("relays")
    void anInterimResponseInHttp10IsRefusedAndHttp11InterimsStillWork(Relay relay, boolean tls) throws Exception {
        try (ProxyFixture fx = fixture(relay)) {
            for (String interim : List.of("HTTP/1.0 103 Early Hints\r\nLink: </s.css>\r\n\r\n",
                    "HTTP/1.0 100 Continue\r\n\r\n")) {
                ProxyRefusal refused = refusedAsInvalid(fx, tls,
                        interim + "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello");
                assertEquals("invalid_upstream_response", refused.code());
                assertTrue(refused.detail().contains("interim (1xx) response in HTTP/1.0"), refused.detail());
            }
            fx.hook.refusals.clear();
            fx.apiUpstream(tls).respond(r -> TestUpstream.bytes("HTTP/1.1 100 Continue\r\n\r\n"
                    + "HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n"
                    + "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello"));
            try (RawClient c = fx.apiClient(tls)) {
                c.send(request(fx, tls, "HTTP/1.1", ""));
                RawClient.Response r = c.read();
                if (r.status() == 103) { // relayed to an HTTP/1.1 client (a stage may withhold it)
                    assertTrue(r.head().startsWith("HTTP/1.1 103 Early Hints\r\n"), r.head());
                    r = c.read();
                }
                assertTrue(r.head().startsWith("HTTP/1.1 200 OK\r\n"), r.head());
                assertEquals("hello", r.bodyText());
            }
            assertEquals(List.of(), fx.hook.refusals);
        }
    }
}
