package dev.openshell.supervisor.proxy.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
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
 * <p>Rules (each a close with the RFC status): frames from the client must be masked and frames from the upstream must
 * not be (5.1, 1002); RSV bits must be zero, since every extension ({@code permessage-deflate}) was negotiated away
 * (5.2, 1002), so a compressed message never passes; reserved opcodes, fragmented or long control frames, a
 * continuation without a message, a message before the last one finished and a close frame whose status code may not be
 * sent (RFC 6455, 5.5.1 and 7.4) are refused (1002); a text message and a close frame's reason must be UTF-8 (5.5.1,
 * 7.1.6; 1007); a text message is at most {@link WebSocketFrames#MAX_TEXT_BYTES} bytes and {@link
 * WebSocketFrames#MAX_FRAGMENTS} fragments (1009). Binary messages and control-frame payloads are not read by any
 * stage: unless {@link Policy#uninspectedAllowed()} they close the session with 1008. A policy that reads binary
 * messages ({@link Policy#readsBinary}: the scrub of a server's messages, {@link ScrubbedMessages}) gets each one
 * assembled (at most {@link WebSocketFrames#MAX_TEXT_BYTES} bytes, else 1009) and may replace it, and may replace a
 * control frame's payload ({@link Policy#control}); a replacement is sent as one new frame. A policy that holds
 * messages ({@link Policy#holds}: the same scrub, for values split across messages) gets every complete data message
 * through {@link Policy#message} and forwards the frames it releases; control frames are never held (RFC 6455, section
 * 5.4, lets them come between); the held messages go before the peer's close frame, at the end of its stream and when
 * the caller sees the peer silent ({@link #releaseHeld}), and a read timeout (the peer's idle limit) while messages are
 * held ends the relay as the policy says ({@link Policy#quiet}).
 *
 * <p>Memory: every byte the relay holds (a frame being read, the message being assembled, its assembled copy while
 * the policy decides, and what the policy holds, {@link Policy#heldBytes}) is reserved from the body budget before it
 * is read ({@link MessageMemory}); without room the relay ends with 1013 (Try Again Later).
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

        /**
         * {@return the heap the policy holds for messages it has not released yet, in bytes} Reserved from the body
         * budget with the message being assembled ({@link MessageMemory}); 0 for a policy that holds nothing.
         */
        default long heldBytes() {
            return 0;
        }

        /**
         * {@return whether the policy records a 1009 close itself} The scrub of a server's messages records a message
         * over the limits as {@code response_uninspectable} ({@link ScrubbedMessages#ended}); for any other policy
         * the relay's refusal record is {@code websocket_protocol_error} ({@link WebSocketCloses#ended}).
         */
        default boolean recordsTooBig() {
            return false;
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

    /**
     * Relays one direction until a close frame, the end of the stream, a protocol violation or a policy close,
     * holding no more than it can reserve: as {@link #relay(InputStream, OutputStream, boolean, Policy,
     * MessageMemory.Held)} with a memory that reserves nothing (framing tests).
     */
    static WebSocketFrames.Ended relay(InputStream from, OutputStream to, boolean fromClient, Policy policy)
            throws IOException {
        return relay(from, to, fromClient, policy, MessageMemory.unbounded().direction());
    }

    /**
     * Relays one direction until a close frame, the end of the stream, a protocol violation, a policy close or a
     * refused reservation. Every frame's bytes are reserved in {@code memory} before its payload is read, with the
     * message being assembled and what the policy holds ({@link Policy#heldBytes}); what the relay no longer holds is
     * given back after each frame, and everything when it returns or throws. A close for the sending peer's breach of
     * RFC 6455 is recorded before this returns ({@link WebSocketCloses#ended}), so the caller's close frames follow
     * the audit line once it awaits the connection's barrier.
     *
     * @param from the sending peer's bytes after the 101
     * @param to the receiving peer
     * @param fromClient whether {@code from} is the client (its frames are masked; replacements toward the upstream
     *     are masked)
     * @param policy the message chain of this direction
     * @param memory this direction's share of the body budget; closed here
     * @return how it ended (status 0: the peer closed or ended the stream; 1013 when the budget had no room)
     */
    static WebSocketFrames.Ended relay(InputStream from, OutputStream to, boolean fromClient, Policy policy,
                                       MessageMemory.Held memory) throws IOException {
        try (memory) {
            Assembly m = new Assembly(memory);
            while (true) {
                WebSocketFrames.Ended stop = step(from, to, fromClient, policy, m);
                if (stop != null) {
                    memory.closes().ended(stop, fromClient, policy); // written before any close frame goes
                    return stop;
                }
                memory.settle(m.heldBytes() + policy.heldBytes());
            }
        }
    }

    /** Relays one frame; {@return how the relay ends, or null to go on} */
    private static WebSocketFrames.Ended step(InputStream from, OutputStream to, boolean fromClient, Policy policy,
                                              Assembly m) throws IOException {
        FrameReader.Frame f;
        try {
            f = FrameReader.read(from, fromClient, m.memory, m.heldBytes() + policy.heldBytes());
        } catch (FrameReader.Violation v) {
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
        if (op < 8) {
            return m.dataFrame(f, to, fromClient, policy);
        }
        byte[] payload = f.payload();
        WebSocketFrames.Ended badClose = op == 8 ? WebSocketFrames.closeViolation(payload) : null;
        if (badClose != null) {
            return badClose;
        }
        boolean plainClose = op == 8 && payload.length <= 2;
        if (!plainClose && payload.length > 0 && !policy.uninspectedAllowed()) {
            return new WebSocketFrames.Ended(WebSocketFrames.POLICY_VIOLATION,
                    "a control frame carries a payload no middleware stage reads");
        }
        if (op == 8) {
            WebSocketFrames.Ended stop = drain(to, policy);
            if (stop != null) {
                return stop;
            }
        }
        byte[] p = policy.control(op, payload);
        send(to, p == payload ? f.raw() : frame(op, p, fromClient));
        if (op == 8) {
            return new WebSocketFrames.Ended(0, (fromClient ? "the client" : "the upstream")
                    + " closed the connection");
        }
        return null;
    }

    /** How a relay ends when the body budget had no room for a message's bytes. */
    static WebSocketFrames.Ended noRoom() {
        return new WebSocketFrames.Ended(WebSocketFrames.TRY_AGAIN_LATER,
                "the proxy is holding as many message bytes as it may (body buffer budget)");
    }

    /**
     * The message being assembled from its data frames (text, or binary when the policy reads binary): its frames
     * as they arrived, the payload copied out once, when the message is complete.
     */
    private static final class Assembly {
        private final MessageMemory.Held memory;
        private final List<FrameReader.Frame> frames = new ArrayList<>();
        /** The frames' bytes (what they hold on the heap). */
        private long rawBytes;
        /** The payload bytes of the message so far. */
        private int size;
        private boolean textOpen;
        private boolean binaryOpen;
        private int fragments;

        Assembly(MessageMemory.Held memory) {
            this.memory = memory;
        }

        /** {@return the bytes the message being assembled holds} */
        long heldBytes() {
            return rawBytes;
        }

        private void add(FrameReader.Frame f) {
            frames.add(f);
            rawBytes += f.raw().length;
            size += f.length();
        }

        private List<byte[]> raws() {
            List<byte[]> out = new ArrayList<>(frames.size());
            for (FrameReader.Frame f : frames) {
                out.add(f.raw());
            }
            return out;
        }

        private void clear() {
            frames.clear();
            rawBytes = 0;
            size = 0;
        }

        /**
         * {@return the message's payload, assembled, or {@code null} when the budget had no room for the copy} The
         * copy is reserved with everything the direction holds while the policy decides on it.
         */
        private byte[] assemble(Policy policy) throws IOException {
            if (!memory.hold(rawBytes + policy.heldBytes() + size)) {
                return null;
            }
            byte[] out = new byte[size];
            int at = 0;
            for (FrameReader.Frame f : frames) {
                f.payloadInto(out, at);
                at += f.length();
            }
            return out;
        }

        /** {@return how the relay ends after one data frame, or null to go on} */
        WebSocketFrames.Ended dataFrame(FrameReader.Frame f, OutputStream to, boolean fromClient, Policy policy)
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
            textOpen = true;
            if ((long) size + f.length() > WebSocketFrames.MAX_TEXT_BYTES) {
                return new WebSocketFrames.Ended(WebSocketFrames.TOO_BIG,
                        "a text message is larger than " + WebSocketFrames.MAX_TEXT_BYTES + " bytes");
            }
            add(f);
            if (!f.fin()) {
                return null;
            }
            textOpen = false;
            byte[] bytes = assemble(policy);
            if (bytes == null) {
                return noRoom();
            }
            List<byte[]> held = raws();
            clear();
            return deliver(bytes, held, to, fromClient, policy);
        }

        /**
         * Checks a data frame's place in the message sequence (RFC 6455, 5.4) and counts its fragments;
         * {@return how the relay ends, or null when the frame may go on}
         */
        private WebSocketFrames.Ended sequence(boolean continuation) {
            if (continuation && !textOpen && !binaryOpen) {
                return new WebSocketFrames.Ended(WebSocketFrames.PROTOCOL_ERROR,
                        "a continuation frame without a started message");
            }
            if (!continuation && (textOpen || binaryOpen)) {
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
        private WebSocketFrames.Ended binaryFrame(FrameReader.Frame f, OutputStream to, boolean fromClient,
                                                  Policy policy) throws IOException {
            if ((long) size + f.length() > WebSocketFrames.MAX_TEXT_BYTES) {
                return new WebSocketFrames.Ended(WebSocketFrames.TOO_BIG,
                        "a binary message is larger than " + WebSocketFrames.MAX_TEXT_BYTES + " bytes");
            }
            add(f);
            if (!f.fin()) {
                return null;
            }
            byte[] message = assemble(policy);
            if (message == null) {
                return noRoom();
            }
            List<byte[]> held = raws();
            clear();
            if (policy.holds()) {
                Delivery d = policy.message(2, message, held);
                send(to, d.frames());
                return d.stop();
            }
            byte[] out = policy.binary(message);
            if (out == null) {
                return new WebSocketFrames.Ended(WebSocketFrames.POLICY_VIOLATION,
                        "a binary message was denied by middleware or policy");
            }
            send(to, out == message ? held : List.of(frame(2, out, fromClient)));
            return null;
        }
    }

    /** Decodes a complete text message, asks the policy and forwards it; {@return how the relay ends, or null} */
    private static WebSocketFrames.Ended deliver(byte[] bytes, List<byte[]> held, OutputStream to,
                                                 boolean fromClient, Policy policy) throws IOException {
        String message = WebSocketFrames.utf8(bytes, 0, bytes.length);
        if (message == null) {
            return new WebSocketFrames.Ended(WebSocketFrames.INVALID_PAYLOAD, "a text message is not UTF-8");
        }
        if (policy.holds()) {
            Delivery d = policy.message(1, bytes, held);
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

}
