package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.EXPERIMENTAL;

import org.apiguardian.api.API;

/**
 * One stage's stream of one WebSocket session in one direction (wire {@code EvaluateWebSocketSession}; RFC 0009
 * appendix "Additional operation phases"), opened by {@link MiddlewareProvider#openWebSocketSession}. The host calls,
 * in this order and from one thread at a time: {@link #preflight} once; when it answered
 * {@link WebSocketPreflightDecision.Action#INSPECT}, {@link #start} once after the upstream accepted the upgrade and
 * {@link #message} for each complete text message, in order; and {@link #end} at most once, on every path (best
 * effort, never answered). The host enforces the stage's timeout on {@link #preflight} (at most 1 s) and on each
 * {@link #message}; an exception is a stage failure handled by the config's {@code on_error}.
 */
@API(status = EXPERIMENTAL, since = "0.2")
public interface WebSocketSession {
    /**
     * Decides whether the stage takes part, before the upstream is contacted.
     *
     * @param preflight the session's scope; never {@code null}
     * @return the decision; never {@code null}
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    WebSocketPreflightDecision preflight(WebSocketPreflight preflight);

    /**
     * The upstream accepted the upgrade (wire {@code WebSocketSessionStart}). The default does nothing.
     *
     * @param selectedSubprotocol the subprotocol the upstream selected; empty when none
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    default void start(String selectedSubprotocol) {
    }

    /**
     * Evaluates one complete text message.
     *
     * @param message the message as the previous stage left it
     * @return the decision; never {@code null}
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    WebSocketMessageResult message(WebSocketMessage message);

    /**
     * The session's stream ends (wire {@code MiddlewareSessionEnd}); no call follows. The default does nothing.
     *
     * @param reason why
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    default void end(SessionEndReason reason) {
    }
}
