package dev.openshell.supervisor.engine.chain;

import java.util.Objects;

/** The final word of a chain run: forward the (possibly transformed) request, or deny it. */
public sealed interface ChainOutcome {
    /** Forward the request upstream with {@link ChainResult#headers()} and {@link ChainResult#body()}. */
    record Forward() implements ChainOutcome {
    }

    /**
     * Deny the request with {@code response}; nothing goes upstream.
     *
     * @param response the 403 to send
     */
    record Deny(DenyResponse response) implements ChainOutcome {
        /** @throws NullPointerException if {@code response} is {@code null} */
        public Deny {
            Objects.requireNonNull(response, "response");
        }
    }
}
