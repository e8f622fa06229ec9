package dev.openshell.supervisor.engine.chain;

/** What happened at one stage of a chain run. */
public enum StageOutcome {
    /** The stage allowed the request; its transformation, if any, was accepted. */
    ALLOWED,
    /** The stage denied the request; the chain stopped. */
    DENIED,
    /** The stage failed and is {@code fail_closed}: the chain stopped and the request is denied. */
    FAILED_CLOSED,
    /**
     * The stage failed and is {@code fail_open}: the representation is unchanged for this stage, a bypass finding is
     * recorded, and later stages run.
     */
    BYPASSED
}
