package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * When the proxy closes a WebSocket session with a status of its own (here the L7 message rules refuse a client text
 * message, or a message chain stage does: 1008) while the other direction, copied byte for byte, has relayed part of a server frame, the client
 * receives only whole frames and then the proxy's close frame (RFC 6455 sections 5.2 and 7.4): the part of a frame is
 * held back, never followed by a close frame the client would read as that frame's payload. Every byte the client
 * receives is parsed as frames.
 */
class WebSocketFrameCutTest {
    @TempDir
    Path tmp;

    /** One parsed frame as the client received it. */
    record Frame(int b0, byte[] payload) {
    }

    /**
     * {@return the frames in {@code wire}, in order} Fails when the bytes end inside a frame (a partial frame: what
     * came after it, a close frame included, would have been read as its payload).
     */
    static List<Frame> frames(byte[] wire) {
        List<Frame> out = new ArrayList<>();
        int at = 0;
        while (at < wire.length) {
            assertTrue(wire.length - at >= 2, "a partial frame header at byte " + at + " of " + wire.length);
            int b0 = wire[at] & 0xff;
            int len7 = wire[at + 1] & 0x7f;
            boolean masked = (wire[at + 1] & 0x80) != 0;
            int head = 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + (masked ? 4 : 0);
            assertTrue(wire.length - at >= head, "a partial frame header at byte " + at + " of " + wire.length);
            long len = len7;
            if (len7 >= 126) {
                len = 0;
                for (int k = 2; k < (len7 == 126 ? 4 : 10); k++) {
                    len = (len << 8) | (wire[at + k] & 0xff);
                }
            }
            assertTrue(wire.length - at - head >= len, "a partial frame at byte " + at + " (" + len
                    + " payload bytes announced, " + (wire.length - at - head) + " received): "
                    + hex(Arrays.copyOfRange(wire, at, wire.length)));
            byte[] p = Arrays.copyOfRange(wire, at + head, at + head + (int) len);
            if (masked) {
                for (int i = 0; i < p.length; i++) {
                    p[i] ^= wire[at + head - 4 + (i & 3)];
                }
            }
            out.add(new Frame(b0, p));
            at += head + (int) len;
        }
        return out;
    }

    private static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < Math.min(b.length, 32); i++) {
            s.append(String.format("%02x ", b[i]));
        }
        return s.toString().trim();
    }

    /** {@return every byte the client reads until the proxy ends the connection} */
    private static byte[] readToEnd(RawClient c) throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        byte[] buf = new byte[4096];
        try {
            for (int n; (n = c.in().read(buf)) >= 0; ) {
                got.write(buf, 0, n);
            }
        } catch (java.net.SocketException reset) {
            // a reset after the proxy's close: what was read is parsed
        }
        return got.toByteArray();
    }

    /**
     * {@return a message chain that refuses every text message holding {@code refused} and passes the others}
     *
     * @param inspects the directions it reads
     */
    static MessageSession refusingChain(java.util.function.Predicate<MessageSession.Direction> inspects) {
        return refusingChain(inspects, reason -> { });
    }

    /**
     * {@return a message chain that refuses every text message holding {@code refused}, passes the others, and hands
     * its session's end to {@code ended}}
     *
     * @param inspects the directions it reads
     * @param ended told the session's end reason
     */
    static MessageSession refusingChain(java.util.function.Predicate<MessageSession.Direction> inspects,
                                        java.util.function.Consumer<dev.openshell.middleware.spi.SessionEndReason> ended) {
        return new MessageSession() {
            @Override
            public boolean inspects(Direction d) {
                return inspects.test(d);
            }

            @Override
            public void start(String selectedSubprotocol) {
            }

            @Override
            public Verdict text(Direction d, String text) {
                return new Verdict(!text.contains("refused"), text, false);
            }

            @Override
            public boolean uninspected(Direction d) {
                return true;
            }

            @Override
            public void end(dev.openshell.middleware.spi.SessionEndReason reason) {
                ended.accept(reason);
            }
        };
    }

    /**
     * The upstream sends a whole text frame and the first 10 of a 100-byte binary frame, then waits; the client reads
     * the whole frame, then sends a text message the L7 rules ({@code UpgradeRelay}) or a message chain stage
     * ({@code SessionRelay}) refuses. The client receives the whole frame, then the close frame 1008, and nothing
     * else: the proxy before wrote the 12 bytes of the unfinished frame, then the close frame, which the client then
     * read as that frame's payload (and never saw a close).
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aRefusedMessageClosesAtAFrameBoundaryOfTheServersBytes(boolean chain) throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> {
            if (chain) {
                s.sessions = (plan, request) -> new SessionVerdict.Inspect(
                        refusingChain(d -> d == MessageSession.Direction.TO_UPSTREAM), true);
            } else {
                s.l7 = (plan, request, body) -> new L7Verdict.Allow(Optional.empty(),
                        Optional.of(message -> !message.contains("refused")));
            }
        })) {
            byte[] whole = WebSocketBudgetTest.frame(0x81, "hello".getBytes(StandardCharsets.UTF_8), false);
            byte[] partial = Arrays.copyOf(WebSocketBudgetTest.frame(0x82, new byte[100], false), 12);
            fx.upstream.upgrade = WebSocketScrubTest.switched("", whole, partial);
            for (int round = 0; round < 3; round++) {
                try (RawClient c = fx.client()) {
                    c.send(WebSocketScrubTest.upgradeRequest(fx, ""));
                    assertTrue(c.readHead().startsWith("HTTP/1.1 101 "));
                    byte[] first = c.in().readNBytes(whole.length); // the relay has the server's bytes
                    assertEquals(hex(whole), hex(first));
                    c.out().write(WebSocketBudgetTest.frame(0x81, "refused".getBytes(StandardCharsets.UTF_8),
                            true));
                    c.out().flush();
                    List<Frame> got = frames(readToEnd(c));
                    assertEquals(1, got.size(), "only the close frame follows the whole frame: " + got);
                    assertEquals(0x88, got.get(0).b0());
                    assertEquals(1008, ((got.get(0).payload()[0] & 0xff) << 8) | (got.get(0).payload()[1] & 0xff));
                }
            }
        }
    }

    /**
     * RFC 6455 section 7.1.7: inside a frame longer than the proxy holds (64 KiB), the proxy can only fail the
     * connection. The upstream sends the first 1,000 bytes of a 100 KiB binary frame, which pass as they come; the
     * client then sends an unmasked frame (1002, section 5.1). The client receives those bytes and then the end of the
     * connection, no close frame (it would be read as the frame's payload), and the close is audited all the same:
     * one {@code websocket_protocol_error} naming the status decided.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aCloseInsideALongFrameEndsTheConnectionAndIsAudited(boolean chain) throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> {
            if (chain) {
                s.sessions = (plan, request) -> new SessionVerdict.Inspect(
                        refusingChain(d -> d == MessageSession.Direction.TO_UPSTREAM), true);
            } else {
                s.l7 = (plan, request, body) -> new L7Verdict.Allow(Optional.empty(), Optional.of(message -> true));
            }
        })) {
            byte[] begun = Arrays.copyOf(WebSocketBudgetTest.frame(0x82, new byte[100 * 1024], false), 1000);
            fx.upstream.upgrade = WebSocketScrubTest.switched("", begun);
            try (RawClient c = fx.client()) {
                c.send(WebSocketScrubTest.upgradeRequest(fx, ""));
                assertTrue(c.readHead().startsWith("HTTP/1.1 101 "));
                assertEquals(hex(begun), hex(c.in().readNBytes(begun.length)), "the long frame's bytes as they came");
                c.out().write(WebSocketBudgetTest.frame(0x81, "hi".getBytes(StandardCharsets.UTF_8), false));
                c.out().flush();
                assertEquals(0, readToEnd(c).length, "no close frame inside the frame: the connection just ends");
            }
            assertEquals(1, fx.hook.refusals.size(), () -> "one refusal: " + fx.hook.refusals);
            ProxyRefusal r = fx.hook.refusals.get(0);
            assertEquals("websocket_protocol_error", r.code());
            assertEquals(Optional.of("protocol_violation"), r.cause());
            assertTrue(r.detail().contains("closed with 1002"), r.detail());
        }
    }
}
