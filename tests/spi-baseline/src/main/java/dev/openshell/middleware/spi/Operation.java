package dev.openshell.middleware.spi;

/**
 * The typed operation a binding hooks (RFC 0009, "Operation phases and placement").
 *
 * <p>Wire values ({@code SupervisorMiddlewareOperation}): {@code HTTP_REQUEST} = 1. Value 2 is the published
 * {@code WEBSOCKET_MESSAGE}, which v1 of this supervisor never invokes.
 */
public enum Operation {
    /** An outbound HTTP/1.x request that the supervisor terminated, parsed and admitted. */
    HTTP_REQUEST
}
