package dev.openshell.supervisor.proxy;

import java.util.Objects;

/**
 * The plan step's output ({@link PolicySteps.Plan}).
 *
 * @param <P> the plan type, opaque to the proxy
 * @param plan the step's own facts for the later steps of this exchange; handed back to them unchanged
 * @param selection the chain selection and the body it needs; {@link ChainSelection.None} streams the body through
 *     unbuffered (unless the L7 decision needs it)
 */
public record Planned<P>(P plan, ChainSelection selection) {
    /** @throws NullPointerException if {@code selection} is {@code null} */
    public Planned {
        Objects.requireNonNull(selection, "selection");
    }
}
