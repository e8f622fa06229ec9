package dev.openshell.middleware.spi;

/**
 * A stage's allow-or-deny outcome (RFC 0009, "Terminology": Decision). Wire values ({@code Decision}):
 * {@code ALLOW} = 1, {@code DENY} = 2; {@code DECISION_UNSPECIFIED} (0) is an invalid result.
 */
public enum Decision {
    /** The request proceeds, possibly transformed. */
    ALLOW,
    /** The request is refused and the rest of the chain does not run. */
    DENY
}
