package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.HttpHeader;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.function.Function;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * WebSocket messages from the server of an upgrade that carried a credential are scrubbed like a response body
 * (docs/credentials.md, section 4): a real loopback upstream answers the upgrade with a {@code 101} and frames that
 * echo the injected value in a text message, a binary message (also base64), a fragmented message (the value split
 * over three fragments, a ping carrying it in between), over plain HTTP and intercepted HTTPS; a message over the
 * limit closes with 1009; an accepted extension is refused.
 */
class WebSocketScrubTest {
    static final String SECRET = "wsS3cr3t/value+" + Long.toHexString(System.nanoTime());
    static final String PLACEHOLDER = "openshell:resolve:env:API_TOKEN";
    static final String UPGRADE = "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n";
    static final String SWITCHED = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n";

    @TempDir
    Path tmp;

    /** Replaces the placeholder in any header value, and reports the value as injected. */
    static PolicySteps.Credentials<Void> inject() {
        return (plan, req, sent) -> {
            boolean used = sent.headers().stream().anyMatch(h -> h.value().contains(PLACEHOLDER));
            List<HttpHeader> out = sent.headers().stream()
                    .map(h -> new HttpHeader(h.name(), h.value().replace(PLACEHOLDER, SECRET))).toList();
            return new CredentialVerdict.Forward(out, sent.rawQuery(), used ? InjectedCredentials.of(List.of(
                    new InjectedCredentials.Entry("API_TOKEN", SECRET, PLACEHOLDER, false)))
                    : InjectedCredentials.none());
        };
    }

    /** {@return one unmasked server frame} */
    static byte[] frame(int b0, byte[] p) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(b0);
        if (p.length < 126) {
            out.write(p.length);
        } else if (p.length <= 0xFFFF) {
            out.write(126);
            out.write(p.length >> 8);
            out.write(p.length);
        } else {
            out.write(127);
            for (int i = 7; i >= 0; i--) {
                out.write(i >= 4 ? 0 : (p.length >>> (8 * i)) & 0xFF);
            }
        }
        out.writeBytes(p);
        return out.toByteArray();
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** The echo: the value the upstream received in {@code X-Reflect}, in each kind of message. */
    static byte[] echoFrames(TestUpstream.Received r) {
        String value = r.head().lines().filter(l -> l.toLowerCase().startsWith("x-reflect:")).findFirst()
                .map(l -> l.substring(l.indexOf(':') + 1).strip()).orElse("none");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(utf8(SWITCHED + "\r\n"));
        out.writeBytes(frame(0x81, utf8("text " + value)));
        out.writeBytes(frame(0x82, utf8("bin " + value + " b64 " + Base64.getEncoder().encodeToString(utf8(value)))));
        out.writeBytes(frame(0x01, utf8("frag " + value.substring(0, 4))));
        out.writeBytes(frame(0x89, utf8(value)));
        out.writeBytes(frame(0x00, utf8(value.substring(4, 9))));
        out.writeBytes(frame(0x80, utf8(value.substring(9) + " end")));
        out.writeBytes(frame(0x81, utf8("clean")));
        out.writeBytes(frame(0x88, new byte[] {3, (byte) 0xE8}));
        return out.toByteArray();
    }

    /** One frame as the client read it. */
    record Read(int b0, byte[] payload) {
        String text() {
            return new String(payload, StandardCharsets.UTF_8);
        }
    }

    /**
     * {@return the payload length of a frame whose second byte is {@code b1}: its 7 bits, or the 16-bit or 64-bit
     * extended length read from {@code in} (RFC 6455 section 5.2)}
     */
    static long payloadLength(int b1, InputStream in) throws IOException {
        long len = b1 & 0x7F;
        if (len == 126) {
            len = (in.read() << 8) | in.read();
        } else if (len == 127) {
            len = 0;
            for (int i = 0; i < 8; i++) {
                len = (len << 8) | in.read();
            }
        }
        return len;
    }

    static Read readFrame(InputStream in) throws IOException {
        int b0 = in.read();
        if (b0 < 0) {
            throw new EOFException("no frame");
        }
        int b1 = in.read();
        assertEquals(0, b1 & 0x80, "server frames reach the client unmasked");
        long len = payloadLength(b1, in);
        byte[] p = in.readNBytes((int) len);
        if (p.length != len) {
            throw new EOFException("short frame");
        }
        return new Read(b0, p);
    }

    /** {@return the frames up to and including the close frame} */
    static List<Read> readUntilClose(InputStream in) throws IOException {
        List<Read> frames = new ArrayList<>();
        while (true) {
            Read f = readFrame(in);
            frames.add(f);
            if ((f.b0() & 0x0F) == 8) {
                return frames;
            }
        }
    }

    /**
     * Data messages arrive in order; the ping, never held, may come before data messages that are still held (the
     * last characters of the joined text are always held: {@code HeldText}).
     */
    static void assertScrubbed(List<Read> all) {
        List<Read> frames = new ArrayList<>(all.stream().filter(f -> f.b0() != 0x89).toList());
        List<Read> pings = all.stream().filter(f -> f.b0() == 0x89).toList();
        assertEquals(1, pings.size(), "the ping interleaved with the fragments goes on");
        assertEquals(PLACEHOLDER, pings.get(0).text());
        assertEquals(0x81, frames.get(0).b0());
        assertEquals("text " + PLACEHOLDER, frames.get(0).text());
        assertEquals(0x82, frames.get(1).b0());
        assertEquals("bin " + PLACEHOLDER + " b64 " + PLACEHOLDER, frames.get(1).text());
        frames.add(2, pings.get(0));
        assertEquals(0x81, frames.get(3).b0(), "the fragmented message, scrubbed, is one frame");
        assertEquals("frag " + PLACEHOLDER + " end", frames.get(3).text());
        assertEquals("clean", frames.get(4).text());
        assertEquals(0x88, frames.get(5).b0());
        StringBuilder text = new StringBuilder();
        for (Read f : frames) {
            text.append(new String(f.payload(), StandardCharsets.ISO_8859_1));
        }
        for (String form : List.of(SECRET, Base64.getEncoder().encodeToString(utf8(SECRET)), SECRET.substring(4, 9))) {
            assertFalse(text.toString().contains(form), () -> "the client read a secret form: " + text);
        }
    }

    static final byte[] CLIENT_CLOSE = {(byte) 0x88, (byte) 0x82, 1, 2, 3, 4, 3 ^ 1, (byte) (0xE8 ^ 2)};

    /** {@return an upstream's answer to every upgrade: the 101 with {@code headers} (each ending in CRLF), then frames} */
    static Function<TestUpstream.Received, byte[]> switched(String headers, byte[]... frames) {
        return r -> {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.writeBytes(utf8(SWITCHED + headers + "\r\n"));
            for (byte[] f : frames) {
                out.writeBytes(f);
            }
            return out.toByteArray();
        };
    }

    /** {@return the upgrade request to the plain upstream, with {@code headers} (each ending in CRLF)} */
    static String upgradeRequest(ProxyFixture fx, String headers) {
        return "GET " + fx.apiUrl("/ws") + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\n" + headers + UPGRADE
                + "\r\n";
    }

    /** {@return a client whose upgrade carrying the placeholder (and {@code headers}) was answered 101} */
    static RawClient upgraded(ProxyFixture fx, String headers) throws IOException {
        RawClient c = fx.client();
        try {
            c.send(upgradeRequest(fx, "X-Reflect: " + PLACEHOLDER + "\r\n" + headers));
            String head = c.readHead();
            assertTrue(head.startsWith("HTTP/1.1 101 "), head);
            return c;
        } catch (IOException | AssertionError e) {
            c.close();
            throw e;
        }
    }

    /** {@return the close code of a close frame} */
    static int closeCode(Read close) {
        return ((close.payload()[0] & 0xFF) << 8) | (close.payload()[1] & 0xFF);
    }

    @Test
    void serverMessagesAreScrubbedOverHttp() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = inject())) {
            fx.upstream.upgrade = WebSocketScrubTest::echoFrames;
            try (RawClient c = upgraded(fx, "Sec-WebSocket-Extensions: permessage-deflate\r\n")) {
                assertScrubbed(readUntilClose(c.in()));
                c.send(CLIENT_CLOSE);
            }
            String sent = fx.upstream.take().head();
            assertTrue(sent.contains(SECRET), "the upstream did receive the value");
            assertFalse(sent.toLowerCase().contains("sec-websocket-extensions"), "no extension is offered: " + sent);
            assertEquals(List.of("[API_TOKEN] 0 1", "[API_TOKEN] 0 2", "[API_TOKEN] 0 1", "[API_TOKEN] 0 1"),
                    fx.hook.scrubs, "each scrubbed message is reported, with its count");
        }
    }

    /**
     * A request-response protocol: the server sends a message that could start the value, then waits for the
     * client. The held message reaches the client while the server is silent (after
     * {@code ResponseScrub.SILENCE_MILLIS}), so the client can answer; the server goes on only once it has.
     */
    @Test
    void aHeldMessageReachesTheClientWhileTheServerIsSilent() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = inject())) {
            // then the upstream waits for the client's first byte
            fx.upstream.upgrade = switched("", frame(0x81, utf8("your turn " + SECRET.substring(0, 5))));
            try (RawClient c = upgraded(fx, "")) {
                Read first = readFrame(c.in());
                assertEquals(0x81, first.b0());
                assertEquals("your turn " + SECRET.substring(0, 5), first.text());
                c.send(CLIENT_CLOSE);
            }
        }
    }

    @Test
    void serverMessagesAreScrubbedOverInterceptedHttps() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = inject())) {
            fx.tlsUpstream.upgrade = WebSocketScrubTest::echoFrames;
            String authority = ProxyFixture.API + ":" + fx.tlsUpstream.port();
            Socket raw = new Socket(InetAddress.getLoopbackAddress(), fx.port);
            raw.getOutputStream().write(utf8("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority
                    + "\r\n\r\n"));
            try (RawClient connect = new RawClient(raw)) {
                String established = connect.readHead();
                assertTrue(established.startsWith("HTTP/1.1 200"), established);
                SSLSocket tls = (SSLSocket) fx.trustProxyCa().getSocketFactory().createSocket(raw, ProxyFixture.API,
                        fx.tlsUpstream.port(), true);
                tls.startHandshake();
                try (RawClient c = new RawClient(tls)) {
                    c.send("GET /ws HTTP/1.1\r\nHost: " + authority + "\r\nX-Reflect: " + PLACEHOLDER + "\r\n"
                            + UPGRADE + "\r\n");
                    String head = c.readHead();
                    assertTrue(head.startsWith("HTTP/1.1 101 "), head);
                    assertScrubbed(readUntilClose(c.in()));
                    c.send(CLIENT_CLOSE);
                }
            }
            assertEquals(4, fx.hook.scrubs.size(), fx.hook.scrubs.toString());
        }
    }

    /** A server message over the message limit is never relayed: both peers get 1009, and it is audited. */
    @Test
    void aServerMessageOverTheLimitClosesWith1009() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = inject())) {
            byte[] half = new byte[3 * 1024 * 1024];
            fx.upstream.upgrade = switched("", frame(0x02, half), frame(0x80, half));
            try (RawClient c = upgraded(fx, "")) {
                Read close = readFrame(c.in());
                assertEquals(0x88, close.b0(), "no data frame of the message reached the client");
                assertEquals(1009, closeCode(close));
            }
            assertEquals(List.of("response_uninspectable false"), fx.hook.unscannable);
        }
    }

    /** A close frame's reason is scrubbed; a masked server frame (RFC 6455, 5.1) then closes both with 1002. */
    @Test
    void aCloseReasonIsScrubbedAndAMaskedServerFrameCloses() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = inject())) {
            fx.upstream.upgrade = switched("", frame(0x88, closeWithReason("bye " + SECRET)));
            try (RawClient c = upgraded(fx, "")) {
                Read close = readFrame(c.in());
                assertEquals(0x88, close.b0());
                assertEquals(1000, closeCode(close));
                assertEquals("bye " + PLACEHOLDER, new String(close.payload(), 2, close.payload().length - 2,
                        StandardCharsets.UTF_8));
                c.send(CLIENT_CLOSE);
            }
            fx.upstream.upgrade = switched("", new byte[] {(byte) 0x81, (byte) 0x82, 0, 0, 0, 0, 'h', 'i'});
            try (RawClient c = upgraded(fx, "")) {
                Read close = readFrame(c.in());
                assertEquals(0x88, close.b0(), "the masked frame never reached the client");
                assertEquals(1002, closeCode(close));
            }
        }
    }

    private static byte[] closeWithReason(String reason) {
        byte[] r = utf8(reason);
        byte[] p = new byte[2 + r.length];
        p[0] = 3;
        p[1] = (byte) 0xE8;
        System.arraycopy(r, 0, p, 2, r.length);
        return p;
    }

    /** A 101 that accepts an extension the supervisor removed from the offer is refused with 502. */
    @Test
    void anAcceptedExtensionIsRefused() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = inject())) {
            fx.upstream.upgrade = switched("Sec-WebSocket-Extensions: permessage-deflate\r\n",
                    frame(0xC1, utf8("compressed")));
            try (RawClient c = fx.client()) {
                RawClient.Response r = c.send(upgradeRequest(fx, "X-Reflect: " + PLACEHOLDER
                        + "\r\nSec-WebSocket-Extensions: permessage-deflate\r\n")).read();
                assertEquals(502, r.status(), r.head());
            }
        }
    }

    /** A request without a credential to a host none is bound to is relayed untouched. */
    @Test
    void anUpgradeWithoutACredentialIsRelayedUntouched() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = inject())) {
            fx.upstream.upgrade = switched("", frame(0x01, utf8("part ")), frame(0x80, utf8("two")),
                    frame(0x88, new byte[0]));
            try (RawClient c = fx.client()) {
                c.send(upgradeRequest(fx, ""));
                assertTrue(c.readHead().startsWith("HTTP/1.1 101 "));
                List<Read> got = readUntilClose(c.in());
                assertEquals(3, got.size(), "the fragments keep their frames");
                assertEquals("part ", got.get(0).text());
                c.send(CLIENT_CLOSE);
            }
            assertEquals(List.of(), fx.hook.scrubs);
        }
    }
}
