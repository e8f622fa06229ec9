package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.internal.OnError;

/**
 * The platform-owned kinds of stage failure (RFC 0009, "Failure behavior": "Middleware errors, timeouts, malformed
 * responses, and over-cap bodies use on_error"). Every failure follows the stage's {@link OnError}.
 */
public enum FailureCategory {
    /** The provider threw, or reported a {@link dev.openshell.middleware.spi.MiddlewareException}. */
    STAGE_ERROR("stage error"),
    /** The provider did not answer within the stage's timeout. */
    TIMEOUT("timeout"),
    /** The result is malformed: missing, or a reason code or metadata key outside its grammar. */
    INVALID_RESULT("invalid result"),
    /** The body is larger than the stage's {@code max_body_bytes}. */
    BODY_OVER_CAPACITY("body over capacity"),
    /** A header mutation broke a {@link HeaderRules} rule; none of the stage's mutations was applied. */
    INVALID_HEADER_MUTATION("invalid header mutation"),
    /** An input or result field is over its public envelope limit. */
    ENVELOPE_VIOLATION("envelope violation"),
    /** The request could not be inspected at all (see {@link Chain#uninspectable}). */
    UNINSPECTABLE("uninspectable request"),
    /**
     * The stage was not run: its binding is unavailable (too many of its stages overran their timeout and have not
     * returned) or every stage thread is busy ({@link StagePool}).
     */
    UNAVAILABLE("unavailable middleware");

    private final String words;

    FailureCategory(String words) {
        this.words = words;
    }

    /** {@return the category in lowercase words, for platform-owned messages} */
    public String words() {
        return words;
    }
}
