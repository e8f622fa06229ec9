package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * {@link FrameSink}: whatever the frames (sizes either side of the 126 and 65536 length forms and of
 * {@link FrameSink#HOLD}, masked or not) and however their bytes are split into writes, the peer receives the frames
 * whole and in order, and the proxy's close frame, whenever it comes, lands between two frames: after the whole frames
 * written so far, the bytes held of an unfinished one dropped. Only when a frame longer than {@link FrameSink#HOLD}
 * has begun does no close frame follow (the connection's close ends it), and then the peer has only that frame's
 * beginning after the whole ones.
 */
class FrameSinkPropertyTest {
    private static final byte[] CLOSE = WebSocketFrames.closeFrame(1008);

    private static byte[] frame(int size, boolean masked, int b0) {
        return MessageRelay.frame(b0, new byte[size], masked);
    }

    @Property(tries = 300)
    void theCloseFrameLandsBetweenWholeFrames(
            @ForAll @Size(min = 1, max = 6) List<@IntRange(min = 0, max = 90_000) Integer> sizes,
            @ForAll boolean masked, @ForAll long seed, @ForAll @IntRange(min = 0, max = 1000) int closeAt)
            throws IOException {
        Random r = new Random(seed);
        List<byte[]> frames = new ArrayList<>();
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (int size : sizes) {
            // sizes near the length forms' edges too
            int s = switch (r.nextInt(4)) {
                case 0 -> size % 130;
                case 1 -> 65530 + size % 12;
                default -> size;
            };
            byte[] f = frame(s, masked, r.nextBoolean() ? 0x82 : 0x81);
            frames.add(f);
            all.writeBytes(f);
        }
        byte[] wire = all.toByteArray();
        ByteArrayOutputStream peer = new ByteArrayOutputStream();
        FrameSink sink = new FrameSink(peer);
        int at = 0;
        int cut = closeAt * wire.length / 1000; // the close comes once this many bytes were written
        while (at < cut) {
            int n = Math.min(cut - at, 1 + r.nextInt(r.nextBoolean() ? 16 : 40_000));
            sink.write(wire, at, n);
            if (r.nextBoolean()) {
                sink.flush();
            }
            at += n;
        }
        boolean closed = sink.closeWith(CLOSE);
        assertThrows(IOException.class, () -> sink.write(new byte[1], 0, 1), "nothing follows the close");
        byte[] got = peer.toByteArray();
        // the whole frames written before the close, in order
        int whole = 0;
        int end = 0;
        while (whole < frames.size() && end + frames.get(whole).length <= cut) {
            end += frames.get(whole).length;
            whole++;
        }
        assertArrayEquals(Arrays.copyOf(wire, end), Arrays.copyOf(got, Math.min(end, got.length)),
                "the whole frames first, unchanged");
        boolean begunLong = whole < frames.size() && cut > end && frames.get(whole).length > FrameSink.HOLD
                && cut - end >= headLength(frames.get(whole));
        if (begunLong) {
            assertFalse(closed, "no close frame inside a frame");
            assertEquals(cut, got.length, "the long frame's bytes passed as they came");
        } else {
            assertTrue(closed, "the close frame follows the whole frames");
            assertEquals(end + CLOSE.length, got.length, "nothing of an unfinished frame reached the peer");
            assertArrayEquals(CLOSE, Arrays.copyOfRange(got, end, got.length));
        }
    }

    /** Every frame passes whole, the stream unchanged, when the proxy does not close. */
    @Property(tries = 100)
    void withoutACloseTheBytesPassUnchanged(
            @ForAll @Size(min = 1, max = 6) List<@IntRange(min = 0, max = 90_000) Integer> sizes,
            @ForAll boolean masked, @ForAll long seed) throws IOException {
        Random r = new Random(seed);
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (int size : sizes) {
            all.writeBytes(frame(size, masked, 0x82));
        }
        byte[] wire = all.toByteArray();
        ByteArrayOutputStream peer = new ByteArrayOutputStream();
        FrameSink sink = new FrameSink(peer);
        for (int at = 0; at < wire.length; ) {
            int n = Math.min(wire.length - at, 1 + r.nextInt(20_000));
            sink.write(wire, at, n);
            at += n;
        }
        assertArrayEquals(wire, peer.toByteArray());
    }

    /**
     * Attacker pass 12, P14-5: a 64-bit length with its top bit set (RFC 6455 5.2 forbids it) or within a few bytes of
     * the largest long is streamed as it arrives, like any frame past the hold; the sum of its head and length
     * overflowed, so it was held until the hold's array overflowed.
     */
    @net.jqwik.api.Example
    void aLengthNearTheLargestLongStreams() throws IOException {
        for (long length : new long[] {Long.MIN_VALUE, -1L, Long.MAX_VALUE, Long.MAX_VALUE - 13}) {
            byte[] head = new byte[14];
            head[0] = (byte) 0x82;
            head[1] = (byte) (0x80 | 127);
            for (int k = 0; k < 8; k++) {
                head[2 + k] = (byte) (length >>> (56 - 8 * k));
            }
            ByteArrayOutputStream peer = new ByteArrayOutputStream();
            FrameSink sink = new FrameSink(peer);
            sink.write(head, 0, head.length);
            byte[] payload = new byte[FrameSink.HOLD + 1000];
            sink.write(payload, 0, payload.length);
            assertEquals(head.length + payload.length, peer.size(), "streamed, not held: " + length);
        }
    }

    private static int headLength(byte[] frame) {
        int len7 = frame[1] & 0x7f;
        return 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + ((frame[1] & 0x80) != 0 ? 4 : 0);
    }

    /**
     * {@link FrameSink#closeRelayed}: true once a whole close frame written by a relay passed, never for a close frame
     * still unfinished or for the proxy's own ({@link FrameSink#closeWith}); {@link FrameSink#ended} then or after the
     * proxy's close.
     */
    @Property(tries = 200)
    void aRelayedCloseFrameIsSeenOnceWhole(
            @ForAll @Size(min = 1, max = 6) List<@IntRange(min = 0, max = 3) Integer> kinds,
            @ForAll boolean masked, @ForAll long seed, @ForAll @IntRange(min = 0, max = 1000) int stopAt)
            throws IOException {
        Random r = new Random(seed);
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        List<Integer> ends = new ArrayList<>();
        List<Boolean> closes = new ArrayList<>();
        for (int k : kinds) {
            byte[] f = switch (k) {
                case 0 -> MessageRelay.frame(8, new byte[] {0x03, (byte) 0xe8}, masked);
                case 1 -> MessageRelay.frame(9, new byte[3], masked);
                case 2 -> frame(70_000, masked, 0x82);
                default -> frame(r.nextInt(300), masked, 0x81);
            };
            all.writeBytes(f);
            ends.add(all.size());
            closes.add(k == 0);
        }
        byte[] wire = all.toByteArray();
        int stop = stopAt * wire.length / 1000;
        FrameSink sink = new FrameSink(new ByteArrayOutputStream());
        for (int at = 0; at < stop; ) {
            int n = Math.min(stop - at, 1 + r.nextInt(r.nextBoolean() ? 8 : 30_000));
            sink.write(wire, at, n);
            at += n;
        }
        boolean whole = false;
        for (int i = 0; i < ends.size() && ends.get(i) <= stop; i++) {
            whole |= closes.get(i);
        }
        assertEquals(whole, sink.closeRelayed(), "a close frame passed whole");
        assertEquals(whole, sink.ended());
        sink.closeWith(CLOSE);
        assertEquals(whole, sink.closeRelayed(), "the proxy's close frame is not the peer's");
        assertTrue(sink.ended());
    }

    /**
     * A sink that passes every byte ({@code passAll}, a session copied untouched): the peer has every byte written,
     * at once, whatever the bytes; the proxy's close frame follows only when they end at a frame boundary.
     */
    @Property(tries = 200)
    void aPassingSinkHoldsNothingAndClosesOnlyBetweenFrames(
            @ForAll @Size(min = 1, max = 6) List<@IntRange(min = 0, max = 90_000) Integer> sizes,
            @ForAll boolean masked, @ForAll long seed, @ForAll @IntRange(min = 0, max = 1000) int closeAt)
            throws IOException {
        Random r = new Random(seed);
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        List<Integer> ends = new ArrayList<>();
        ends.add(0);
        for (int size : sizes) {
            all.writeBytes(frame(r.nextBoolean() ? size % 200 : size, masked, 0x82));
            ends.add(all.size());
        }
        byte[] wire = all.toByteArray();
        int cut = closeAt * wire.length / 1000;
        ByteArrayOutputStream peer = new ByteArrayOutputStream();
        FrameSink sink = new FrameSink(peer, true);
        for (int at = 0; at < cut; ) {
            int n = Math.min(cut - at, 1 + r.nextInt(r.nextBoolean() ? 8 : 30_000));
            sink.write(wire, at, n);
            at += n;
            assertEquals(at, peer.size(), "every byte passed at once");
        }
        boolean closed = sink.closeWith(CLOSE);
        assertEquals(ends.contains(cut), closed, "a close frame only at a frame boundary");
        byte[] got = peer.toByteArray();
        assertArrayEquals(Arrays.copyOf(wire, cut), Arrays.copyOf(got, cut));
        assertEquals(cut + (closed ? CLOSE.length : 0), got.length);
    }
}
