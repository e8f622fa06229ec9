package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.HttpHeader;
import java.util.List;
import java.util.Objects;

/**
 * The outcome of {@link HeaderRules#apply}: all of a stage's mutations applied, or none (RFC 0009, "The middleware
 * contract": "If any mutation is invalid, none are applied").
 */
public sealed interface MutationOutcome {
    /**
     * Every mutation was valid and has been applied.
     *
     * @param headers the complete header list after the mutations, names lowercased, in order; unmodifiable
     * @param changed whether {@code headers} differs from the input list
     */
    record Applied(List<HttpHeader> headers, boolean changed) implements MutationOutcome {
        /** @throws NullPointerException if {@code headers} is {@code null} */
        public Applied {
            headers = List.copyOf(headers);
        }
    }

    /**
     * A mutation broke a rule; nothing was applied.
     *
     * @param error the first rule broken, in mutation order
     */
    record Rejected(HeaderMutationError error) implements MutationOutcome {
        /** @throws NullPointerException if {@code error} is {@code null} */
        public Rejected {
            Objects.requireNonNull(error, "error");
        }
    }
}
