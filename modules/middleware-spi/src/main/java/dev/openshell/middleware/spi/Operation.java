package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.EXPERIMENTAL;
import static org.apiguardian.api.API.Status.STABLE;

import org.apiguardian.api.API;

/**
 * The typed operation a binding hooks (RFC 0009, "Operation phases and placement").
 *
 * <p>Wire values ({@code SupervisorMiddlewareOperation}): {@code HTTP_REQUEST} = 1, {@code WEBSOCKET_MESSAGE} = 2,
 * {@code HTTP_RESPONSE} = 3. A binding advertises an operation through {@link MiddlewareBinding#operation()}: a
 * plugin written before an operation existed never declares it and is never invoked for it. The host refuses a
 * binding for an operation and phase it does not invoke.
 *
 * <p><b>An open enum:</b> later minor versions add constants (docs/plugin-authors.md, "Evolution rules"). Never
 * {@code switch} over it exhaustively without a {@code default} branch: a {@code switch} expression or pattern
 * {@code switch} that covers every constant of the version a plugin was compiled against compiles without
 * {@code default}, and throws {@link MatchException} (an {@code IncompatibleClassChangeError} for code compiled
 * before Java 21) when the supervisor hands it a constant added later.
 */
@API(status = STABLE, since = "0.1")
public enum Operation {
    /** An outbound HTTP/1.x request that the supervisor terminated, parsed and admitted. */
    HTTP_REQUEST,
    /** One complete WebSocket message of an upgraded session (RFC 6455), in one direction. */
    @API(status = EXPERIMENTAL, since = "0.2")
    WEBSOCKET_MESSAGE,
    /** The final response to an HTTP request, before it returns to the sandbox. */
    @API(status = EXPERIMENTAL, since = "0.2")
    HTTP_RESPONSE
}
