package dev.openshell.supervisor.proxy.internal;

import dev.openshell.supervisor.proxy.ProxyRefusal;
import java.util.Optional;

/**
 * The one home of the refusal record of a close the proxy makes on a WebSocket session by its own rules
 * ({@code docs/observability.md}, "Refusal events"): every relay of an upgraded connection reaches it, on an L7
 * {@code protocol: websocket} endpoint, on a session whose messages go through the message chain and on a session
 * whose server messages are scrubbed, in both directions.
 *
 * <ul>
 *   <li>A peer that breaks RFC 6455 ({@link #ended}, called by {@link MessageRelay#relay} when a direction ends):
 *       1002 (masking, RSV bits, reserved opcodes, control frames, message sequence), 1007 (a text message or a close
 *       frame's reason that is not UTF-8) and 1009 (a message or frame over the limits, more than
 *       {@link WebSocketFrames#MAX_FRAGMENTS} fragments) are one refusal with code {@value #PROTOCOL_ERROR},
 *       category {@code framing} when the client broke it and {@code upstream} when the server did, {@code cause}
 *       naming the close ({@code protocol_violation}, {@code invalid_payload}, {@code message_too_big}). A server
 *       message over the limits of a scrubbed session is recorded by the scrub instead
 *       ({@link MessageRelay.Policy#recordsTooBig}: {@code response_uninspectable}).</li>
 *   <li>No room in the body budget ({@link #busy}, by {@link MessageMemory}, once per session): 1013, category
 *       {@code limit}, the budget's own code.</li>
 * </ul>
 *
 * <p>A 1008 close is recorded where it is decided (an L7 or stage decision, an uninspected binary message refused,
 * held server messages past their bound), and an end that is not the proxy's (a close frame, the end of a stream, a
 * failed connection, the idle limit) is no refusal. Every refusal is status 0: the client got a close frame, not an
 * HTTP answer. Details are the proxy's own sentences, never message content.
 */
final class WebSocketCloses {
    /** The code of a session closed because a peer broke RFC 6455. */
    static final String PROTOCOL_ERROR = "websocket_protocol_error";

    /** Where refusals go: the exchange's audit step, with the request's facts. */
    @FunctionalInterface
    interface Sink {
        /**
         * @param kind the rule's kind
         * @param code the platform code
         * @param cause the finer code, when there is one
         * @param detail the proxy's own sentence
         */
        void refused(ProxyRefusal.Kind kind, String code, Optional<String> cause, String detail);
    }

    private static final WebSocketCloses NONE = new WebSocketCloses((kind, code, cause, detail) -> { });

    private final Sink sink;

    /** @param sink where refusals go */
    WebSocketCloses(Sink sink) {
        this.sink = sink;
    }

    /** {@return a home that records nothing} For relays of tests that read framing only. */
    static WebSocketCloses none() {
        return NONE;
    }

    /**
     * Records a session closed with 1013: the body budget had no room for a message's bytes.
     *
     * @param code the budget's code ({@code body_buffer_busy}, {@code client_body_buffer_limit})
     */
    void busy(String code) {
        sink.refused(ProxyRefusal.Kind.LIMIT, code, Optional.empty(), "the proxy is holding as many WebSocket"
                + " message bytes as it may; the session was closed with 1013 (try again later)");
    }

    /**
     * Records how one direction of a session ended, when the proxy closed it because the sending peer broke RFC 6455;
     * any other end records nothing here.
     *
     * @param ended how {@link MessageRelay#relay} ended
     * @param fromClient whether the client sent what was relayed
     * @param policy the direction's policy
     */
    void ended(WebSocketFrames.Ended ended, boolean fromClient, MessageRelay.Policy policy) {
        int status = ended.closeStatus();
        String cause = switch (status) {
            case WebSocketFrames.PROTOCOL_ERROR -> "protocol_violation";
            case WebSocketFrames.INVALID_PAYLOAD -> "invalid_payload";
            case WebSocketFrames.TOO_BIG -> "message_too_big";
            default -> null;
        };
        if (cause == null || status == WebSocketFrames.TOO_BIG && policy.recordsTooBig()) {
            return;
        }
        sink.refused(fromClient ? ProxyRefusal.Kind.FRAMING : ProxyRefusal.Kind.UPSTREAM, PROTOCOL_ERROR,
                Optional.of(cause), (fromClient ? "the client" : "the upstream") + " broke RFC 6455: "
                        + ended.reason() + "; the WebSocket session was closed with " + status);
    }
}
