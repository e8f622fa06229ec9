package dev.openshell.supervisor.proxy;

import java.util.Objects;

/**
 * The plan step's output ({@link PolicySteps.Plan}).
 *
 * @param <P> the plan type, opaque to the proxy
 * @param plan the step's own facts for the later steps of this exchange; handed back to them unchanged
 * @param selection the chain selection and the body it needs; {@link ChainSelection.None} streams the body through
 *     unbuffered (unless the L7 decision needs it)
 * @param responses whether response stages ({@code HTTP_RESPONSE/PRE_RETURN}) select the host, and whether they are
 *     all {@code fail_open}: a fail_closed one refuses a protocol upgrade no stage can read (the body cap is 0: the
 *     response chain buffers for itself)
 */
public record Planned<P>(P plan, ChainSelection selection, ChainSelection responses) {
    /** @throws NullPointerException if {@code selection} or {@code responses} is {@code null} */
    public Planned {
        Objects.requireNonNull(selection, "selection");
        Objects.requireNonNull(responses, "responses");
    }

    /**
     * A plan with no response stage.
     *
     * @param plan the step's own facts
     * @param selection the chain selection
     */
    public Planned(P plan, ChainSelection selection) {
        this(plan, selection, ChainSelection.none());
    }
}
