package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.EnvelopeLimits;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The read watchdog's {@code 408} ({@code body_min_rate}, {@code body_buffer_timeout}, {@code request_head_timeout})
 * reaches a client that is still sending: the watchdog answers, then the connection closes through the same
 * lingering close as every other answer given before the request was read ({@code LingeringClose}), so no TCP reset
 * (a close with the client's bytes unread) can discard the answer. A client that never stops sending is closed once
 * the linger's bounds are reached.
 */
class WatchdogLingerTest {
    private static final int MAX = EnvelopeLimits.MAX_BODY_BYTES;

    @TempDir
    Path tmp;

    private static String post(ProxyFixture fx, int port, long length) {
        String auth = ProxyFixture.API + ":" + port;
        return "POST http://" + auth + "/upload HTTP/1.1\r\nHost: " + auth + "\r\nContent-Length: " + length
                + "\r\n\r\n";
    }

    /** Sends {@code chunk} again and again until the connection fails or {@code stop} is set; counts the bytes. */
    private static CompletableFuture<Void> sendForever(RawClient c, byte[] chunk, long pauseNanos, AtomicBoolean stop,
                                                       AtomicLong sent) {
        return CompletableFuture.runAsync(() -> {
            try {
                while (!stop.get()) {
                    c.out().write(chunk);
                    c.out().flush();
                    sent.addAndGet(chunk.length);
                    if (pauseNanos > 0) {
                        java.util.concurrent.locks.LockSupport.parkNanos(pauseNanos); // the pace of a trickle
                    }
                }
            } catch (IOException e) {
                // closed or reset by the proxy: the reader shows whether the answer survived
            }
        }, command -> Thread.ofVirtual().start(command));
    }

    /**
     * Reads until {@code answers} complete responses (head and Content-Length body) arrived, then on until the proxy
     * ends the connection (end of stream, or a reset once every answer was read: a client still sending when the
     * linger's bound closes the connection may get one). {@return the responses read} A reset before the last answer
     * is complete, or a connection the proxy does not end within the read timeout, fails the test.
     */
    private static java.util.List<RawClient.Response> readAnswersThenEnd(RawClient c, int answers)
            throws IOException {
        java.util.List<RawClient.Response> got = new java.util.ArrayList<>();
        try {
            while (got.size() < answers) {
                got.add(c.read());
            }
        } catch (java.net.SocketTimeoutException e) {
            throw new AssertionError("the answers did not come; read " + got, e);
        } catch (IOException e) {
            throw new AssertionError("reset after " + got.size() + " answers, the rest lost: " + e, e);
        }
        try {
            byte[] buf = new byte[4096];
            while (c.in().read(buf) >= 0) {
                // nothing more is expected; read on until the proxy ends the connection
            }
        } catch (java.net.SocketTimeoutException e) {
            throw new AssertionError("the proxy did not end the connection", e);
        } catch (IOException resetAfterTheAnswers) {
            // the linger's bound closed on a client still sending: the answers were read before
        }
        return got;
    }

    private static void assert408(RawClient.Response r, String reason) {
        assertEquals(408, r.status(), r.head());
        assertTrue(r.bodyText().contains("\"error\":\"" + reason + "\""), r.bodyText());
        assertTrue(r.bodyText().strip().endsWith("}"), "the JSON body whole: " + r.bodyText());
    }

    /** {@return a client whose receive buffer is small: what the proxy writes to it queues in the proxy's socket} */
    private static RawClient smallWindowClient(ProxyFixture fx) throws IOException {
        java.net.Socket s = new java.net.Socket();
        s.setReceiveBufferSize(2048);
        s.connect(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), fx.port));
        return new RawClient(s);
    }


    /**
     * Reads everything until the proxy ends the connection, slowly: 128 bytes every 10 ms (about 12 KiB/s, a pace,
     * not a synchronisation), so what the proxy writes queues in its socket for a while. A reset ends the read; the
     * caller's parse then shows whether the answers were whole before it.
     *
     * @return the bytes read, and how the read ended
     */
    private static String readSlowlyToEnd(RawClient c, StringBuilder ending) {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        byte[] buf = new byte[128];
        try {
            for (int n; (n = c.in().read(buf)) >= 0; ) {
                got.write(buf, 0, n);
                java.util.concurrent.locks.LockSupport.parkNanos(10_000_000L);
            }
            ending.append("end of stream");
        } catch (IOException e) {
            ending.append(e);
        }
        return got.toString(StandardCharsets.ISO_8859_1);
    }

    /** {@return the responses whole in {@code wire} (heads with a Content-Length body), in order} */
    private static java.util.List<RawClient.Response> responses(String wire) {
        java.util.List<RawClient.Response> out = new java.util.ArrayList<>();
        int at = 0;
        while (true) {
            int headEnd = wire.indexOf("\r\n\r\n", at);
            if (headEnd < 0) {
                return out;
            }
            String head = wire.substring(at, headEnd);
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)\r\ncontent-length: *(\\d+)")
                    .matcher(head);
            int length = m.find() ? Integer.parseInt(m.group(1)) : 0;
            int bodyStart = headEnd + 4;
            if (wire.length() < bodyStart + length) {
                return out;
            }
            out.add(new RawClient.Response(Integer.parseInt(head.substring(9, 12)), head,
                    wire.substring(bodyStart, bodyStart + length).getBytes(StandardCharsets.ISO_8859_1)));
            at = bodyStart + length;
        }
    }

    /**
     * Sends {@code request}, a 12 KiB response's GET with a request the watchdog cuts pipelined behind it, while
     * {@code trickle} goes on every 25 ms and the client reads slowly; {@return the two responses}, asserted whole.
     */
    private static java.util.List<RawClient.Response> slowReaderStillSending(ProxyFixture fx, String requests,
                                                                            byte[] trickle, String big)
            throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        try (RawClient c = smallWindowClient(fx)) {
            c.send(requests);
            CompletableFuture<Void> sender = sendForever(c, trickle, 25_000_000L, stop, new AtomicLong());
            StringBuilder ending = new StringBuilder();
            String wire = readSlowlyToEnd(c, ending);
            stop.set(true);
            sender.get(10, TimeUnit.SECONDS);
            java.util.List<RawClient.Response> got = responses(wire);
            assertEquals(2, got.size(), "read " + wire.length() + " bytes, then " + ending + ": the rest was lost");
            assertEquals(200, got.get(0).status());
            assertEquals(big, got.get(0).bodyText());
            assertTrue(!ending.toString().contains("timed out"), "the proxy did not end the connection");
            return got;
        }
    }

    /**
     * The client asks for a 12 KiB response and, pipelined behind it, posts a body for the chain that it trickles at
     * 16 bytes every 25 ms (about 640 bytes per second, under the 1 KiB/s minimum) and never finishes; it reads slowly
     * through a small receive buffer, so most of the response still waits in the proxy's socket when the watchdog
     * answers 408. The client reads the whole response and the whole 408: a close at once (the proxy before the
     * watchdog's answer lingered) met the next trickled bytes with a reset that discarded what was still queued. The
     * trickle never stops: the connection ends at the linger's time bound.
     */
    @Test
    void aTrickledBodyStillArrivingGetsTheWhole408() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.bodyBufferTimeout(Duration.ofMinutes(10))
                .bodyMinBytesPerSecond(1024).bodyMinRateGrace(Duration.ofMillis(200)))) {
            fx.hook.selector = r -> ChainSelection.selected(MAX, false);
            String big = "x".repeat(12 * 1024);
            fx.upstream.respond(r -> TestUpstream.ok(big));
            for (int round = 0; round < 2; round++) {
                assert408(slowReaderStillSending(fx, fx.get("/big") + post(fx, fx.upstream.port(), 1_000_000),
                        new byte[16], big).get(1), "body_min_rate");
            }
            assertEquals(java.util.List.of("body_min_rate", "body_min_rate"), fx.hook.limitRefusals);
        }
    }

    /** As {@link #aTrickledBodyStillArrivingGetsTheWhole408}, with a head trickled a byte every 25 ms past its deadline. */
    @Test
    void aTrickledHeadStillArrivingGetsTheWhole408() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.requestHeadTimeout(Duration.ofMillis(300)))) {
            String big = "x".repeat(12 * 1024);
            fx.upstream.respond(r -> TestUpstream.ok(big));
            for (int round = 0; round < 2; round++) {
                assert408(slowReaderStillSending(fx, fx.get("/big") + "GET " + fx.apiUrl("/")
                        + " HTTP/1.1\r\nX-Slow: ", "a".getBytes(StandardCharsets.US_ASCII), big).get(1),
                        "request_head_timeout");
            }
        }
    }

    /**
     * A body streamed to an upstream that never reads it: the proxy's thread blocks writing upstream, the client's
     * bytes pile up unread in the proxy's socket, the rate falls under the minimum (32 MiB/s: more than the socket
     * buffers on the way hold) and the watchdog answers 408 while that thread is still blocked. The client sends as
     * fast as it can and never stops: it reads the whole 408, and the proxy closes the connection at the linger's
     * byte bound (4 MiB), long before the client's 10 s read timeout; the sender's writes then fail.
     */
    @Test
    void aClientThatNeverStopsSendingGetsThe408AndIsClosedAtTheLingerBound() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.bodyMinBytesPerSecond(32L * 1024 * 1024)
                .bodyMinRateGrace(Duration.ofMillis(300)));
             ServerSocket deaf = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            fx.hook.selector = r -> ChainSelection.none(); // streamed upstream
            for (int round = 0; round < 2; round++) {
                try (RawClient c = fx.client()) {
                    c.send(post(fx, deaf.getLocalPort(), 1L << 40));
                    CompletableFuture<Void> sender = sendForever(c, new byte[64 * 1024], 0, new AtomicBoolean(),
                            new AtomicLong());
                    assert408(readAnswersThenEnd(c, 1).get(0), "body_min_rate");
                    sender.get(10, TimeUnit.SECONDS); // ends by itself: the proxy closed the connection under it
                }
            }
            assertEquals(java.util.List.of("body_min_rate", "body_min_rate"), fx.hook.limitRefusals);
        }
    }
}
