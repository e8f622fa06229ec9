package dev.openshell.middleware.spi.internal;

import static org.apiguardian.api.API.Status.INTERNAL;

import org.apiguardian.api.API;

/**
 * What happened at one stage of a chain run (RFC 0009, "Audit and logging": the decision of each stage). The one
 * definition: the chain engine records it and the audit events and metrics report it.
 */
@API(status = INTERNAL, since = "0.1")
public enum StageResult {
    /** The stage allowed the request; its transformation, if any, was accepted. */
    ALLOWED,
    /** The stage denied the request; the chain stopped. */
    DENIED,
    /** The stage failed and is {@code fail_closed}: the chain stopped and the request is denied. */
    FAILED_CLOSED,
    /**
     * The stage failed and is {@code fail_open}: the request is unchanged for this stage, a bypass finding is
     * recorded, and later stages run.
     */
    BYPASSED
}
