package dev.openshell.supervisor.proxy;

import java.util.Objects;

/** The outcome of the {@link PolicySteps.Sessions} step on a WebSocket upgrade request. */
public sealed interface SessionVerdict {
    /** No middleware stage joins the session's messages: the upgrade is judged as an uninspected one. */
    record None() implements SessionVerdict {
    }

    /**
     * Refuse the upgrade before the upstream is contacted (a preflight {@code DENY}, a {@code fail_closed}
     * failure, the session cap); audited by the step.
     *
     * @param answer the answer to send
     */
    record Refuse(Answer answer) implements SessionVerdict {
        /** @throws NullPointerException if {@code answer} is {@code null} */
        public Refuse {
            Objects.requireNonNull(answer, "answer");
        }
    }

    /**
     * Inspect the session's messages.
     *
     * @param session the session's message chain; the proxy ends it on every path
     * @param coversChain whether every {@code fail_closed} config selecting the host joins the session (then the
     *     upgrade is not refused as uninspectable)
     */
    record Inspect(MessageSession session, boolean coversChain) implements SessionVerdict {
        /** @throws NullPointerException if {@code session} is {@code null} */
        public Inspect {
            Objects.requireNonNull(session, "session");
        }
    }
}
