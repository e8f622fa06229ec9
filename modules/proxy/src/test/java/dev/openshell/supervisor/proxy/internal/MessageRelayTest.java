package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** One direction of a session through the message chain ({@link MessageRelay}), on raw RFC 6455 bytes. */
class MessageRelayTest {
    private static byte[] frame(int b0, byte[] payload, boolean masked) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(b0);
        out.write((masked ? 0x80 : 0) | payload.length);
        byte[] key = {1, 2, 3, 4};
        if (masked) {
            out.write(key, 0, 4);
        }
        for (int i = 0; i < payload.length; i++) {
            out.write(masked ? payload[i] ^ key[i & 3] : payload[i]);
        }
        return out.toByteArray();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.write(p, 0, p.length);
        }
        return out.toByteArray();
    }

    /** Replaces "secret" with "[X]", closes on "deny", refuses binary unless allowed; records what it saw. */
    private static final class Recording implements MessageRelay.Policy {
        final List<String> seen = new ArrayList<>();
        final boolean binaryAllowed;

        Recording(boolean binaryAllowed) {
            this.binaryAllowed = binaryAllowed;
        }

        @Override
        public MessageRelay.Outcome text(String message) {
            seen.add(message);
            if (message.contains("deny")) {
                return MessageRelay.Outcome.closeSession();
            }
            boolean replace = message.contains("secret");
            return new MessageRelay.Outcome(false, message.replace("secret", "[X]"), replace);
        }

        @Override
        public boolean uninspectedAllowed() {
            return binaryAllowed;
        }
    }

    private static WebSocketFrames.Ended relay(byte[] in, ByteArrayOutputStream out, boolean fromClient,
                                               MessageRelay.Policy p) throws IOException {
        return MessageRelay.relay(new ByteArrayInputStream(in), out, fromClient, p);
    }

    @Test
    void aFragmentedMessageWithAnInterleavedPingIsAssembledAndItsReplacementReframedAndMasked() throws IOException {
        byte[] ping = frame(0x89, new byte[0], true);
        byte[] in = concat(frame(0x01, utf8("my sec"), true), ping, frame(0x80, utf8("ret"), true));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Recording p = new Recording(false);
        WebSocketFrames.Ended e = relay(in, out, true, p);
        assertEquals(0, e.closeStatus());
        assertEquals(List.of("my secret"), p.seen, "the stage sees the whole message");
        byte[] got = out.toByteArray();
        assertArrayEquals(ping, java.util.Arrays.copyOf(got, ping.length), "the control frame goes on at once");
        byte[] text = java.util.Arrays.copyOfRange(got, ping.length, got.length);
        assertEquals(0x81, text[0] & 0xFF, "one final text frame");
        assertEquals(0x80 | 6, text[1] & 0xFF, "masked toward the upstream, 6 bytes");
        byte[] payload = new byte[6];
        for (int i = 0; i < 6; i++) {
            payload[i] = (byte) (text[6 + i] ^ text[2 + (i & 3)]);
        }
        assertEquals("my [X]", new String(payload, StandardCharsets.UTF_8));
    }

    @Test
    void anUnchangedMessageGoesOnAsItsOriginalFramesAndTowardTheClientUnmasked() throws IOException {
        byte[] a = frame(0x01, utf8("hel"), false);
        byte[] b = frame(0x80, utf8("lo"), false);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        relay(concat(a, b), out, false, new Recording(false));
        assertArrayEquals(concat(a, b), out.toByteArray());
        ByteArrayOutputStream replaced = new ByteArrayOutputStream();
        relay(frame(0x81, utf8("secret"), false), replaced, false, new Recording(false));
        assertArrayEquals(frame(0x81, utf8("[X]"), false), replaced.toByteArray(), "unmasked toward the client");
    }

    @Test
    void aDenialABinaryMessageACompressedFrameAndAMaskingErrorEachClose() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertEquals(1008, relay(frame(0x81, utf8("deny"), true), out, true, new Recording(false)).closeStatus());
        assertEquals(0, out.size(), "a denied message is never forwarded");
        assertEquals(1008, relay(frame(0x82, new byte[] {1}, true), out, true, new Recording(false)).closeStatus());
        assertEquals(0, out.size());
        assertEquals(0, relay(frame(0x82, new byte[] {1}, true), out, true, new Recording(true)).closeStatus());
        assertEquals(7, out.size(), "with the opt-in a binary frame passes as sent");
        ByteArrayOutputStream none = new ByteArrayOutputStream();
        assertEquals(1002, relay(frame(0xC1, utf8("deflated"), true), none, true, new Recording(true))
                .closeStatus(), "RSV1: a compressed message never passes");
        assertEquals(1002, relay(frame(0x81, utf8("x"), false), none, true, new Recording(true)).closeStatus());
        assertEquals(1002, relay(frame(0x81, utf8("x"), true), none, false, new Recording(true)).closeStatus(),
                "an upstream frame must not be masked");
        assertEquals(1008, relay(frame(0x89, utf8("payload"), true), none, true, new Recording(false))
                .closeStatus(), "a ping payload no stage reads");
        assertEquals(1007, relay(frame(0x81, new byte[] {(byte) 0xC3}, true), none, true, new Recording(true))
                .closeStatus());
        assertEquals(0, none.size());
        assertTrue(relay(new byte[0], none, true, new Recording(true)).reason().contains("ended"));
    }
}
