package dev.openshell.supervisor.proxy.internal;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The client-to-server half of a WebSocket connection on an L7 {@code websocket} endpoint (RFC 6455, section 5):
 * parses every frame the client sends, assembles each text message from its fragments and asks a policy about it
 * before any of its frames goes upstream; binary and control frames are relayed as they come.
 *
 * <p>Rules enforced (each a close with the RFC status, after which the relay ends): client frames must be masked
 * (5.1, 1002); RSV bits must be zero, since no extension is negotiated on inspected connections (5.2, 1002);
 * reserved opcodes are refused (1002); control frames must be final and at most 125 bytes (5.5, 1002); a
 * continuation needs a started message and a new message needs the last one finished (5.4, 1002); a text message
 * must be UTF-8 (8.1, 1007); a text message is at most {@value #MAX_TEXT_BYTES} bytes and {@value #MAX_FRAGMENTS}
 * fragments, a binary frame at most {@value #MAX_BINARY_FRAME_BYTES} bytes (1009). The original frame bytes are
 * relayed unchanged (still masked with the client's keys).
 */
public final class WebSocketFrames {
    /** The largest text message assembled for policy, bytes. */
    public static final int MAX_TEXT_BYTES = 4 * 1024 * 1024;
    /** The largest binary frame relayed, bytes. */
    public static final long MAX_BINARY_FRAME_BYTES = 16L * 1024 * 1024;
    /** The most fragments of one message. */
    public static final int MAX_FRAGMENTS = 4096;

    /** Close status: normal closure. */
    public static final int NORMAL = 1000;
    /** Close status: protocol error. */
    public static final int PROTOCOL_ERROR = 1002;
    /** Close status: invalid payload data (a text message that is not UTF-8). */
    public static final int INVALID_PAYLOAD = 1007;
    /** Close status: policy violation. */
    public static final int POLICY_VIOLATION = 1008;
    /** Close status: message too big. */
    public static final int TOO_BIG = 1009;

    private WebSocketFrames() {
    }

    /** The policy's answer on one text message. */
    public enum Verdict {
        /** Relay the message. */
        FORWARD,
        /** Do not relay it; close the connection with 1008. */
        CLOSE
    }

    /** Decides on each complete client text message. */
    @FunctionalInterface
    public interface TextPolicy {
        /**
         * @param message the message, decoded as UTF-8
         * @return whether to relay it
         */
        Verdict onText(String message);
    }

    /**
     * How the client-to-server relay ended.
     *
     * @param closeStatus the status the supervisor closes with, or 0 when the client closed (a close frame relayed)
     *     or the stream ended
     * @param reason why, for the audit record (no message content)
     */
    public record Ended(int closeStatus, String reason) {
    }

    /**
     * Relays client frames upstream until the client's close frame, the end of the stream, a protocol violation or a
     * policy close.
     *
     * @param fromClient the client's bytes after the 101 response
     * @param toUpstream where the client's frames go
     * @param policy decides on each text message
     * @return how it ended; when {@link Ended#closeStatus()} is not 0 the caller sends close frames with it to both
     *     sides ({@link #closeFrame(int, boolean)}) and closes the connection
     * @throws IOException when reading or writing fails
     */
    public static Ended relayClientFrames(InputStream fromClient, OutputStream toUpstream, TextPolicy policy)
            throws IOException {
        Objects.requireNonNull(policy, "policy");
        TextMessage text = null;
        boolean binaryOpen = false;
        int fragments = 0;
        while (true) {
            int b0 = fromClient.read();
            if (b0 < 0) {
                return new Ended(0, "the client ended the stream");
            }
            Object read = clientFrameHead(b0, fromClient);
            if (read instanceof Ended violation) {
                return violation;
            }
            FrameHead head = (FrameHead) read;
            if (head.opcode() >= 8) {
                Ended ended = relayControl(head, fromClient, toUpstream);
                if (ended != null) {
                    return ended;
                }
                continue;
            }
            if (head.opcode() != 0 && head.opcode() != 1 && head.opcode() != 2) {
                return new Ended(PROTOCOL_ERROR, "a frame uses a reserved data opcode");
            }
            boolean continuation = head.opcode() == 0;
            if (continuation && text == null && !binaryOpen) {
                return new Ended(PROTOCOL_ERROR, "a continuation frame without a started message");
            }
            if (!continuation && (text != null || binaryOpen)) {
                return new Ended(PROTOCOL_ERROR, "a new message before the last one finished");
            }
            if (head.opcode() == 1 || continuation && text != null) {
                text = text == null ? new TextMessage() : text;
                Ended ended = text.add(head, fromClient);
                if (ended != null) {
                    return ended;
                }
                if (head.fin()) {
                    ended = text.finish(policy, toUpstream);
                    text = null;
                    if (ended != null) {
                        return ended;
                    }
                }
                continue;
            }
            // binary data: relayed as it comes, frame by frame
            if (head.length() > MAX_BINARY_FRAME_BYTES) {
                return new Ended(TOO_BIG, "a binary frame is larger than " + MAX_BINARY_FRAME_BYTES + " bytes");
            }
            fragments = continuation ? fragments + 1 : 1;
            if (fragments > MAX_FRAGMENTS) {
                return new Ended(TOO_BIG, "a binary message has more than " + MAX_FRAGMENTS + " fragments");
            }
            toUpstream.write(head.bytes());
            copy(fromClient, toUpstream, head.length());
            toUpstream.flush();
            binaryOpen = !head.fin();
        }
    }

    /**
     * A client frame's head as read.
     *
     * @param fin the FIN bit
     * @param opcode the opcode
     * @param length the payload length, in bytes
     * @param key the masking key (4 bytes)
     * @param bytes the head as received, masking key included, to relay unchanged
     */
    private record FrameHead(boolean fin, int opcode, long length, byte[] key, byte[] bytes) {
    }

    /** {@return the head of a client frame whose first byte is {@code b0}, or the {@link Ended} violation} */
    private static Object clientFrameHead(int b0, InputStream in) throws IOException {
        int b1 = readByte(in);
        long len = b1 & 0x7F;
        ByteArrayOutputStream header = new ByteArrayOutputStream(14);
        header.write(b0);
        header.write(b1);
        if (len == 126) {
            int hi = readByte(in);
            int lo = readByte(in);
            header.write(hi);
            header.write(lo);
            len = (hi << 8) | lo;
        } else if (len == 127) {
            len = 0;
            for (int i = 0; i < 8; i++) {
                int x = readByte(in);
                header.write(x);
                len = (len << 8) | x;
            }
            if (len < 0) {
                return new Ended(PROTOCOL_ERROR, "a frame length has its most significant bit set");
            }
        }
        if ((b1 & 0x80) == 0) {
            return new Ended(PROTOCOL_ERROR, "a client frame is not masked (RFC 6455, section 5.1)");
        }
        if ((b0 & 0x70) != 0) {
            return new Ended(PROTOCOL_ERROR, "a frame sets RSV bits, but no extension was negotiated");
        }
        byte[] key = readFully(in, 4);
        header.write(key);
        return new FrameHead((b0 & 0x80) != 0, b0 & 0x0F, len, key, header.toByteArray());
    }

    /** Relays a control frame; {@return how the relay ends (a close frame ends it), or {@code null} to go on} */
    private static Ended relayControl(FrameHead head, InputStream in, OutputStream toUpstream) throws IOException {
        if (head.opcode() > 10) {
            return new Ended(PROTOCOL_ERROR, "a frame uses a reserved control opcode");
        }
        if (!head.fin() || head.length() > 125) {
            return new Ended(PROTOCOL_ERROR, "a control frame is fragmented or longer than 125 bytes");
        }
        byte[] payload = readFully(in, (int) head.length());
        toUpstream.write(head.bytes());
        toUpstream.write(payload);
        toUpstream.flush();
        return head.opcode() == 8 ? new Ended(0, "the client closed the connection") : null;
    }

    /** A text message being assembled: its frames as received (relayed once the policy allows) and its text. */
    private static final class TextMessage {
        private final List<byte[]> held = new ArrayList<>();
        private final ByteArrayOutputStream text = new ByteArrayOutputStream();
        private int fragments;

        /** Adds a fragment; {@return the violation, or {@code null}} */
        Ended add(FrameHead head, InputStream in) throws IOException {
            if (++fragments > MAX_FRAGMENTS) {
                return new Ended(TOO_BIG, "a text message has more than " + MAX_FRAGMENTS + " fragments");
            }
            if (text.size() + head.length() > MAX_TEXT_BYTES) {
                return new Ended(TOO_BIG, "a text message is larger than " + MAX_TEXT_BYTES + " bytes");
            }
            byte[] payload = readFully(in, (int) head.length());
            byte[] frame = new byte[head.bytes().length + payload.length];
            System.arraycopy(head.bytes(), 0, frame, 0, head.bytes().length);
            System.arraycopy(payload, 0, frame, head.bytes().length, payload.length);
            held.add(frame);
            byte[] key = head.key();
            for (int i = 0; i < payload.length; i++) {
                text.write(payload[i] ^ key[i & 3]);
            }
            return null;
        }

        /** Judges the complete message and relays its frames; {@return how the relay ends, or {@code null}} */
        Ended finish(TextPolicy policy, OutputStream toUpstream) throws IOException {
            String message;
            try {
                message = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(text.toByteArray())).toString();
            } catch (CharacterCodingException e) {
                return new Ended(INVALID_PAYLOAD, "a text message is not UTF-8");
            }
            if (policy.onText(message) == Verdict.CLOSE) {
                return new Ended(POLICY_VIOLATION, "a text message was denied by L7 policy");
            }
            for (byte[] f : held) {
                toUpstream.write(f);
            }
            toUpstream.flush();
            return null;
        }
    }

    /**
     * {@return a close frame} Server-to-client frames are unmasked; client-to-server frames (the supervisor closing
     * the upstream side) are masked (RFC 6455, section 5.1).
     *
     * @param status the close status
     * @param masked whether to mask it (toward the upstream server)
     */
    public static byte[] closeFrame(int status, boolean masked) {
        byte[] payload = {(byte) (status >> 8), (byte) status};
        if (!masked) {
            return new byte[] {(byte) 0x88, 2, payload[0], payload[1]};
        }
        byte[] key = new byte[4];
        new java.security.SecureRandom().nextBytes(key);
        return new byte[] {(byte) 0x88, (byte) 0x82, key[0], key[1], key[2], key[3], (byte) (payload[0] ^ key[0]),
            (byte) (payload[1] ^ key[1])};
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

    private static void copy(InputStream in, OutputStream out, long n) throws IOException {
        byte[] buf = new byte[(int) Math.min(n, 16384)];
        while (n > 0) {
            int r = in.read(buf, 0, (int) Math.min(buf.length, n));
            if (r < 0) {
                throw new EOFException("the WebSocket stream ended inside a frame");
            }
            out.write(buf, 0, r);
            n -= r;
        }
    }
}
