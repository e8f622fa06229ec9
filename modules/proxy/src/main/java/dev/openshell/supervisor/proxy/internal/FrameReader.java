package dev.openshell.supervisor.proxy.internal;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;

/**
 * Reads one RFC 6455 frame for {@link MessageRelay} (section 5.2): its header, checked (5.1 masking, 5.2 RSV bits
 * and opcodes, 5.5 control frames; text frames at most {@link WebSocketFrames#MAX_TEXT_BYTES} bytes, other frames at
 * most {@link WebSocketFrames#MAX_BINARY_FRAME_BYTES}), and its payload, read only after the frame's bytes are
 * reserved from the body budget ({@link MessageMemory}). The frame keeps its original bytes; its unmasked payload is
 * copied out on demand.
 */
final class FrameReader {
    private FrameReader() {
    }

    /**
     * One parsed frame: its original bytes, where its payload starts in them and its masking key ({@code null} when
     * unmasked). The unmasked payload is copied out only when read ({@link #payload}), so a frame held for a message
     * costs its own bytes once.
     */
    record Frame(boolean fin, int opcode, byte[] raw, int offset, byte[] key) {
        int length() {
            return raw.length - offset;
        }

        /** {@return the unmasked payload, a new array} */
        byte[] payload() {
            byte[] p = new byte[length()];
            payloadInto(p, 0);
            return p;
        }

        /** Copies the unmasked payload into {@code to} at {@code at}. */
        void payloadInto(byte[] to, int at) {
            System.arraycopy(raw, offset, to, at, length());
            if (key != null) {
                for (int i = 0; i < length(); i++) {
                    to[at + i] ^= key[i & 3];
                }
            }
        }
    }

    /** A protocol violation found while reading a frame. */
    static final class Violation extends Exception {
        private static final long serialVersionUID = 1L;
        final int status;

        Violation(String message) {
            this(WebSocketFrames.PROTOCOL_ERROR, message);
        }

        Violation(int status, String message) {
            super(message, null, false, false);
            this.status = status;
        }
    }

    /**
     * {@return the next frame, or {@code null} at the end of the stream} The frame's bytes ({@code held} more in
     * all) are reserved in {@code memory} before its payload is read.
     *
     * @throws Violation 1013 when the budget has no room for the frame
     */
    static Frame read(InputStream in, boolean fromClient, MessageMemory.Held memory, long held)
            throws IOException, Violation {
        int b0 = in.read();
        if (b0 < 0) {
            return null;
        }
        int b1 = readByte(in);
        byte[] head = new byte[14];
        int h = 0;
        head[h++] = (byte) b0;
        head[h++] = (byte) b1;
        long len = b1 & 0x7F;
        if (len == 126) {
            int hi = readByte(in);
            int lo = readByte(in);
            head[h++] = (byte) hi;
            head[h++] = (byte) lo;
            len = (hi << 8) | lo;
        } else if (len == 127) {
            len = 0;
            for (int i = 0; i < 8; i++) {
                int x = readByte(in);
                head[h++] = (byte) x;
                len = (len << 8) | x;
            }
        }
        boolean masked = (b1 & 0x80) != 0;
        int opcode = b0 & 0x0F;
        long limit = opcode == 1 || opcode == 0 ? WebSocketFrames.MAX_TEXT_BYTES
                : WebSocketFrames.MAX_BINARY_FRAME_BYTES;
        if (len < 0 || len > limit) {
            throw new Violation(WebSocketFrames.TOO_BIG, "a frame is longer than " + limit + " bytes");
        }
        byte[] key = masked ? readFully(in, 4) : null;
        if (key != null) {
            System.arraycopy(key, 0, head, h, 4);
            h += 4;
        }
        if (!memory.hold(held + h + len)) {
            WebSocketFrames.Ended no = MessageRelay.noRoom();
            throw new Violation(no.closeStatus(), no.reason());
        }
        // the whole frame is read before a violation is reported: closing a socket with unread bytes resets it,
        // and the peer could lose the close frame
        byte[] raw = new byte[h + (int) len];
        System.arraycopy(head, 0, raw, 0, h);
        if (in.readNBytes(raw, h, (int) len) != len) {
            throw new EOFException("the WebSocket stream ended inside a frame");
        }
        String violation = violation(b0, opcode, len, masked, fromClient);
        if (violation != null) {
            throw new Violation(violation);
        }
        return new Frame((b0 & 0x80) != 0, opcode, raw, h, key);
    }

    /** {@return what a frame's header breaks (RFC 6455, sections 5.1, 5.2, 5.5), or {@code null}} */
    private static String violation(int b0, int opcode, long len, boolean masked, boolean fromClient) {
        if (masked != fromClient) {
            return fromClient ? "a client frame is not masked (RFC 6455, section 5.1)"
                    : "an upstream frame is masked (RFC 6455, section 5.1)";
        }
        if ((b0 & 0x70) != 0) {
            return "a frame sets RSV bits, but every extension was negotiated away";
        }
        if ((opcode > 2 && opcode < 8) || opcode > 10) {
            return "a frame uses a reserved opcode";
        }
        if (opcode >= 8 && ((b0 & 0x80) == 0 || len > 125)) {
            return "a control frame is fragmented or longer than 125 bytes";
        }
        return null;
    }

    private static int readByte(InputStream in) throws IOException {
        int b = in.read();
        if (b < 0) {
            throw new EOFException("the WebSocket stream ended inside a frame");
        }
        return b;
    }

    private static byte[] readFully(InputStream in, int n) throws IOException {
        byte[] b = in.readNBytes(n);
        if (b.length != n) {
            throw new EOFException("the WebSocket stream ended inside a frame");
        }
        return b;
    }
}
