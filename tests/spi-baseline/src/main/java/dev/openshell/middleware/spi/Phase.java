package dev.openshell.middleware.spi;

/**
 * The position in the proxy flow at which a binding runs (RFC 0009, "Operation phases and placement").
 *
 * <p>Wire values ({@code SupervisorMiddlewarePhase}): {@code PRE_CREDENTIALS} = 1; 2 is the published, reserved
 * {@code PRE_RETURN}; {@link #POST_CREDENTIALS} is never sent on the wire.
 */
public enum Phase {
    /** After L4, SSRF and L7 admission, before credential injection: the v1 hook every stage may bind. */
    PRE_CREDENTIALS,
    /**
     * After credential injection. In-process only, and only for restricted built-ins (RFC 0009, "Decisions":
     * "SigV4/request signing"); the plugin host refuses any other provider that binds it.
     */
    POST_CREDENTIALS
}
