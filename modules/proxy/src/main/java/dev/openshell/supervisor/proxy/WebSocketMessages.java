package dev.openshell.supervisor.proxy;

/**
 * The policy on the client's WebSocket messages after a {@code 101}, on an endpoint whose messages are inspected
 * ({@link L7Verdict.Allow#messages()}; {@code docs/policy-reference.md}, "protocol: websocket"). The proxy
 * parses the client's RFC 6455 frames, holds each text message until it is complete and asks {@link #allow}; binary
 * and control frames are relayed as they come, server-to-client bytes untouched. Methods run on the relay's thread,
 * in message order, and must not block for long.
 */
public interface WebSocketMessages {
    /**
     * Decides one complete client text message.
     *
     * @param message the message, decoded as UTF-8 (at most 4 MiB)
     * @return whether to relay it; {@code false} closes both sides with status 1008 (policy violation), and the
     *     message never reaches the upstream. A close the proxy makes because the client broke RFC 6455 (1002,
     *     1007, 1009) is the proxy's own refusal, recorded by it ({@code websocket_protocol_error},
     *     {@link ExchangeRecord.Refused})
     */
    boolean allow(String message);
}
