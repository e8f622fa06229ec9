package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * WebSocket messages held for inspection are bounded by the body buffer budget (attacker pass 5, F2 and F3), on a
 * real proxy with a real loopback upstream: sessions whose unfinished messages would take more than the budget are
 * closed with 1013 (Try Again Later) and recorded as {@code body_buffer_busy}, while the sessions that fit and plain
 * requests go on; once the holders end, the whole budget is free again (two new holders fit).
 */
class WebSocketBudgetTest {
    private static final int MIB = 1024 * 1024;
    /** Each holder's unfinished message: 48 frames of 64 KiB (3 MiB); two fit in the 8 MiB budget, three do not. */
    private static final int FRAMES = 48;
    private static final int CHUNK = 64 * 1024;

    @TempDir
    Path tmp;

    /** {@return one frame, masked with a fixed key when it goes to the upstream} */
    static byte[] frame(int b0, byte[] p, boolean masked) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(p.length + 14);
        out.write(b0);
        int m = masked ? 0x80 : 0;
        if (p.length < 126) {
            out.write(m | p.length);
        } else if (p.length <= 0xFFFF) {
            out.write(m | 126);
            out.write(p.length >> 8);
            out.write(p.length);
        } else {
            out.write(m | 127);
            for (int i = 7; i >= 0; i--) {
                out.write(i >= 4 ? 0 : (p.length >>> (8 * i)) & 0xFF);
            }
        }
        if (masked) {
            out.writeBytes(new byte[4]); // a zero key: the payload is unchanged
        }
        out.writeBytes(p);
        return out.toByteArray();
    }

    /** {@return an unfinished text message of {@link #FRAMES} fragments, then a ping} */
    static byte[] unfinishedMessage(boolean masked) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] chunk = "a".repeat(CHUNK).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        for (int i = 0; i < FRAMES; i++) {
            out.writeBytes(frame(i == 0 ? 0x01 : 0x00, chunk, masked));
        }
        out.writeBytes(frame(0x89, new byte[] {'p'}, masked));
        return out.toByteArray();
    }

    static ProxyFixture fixture(Path tmp, java.util.function.Consumer<RecordingSteps> steps) throws Exception {
        return ProxyFixture.withSteps(tmp, steps, b -> b.bodyBufferBudget(8L * MIB)
                .bodyBufferWait(Duration.ofSeconds(2)).bodyBufferClientSharePercent(100));
    }

    /** {@return the upgrade, answered 101} */
    static RawClient upgraded(ProxyFixture fx, String headers) throws IOException {
        return WebSocketScrubTest.upgraded(fx, headers);
    }

    /** Sends on a thread of its own: a refused session stops reading, so a write may block until the close. */
    static void sendAsync(RawClient c, byte[] bytes) {
        Thread.ofVirtual().start(() -> {
            try {
                OutputStream out = c.out();
                out.write(bytes);
                out.flush();
            } catch (IOException ignored) {
                // the proxy closed the refused session
            }
        });
    }

    /**
     * {@return the next frame the client reads, unmasked} The echo upstream of {@link TestUpstream} returns the
     * client's own (masked) frames, which the proxy relays to the client as they are.
     */
    static WebSocketScrubTest.Read next(RawClient c) throws IOException {
        c.socket().setSoTimeout(20_000);
        java.io.InputStream in = c.in();
        int b0 = in.read();
        int b1 = in.read();
        if (b0 < 0 || b1 < 0) {
            throw new java.io.EOFException("no frame");
        }
        long len = WebSocketScrubTest.payloadLength(b1, in);
        byte[] key = (b1 & 0x80) != 0 ? in.readNBytes(4) : null;
        byte[] p = in.readNBytes((int) len);
        for (int i = 0; key != null && i < p.length; i++) {
            p[i] ^= key[i & 3];
        }
        return new WebSocketScrubTest.Read(b0, p);
    }

    static int closeStatus(WebSocketScrubTest.Read f) {
        assertEquals(0x88, f.b0(), "a close frame");
        return ((f.payload()[0] & 0xFF) << 8) | (f.payload()[1] & 0xFF);
    }

    static void assertVictimServed(ProxyFixture fx) throws IOException {
        try (RawClient v = fx.client()) {
            v.send("GET " + fx.apiUrl("/victim") + " HTTP/1.1\r\nHost: " + fx.apiAuthority()
                    + "\r\nConnection: close\r\n\r\n");
            assertEquals(200, v.read().status(), "a plain request is served while the budget is full");
        }
    }

    /** F2: client text messages on an L7 {@code protocol: websocket} endpoint, assembled for the L7 rules. */
    @Test
    void clientMessagesPastTheBudgetCloseWith1013AndTheBudgetComesBack() throws Exception {
        try (ProxyFixture fx = fixture(tmp, s -> s.l7 = (plan, request, body) -> new L7Verdict.Allow(
                Optional.empty(), Optional.of(message -> true)))) {
            List<RawClient> holders = new ArrayList<>();
            try {
                for (int round = 0; round < 2; round++) {
                    for (int i = 0; i < 2; i++) {
                        RawClient c = upgraded(fx, "");
                        holders.add(c);
                        sendAsync(c, unfinishedMessage(true));
                        // the upstream echoes the ping: the proxy read (and reserved) every fragment before it
                        assertEquals(0x89, next(c).b0(), "holder " + i + " of round " + round + " fits");
                    }
                    try (RawClient refused = upgraded(fx, "")) {
                        sendAsync(refused, unfinishedMessage(true));
                        assertEquals(1013, closeStatus(next(refused)), "the third holder is refused");
                    }
                    assertVictimServed(fx);
                    for (RawClient c : holders) {
                        c.close();
                    }
                    holders.clear();
                    // the next round's two holders fit only if these gave everything back (within the 2 s wait)
                }
            } finally {
                for (RawClient c : holders) {
                    c.close();
                }
            }
            assertEquals(List.of("body_buffer_busy", "body_buffer_busy"), fx.hook.limitRefusals);
            ProxyRefusal r = fx.hook.refusals.get(0);
            assertEquals(ProxyRefusal.Kind.LIMIT, r.kind());
            assertEquals(0, r.status(), "closed with a close frame, not answered");
            assertTrue(r.detail().contains("1013"), r.detail());
        }
    }

    /** F3: server messages of a credential-bound session, assembled and held for the scrub. */
    @Test
    void scrubbedServerMessagesPastTheBudgetCloseWith1013() throws Exception {
        try (ProxyFixture fx = fixture(tmp, s -> s.credentials = WebSocketScrubTest.inject())) {
            fx.upstream.upgrade = WebSocketScrubTest.switched("", unfinishedMessage(false));
            List<RawClient> holders = new ArrayList<>();
            try {
                for (int i = 0; i < 2; i++) {
                    RawClient c = WebSocketScrubTest.upgraded(fx, "");
                    holders.add(c);
                    // control frames are never held: the ping after the fragments means the proxy read them all
                    assertEquals(0x89, next(c).b0(), "holder " + i + " fits");
                }
                try (RawClient refused = WebSocketScrubTest.upgraded(fx, "")) {
                    assertEquals(1013, closeStatus(next(refused)), "the third holder is refused");
                }
                assertVictimServed(fx);
            } finally {
                for (RawClient c : holders) {
                    c.close();
                }
            }
            assertEquals(List.of("body_buffer_busy"), fx.hook.limitRefusals);
        }
    }
}
