package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A WebSocket session the server side ends (the upstream sends its close frame and ends its connection at once; it
 * ends or resets its connection without a close frame; a message chain stage denies a server message) reaches a
 * client that is still sending and reads slowly whole: every frame the upstream sent, then a close frame (the
 * upstream's 1000, the proxy's 1001 for an upstream whose connection ended without one, the proxy's 1008 for the
 * denial). The proxy closes the client's
 * side through a lingering close ({@code UpgradeRelay.endClient}, {@code LingeringClose.cutOff}), over plain HTTP and
 * inside an intercepted CONNECT, on each relay: bytes copied ({@code UpgradeRelay.relay}), client text messages under
 * the L7 rules ({@code UpgradeRelay.relayInspected}) and a message chain ({@code SessionRelay}). The proxy before
 * closed the client's socket at once: the client's unread frames made that a TCP reset, which discarded what was still
 * queued for the client, the close frame with it.
 *
 * <p>Each case runs {@value #ROUNDS} times. The client's 4 KiB receive buffer and its paced reads keep the proxy's
 * writes queued when the upstream ends; its paced sends (512-byte frames) keep arriving during the close and stay far
 * below the linger's bounds. The upstream never resets: it ends its side with a FIN (a TLS close_notify first) and
 * reads what the proxy sends until the proxy ends.
 */
class WebSocketServerCloseLingerTest {
    private static final int ROUNDS = 20;
    /** The upstream's binary frames before its end, and the payload of each. */
    private static final int FRAMES = 64;
    private static final int FRAME_BYTES = 1024;

    @TempDir
    Path tmp;

    /** How the relay is chosen: bytes copied, L7 message rules, or a message chain reading both directions. */
    enum Relay { COPY, L7, CHAIN }

    /** How the upstream side ends. */
    enum End {
        /** The upstream's close frame (1000), then the end of its connection, without waiting for the client's. */
        CLOSE_FRAME(1000),
        /** The end of the upstream's connection without a close frame: the proxy sends 1001. */
        FIN(1001),
        /** A text message a chain stage denies: the proxy sends 1008 (only with {@link Relay#CHAIN}). */
        DENIED(1008),
        /**
         * A reset of the upstream's connection, once the client has read all but the last two frames (so nothing the
         * upstream sent is still in its send queue): the proxy sends 1001 too (a reset reads as an end to the direction
         * that did not meet its error first).
         */
        RESET(1001),
        /** The upstream's close frame, then the end of its connection once the client's close frame reached it. */
        HANDSHAKE(1000),
        /** The upstream's close frame, then it reads the client's and keeps its connection open until the test ends. */
        HOLD(1000);

        final int status;

        End(int status) {
            this.status = status;
        }
    }

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (boolean tls : new boolean[] {false, true}) {
            out.add(Arguments.of(tls, Relay.COPY, End.CLOSE_FRAME));
            out.add(Arguments.of(tls, Relay.COPY, End.FIN));
            out.add(Arguments.of(tls, Relay.L7, End.FIN));
            out.add(Arguments.of(tls, Relay.CHAIN, End.CLOSE_FRAME));
            out.add(Arguments.of(tls, Relay.CHAIN, End.DENIED));
            out.add(Arguments.of(tls, Relay.COPY, End.RESET));
            out.add(Arguments.of(tls, Relay.CHAIN, End.RESET));
        }
        return out.stream();
    }

    @ParameterizedTest(name = "tls={0} {1} {2}")
    @MethodSource("cases")
    void theClientStillSendingGetsEveryFrameAndTheCloseFrame(boolean tls, Relay relay, End end) throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> {
            if (relay == Relay.L7) {
                s.l7 = (plan, request, body) -> new L7Verdict.Allow(Optional.empty(), Optional.of(message -> true));
            } else if (relay == Relay.CHAIN) {
                s.sessions = (plan, request) -> new SessionVerdict.Inspect(
                        WebSocketFrameCutTest.refusingChain(d -> true), true);
            }
        }); Upstream up = new Upstream(tls ? ProxyFixture.serverContext(fx.upstreamCa, ProxyFixture.API) : null,
                end)) {
            for (int round = 0; round < ROUNDS; round++) {
                up.readMost = new java.util.concurrent.CountDownLatch(1);
                List<WebSocketFrameCutTest.Frame> got = session(fx, tls, up.port(), up.readMost);
                String where = "round " + round + ": ";
                assertEquals(FRAMES + 1, got.size(), where + "every frame and the close frame");
                for (int i = 0; i < FRAMES; i++) {
                    assertEquals(0x82, got.get(i).b0(), where + "frame " + i);
                    assertEquals(FRAME_BYTES, got.get(i).payload().length, where + "frame " + i);
                }
                WebSocketFrameCutTest.Frame close = got.get(FRAMES);
                assertEquals(0x88, close.b0(), where + "the last frame is a close frame");
                assertEquals(end.status, ((close.payload()[0] & 0xff) << 8) | (close.payload()[1] & 0xff), where);
            }
        }
    }

    /**
     * One session: the upgrade, then paced sends on a thread of their own while the client reads slowly until its
     * bytes hold a close frame. {@return the frames read} A reset before the close frame fails the test.
     */
    private static List<WebSocketFrameCutTest.Frame> session(ProxyFixture fx, boolean tls, int port,
                                                             java.util.concurrent.CountDownLatch readMost)
            throws Exception {
        try (RawClient c = open(fx, tls, port)) {
            AtomicBoolean stop = new AtomicBoolean();
            OutputStream out = c.out();
            byte[] frame = WebSocketBudgetTest.frame(0x82, new byte[512], true);
            Thread sender = Thread.ofVirtual().start(() -> {
                try {
                    while (!stop.get()) {
                        out.write(frame);
                        out.flush();
                        java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // a client's pace
                    }
                } catch (IOException e) {
                    // the proxy ended the connection
                }
            });
            try {
                return readUntilClose(c, readMost);
            } finally {
                stop.set(true);
                sender.join(10_000);
            }
        }
    }

    /**
     * {@return a client with a 4 KiB receive buffer whose upgrade to the upstream on {@code port} was answered 101},
     * inside an intercepted CONNECT when {@code tls}; closing it closes the connection
     */
    private static RawClient open(ProxyFixture fx, boolean tls, int port) throws Exception {
        Socket s = new Socket();
        s.setReceiveBufferSize(4096);
        s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), fx.port));
        String auth = ProxyFixture.API + ":" + port;
        RawClient c = new RawClient(s);
        try {
            if (tls) {
                c.send("CONNECT " + auth + " HTTP/1.1\r\nHost: " + auth + "\r\n\r\n");
                assertTrue(c.readHead().startsWith("HTTP/1.1 200 "));
                SSLSocket t = (SSLSocket) fx.trustProxyCa().getSocketFactory().createSocket(s, ProxyFixture.API,
                        port, true);
                t.startHandshake();
                c = new RawClient(t);
            }
            c.send("GET " + (tls ? "/ws" : "http://" + auth + "/ws") + " HTTP/1.1\r\nHost: " + auth + "\r\n"
                    + WebSocketScrubTest.UPGRADE + "\r\n");
            String head = c.readHead();
            assertTrue(head.startsWith("HTTP/1.1 101 "), head);
            return c;
        } catch (Exception | AssertionError e) {
            s.close();
            throw e;
        }
    }

    /**
     * The usual close the server begins, on a session whose server messages a chain stage reads (the relay parses
     * them and stops at the upstream's close frame): the client answers the close frame, and its answer reaches the
     * upstream before the proxy ends either connection (RFC 6455 section 7.1.1: the server ends the TCP connection
     * once both close frames passed); the client's connection then ends. The proxy before closed the upstream's
     * connection at the upstream's close frame: the client's answer never reached it.
     */
    @ParameterizedTest(name = "tls={0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void theClientsAnswerToTheServersCloseReachesTheServer(boolean tls) throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp,
                s -> s.sessions = (plan, request) -> new SessionVerdict.Inspect(
                        WebSocketFrameCutTest.refusingChain(d -> true), true));
             Upstream up = new Upstream(tls ? ProxyFixture.serverContext(fx.upstreamCa, ProxyFixture.API) : null,
                     End.HANDSHAKE);
             RawClient c = open(fx, tls, up.port())) {
            List<WebSocketFrameCutTest.Frame> got = readUntilClose(c, new java.util.concurrent.CountDownLatch(1));
            assertEquals(FRAMES + 1, got.size());
            c.send(WebSocketScrubTest.CLIENT_CLOSE);
            assertEquals(-1, c.in().read(), "the connection ends after the close handshake");
            assertTrue(up.clientClosed.get(10, java.util.concurrent.TimeUnit.SECONDS),
                    "the client's close frame reached the upstream");
        }
    }

    /**
     * A server that answers the close handshake but never ends its connection (RFC 6455 section 7.1.1 has the server
     * end it first) no longer holds the session, its threads and its slot to the upstream read timeout (5 minutes):
     * the proxy closes the upstream's connection {@code UpgradeRelay.UPSTREAM_CLOSING} (10 s) after the client's side
     * ended, and the session ends. The plain case failed before (the session stayed open past the 30 s bound); over
     * TLS the proxy's half-close of the upstream closes the TLS socket whole.
     */
    @ParameterizedTest(name = "tls={0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void aServerThatKeepsItsConnectionAfterTheCloseHandshakeIsClosed(boolean tls) throws Exception {
        java.util.concurrent.CompletableFuture<dev.openshell.middleware.spi.SessionEndReason> ended =
                new java.util.concurrent.CompletableFuture<>();
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp,
                s -> s.sessions = (plan, request) -> new SessionVerdict.Inspect(
                        WebSocketFrameCutTest.refusingChain(d -> true, ended::complete), true));
             Upstream up = new Upstream(tls ? ProxyFixture.serverContext(fx.upstreamCa, ProxyFixture.API) : null,
                     End.HOLD);
             RawClient c = open(fx, tls, up.port())) {
            readUntilClose(c, new java.util.concurrent.CountDownLatch(1));
            c.send(WebSocketScrubTest.CLIENT_CLOSE);
            assertTrue(up.clientClosed.get(10, java.util.concurrent.TimeUnit.SECONDS),
                    "the client's close frame reached the upstream");
            c.socket().close(); // the client gives up waiting for the server's end, as clients do
            assertTrue(ended.get(30, java.util.concurrent.TimeUnit.SECONDS) != null,
                    "the session ends well before the upstream read timeout");
        }
    }

    /**
     * Reads 2 KiB at a time, 1 ms apart, until a whole close frame arrived; opens {@code readMost} once all but two
     * of the upstream's frames are read. {@return the frames}
     */
    private static List<WebSocketFrameCutTest.Frame> readUntilClose(RawClient c,
                                                                    java.util.concurrent.CountDownLatch readMost)
            throws IOException {
        c.socket().setSoTimeout(20_000);
        InputStream in = c.in();
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        byte[] buf = new byte[2048];
        while (true) {
            int n;
            try {
                n = in.read(buf);
            } catch (IOException e) {
                throw new AssertionError("reset after " + got.size() + " bytes, before the close frame: " + e, e);
            }
            if (n < 0) {
                throw new AssertionError("the connection ended after " + got.size() + " bytes, before a close frame");
            }
            got.write(buf, 0, n);
            byte[] wire = got.toByteArray();
            int whole = wholeFrames(wire);
            if (whole >= (FRAMES - 2) * (FRAME_BYTES + 4)) {
                readMost.countDown();
            }
            if (whole > 0 && (wire[lastFrameStart(wire, whole)] & 0x0f) == 8) {
                assertEquals(wire.length, whole, "nothing after the close frame");
                return WebSocketFrameCutTest.frames(wire);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // a slow reader (pacing)
        }
    }

    /** {@return how many bytes of {@code wire} are whole frames} */
    private static int wholeFrames(byte[] wire) {
        int at = 0;
        while (true) {
            int next = frameEnd(wire, at);
            if (next < 0) {
                return at;
            }
            at = next;
        }
    }

    private static int lastFrameStart(byte[] wire, int whole) {
        int at = 0;
        while (true) {
            int next = frameEnd(wire, at);
            if (next == whole) {
                return at;
            }
            at = next;
        }
    }

    /** {@return where the frame at {@code at} ends, or -1 when it is not whole} */
    private static int frameEnd(byte[] wire, int at) {
        if (wire.length - at < 2) {
            return -1;
        }
        int len7 = wire[at + 1] & 0x7f;
        int head = 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + ((wire[at + 1] & 0x80) != 0 ? 4 : 0);
        if (wire.length - at < head) {
            return -1;
        }
        long len = len7;
        if (len7 >= 126) {
            len = 0;
            for (int k = 2; k < (len7 == 126 ? 4 : 10); k++) {
                len = (len << 8) | (wire[at + k] & 0xff);
            }
        }
        return wire.length - at - head >= len ? at + head + (int) len : -1;
    }

    /**
     * A WebSocket origin on 127.0.0.1 (plain or TLS): answers each upgrade 101, sends {@link #FRAMES} binary frames,
     * then ends as {@link End} says, and reads what the proxy sends until the proxy ends the connection.
     */
    private static final class Upstream implements AutoCloseable {
        private final ServerSocket server;
        private final End end;
        private final javax.net.ssl.SSLContext tls;
        /** Whether a close frame of the client's came ({@link End#HANDSHAKE}) before the proxy ended the connection. */
        final java.util.concurrent.CompletableFuture<Boolean> clientClosed = new java.util.concurrent.CompletableFuture<>();
        /** Lets a {@link End#HOLD} upstream end its connection: when the test closes the upstream. */
        final java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        /** Opened by the client of the round once it has read all but the last two frames ({@link End#RESET}). */
        volatile java.util.concurrent.CountDownLatch readMost;

        Upstream(javax.net.ssl.SSLContext tls, End end) throws IOException {
            this.end = end;
            this.tls = tls;
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread.ofVirtual().start(() -> {
                while (true) {
                    try {
                        Socket s = server.accept();
                        Thread.ofVirtual().start(() -> serve(s));
                    } catch (IOException e) {
                        return; // closed
                    }
                }
            });
        }

        int port() {
            return server.getLocalPort();
        }

        private void serve(Socket plain) {
            try (plain) {
                // TLS over the accepted socket: a reset is the plain socket's, with no close_notify before it
                Socket s = tls == null ? plain
                        : tls.getSocketFactory().createSocket(plain, ProxyFixture.API, plain.getPort(), true);
                if (s instanceof SSLSocket t) {
                    t.setUseClientMode(false);
                }
                InputStream in = s.getInputStream();
                OutputStream out = s.getOutputStream();
                StringBuilder head = new StringBuilder();
                while (!head.toString().endsWith("\r\n\r\n")) {
                    int b = in.read();
                    if (b < 0) {
                        return;
                    }
                    head.append((char) b);
                }
                ByteArrayOutputStream script = new ByteArrayOutputStream();
                script.writeBytes(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Accept: " + TestUpstream.accept(head.toString()) + "\r\n\r\n")
                        .getBytes(StandardCharsets.ISO_8859_1));
                for (int i = 0; i < FRAMES; i++) {
                    script.writeBytes(WebSocketBudgetTest.frame(0x82, new byte[FRAME_BYTES], false));
                }
                switch (end) {
                    case CLOSE_FRAME, HANDSHAKE, HOLD -> script.writeBytes(new byte[] {(byte) 0x88, 2, 0x03,
                        (byte) 0xe8});
                    case DENIED -> script.writeBytes(WebSocketBudgetTest.frame(0x81,
                            "refused".getBytes(StandardCharsets.UTF_8), false));
                    case FIN, RESET -> { }
                }
                out.write(script.toByteArray());
                out.flush();
                if (end == End.HANDSHAKE) {
                    clientClosed.complete(readsACloseFrame(in)); // then the connection ends
                    return;
                }
                if (end == End.HOLD) {
                    clientClosed.complete(readsACloseFrame(in));
                    in.transferTo(OutputStream.nullOutputStream()); // the proxy's FIN or close
                    release.await(60, java.util.concurrent.TimeUnit.SECONDS); // never ends the connection itself
                    return;
                }
                if (end == End.RESET) {
                    readMost.await(10, java.util.concurrent.TimeUnit.SECONDS);
                    plain.setSoLinger(true, 0);
                    plain.close(); // a reset, what was sent long received
                    return;
                }
                if (end != End.DENIED) {
                    s.shutdownOutput(); // a FIN (after a TLS close_notify): what was sent arrives whole
                }
                in.transferTo(OutputStream.nullOutputStream()); // never a reset: read until the proxy ends
            } catch (IOException e) {
                // the proxy ended the connection
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** Reads the proxy's frames until a close frame; {@return whether one came before the connection ended} */
        private static boolean readsACloseFrame(InputStream in) throws IOException {
            while (true) {
                int b0 = in.read();
                int b1 = in.read();
                if (b0 < 0 || b1 < 0) {
                    return false;
                }
                long len = WebSocketScrubTest.payloadLength(b1, in);
                try {
                    in.skipNBytes(((b1 & 0x80) != 0 ? 4 : 0) + len);
                } catch (java.io.EOFException e) {
                    return false;
                }
                if ((b0 & 0x0f) == 8) {
                    return true;
                }
            }
        }

        @Override
        public void close() throws IOException {
            release.countDown();
            server.close();
        }
    }
}
