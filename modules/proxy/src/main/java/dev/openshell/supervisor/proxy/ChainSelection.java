package dev.openshell.supervisor.proxy;

import dev.openshell.middleware.spi.EnvelopeLimits;

/**
 * Whether a middleware chain applies to a request, and how much body it needs (RFC 0009, "Operation phases and
 * placement": "The supervisor buffers up to the largest resolved stage limit, bounded by the 4 MiB platform
 * maximum").
 */
public sealed interface ChainSelection {
    /** No chain: the request streams through byte-identical, with no buffering. */
    record None() implements ChainSelection {
    }

    /**
     * A chain is selected.
     *
     * @param bodyCapBytes the largest stage body limit in the chain, in bytes: 0 to
     *     {@link EnvelopeLimits#MAX_BODY_BYTES} (4 MiB). The proxy buffers at most this much.
     * @param allFailOpen whether every stage the cap affects is {@code on_error: fail_open}. Only then may a body
     *     whose declared Content-Length exceeds the cap stream through unprocessed; otherwise the proxy answers 413.
     */
    record Selected(int bodyCapBytes, boolean allFailOpen) implements ChainSelection {
        /**
         * Checks the parts.
         *
         * @throws IllegalArgumentException if {@code bodyCapBytes} is outside 0..4 MiB
         */
        public Selected {
            if (bodyCapBytes < 0 || bodyCapBytes > EnvelopeLimits.MAX_BODY_BYTES) {
                throw new IllegalArgumentException("body cap %d bytes is outside 0..%d"
                        .formatted(bodyCapBytes, EnvelopeLimits.MAX_BODY_BYTES));
            }
        }
    }

    /** {@return no chain} */
    static ChainSelection none() {
        return new None();
    }

    /**
     * {@return a selected chain}
     *
     * @param bodyCapBytes the body cap in bytes
     * @param allFailOpen whether every affected
     * stage is fail_open
     */
    static ChainSelection selected(int bodyCapBytes, boolean allFailOpen) {
        return new Selected(bodyCapBytes, allFailOpen);
    }
}
