package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.EXPERIMENTAL;

import jakarta.json.JsonObject;
import java.util.List;
import java.util.Objects;
import org.apiguardian.api.API;

/**
 * The first event of a stage's WebSocket session (wire {@code WebSocketPreflight}, the first event of
 * {@code EvaluateWebSocketSession}): sent before the supervisor contacts the upstream, so that the stage can decline
 * the session ({@link WebSocketPreflightDecision.Action#DENY}), opt out of it ({@link
 * WebSocketPreflightDecision.Action#SKIP}) or ask for its messages ({@link WebSocketPreflightDecision.Action#INSPECT}).
 * One preflight per stage and direction: {@link Phase#PRE_CREDENTIALS} for client-to-upstream messages,
 * {@link Phase#PRE_RETURN} for upstream-to-client messages.
 *
 * @param bindingId the config's binding
 * @param sessionId the supervisor's ID for the session (the upgrade request's ID), unique per process
 * @param phase which direction this stream carries
 * @param context audit context; never identity
 * @param config the middleware config from policy
 * @param target the upgrade request's target: method {@code GET}, empty query
 * @param requestedSubprotocols the {@code Sec-WebSocket-Protocol} values the client offered, in order
 */
@API(status = EXPERIMENTAL, since = "0.2")
public record WebSocketPreflight(BindingId bindingId, String sessionId, Phase phase, RequestContext context,
                                 JsonObject config, HttpRequestTarget target, List<String> requestedSubprotocols) {
    /** @throws NullPointerException if any part is {@code null} */
    public WebSocketPreflight {
        Objects.requireNonNull(bindingId, "bindingId");
        Objects.requireNonNull(sessionId, "sessionId");
        Objects.requireNonNull(phase, "phase");
        Objects.requireNonNull(context, "context");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(target, "target");
        requestedSubprotocols = List.copyOf(requestedSubprotocols);
    }
}
