package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client that is still sending when the proxy ends its connection (an answer written before the request body was
 * read; a WebSocket session closed with 1013 while its message is still arriving) reads the whole answer or close
 * frame: the proxy drains what the client sends before it closes ({@code LingeringClose}), so no TCP reset can discard
 * it. The client here sends everything before it reads anything, as simple clients do; a close with its bytes unread
 * would reset the connection under it.
 */
class LingeringCloseTest {
    private static final int MIB = 1024 * 1024;

    @TempDir
    Path tmp;

    /** Writes {@code bytes}; {@return whether all were written before the proxy closed the connection} */
    private static boolean sendAll(OutputStream out, byte[] bytes) {
        try {
            out.write(bytes);
            out.flush();
            return true;
        } catch (IOException e) {
            return false; // reset by the proxy: what follows shows whether the answer survived
        }
    }

    /** {@return an unfinished text message of {@code size} bytes in masked 64 KiB fragments} */
    private static byte[] message(int size) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(size + size / 1000);
        byte[] chunk = "a".repeat(64 * 1024).getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < size / chunk.length; i++) {
            out.writeBytes(WebSocketBudgetTest.frame(i == 0 ? 0x01 : 0x00, chunk, true));
        }
        return out.toByteArray();
    }

    @Test
    void anAnswerBeforeTheBodyReachesAClientStillSendingIt() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp)) {
            for (int round = 0; round < 3; round++) {
                try (RawClient c = fx.client()) {
                    String auth = ProxyFixture.DENIED + ":" + fx.upstream.port();
                    byte[] body = new byte[2 * MIB];
                    c.send("POST http://" + auth + "/ HTTP/1.1\r\nHost: " + auth + "\r\nContent-Length: "
                            + body.length + "\r\n\r\n");
                    boolean sent = sendAll(c.out(), body);
                    c.socket().setSoTimeout(10_000);
                    String answer;
                    try {
                        answer = new String(c.in().readAllBytes(), StandardCharsets.ISO_8859_1);
                    } catch (IOException e) {
                        throw new AssertionError("the answer was lost (body sent whole: " + sent + "): " + e, e);
                    }
                    assertTrue(answer.startsWith("HTTP/1.1 403 "), answer);
                    assertTrue(answer.contains("\"error\":\"policy_denied\""), answer);
                    assertTrue(sent, "the proxy read the body it did not want instead of resetting");
                }
            }
        }
    }

    /**
     * The upstream echoes 4 MiB of binary frames to a client that reads slowly (a 4 KiB receive buffer, 2 KiB reads
     * 1 ms apart), so the proxy's writes to it queue up; meanwhile the client's 6 MiB text message passes the 4 MiB
     * budget: the proxy closes with 1013 while the rest of the message is arriving. The client reads what was queued
     * and then the close frame: a close with the message's bytes unread would reset the connection and drop what was
     * still queued (the proxy before LingeringClose: reset after about 1 MiB read, in every run).
     */
    @Test
    void aWebSocketCloseWith1013ReachesAClientStillSendingItsMessage() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.l7 = (plan, request, body) -> new L7Verdict.Allow(
                Optional.empty(), Optional.of(message -> true)), b -> b.bodyBufferBudget(4L * MIB)
                .bodyBufferWait(Duration.ofMillis(100)).bodyBufferClientSharePercent(100))) {
            for (int round = 0; round < 2; round++) {
                java.net.Socket s = new java.net.Socket();
                s.setReceiveBufferSize(4096);
                s.connect(new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), fx.port));
                try (RawClient c = new RawClient(s)) {
                    c.send(WebSocketScrubTest.upgradeRequest(fx, ""));
                    assertTrue(c.readHead().startsWith("HTTP/1.1 101 "));
                    java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
                    byte[] binary = new byte[16 * 1024];
                    for (int i = 0; i < 256; i++) {
                        all.writeBytes(WebSocketBudgetTest.frame(0x82, binary, true)); // echoed: 4 MiB
                    }
                    all.writeBytes(message(6 * MIB));
                    WebSocketBudgetTest.sendAsync(c, all.toByteArray());
                    // the echo is relayed as bytes; the proxy's close frame lands between its frames (FrameSink), so
                    // the stream is read whole and parsed: whole frames, the last one the proxy's close, 1013
                    java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
                    c.socket().setSoTimeout(20_000);
                    try {
                        byte[] buf = new byte[2048];
                        for (int n; (n = c.in().read(buf)) >= 0; ) {
                            got.write(buf, 0, n);
                            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // a slow reader (pacing)
                        }
                    } catch (IOException e) {
                        throw new AssertionError("reset after " + got.size() + " bytes, the close frame lost: " + e, e);
                    }
                    java.util.List<WebSocketFrameCutTest.Frame> frames =
                            WebSocketFrameCutTest.frames(got.toByteArray());
                    assertTrue(!frames.isEmpty(), "nothing read");
                    WebSocketFrameCutTest.Frame last = frames.get(frames.size() - 1);
                    assertEquals(0x88, last.b0(), "the stream ends with the close frame");
                    assertEquals("03 f5", String.format("%02x %02x", last.payload()[0], last.payload()[1]));
                }
            }
        }
    }
}
