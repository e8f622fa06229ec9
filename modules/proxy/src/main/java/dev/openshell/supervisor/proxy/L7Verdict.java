package dev.openshell.supervisor.proxy;

import java.util.Objects;
import java.util.Optional;

/**
 * What the L7 step decided ({@link PolicySteps.L7}; {@code docs/policy-reference.md}, "L7 policy"): on the head,
 * then, for the protocols whose rules read the body (GraphQL, JSON-RPC, MCP), once more on the buffered body.
 */
public sealed interface L7Verdict {
    /** No L7 endpoint governs the request: nothing to decide. */
    record Unruled() implements L7Verdict {
    }

    /**
     * Allowed (or audited).
     *
     * @param forwardPath the canonical path to forward in place of the one received, when it differs
     *     ({@code docs/policy-reference.md}, "Request-target canonicalization"): what the policy matched, what
     *     middleware sees and what goes upstream
     * @param messages the policy on the client's WebSocket text messages after a {@code 101}, for an upgrade to a
     *     {@code protocol: websocket} endpoint
     */
    record Allow(Optional<String> forwardPath, Optional<WebSocketMessages> messages) implements L7Verdict {
        /** @throws NullPointerException if a part is {@code null} */
        public Allow {
            Objects.requireNonNull(forwardPath, "forwardPath");
            Objects.requireNonNull(messages, "messages");
        }
    }

    /**
     * The decision needs the body: the proxy buffers it (never streaming past the cap: over it the request is
     * refused with 413) and asks again with it.
     *
     * @param forwardPath the canonical path, as in {@link Allow}
     * @param bodyCapBytes the endpoint's body limit, at most the 4 MiB platform maximum
     */
    record NeedsBody(Optional<String> forwardPath, int bodyCapBytes) implements L7Verdict {
        /** @throws NullPointerException if {@code forwardPath} is {@code null} */
        public NeedsBody {
            Objects.requireNonNull(forwardPath, "forwardPath");
        }
    }

    /**
     * Denied: nothing is forwarded, and the connection closes after the answer.
     *
     * @param answer the client's answer
     */
    record Deny(Answer answer) implements L7Verdict {
        /** @throws NullPointerException if {@code answer} is {@code null} */
        public Deny {
            Objects.requireNonNull(answer, "answer");
        }
    }

    /** {@return the canonical path to forward, when the verdict carries one} */
    default Optional<String> forwardPath() {
        return switch (this) {
            case Allow a -> a.forwardPath();
            case NeedsBody n -> n.forwardPath();
            case Unruled u -> Optional.empty();
            case Deny d -> Optional.empty();
        };
    }
}
