package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.STABLE;

import org.apiguardian.api.API;

/**
 * A stage's allow-or-deny outcome (RFC 0009, "Terminology": Decision). Wire values ({@code Decision}):
 * {@code ALLOW} = 1, {@code DENY} = 2; {@code DECISION_UNSPECIFIED} (0) is an invalid result.
 *
 * <p><b>An open enum</b>, like every enum of the SPI (docs/plugin-authors.md, "Evolution rules"): keep a
 * {@code default} branch when you {@code switch} over it.
 */
@API(status = STABLE, since = "0.1")
public enum Decision {
    /** The request proceeds, possibly transformed. */
    ALLOW,
    /** The request is refused and the rest of the chain does not run. */
    DENY
}
