package dev.openshell.supervisor.proxy.internal;

import java.io.IOException;
import java.io.OutputStream;

/**
 * One peer's side of a WebSocket session the proxy may close with a status of its own (RFC 6455, sections 5.2 and
 * 7.4): every byte written toward the peer, by either direction's relay (whole frames from {@link MessageRelay}, raw
 * bytes from a direction copied byte for byte), passes through here, and is followed as frames (the header, RFC 6455
 * section 5.2: the payload length and the masking key's presence; nothing else is checked here). A frame reaches the
 * peer only whole: the bytes of a frame not yet complete are held until its last byte is written; the proxy's close
 * frame ({@link #closeWith}) then always lands between two frames, never inside one, and nothing is written after it.
 *
 * <p>Bounds: a frame of at most {@value #HOLD} bytes (header included) is held whole; the bytes of a longer one pass as
 * they come (so memory stays one buffer of at most {@value #HOLD} bytes per side, grown as a held frame needs it), and when the
 * proxy closes while such a frame is unfinished the peer gets no close frame, only the connection's close (RFC 6455
 * section 7.1.5's 1006): its frame is cut, not followed by a close frame it would read as payload. All methods are
 * synchronized: the two directions write to the same peer.
 *
 * <p>A session whose bytes are copied untouched both ways (no stage reads them, no scrub) holds nothing: its sinks
 * pass every byte as it comes and only follow the frames ({@link #FrameSink(OutputStream, boolean)}); the proxy's
 * close frame then goes only when the bytes so far end at a frame boundary. Either way a sink tells whether a whole
 * close frame of the other peer passed ({@link #closeRelayed}).
 */
final class FrameSink extends OutputStream {
    /** The longest frame, header included, held until whole, in bytes. */
    static final int HOLD = 64 * 1024;
    private final OutputStream out;
    /** The bytes of the current frame not yet written (its header so far, or the whole frame so far); made as needed. */
    private byte[] held;
    private int heldLen;
    /** The current frame's header bytes seen, and how many it has (2 until its second byte is seen). */
    private final byte[] head = new byte[14];
    private int headLen;
    private int headNeed = 2;
    /** The current frame's payload bytes still to come; -1 while its header is incomplete. */
    private long payloadLeft = -1;
    /** Whether the current frame is longer than {@link #HOLD}: its bytes pass as they come. */
    private boolean streaming;
    /** Whether bytes of the current (unfinished) frame were written. */
    private boolean begun;
    private boolean closed;
    /** Whether a whole close frame (opcode 8) written by a relay passed to the peer. */
    private boolean closeRelayed;

    /** Whether every byte passes as it comes, none held ({@link #FrameSink(OutputStream, boolean)}). */
    private final boolean passAll;

    /** @param out the peer's stream; every write to it goes through this sink from now on */
    FrameSink(OutputStream out) {
        this(out, false);
    }

    /**
     * @param out the peer's stream; every write to it goes through this sink from now on
     * @param passAll whether every byte passes as it comes, none held (a session whose bytes are copied untouched,
     *     which need not be frames: the frames are only followed, and the proxy's close frame goes only when the
     *     bytes so far end at a frame boundary)
     */
    FrameSink(OutputStream out, boolean passAll) {
        this.out = out;
        this.passAll = passAll;
    }

    @Override
    public synchronized void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) throws IOException {
        if (closed) {
            throw new IOException("the proxy closed this WebSocket side: nothing follows its close frame");
        }
        int end = off + len;
        int from = off; // the first byte of b neither written nor held
        int i = off;
        while (i < end) {
            if (payloadLeft < 0) {
                head[headLen++] = b[i++];
                if (headLen == 2) {
                    int len7 = head[1] & 0x7f;
                    headNeed = 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + ((head[1] & 0x80) != 0 ? 4 : 0);
                }
                if (headLen == headNeed) {
                    payloadLeft = payloadLength();
                    streaming = payloadLeft > HOLD - headNeed; // never an overflow: a 63-bit length streams
                }
            } else {
                int k = (int) Math.min(payloadLeft, end - i);
                i += k;
                payloadLeft -= k;
            }
            if (payloadLeft == 0) { // the frame is whole: it goes, with what was held of it
                emit(b, from, i);
                from = i;
                closeRelayed |= (head[0] & 0x0f) == 8;
                headLen = 0;
                headNeed = 2;
                payloadLeft = -1;
                streaming = false;
                begun = false;
            } else if (streaming) {
                emit(b, from, i);
                from = i;
                begun = true;
            }
        }
        if (passAll) {
            emit(b, from, end);
            begun = headLen > 0; // inside a frame
            return;
        }
        hold(b, from, end);
    }

    private long payloadLength() {
        int len7 = head[1] & 0x7f;
        if (len7 < 126) {
            return len7;
        }
        long n = 0;
        for (int k = 2; k < (len7 == 126 ? 4 : 10); k++) {
            n = (n << 8) | (head[k] & 0xff);
        }
        return n < 0 ? Long.MAX_VALUE : n; // a length with its top bit set: never complete, streamed
    }

    private void emit(byte[] b, int from, int to) throws IOException {
        if (heldLen > 0) {
            out.write(held, 0, heldLen);
            heldLen = 0;
        }
        if (to > from) {
            out.write(b, from, to - from);
        }
    }

    private void hold(byte[] b, int from, int to) {
        int n = to - from;
        if (n == 0) {
            return;
        }
        if (held == null || held.length < heldLen + n) { // a held frame is at most HOLD bytes
            held = java.util.Arrays.copyOf(held == null ? new byte[0] : held,
                    Math.min(HOLD, Math.max(heldLen + n, 2 * (held == null ? 1024 : held.length))));
        }
        System.arraycopy(b, from, held, heldLen, n);
        heldLen += n;
    }

    @Override
    public synchronized void flush() throws IOException {
        out.flush(); // what is held stays held: its frame is not whole yet
    }

    /**
     * Ends what reaches the peer with the proxy's close frame, at a frame boundary: the bytes held of an unfinished
     * frame are dropped and the close frame follows the last whole frame; nothing written afterwards reaches the
     * peer. When bytes of an unfinished frame longer than {@link #HOLD} were written already, no close frame is
     * written (it would be read as that frame's payload): the caller's close of the connection ends it.
     *
     * @param closeFrame the close frame (masked toward the upstream)
     * @return whether the close frame was written; {@code false} also when the sink was closed already
     */
    synchronized boolean closeWith(byte[] closeFrame) {
        if (closed) {
            return false;
        }
        closed = true;
        heldLen = 0;
        if (begun) {
            flushQuietly();
            return false;
        }
        try {
            out.write(closeFrame);
            out.flush();
            return true;
        } catch (IOException e) {
            return false; // the peer is gone
        }
    }

    /**
     * {@return whether a whole close frame written by a relay (the other peer's, RFC 6455 section 5.5.1) passed to
     * the peer} Toward the upstream: the client sent its close frame, and sends nothing after it. The proxy's own
     * close frame ({@link #closeWith}) does not count.
     */
    synchronized boolean closeRelayed() {
        return closeRelayed;
    }

    /**
     * {@return whether the peer needs no close frame from the proxy any more: one was relayed whole
     * ({@link #closeRelayed}), or the proxy ended this side already ({@link #closeWith}, {@link #end})}
     */
    synchronized boolean ended() {
        return closeRelayed || closed;
    }

    /** Ends what reaches the peer without a close frame: nothing written afterwards (or held) reaches it. */
    synchronized void end() {
        closed = true;
        heldLen = 0;
        flushQuietly();
    }

    private void flushQuietly() {
        try {
            out.flush();
        } catch (IOException ignored) {
            // the peer is gone
        }
    }
}
