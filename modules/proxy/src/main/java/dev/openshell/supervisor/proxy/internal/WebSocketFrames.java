package dev.openshell.supervisor.proxy.internal;

/**
 * WebSocket framing shared by every relay of an upgraded connection (RFC 6455): the limits, the close statuses, how a
 * relay ended, and the close frames the supervisor sends. Frames are parsed in one place, {@link MessageRelay}, both
 * for sessions whose messages go through the message chain and for L7 {@code websocket} endpoints whose text messages
 * the L7 rules decide on ({@link UpgradeRelay#relayInspected}).
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
}
