package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.EXPERIMENTAL;
import static org.apiguardian.api.API.Status.INTERNAL;
import static org.apiguardian.api.API.Status.STABLE;

import org.apiguardian.api.API;

/**
 * The position in the proxy flow at which a binding runs (RFC 0009, "Operation phases and placement").
 *
 * <p>Wire values ({@code SupervisorMiddlewarePhase}): {@code PRE_CREDENTIALS} = 1, {@code PRE_RETURN} = 2;
 * {@link #POST_CREDENTIALS} (wire value 1000, an addition) is never sent to a service.
 *
 * <p><b>An open enum:</b> later minor versions add constants (docs/plugin-authors.md, "Evolution rules"). Never
 * {@code switch} over it exhaustively without a {@code default} branch: a {@code switch} expression or pattern
 * {@code switch} that covers every constant of the version a plugin was compiled against compiles without
 * {@code default}, and throws {@link MatchException} (an {@code IncompatibleClassChangeError} for code compiled
 * before Java 21) when the supervisor hands it a constant added later.
 */
@API(status = STABLE, since = "0.1")
public enum Phase {
    /** After L4, SSRF and L7 admission, before credential injection: the v1 hook every stage may bind. */
    PRE_CREDENTIALS,
    /**
     * After credential injection. In-process only, and only for restricted built-ins (RFC 0009, "Decisions":
     * "SigV4/request signing"); the plugin host refuses any other provider that binds it.
     */
    @API(status = INTERNAL, since = "0.1")
    POST_CREDENTIALS,
    /**
     * On the return path: after the upstream answered (a response, or an upstream-to-client WebSocket message),
     * before it reaches the sandbox.
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    PRE_RETURN
}
