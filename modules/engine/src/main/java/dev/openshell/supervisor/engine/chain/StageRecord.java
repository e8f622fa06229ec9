package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.internal.StageResult;
import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.Finding;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What one stage did, for audit (RFC 0009, "Audit and logging": "Each stage records the policy-local config key,
 * validated binding ID, decision, transformation state, latency").
 *
 * <p>Everything here is safe to log. Findings are kept without raw values (the contract forbids them) and, for
 * {@link Provenance#THIRD_PARTY} stages, sanitized: the label becomes {@code finding reported by <binding ID>}; a type
 * outside {@code [a-z0-9][a-z0-9_.-]*} (at most 128 characters) becomes {@value PlatformCodes#FINDING_UNCLASSIFIED};
 * a confidence or severity outside {@code [a-z0-9][a-z0-9_.-]*} (at most 32 characters) becomes empty.
 * {@link Provenance#BUILT_IN} findings are kept as returned.
 *
 * @param configKey the config key
 * @param bindingId the binding ID
 * @param provenance whose code ran
 * @param onError the stage's failure policy
 * @param outcome what happened
 * @param decision the stage's accepted decision; empty when the stage failed
 * @param reasonCode the accepted reason code of a decision, when the stage gave a valid one
 * @param bodyReplaced whether the stage's body replacement was accepted (present and valid, even if empty)
 * @param headersMutated whether the stage's header mutations were accepted and changed the header list
 * @param latencyNanos time from the start of the stage's input checks to the end of result validation, in
 *     nanoseconds (body-aware policy re-checks are not included)
 * @param failure why the stage failed; present exactly when {@code outcome} is {@link StageResult#FAILED_CLOSED} or
 *     {@link StageResult#BYPASSED}
 * @param findings the accepted findings (at most 32), plus the engine's bypass finding when bypassed; unmodifiable
 */
public record StageRecord(String configKey, BindingId bindingId, Provenance provenance, OnError onError,
                          StageResult outcome, Optional<Decision> decision, Optional<String> reasonCode,
                          boolean bodyReplaced, boolean headersMutated, long latencyNanos,
                          Optional<StageFailure> failure, List<Finding> findings) {
    /**
     * @throws NullPointerException if any part is {@code null}
     * @throws IllegalArgumentException if {@code failure} presence does not match {@code outcome}
     */
    public StageRecord {
        Objects.requireNonNull(configKey, "configKey");
        Objects.requireNonNull(bindingId, "bindingId");
        Objects.requireNonNull(provenance, "provenance");
        Objects.requireNonNull(onError, "onError");
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(decision, "decision");
        Objects.requireNonNull(reasonCode, "reasonCode");
        Objects.requireNonNull(failure, "failure");
        findings = List.copyOf(findings);
        boolean failed = outcome == StageResult.FAILED_CLOSED || outcome == StageResult.BYPASSED;
        if (failed != failure.isPresent()) {
            throw new IllegalArgumentException("a failure is recorded exactly for failed stages");
        }
    }

    /** {@return whether the stage was bypassed after a {@code fail_open} failure} */
    public boolean bypassed() {
        return outcome == StageResult.BYPASSED;
    }

    /** {@return whether the stage's transformation (body or headers) was accepted} */
    public boolean transformed() {
        return bodyReplaced || headersMutated;
    }
}
