package dev.openshell.supervisor.proxy.internal;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;

/**
 * WebSocket framing shared by every relay of an upgraded connection (RFC 6455): the limits, the close statuses, how a
 * relay ended, and the close frames the supervisor sends. Frames are parsed in one place, {@link MessageRelay}, both
 * for sessions whose messages go through the message chain and for L7 {@code websocket} endpoints whose text messages
 * the L7 rules decide on ({@link UpgradeRelay#relayInspected}).
 */
public final class WebSocketFrames {
    /**
     * The largest text message assembled for policy, bytes; also the largest server message (text or binary) of an
     * upgrade whose messages are scrubbed ({@link ScrubbedMessages}).
     */
    public static final int MAX_TEXT_BYTES = 4 * 1024 * 1024;
    /** The largest binary frame relayed, bytes. */
    public static final long MAX_BINARY_FRAME_BYTES = 16L * 1024 * 1024;
    /** The most fragments of one message. */
    public static final int MAX_FRAGMENTS = 4096;

    /** Close status: normal closure. */
    public static final int NORMAL = 1000;
    /**
     * Close status: going away (RFC 6455, section 7.4.1: "a server going down"): the upstream's connection ended
     * without a close frame (its end, a reset, the upstream read side's idle limit: the kernel reports a reset to
     * whichever direction uses the socket first, the other then reads an end, so the two are not told apart); the
     * proxy, the client's server, ends the session ({@link UpgradeRelay#endClient}). 1006, what the client's endpoint
     * reports of a connection that ends without a close frame, is never sent on the wire (section 7.4.1).
     */
    public static final int GOING_AWAY = 1001;
    /** Close status: protocol error. */
    public static final int PROTOCOL_ERROR = 1002;
    /** Close status: invalid payload data (a text message that is not UTF-8). */
    public static final int INVALID_PAYLOAD = 1007;
    /** Close status: policy violation. */
    public static final int POLICY_VIOLATION = 1008;
    /** Close status: message too big. */
    public static final int TOO_BIG = 1009;
    /**
     * Close status: try again later (RFC 6455, section 7.4.1, registered in the IANA WebSocket Close Code Number
     * Registry): the body buffer budget had no room for a message's bytes ({@link MessageMemory}).
     */
    public static final int TRY_AGAIN_LATER = 1013;

    private WebSocketFrames() {
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
     * {@return how a close frame's payload ends the relay, or {@code null} when the frame is well formed} RFC 6455,
     * section 5.5.1: a payload is empty or starts with a 2-byte status code, and any reason after it is UTF-8 (section
     * 7.1.6: else the endpoint fails the connection with {@value #INVALID_PAYLOAD}); section 7.4: the codes a peer may
     * send are 1000 to 1003, 1007 to 1014 (the IANA registry's) and 3000 to 4999 (1004 to 1006 and 1015 are reserved,
     * the rest unassigned). A wrong length or code ends with {@value #PROTOCOL_ERROR}.
     *
     * @param payload the unmasked payload of a close frame
     */
    static Ended closeViolation(byte[] payload) {
        if (payload.length == 0) {
            return null;
        }
        if (payload.length == 1) {
            return new Ended(PROTOCOL_ERROR,
                    "a close frame's payload is one byte, not a status code (RFC 6455, section 5.5.1)");
        }
        int code = ((payload[0] & 0xFF) << 8) | (payload[1] & 0xFF);
        boolean valid = code >= 1000 && code <= 1003 || code >= 1007 && code <= 1014 || code >= 3000 && code <= 4999;
        if (!valid) {
            return new Ended(PROTOCOL_ERROR,
                    "a close frame carries a status code a peer may not send (RFC 6455, section 7.4)");
        }
        if (utf8(payload, 2, payload.length - 2) == null) {
            return new Ended(INVALID_PAYLOAD,
                    "a close frame's reason is not UTF-8 (RFC 6455, sections 5.5.1 and 7.1.6)");
        }
        return null;
    }

    /**
     * {@return {@code bytes[off, off + len)} decoded as UTF-8, or null when they are not well-formed UTF-8} The one
     * strict reading of text payloads and close reasons (RFC 6455, sections 5.6 and 8.1: a text message or a close
     * reason that is not UTF-8 fails the connection with 1007). No replacement characters: a surrogate encoded in
     * UTF-8, an overlong form or a truncated sequence is an error.
     *
     * @param bytes the payload
     * @param off where the text starts
     * @param len its length in bytes
     */
    static String utf8(byte[] bytes, int off, int len) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes, off, len)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    /**
     * {@return an unmasked close frame} Server-to-client frames are unmasked (RFC 6455, section 5.1).
     *
     * @param status the close status
     */
    public static byte[] closeFrame(int status) {
        return new byte[] {(byte) 0x88, 2, (byte) (status >> 8), (byte) status};
    }

    /**
     * {@return a masked close frame} Client-to-server frames (the supervisor closing the upstream side) are masked
     * (RFC 6455, section 5.1); the 4-byte masking key is drawn from {@code maskKeys}, a source the caller owns and
     * shares (a {@link SecureRandom} is costly to create and seed, so not one per frame).
     *
     * @param status the close status
     * @param maskKeys where the masking key comes from
     */
    public static byte[] maskedCloseFrame(int status, SecureRandom maskKeys) {
        byte[] key = new byte[4];
        maskKeys.nextBytes(key);
        return new byte[] {(byte) 0x88, (byte) 0x82, key[0], key[1], key[2], key[3], (byte) ((status >> 8) ^ key[0]),
            (byte) (status ^ key[1])};
    }
}
