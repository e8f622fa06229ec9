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
        List<byte[]> held = new ArrayList<>();
        ByteArrayOutputStream text = null;
        boolean binaryOpen = false;
        int fragments = 0;
        while (true) {
            int b0 = fromClient.read();
            if (b0 < 0) {
                return new Ended(0, "the client ended the stream");
            }
            int b1 = readByte(fromClient);
            boolean fin = (b0 & 0x80) != 0;
            int rsv = b0 & 0x70;
            int opcode = b0 & 0x0F;
            boolean masked = (b1 & 0x80) != 0;
            long len = b1 & 0x7F;
            ByteArrayOutputStream header = new ByteArrayOutputStream(14);
            header.write(b0);
            header.write(b1);
            if (len == 126) {
                int hi = readByte(fromClient);
                int lo = readByte(fromClient);
                header.write(hi);
                header.write(lo);
                len = (hi << 8) | lo;
            } else if (len == 127) {
                len = 0;
                for (int i = 0; i < 8; i++) {
                    int x = readByte(fromClient);
                    header.write(x);
                    len = (len << 8) | x;
                }
                if (len < 0) {
                    return new Ended(PROTOCOL_ERROR, "a frame length has its most significant bit set");
                }
            }
            if (!masked) {
                return new Ended(PROTOCOL_ERROR, "a client frame is not masked (RFC 6455, section 5.1)");
            }
            if (rsv != 0) {
                return new Ended(PROTOCOL_ERROR, "a frame sets RSV bits, but no extension was negotiated");
            }
            byte[] key = readFully(fromClient, 4);
            header.write(key);
            boolean control = opcode >= 8;
            if (control) {
                if (opcode > 10) {
                    return new Ended(PROTOCOL_ERROR, "a frame uses a reserved control opcode");
                }
                if (!fin || len > 125) {
                    return new Ended(PROTOCOL_ERROR, "a control frame is fragmented or longer than 125 bytes");
                }
                byte[] payload = readFully(fromClient, (int) len);
                toUpstream.write(header.toByteArray());
                toUpstream.write(payload);
                toUpstream.flush();
                if (opcode == 8) {
                    return new Ended(0, "the client closed the connection");
                }
                continue;
            }
            if (opcode != 0 && opcode != 1 && opcode != 2) {
                return new Ended(PROTOCOL_ERROR, "a frame uses a reserved data opcode");
            }
            boolean continuation = opcode == 0;
            if (continuation && text == null && !binaryOpen) {
                return new Ended(PROTOCOL_ERROR, "a continuation frame without a started message");
            }
            if (!continuation && (text != null || binaryOpen)) {
                return new Ended(PROTOCOL_ERROR, "a new message before the last one finished");
            }
            if (opcode == 1 || continuation && text != null) {
                if (text == null) {
                    text = new ByteArrayOutputStream();
                    fragments = 0;
                }
                if (++fragments > MAX_FRAGMENTS) {
                    return new Ended(TOO_BIG, "a text message has more than " + MAX_FRAGMENTS + " fragments");
                }
                if (text.size() + len > MAX_TEXT_BYTES) {
                    return new Ended(TOO_BIG, "a text message is larger than " + MAX_TEXT_BYTES + " bytes");
                }
                byte[] payload = readFully(fromClient, (int) len);
                byte[] frame = new byte[header.size() + payload.length];
                System.arraycopy(header.toByteArray(), 0, frame, 0, header.size());
                System.arraycopy(payload, 0, frame, header.size(), payload.length);
                held.add(frame);
                for (int i = 0; i < payload.length; i++) {
                    text.write(payload[i] ^ key[i & 3]);
                }
                if (!fin) {
                    continue;
                }
                String message;
                try {
                    message = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                            .onUnmappableCharacter(CodingErrorAction.REPORT)
                            .decode(ByteBuffer.wrap(text.toByteArray())).toString();
                } catch (CharacterCodingException e) {
                    return new Ended(INVALID_PAYLOAD, "a text message is not UTF-8");
                }
                text = null;
                if (policy.onText(message) == Verdict.CLOSE) {
                    return new Ended(POLICY_VIOLATION, "a text message was denied by L7 policy");
                }
                for (byte[] f : held) {
                    toUpstream.write(f);
                }
                toUpstream.flush();
                held.clear();
                continue;
            }
            // binary data: relayed as it comes, frame by frame
            if (len > MAX_BINARY_FRAME_BYTES) {
                return new Ended(TOO_BIG, "a binary frame is larger than " + MAX_BINARY_FRAME_BYTES + " bytes");
            }
            if (!continuation) {
                fragments = 0;
            }
            if (++fragments > MAX_FRAGMENTS) {
                return new Ended(TOO_BIG, "a binary message has more than " + MAX_FRAGMENTS + " fragments");
            }
            toUpstream.write(header.toByteArray());
            copy(fromClient, toUpstream, len);
            toUpstream.flush();
            binaryOpen = !fin;
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
