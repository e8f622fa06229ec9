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
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;

/**
 * One direction of a WebSocket session whose text messages go through the message chain (RFC 6455, section 5;
 * {@code docs/external-middleware.md}, "WebSocket messages"): parses every frame, assembles each text message from
 * its fragments (control frames may interleave), asks the {@link Policy} and forwards the result as the original
 * frames (unchanged) or as one new text frame (replaced: masked toward the upstream, unmasked toward the client).
 *
 * <p>Rules (each a close with the RFC status): frames from the client must be masked and frames from the upstream
 * must not be (5.1, 1002); RSV bits must be zero, since every extension ({@code permessage-deflate}) was negotiated
 * away (5.2, 1002), so a compressed message never passes; reserved opcodes, fragmented or long control frames, a
 * continuation without a message and a message before the last one finished are refused (1002); a text message must be
 * UTF-8 (1007) and at most {@link WebSocketFrames#MAX_TEXT_BYTES} bytes and {@link WebSocketFrames#MAX_FRAGMENTS}
 * fragments (1009). Binary messages and control-frame payloads are not read by any stage: unless
 * {@link Policy#uninspectedAllowed()} they close the session with 1008. A policy that reads binary messages
 * ({@link Policy#readsBinary}: the scrub of a server's messages, {@link ScrubbedMessages}) gets each one assembled (at
 * most {@link WebSocketFrames#MAX_TEXT_BYTES} bytes, else 1009) and may replace it, and may replace a control frame's
 * payload ({@link Policy#control}); a replacement is sent as one new frame. A policy that holds messages
 * ({@link Policy#holds}: the same scrub, for values split across messages) gets every complete data message through
 * {@link Policy#message} and forwards the frames it releases; control frames are never held (RFC 6455, section 5.4,
 * lets them come between); the held messages go before the peer's close frame, at the end of its stream and when the
 * caller sees the peer silent ({@link #releaseHeld}), and a read timeout (the peer's idle limit) while messages are
 * held ends the relay as the policy says ({@link Policy#quiet}).
 */
final class MessageRelay {
    private static final SecureRandom KEYS = new SecureRandom();

    private MessageRelay() {
    }

    /** The session's policy on one direction's messages; called on the relay's thread, in message order. */
    interface Policy {
        /**
         * @param message one complete text message
         * @return what to do with it
         */
        Outcome text(String message);

        /**
         * {@return whether binary messages and control-frame payloads may pass uninspected} Called once per frame
         * that carries such bytes, so that the first one can be recorded.
         */
        boolean uninspectedAllowed();

        /**
         * {@return whether binary messages are assembled (each at most {@link WebSocketFrames#MAX_TEXT_BYTES} bytes,
         * else 1009) and given to {@link #binary}} Otherwise their frames pass as they arrive.
         */
        default boolean readsBinary() {
            return false;
        }

        /**
         * @param message one complete binary message, when {@link #readsBinary()}
         * @return the message to forward: {@code message} itself to forward the original frames, another array to
         *     forward it as one new binary frame, {@code null} to close the session with 1008
         */
        default byte[] binary(byte[] message) {
            return message;
        }

        /**
         * @param opcode the control frame's opcode (8 close, 9 ping, 10 pong)
         * @param payload its unmasked payload, at most 125 bytes
         * @return the payload to forward: {@code payload} itself to forward the original frame, another array (at
         *     most 125 bytes) to forward a new frame with it
         */
        default byte[] control(int opcode, byte[] payload) {
            return payload;
        }

        /**
         * {@return whether complete data messages go to {@link #message} instead of {@link #text} and
         * {@link #binary}} A policy that may hold a message until later ones decide on it ({@link ScrubbedMessages}).
         */
        default boolean holds() {
            return false;
        }

        /**
         * A complete data message, when the policy {@link #holds}.
         *
         * @param opcode 1 (text, checked to be UTF-8) or 2 (binary)
         * @param payload the message
         * @param frames its original frames
         * @return the frames to forward now (of this message and of earlier held ones, in order) and whether the
         *     relay ends
         */
        default Delivery message(int opcode, byte[] payload, List<byte[]> frames) {
            throw new UnsupportedOperationException("the policy does not hold messages");
        }

        /**
         * {@return the frames of the messages still held} Called at the peer's close frame (they go before it) and at
         * the end of its stream.
         */
        default Delivery drain() {
            return new Delivery(List.of(), null);
        }

        /**
         * {@return how the relay ends when a read timed out (the peer's idle limit), or {@code null} to end it as a
         * failed connection} A policy that holds messages closes with 1008 rather than let them go.
         */
        default WebSocketFrames.Ended quiet() {
            return null;
        }
    }

    /**
     * What a holding policy forwards.
     *
     * @param frames the frames to write now, in order
     * @param stop how the relay ends after them, or {@code null} to go on
     */
    record Delivery(List<byte[]> frames, WebSocketFrames.Ended stop) {
    }

    /**
     * What to do with one text message.
     *
     * @param close whether to close the session with 1008 (the message is not forwarded)
     * @param text the message to forward, when not closing
     * @param replaced whether {@code text} differs from what arrived (then it is re-framed)
     */
    record Outcome(boolean close, String text, boolean replaced) {
        static Outcome closeSession() {
            return new Outcome(true, null, false);
        }
    }

    /** One parsed frame: its original bytes and its unmasked payload. */
    private record Frame(boolean fin, int opcode, byte[] raw, byte[] payload) {
    }

    /**
     * Relays one direction until a close frame, the end of the stream, a protocol violation or a policy close.
     *
     * @param from the sending peer's bytes after the 101
     * @param to the receiving peer
     * @param fromClient whether {@code from} is the client (its frames are masked; replacements toward the upstream
     *     are masked)
     * @param policy the message chain of this direction
     * @return how it ended (status 0: the peer closed or ended the stream)
     */
    static WebSocketFrames.Ended relay(InputStream from, OutputStream to, boolean fromClient, Policy policy)
            throws IOException {
        Assembly m = new Assembly();
        while (true) {
            Frame f;
            try {
                f = read(from, fromClient);
            } catch (Violation v) {
                return new WebSocketFrames.Ended(v.status, v.getMessage());
            } catch (Stopped s) { // messages released while the peer was silent ended the relay
                return s.ended;
            } catch (IOException e) { // a read timeout: the peer's idle limit (wrapped when upstream)
                WebSocketFrames.Ended quiet = UpstreamPool.isTimeout(e) ? policy.quiet() : null;
                if (quiet == null) {
                    throw e;
                }
                return quiet;
            }
            if (f == null) {
                WebSocketFrames.Ended stop = drain(to, policy);
                return stop != null ? stop : new WebSocketFrames.Ended(0,
                        (fromClient ? "the client" : "the upstream") + " ended the stream");
            }
            int op = f.opcode();
            if (op >= 8) {
                boolean plainClose = op == 8 && f.payload().length <= 2;
                if (!plainClose && f.payload().length > 0 && !policy.uninspectedAllowed()) {
                    return new WebSocketFrames.Ended(WebSocketFrames.POLICY_VIOLATION,
                            "a control frame carries a payload no middleware stage reads");
                }
                if (op == 8) {
                    WebSocketFrames.Ended stop = drain(to, policy);
                    if (stop != null) {
                        return stop;
                    }
                }
                byte[] p = policy.control(op, f.payload());
                send(to, p == f.payload() ? f.raw() : frame(op, p, fromClient));
                if (op == 8) {
                    return new WebSocketFrames.Ended(0, (fromClient ? "the client" : "the upstream")
                            + " closed the connection");
                }
                continue;
            }
            WebSocketFrames.Ended stop = m.dataFrame(f, to, fromClient, policy);
            if (stop != null) {
                return stop;
            }
        }
    }

    /** The message being assembled from its data frames (text, or binary when the policy reads binary). */
    private static final class Assembly {
        private final List<byte[]> held = new ArrayList<>();
        private ByteArrayOutputStream text;
        private ByteArrayOutputStream binary;
        private boolean binaryOpen;
        private int fragments;

        /** {@return how the relay ends after one data frame, or null to go on} */
        WebSocketFrames.Ended dataFrame(Frame f, OutputStream to, boolean fromClient, Policy policy)
                throws IOException {
            int op = f.opcode();
            boolean continuation = op == 0;
            WebSocketFrames.Ended broken = sequence(continuation);
            if (broken != null) {
                return broken;
            }
            if (op == 2 || continuation && binaryOpen) {
                if (!policy.uninspectedAllowed()) {
                    return new WebSocketFrames.Ended(WebSocketFrames.POLICY_VIOLATION,
                            "a binary message, which no middleware stage reads");
                }
                binaryOpen = !f.fin();
                if (!policy.readsBinary()) {
                    send(to, f.raw());
                    return null;
                }
                return binaryFrame(f, to, fromClient, policy);
            }
            if (text == null) {
                text = new ByteArrayOutputStream();
            }
            if (text.size() + f.payload().length > WebSocketFrames.MAX_TEXT_BYTES) {
                return new WebSocketFrames.Ended(WebSocketFrames.TOO_BIG,
                        "a text message is larger than " + WebSocketFrames.MAX_TEXT_BYTES + " bytes");
            }
            text.write(f.payload());
            held.add(f.raw());
            if (!f.fin()) {
                return null;
            }
            WebSocketFrames.Ended stop = deliver(text, held, to, fromClient, policy);
            text = null;
            held.clear();
            return stop;
        }

        /**
         * Checks a data frame's place in the message sequence (RFC 6455, 5.4) and counts its fragments;
         * {@return how the relay ends, or null when the frame may go on}
         */
        private WebSocketFrames.Ended sequence(boolean continuation) {
            if (continuation && text == null && !binaryOpen) {
                return new WebSocketFrames.Ended(WebSocketFrames.PROTOCOL_ERROR,
                        "a continuation frame without a started message");
            }
            if (!continuation && (text != null || binaryOpen)) {
                return new WebSocketFrames.Ended(WebSocketFrames.PROTOCOL_ERROR,
                        "a new message before the last one finished");
            }
            if (!continuation) {
                fragments = 0;
            }
            if (++fragments > WebSocketFrames.MAX_FRAGMENTS) {
                return new WebSocketFrames.Ended(WebSocketFrames.TOO_BIG,
                        "a message has more than " + WebSocketFrames.MAX_FRAGMENTS + " fragments");
            }
            return null;
        }

        /** Assembles a binary message the policy reads; at its last fragment, forwards what the policy returns. */
        private WebSocketFrames.Ended binaryFrame(Frame f, OutputStream to, boolean fromClient, Policy policy)
                throws IOException {
            if (binary == null) {
                binary = new ByteArrayOutputStream();
            }
            if (binary.size() + f.payload().length > WebSocketFrames.MAX_TEXT_BYTES) {
                return new WebSocketFrames.Ended(WebSocketFrames.TOO_BIG,
                        "a binary message is larger than " + WebSocketFrames.MAX_TEXT_BYTES + " bytes");
            }
            binary.write(f.payload());
            held.add(f.raw());
            if (!f.fin()) {
                return null;
            }
            byte[] message = binary.toByteArray();
            binary = null;
            if (policy.holds()) {
                Delivery d = policy.message(2, message, List.copyOf(held));
                held.clear();
                send(to, d.frames());
                return d.stop();
            }
            byte[] out = policy.binary(message);
            if (out == null) {
                held.clear();
                return new WebSocketFrames.Ended(WebSocketFrames.POLICY_VIOLATION,
                        "a binary message was denied by middleware or policy");
            }
            send(to, out == message ? List.copyOf(held) : List.of(frame(2, out, fromClient)));
            held.clear();
            return null;
        }
    }

    /** Decodes a complete text message, asks the policy and forwards it; {@return how the relay ends, or null} */
    private static WebSocketFrames.Ended deliver(ByteArrayOutputStream text, List<byte[]> held, OutputStream to,
                                                 boolean fromClient, Policy policy) throws IOException {
        String message;
        byte[] bytes = text.toByteArray();
        try {
            message = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return new WebSocketFrames.Ended(WebSocketFrames.INVALID_PAYLOAD, "a text message is not UTF-8");
        }
        if (policy.holds()) {
            Delivery d = policy.message(1, bytes, List.copyOf(held));
            send(to, d.frames());
            return d.stop();
        }
        Outcome o = policy.text(message);
        if (o.close()) {
            return new WebSocketFrames.Ended(WebSocketFrames.POLICY_VIOLATION,
                    "a text message was denied by middleware or policy");
        }
        send(to, o.replaced() ? List.of(textFrame(o.text(), fromClient)) : held);
        return null;
    }

    /** Thrown out of a read when the messages {@link #releaseHeld} forwarded end the relay. */
    static final class Stopped extends IOException {
        private static final long serialVersionUID = 1L;
        /** How the relay ends. */
        final transient WebSocketFrames.Ended ended;

        Stopped(WebSocketFrames.Ended ended) {
            super(ended.reason(), null);
            this.ended = ended;
        }
    }

    /**
     * Forwards what a holding policy still holds, from inside a read of the peer's stream that waited (the peer was
     * silent: {@link HttpInput.Silence}); the message being read stays where it is.
     *
     * @param to the receiving peer
     * @param policy the holding policy
     * @throws Stopped when the policy ends the relay with them (the relay returns its end)
     */
    static void releaseHeld(OutputStream to, Policy policy) throws IOException {
        WebSocketFrames.Ended stop = drain(to, policy);
        if (stop != null) {
            throw new Stopped(stop);
        }
    }

    /** Forwards what a holding policy still holds; {@return how the relay ends, or null to go on} */
    private static WebSocketFrames.Ended drain(OutputStream to, Policy policy) throws IOException {
        if (!policy.holds()) {
            return null;
        }
        Delivery d = policy.drain();
        send(to, d.frames());
        return d.stop();
    }

    /** Writes whole frames under the stream's lock: the other direction may write a close frame to it. */
    private static void send(OutputStream to, byte[] frame) throws IOException {
        send(to, List.of(frame));
    }

    private static void send(OutputStream to, List<byte[]> frames) throws IOException {
        if (frames.isEmpty()) {
            return;
        }
        synchronized (to) {
            for (byte[] f : frames) {
                to.write(f);
            }
            to.flush();
        }
    }

    /** A protocol violation found while reading a frame. */
    private static final class Violation extends Exception {
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

    /** {@return the next frame, or {@code null} at the end of the stream} */
    private static Frame read(InputStream in, boolean fromClient) throws IOException, Violation {
        int b0 = in.read();
        if (b0 < 0) {
            return null;
        }
        int b1 = readByte(in);
        ByteArrayOutputStream raw = new ByteArrayOutputStream(14);
        raw.write(b0);
        raw.write(b1);
        long len = b1 & 0x7F;
        if (len == 126) {
            int hi = readByte(in);
            int lo = readByte(in);
            raw.write(hi);
            raw.write(lo);
            len = (hi << 8) | lo;
        } else if (len == 127) {
            len = 0;
            for (int i = 0; i < 8; i++) {
                int x = readByte(in);
                raw.write(x);
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
            raw.write(key);
        }
        // the whole frame is read before a violation is reported: closing a socket with unread bytes resets it,
        // and the peer could lose the close frame
        byte[] body = readFully(in, (int) len);
        raw.write(body);
        String violation = violation(b0, opcode, len, masked, fromClient);
        if (violation != null) {
            throw new Violation(violation);
        }
        byte[] payload = body;
        if (key != null) {
            payload = body.clone();
            for (int i = 0; i < payload.length; i++) {
                payload[i] ^= key[i & 3];
            }
        }
        return new Frame((b0 & 0x80) != 0, opcode, raw.toByteArray(), payload);
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

    /**
     * {@return one final text frame carrying {@code text}}, masked with a fresh key when it goes to the upstream
     * (RFC 6455, section 5.3).
     */
    static byte[] textFrame(String text, boolean masked) {
        return frame(1, text.getBytes(StandardCharsets.UTF_8), masked);
    }

    /**
     * {@return one final frame with this opcode carrying {@code payload}}, masked with a fresh key when it goes to the
     * upstream (RFC 6455, section 5.3).
     */
    static byte[] frame(int opcode, byte[] payload, boolean masked) {
        byte[] p = payload.clone();
        ByteArrayOutputStream out = new ByteArrayOutputStream(p.length + 14);
        out.write(0x80 | opcode);
        int maskBit = masked ? 0x80 : 0;
        if (p.length < 126) {
            out.write(maskBit | p.length);
        } else if (p.length <= 0xFFFF) {
            out.write(maskBit | 126);
            out.write(p.length >> 8);
            out.write(p.length);
        } else {
            out.write(maskBit | 127);
            for (int i = 7; i >= 0; i--) {
                out.write(i >= 4 ? 0 : (p.length >>> (8 * i)) & 0xFF);
            }
        }
        if (masked) {
            byte[] key = new byte[4];
            KEYS.nextBytes(key);
            out.write(key, 0, 4);
            for (int i = 0; i < p.length; i++) {
                p[i] ^= key[i & 3];
            }
        }
        out.write(p, 0, p.length);
        return out.toByteArray();
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
