package dev.openshell.supervisor.proxy;

import java.util.Objects;

/**
 * A request with a selected chain whose body the proxy could not buffer (RFC 0009, "Operation phases and
 * placement": "If an oversized Content-Length is known before body consumption, the supervisor may preserve
 * streaming and fail open only when every affected stage permits it. If a chunked body crosses the cap after bytes
 * have been consumed, the request is denied").
 *
 * @param kind why the body was not buffered
 * @param capBytes the chain's body cap, in bytes
 * @param declaredBytes the declared Content-Length, or -1 for a chunked body
 * @param relayed whether the request was relayed unprocessed ({@code true}: every affected stage is fail_open, emit a
 *     bypass finding) or denied with 413 ({@code false})
 */
public record Uninspectable(Kind kind, long capBytes, long declaredBytes, boolean relayed) {
    /** The reasons a body cannot be inspected. */
    public enum Kind {
        /** The declared Content-Length exceeds the cap; known before any body byte was read. */
        CONTENT_LENGTH_OVER_CAP,
        /** A chunked body crossed the cap after bytes were consumed; always denied. */
        CHUNKED_OVER_CAP,
        /**
         * An {@code Upgrade} (WebSocket) request to an endpoint that is neither {@code protocol: websocket} nor
         * {@code upgrades: allow_uninspected}: the bytes after the 101 would be relayed without inspection. Denied
         * with 403 unless every matching stage is fail_open ({@code capBytes} and {@code declaredBytes} are -1).
         */
        UPGRADE
    }

    /**
     * Checks the parts.
     *
     * @throws NullPointerException if {@code kind} is {@code null}
     */
    public Uninspectable {
        Objects.requireNonNull(kind, "kind");
    }
}
