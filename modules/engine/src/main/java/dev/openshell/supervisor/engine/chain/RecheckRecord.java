package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.BindingId;
import java.util.Objects;

/**
 * One body-aware policy re-check during a chain run, for audit.
 *
 * @param configKey the config key of the stage whose body replacement was re-checked
 * @param bindingId that stage's binding ID
 * @param result what the re-check said
 * @param reasonCode the platform or policy code; empty for {@link Result#PASSED}
 */
public record RecheckRecord(String configKey, BindingId bindingId, Result result, String reasonCode) {
    /** The re-check outcomes. */
    public enum Result {
        /** The transformed request satisfies policy. */
        PASSED,
        /** Enforced policy denied: the request was denied. */
        DENIED,
        /** Audit-mode policy would deny: recorded, chain stopped, request forwarded. */
        AUDIT_DENIED,
        /** The re-check threw or returned nothing: a hard denial. */
        FAILED
    }

    /** @throws NullPointerException if any part is {@code null} */
    public RecheckRecord {
        Objects.requireNonNull(configKey, "configKey");
        Objects.requireNonNull(bindingId, "bindingId");
        Objects.requireNonNull(result, "result");
        Objects.requireNonNull(reasonCode, "reasonCode");
    }
}
