package dev.openshell.supervisor.audit;

import dev.openshell.middleware.spi.internal.StageResult;
import java.util.Objects;
import java.util.Optional;

/**
 * What one stage did, as audit records it (RFC 0009, "Audit and logging": "policy-local config key, validated
 * binding ID, decision, transformation state, latency").
 *
 * @param configKey the policy-local config key (never the display name)
 * @param bindingId the validated binding ID
 * @param result the stage's result
 * @param transformed whether the stage replaced the body or changed headers
 * @param latencyNanos the stage's wall-clock time, in nanoseconds
 * @param platformCode the platform failure or deny code, if any ({@code [a-z][a-z0-9_]*})
 * @param failClosed whether the stage's {@code on_error} is {@code fail_closed}
 */
public record StageOutcome(String configKey, String bindingId, StageResult result, boolean transformed, long latencyNanos,
                           Optional<String> platformCode, boolean failClosed) {
    /** @throws NullPointerException if any part is {@code null} */
    public StageOutcome {
        Objects.requireNonNull(configKey, "configKey");
        Objects.requireNonNull(bindingId, "bindingId");
        Objects.requireNonNull(result, "result");
        Objects.requireNonNull(platformCode, "platformCode");
    }
}
