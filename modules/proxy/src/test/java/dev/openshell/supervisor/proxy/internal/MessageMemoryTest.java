package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.net.InetAddress;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * The reservation accounting of WebSocket messages ({@link MessageMemory}) on every path of a relayed direction
 * ({@link MessageRelay}): what is reserved while a message is assembled, decided on or held, and that the body budget
 * is whole again after a delivery, a refusal, a policy failure, a broken stream, a timeout and a holding policy's end.
 */
class MessageMemoryTest {
    private static final int TOTAL = 64 * 1024;
    private final BodyBudget budget = new BodyBudget(TOTAL, Duration.ZERO, 100);
    private final List<String> refusals = new ArrayList<>();
    private final MessageMemory memory = new MessageMemory(budget, InetAddress.getLoopbackAddress(),
            OptionalLong::empty, new WebSocketCloses((kind, code, cause, detail) -> refusals.add(code)));

    /** {@return a masked client frame (key 1 2 3 4)} */
    private static byte[] frame(int b0, byte[] payload) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(b0);
        if (payload.length < 126) {
            out.write(0x80 | payload.length);
        } else {
            out.write(0x80 | 126);
            out.write(payload.length >> 8);
            out.write(payload.length);
        }
        byte[] key = {1, 2, 3, 4};
        out.write(key, 0, 4);
        for (int i = 0; i < payload.length; i++) {
            out.write(payload[i] ^ key[i & 3]);
        }
        return out.toByteArray();
    }

    private static byte[] text(int n) {
        return "a".repeat(n).getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.write(p, 0, p.length);
        }
        return out.toByteArray();
    }

    /** Allows every text message; records what the direction had reserved when each was decided. */
    private static final class Deciding implements MessageRelay.Policy {
        final MessageMemory.Held held;
        final List<Long> reservedAtDecision = new ArrayList<>();
        RuntimeException fail;

        Deciding(MessageMemory.Held held) {
            this.held = held;
        }

        @Override
        public MessageRelay.Outcome text(String message) {
            reservedAtDecision.add(held.reserved());
            if (fail != null) {
                throw fail;
            }
            return new MessageRelay.Outcome(false, message, false);
        }

        @Override
        public boolean uninspectedAllowed() {
            return true;
        }
    }

    private WebSocketFrames.Ended relay(InputStream in, MessageRelay.Policy p, MessageMemory.Held held)
            throws IOException {
        return MessageRelay.relay(in, new ByteArrayOutputStream(), true, p, held);
    }

    @Test
    void aFragmentedMessageIsReservedWhileDecidedAndTheBudgetIsWholeAfterIt() throws IOException {
        MessageMemory.Held held = memory.direction();
        Deciding p = new Deciding(held);
        byte[] first = frame(0x01, text(1000));
        byte[] ping = frame(0x89, text(3));
        byte[] last = frame(0x80, text(500));
        byte[] next = frame(0x81, text(10));
        WebSocketFrames.Ended e = relay(new ByteArrayInputStream(concat(first, ping, last, next)), p, held);
        assertEquals(0, e.closeStatus());
        // the frames as they arrived plus the assembled copy; the ping was given back once relayed
        assertEquals(List.of((long) first.length + last.length + 1500, (long) next.length + 10),
                p.reservedAtDecision);
        assertEquals(TOTAL, budget.availableBytes());
        assertEquals(0, held.reserved());
        assertTrue(refusals.isEmpty());
    }

    @Test
    void anUnfinishedMessageIsGivenBackWhenTheStreamEnds() throws IOException {
        MessageMemory.Held held = memory.direction();
        WebSocketFrames.Ended e = relay(new ByteArrayInputStream(concat(frame(0x01, text(2000)),
                frame(0x00, text(2000)))), new Deciding(held), held);
        assertEquals(0, e.closeStatus());
        assertEquals(TOTAL, budget.availableBytes());
    }

    @Test
    void aMessageOverTheBudgetClosesWith1013ReportsOnceAndHoldsNothing() throws IOException {
        MessageMemory.Held up = memory.direction();
        MessageMemory.Held down = memory.direction();
        assertTrue(down.hold(TOTAL - 5000), "the other direction holds most of the budget");
        byte[] chunk = text(4000);
        WebSocketFrames.Ended e = relay(new ByteArrayInputStream(concat(frame(0x01, chunk), frame(0x00, chunk))),
                new Deciding(up), up);
        assertEquals(WebSocketFrames.TRY_AGAIN_LATER, e.closeStatus());
        assertEquals(5000, budget.availableBytes(), "the refused direction gave back its first frame");
        assertFalse(up.hold(6000));
        assertEquals(List.of("body_buffer_busy"), refusals, "one refusal a session");
        down.close();
        assertEquals(TOTAL, budget.availableBytes());
    }

    @Test
    void theAssembledCopyIsReservedTooAndItsRefusalClosesWith1013() throws IOException {
        MessageMemory.Held held = memory.direction();
        MessageMemory.Held other = memory.direction();
        byte[] f = frame(0x81, text(30_000));
        assertTrue(other.hold(TOTAL - f.length - 100));
        WebSocketFrames.Ended e = relay(new ByteArrayInputStream(f), new Deciding(held), held);
        assertEquals(WebSocketFrames.TRY_AGAIN_LATER, e.closeStatus());
        other.close();
        assertEquals(TOTAL, budget.availableBytes());
    }

    @Test
    void aPolicyThatThrowsLeavesNothingReserved() {
        MessageMemory.Held held = memory.direction();
        Deciding p = new Deciding(held);
        p.fail = new IllegalStateException("stage failed");
        assertThrows(IllegalStateException.class, () -> relay(new ByteArrayInputStream(frame(0x81, text(900))), p,
                held));
        assertEquals(TOTAL, budget.availableBytes());
    }

    @Test
    void aStreamThatBreaksInsideAFrameLeavesNothingReserved() {
        MessageMemory.Held held = memory.direction();
        byte[] f = frame(0x01, text(3000));
        byte[] cut = java.util.Arrays.copyOf(f, f.length - 10);
        InputStream in = new ByteArrayInputStream(cut);
        assertThrows(EOFException.class, () -> relay(in, new Deciding(held), held));
        assertEquals(TOTAL, budget.availableBytes());
    }

    /** A policy that holds every message until the end, like the scrub of server messages. */
    private static final class Holding implements MessageRelay.Policy {
        final MessageMemory.Held held;
        final List<byte[]> frames = new ArrayList<>();
        long bytes;
        final List<Long> reservedAtMessage = new ArrayList<>();

        Holding(MessageMemory.Held held) {
            this.held = held;
        }

        @Override
        public boolean holds() {
            return true;
        }

        @Override
        public MessageRelay.Delivery message(int opcode, byte[] payload, List<byte[]> fs) {
            reservedAtMessage.add(held.reserved());
            frames.addAll(fs);
            for (byte[] f : fs) {
                bytes += f.length;
            }
            bytes += payload.length;
            return new MessageRelay.Delivery(List.of(), null);
        }

        @Override
        public MessageRelay.Delivery drain() {
            List<byte[]> out = List.copyOf(frames);
            frames.clear();
            bytes = 0;
            return new MessageRelay.Delivery(out, null);
        }

        @Override
        public long heldBytes() {
            return bytes;
        }

        @Override
        public WebSocketFrames.Ended quiet() {
            return bytes == 0 ? null : new WebSocketFrames.Ended(WebSocketFrames.POLICY_VIOLATION, "idle");
        }

        @Override
        public MessageRelay.Outcome text(String message) {
            throw new IllegalStateException();
        }

        @Override
        public boolean uninspectedAllowed() {
            return true;
        }
    }

    @Test
    void heldMessagesStayReservedUntilTheRelayEndsAtATimeout() throws IOException {
        MessageMemory.Held held = memory.direction();
        Holding p = new Holding(held);
        byte[] a = frame(0x81, text(1000));
        byte[] b = frame(0x81, text(2000));
        InputStream timesOut = new InputStream() {
            @Override
            public int read() throws IOException {
                throw new SocketTimeoutException("idle");
            }
        };
        WebSocketFrames.Ended e = relay(new SequenceInputStream(new ByteArrayInputStream(concat(a, b)), timesOut),
                p, held);
        assertEquals(WebSocketFrames.POLICY_VIOLATION, e.closeStatus());
        // the second message is decided with the first one still held: its frame, bytes and the new copy
        assertEquals(List.of((long) a.length + 1000, (long) a.length + 1000 + b.length + 2000),
                p.reservedAtMessage);
        assertEquals(TOTAL, budget.availableBytes());
    }

    @Test
    void heldMessagesOverTheBudgetCloseWith1013() throws IOException {
        MessageMemory.Held held = memory.direction();
        Holding p = new Holding(held);
        byte[] m = frame(0x81, text(20_000));
        WebSocketFrames.Ended e = relay(new ByteArrayInputStream(concat(m, m, m)), p, held);
        assertEquals(WebSocketFrames.TRY_AGAIN_LATER, e.closeStatus());
        assertEquals(1, p.reservedAtMessage.size(), "the second message's copy did not fit");
        assertEquals(TOTAL, budget.availableBytes());
    }

    @Test
    void settleGivesBackFromTheLastPartsAndHoldTopsUp() throws IOException {
        MessageMemory.Held held = memory.direction();
        assertTrue(held.hold(1000));
        assertTrue(held.hold(3000));
        assertTrue(held.hold(2000), "already held");
        assertEquals(TOTAL - 3000, budget.availableBytes());
        held.settle(1500);
        assertEquals(1500, held.reserved());
        assertEquals(TOTAL - 1500, budget.availableBytes());
        held.settle(0);
        assertEquals(TOTAL, budget.availableBytes());
        assertTrue(held.hold(TOTAL));
        assertFalse(held.hold(TOTAL + 1));
        held.close();
        assertEquals(TOTAL, budget.availableBytes());
        assertEquals(0, held.reserved());
    }

    @Test
    void anUnboundedMemoryReservesNothing() throws IOException {
        MessageMemory.Held held = MessageMemory.unbounded().direction();
        assertTrue(held.hold(Long.MAX_VALUE / 2));
        held.settle(0);
        held.close();
        assertEquals(TOTAL, budget.availableBytes());
    }
}
