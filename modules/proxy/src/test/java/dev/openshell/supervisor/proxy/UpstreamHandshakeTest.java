package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An upstream {@code 101} that does not complete the WebSocket handshake the request opened (RFC 6455 section 4.1)
 * is never relayed: the client gets 502 {@code invalid_upstream_response}, the refusal is reported with the reason,
 * and nothing the upstream sent after the head reaches the client. Plain HTTP and intercepted HTTPS alike.
 */
class UpstreamHandshakeTest extends SharedProxy {
    private static final String KEY = "dGhlIHNhbXBsZSBub25jZQ==";
    private static final String ACCEPT = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";
    private static final String AFTER = "raw bytes after the switch";

    @BeforeEach
    void reset() {
        fx.hook.refusals.clear();
        fx.hook.selector = r -> ChainSelection.none();
        fx.upstream.reset();
        fx.tlsUpstream.reset();
    }

    /**
     * Sends a WebSocket upgrade: the client must get 502 {@code invalid_upstream_response} and nothing of the switch,
     * audited as one refusal whose detail names {@code reason}.
     */
    private static void assertSwitchRefused(boolean tls, String reason) throws Exception {
        String answer = exchange(tls, "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + KEY
                + "\r\nSec-WebSocket-Version: 13\r\n");
        assertTrue(answer.startsWith("HTTP/1.1 502 "), answer);
        assertTrue(answer.contains("invalid_upstream_response"), answer);
        assertFalse(answer.contains(AFTER) || answer.contains("Switching Protocols"), answer);
        assertEquals(1, fx.hook.refusals.size(), fx.hook.refusals.toString());
        assertEquals("invalid_upstream_response", fx.hook.refusals.get(0).code());
        assertTrue(fx.hook.refusals.get(0).detail().contains(reason), fx.hook.refusals.get(0).detail());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            Upgrade: foo|Connection: Upgrade|ACCEPT|Upgrade is not websocket
            Upgrade: h2c|Connection: Upgrade|ACCEPT|Upgrade is not websocket
            Upgrade: websocket, foo|Connection: Upgrade|ACCEPT|Upgrade is not websocket
            Upgrade: websocket|Connection: keep-alive|ACCEPT|lacks Connection: upgrade
            Upgrade: websocket|Connection: Upgrade||no Sec-WebSocket-Accept matching
            Upgrade: websocket|Connection: Upgrade|Sec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=|no Sec-WebSocket-Accept matching
            Upgrade: websocket|Connection: Upgrade|ACCEPT\\r\\nSec-WebSocket-Accept: x|no Sec-WebSocket-Accept matching
            Upgrade: websocket|Connection: Upgrade|ACCEPT\\r\\nSec-WebSocket-Protocol: chat|subprotocol the request did not offer
            """)
    void aSwitchThatDoesNotCompleteTheHandshakeIsRefused(String upgrade, String connection, String accept,
                                                         String reason) throws Exception {
        String acceptLines = accept == null ? "" : accept.replace("ACCEPT", "Sec-WebSocket-Accept: " + ACCEPT)
                .replace("\\r\\n", "\r\n") + "\r\n";
        byte[] switched = TestUpstream.bytes("HTTP/1.1 101 Switching Protocols\r\n" + upgrade + "\r\n" + connection
                + "\r\n" + acceptLines + "\r\n" + AFTER);
        for (boolean tls : new boolean[] {false, true}) {
            fx.hook.refusals.clear();
            (tls ? fx.tlsUpstream : fx.upstream).upgrade = r -> switched;
            assertSwitchRefused(tls, reason);
        }
    }

    /**
     * Attacker pass 9, P9-8: an HTTP/1.0 {@code 101}, otherwise a complete handshake, was relayed. RFC 6455 section
     * 4.1 requires HTTP/1.1, and HTTP/1.0 defines no 1xx (RFC 9110 section 15.2).
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void anHttp10SwitchIsRefused(boolean tls) throws Exception {
        fx.apiUpstream(tls).upgrade = r -> TestUpstream.bytes("HTTP/1.0 101 Switching Protocols\r\n"
                + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + ACCEPT + "\r\n\r\n" + AFTER);
        assertSwitchRefused(tls, "101 is HTTP/1.0");
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aCompleteHandshakeIsRelayed(boolean tls) throws Exception {
        (tls ? fx.tlsUpstream : fx.upstream).upgrade = r -> TestUpstream.bytes("HTTP/1.1 101 Switching Protocols\r\n"
                + "upgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Accept: " + ACCEPT
                + "\r\nSec-WebSocket-Protocol: chat\r\n\r\n");
        String answer = exchange(tls, "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + KEY
                + "\r\nSec-WebSocket-Protocol: superchat, chat\r\nSec-WebSocket-Version: 13\r\n");
        assertTrue(answer.startsWith("HTTP/1.1 101 "), answer);
        assertTrue(fx.hook.refusals.isEmpty(), fx.hook.refusals.toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "Connection: Upgrade\r\nUpgrade: foo\r\n",
            "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n"})
    void aSwitchToARequestThatAskedNoWebSocketIsRefused(String fields) throws Exception {
        for (boolean tls : new boolean[] {false, true}) {
            fx.hook.refusals.clear();
            (tls ? fx.tlsUpstream : fx.upstream).respond(r -> TestUpstream.bytes("HTTP/1.1 101 Switching Protocols\r\n"
                    + "Upgrade: foo\r\nConnection: Upgrade\r\n\r\n" + AFTER));
            String answer = exchange(tls, fields);
            assertTrue(answer.startsWith("HTTP/1.1 502 "), answer);
            assertFalse(answer.contains(AFTER), answer);
            assertEquals(1, fx.hook.refusals.size(), fx.hook.refusals.toString());
            assertTrue(fx.hook.refusals.get(0).detail().contains("switched protocols unasked"),
                    fx.hook.refusals.get(0).detail());
        }
    }

    /** Sends one GET /ws with {@code fields} (plain absolute-form, or origin-form in an intercepted tunnel). */
    private static String exchange(boolean tls, String fields) throws Exception {
        try (RawClient c = fx.apiClient(tls)) {
            c.send("GET " + fx.apiTarget(tls, "/ws") + " HTTP/1.1\r\nHost: " + fx.apiAuthority(tls) + "\r\n" + fields
                    + "\r\n");
            return readAnswer(c.in());
        }
    }

    /** {@return the head, and for a non-101 answer its body up to the end of the stream} */
    private static String readAnswer(java.io.InputStream in) throws java.io.IOException {
        StringBuilder head = new StringBuilder();
        int b;
        while (!head.toString().endsWith("\r\n\r\n") && (b = in.read()) >= 0) {
            head.append((char) b);
        }
        if (head.toString().startsWith("HTTP/1.1 101 ")) {
            return head.toString();
        }
        return head + new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
    }
}
