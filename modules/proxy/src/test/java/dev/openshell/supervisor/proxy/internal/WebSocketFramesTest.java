package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.openshell.supervisor.proxy.internal.WebSocketFrames.Ended;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * RFC 6455 client frames as an L7 {@code websocket} endpoint relays them ({@link MessageRelay} with a policy that lets
 * binary and control frames pass): assembly, relaying, and every close the relay answers with.
 */
class WebSocketFramesTest {
    /** A client frame: masked with a fixed key. */
    static byte[] frame(boolean fin, int rsv, int opcode, byte[] payload, boolean masked) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write((fin ? 0x80 : 0) | rsv << 4 | opcode);
        int m = masked ? 0x80 : 0;
        if (payload.length < 126) {
            out.write(m | payload.length);
        } else if (payload.length < 65536) {
            out.write(m | 126);
            out.write(payload.length >> 8);
            out.write(payload.length & 0xFF);
        } else {
            out.write(m | 127);
            for (int i = 7; i >= 0; i--) {
                out.write((int) ((long) payload.length >> (8 * i)) & 0xFF);
            }
        }
        byte[] key = {0x11, 0x22, 0x33, 0x44};
        if (masked) {
            out.writeBytes(key);
        }
        for (int i = 0; i < payload.length; i++) {
            out.write(masked ? payload[i] ^ key[i & 3] : payload[i]);
        }
        return out.toByteArray();
    }

    static byte[] text(String s) {
        return frame(true, 0, 1, s.getBytes(StandardCharsets.UTF_8), true);
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    record Run(Ended ended, byte[] upstream, List<String> seen) {
    }

    static Run relay(byte[] client, String denied) throws IOException {
        ByteArrayOutputStream up = new ByteArrayOutputStream();
        List<String> seen = new ArrayList<>();
        Ended e = MessageRelay.relay(new ByteArrayInputStream(client), up, true, new MessageRelay.Policy() {
            @Override
            public MessageRelay.Outcome text(String m) {
                seen.add(m);
                return m.equals(denied) ? MessageRelay.Outcome.closeSession() : new MessageRelay.Outcome(false, m, false);
            }

            @Override
            public boolean uninspectedAllowed() {
                return true;
            }
        });
        return new Run(e, up.toByteArray(), seen);
    }

    @Provide
    Arbitrary<String> messages() {
        return Arbitraries.strings().ofMaxLength(300).withCharRange(' ', '~').withChars('é', '€', '\n');
    }

    @Property(tries = 300)
    void fragmentedTextIsAssembledAndRelayedByteForByte(@ForAll("messages") String message,
                                                         @ForAll @IntRange(min = 1, max = 7) int pieces,
                                                         @ForAll boolean pingInside) throws IOException {
        byte[] bytes = message.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        int step = Math.max(1, (bytes.length + pieces - 1) / pieces);
        int at = 0;
        int n = 0;
        do {
            int end = Math.min(bytes.length, at + step);
            byte[] part = java.util.Arrays.copyOfRange(bytes, at, end);
            wire.writeBytes(frame(end == bytes.length, 0, n == 0 ? 1 : 0, part, true));
            if (pingInside && n == 0) {
                wire.writeBytes(frame(true, 0, 9, new byte[] {1, 2}, true));
            }
            at = end;
            n++;
        } while (at < bytes.length);
        byte[] close = frame(true, 0, 8, new byte[] {0x03, (byte) 0xE8}, true);
        wire.writeBytes(close);
        Run r = relay(wire.toByteArray(), null);
        assertEquals(List.of(message), r.seen());
        assertEquals(0, r.ended().closeStatus());
        assertEquals(wire.size(), r.upstream().length, "every byte relayed");
    }

    @Test
    void aDeniedMessageIsNeverRelayed() throws IOException {
        byte[] first = text("hello");
        Run r = relay(concat(first, text("drop table"), text("after")), "drop table");
        assertEquals(WebSocketFrames.POLICY_VIOLATION, r.ended().closeStatus());
        assertArrayEquals(first, r.upstream());
        assertEquals(List.of("hello", "drop table"), r.seen());
    }

    @Test
    void binaryFramesStreamThroughUninspected() throws IOException {
        byte[] bin = frame(true, 0, 2, new byte[70000], true);
        Run r = relay(concat(bin, text("x")), "nothing");
        assertEquals(List.of("x"), r.seen());
        assertEquals(bin.length + text("x").length, r.upstream().length);
    }

    @Test
    void protocolViolationsClose() throws IOException {
        assertEquals(WebSocketFrames.PROTOCOL_ERROR, relay(frame(true, 0, 1, new byte[] {'a'}, false), null)
                .ended().closeStatus(), "unmasked");
        assertEquals(WebSocketFrames.PROTOCOL_ERROR, relay(frame(true, 4, 1, new byte[] {'a'}, true), null)
                .ended().closeStatus(), "RSV1 (permessage-deflate) without negotiation");
        assertEquals(WebSocketFrames.PROTOCOL_ERROR, relay(frame(true, 0, 3, new byte[0], true), null)
                .ended().closeStatus(), "reserved opcode");
        assertEquals(WebSocketFrames.PROTOCOL_ERROR, relay(frame(false, 0, 9, new byte[0], true), null)
                .ended().closeStatus(), "fragmented ping");
        assertEquals(WebSocketFrames.PROTOCOL_ERROR, relay(frame(true, 0, 9, new byte[126], true), null)
                .ended().closeStatus(), "long ping");
        assertEquals(WebSocketFrames.PROTOCOL_ERROR, relay(frame(true, 0, 0, new byte[] {'a'}, true), null)
                .ended().closeStatus(), "continuation first");
        assertEquals(WebSocketFrames.PROTOCOL_ERROR, relay(concat(frame(false, 0, 1, new byte[] {'a'}, true),
                text("b")), null).ended().closeStatus(), "new message inside a fragmented one");
        assertEquals(WebSocketFrames.INVALID_PAYLOAD, relay(frame(true, 0, 1, new byte[] {(byte) 0xC3}, true), null)
                .ended().closeStatus(), "not UTF-8");
    }

    @Test
    void limitsClose() throws IOException {
        ByteArrayOutputStream many = new ByteArrayOutputStream();
        many.writeBytes(frame(false, 0, 1, new byte[] {'a'}, true));
        for (int i = 0; i < WebSocketFrames.MAX_FRAGMENTS; i++) {
            many.writeBytes(frame(false, 0, 0, new byte[] {'a'}, true));
        }
        assertEquals(WebSocketFrames.TOO_BIG, relay(many.toByteArray(), null).ended().closeStatus());
        byte[] huge = frame(true, 0, 1, new byte[WebSocketFrames.MAX_TEXT_BYTES + 1], true);
        assertEquals(WebSocketFrames.TOO_BIG, relay(huge, null).ended().closeStatus());
    }

    @Test
    void closeFrames() {
        assertArrayEquals(new byte[] {(byte) 0x88, 2, 0x03, (byte) 0xF0}, WebSocketFrames.closeFrame(1008));
        byte[] masked = WebSocketFrames.maskedCloseFrame(1008, new java.security.SecureRandom());
        assertEquals((byte) 0x82, masked[1]);
        assertEquals(0x03, (masked[6] ^ masked[2]) & 0xFF);
        assertEquals(0xF0, (masked[7] ^ masked[3]) & 0xFF);
    }

    @Test
    void theMaskingKeyComesFromTheCallersSource() {
        java.security.SecureRandom fixed = new java.security.SecureRandom() {
            private static final long serialVersionUID = 1L;

            @Override
            public void nextBytes(byte[] bytes) {
                java.util.Arrays.fill(bytes, (byte) 0x5A);
            }
        };
        assertArrayEquals(new byte[] {(byte) 0x88, (byte) 0x82, 0x5A, 0x5A, 0x5A, 0x5A, 0x03 ^ 0x5A, (byte) (0xF0 ^ 0x5A)},
                WebSocketFrames.maskedCloseFrame(1008, fixed));
    }
}
