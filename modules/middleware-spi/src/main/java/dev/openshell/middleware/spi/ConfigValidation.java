package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.STABLE;

import java.util.Objects;
import org.apiguardian.api.API;

/**
 * The answer to {@link MiddlewareProvider#validateConfig} (wire messages {@code ValidateConfigResponse}:
 * {@code valid} 1, {@code reason} 2).
 *
 * @param valid whether the config is acceptable
 * @param reason why not, safe to show an operator (no secrets from the config); empty when valid. Text from external
 *     services is untrusted: the host shows a platform message plus the binding ID instead.
 */
@API(status = STABLE, since = "0.1")
public record ConfigValidation(boolean valid, String reason) {
    private static final ConfigValidation VALID = new ConfigValidation(true, "");

    /** @throws NullPointerException if {@code reason} is {@code null} */
    @API(status = STABLE, since = "0.1")
    public ConfigValidation {
        Objects.requireNonNull(reason, "reason");
    }

    /** {@return an acceptance} */
    @API(status = STABLE, since = "0.1")
    public static ConfigValidation ok() {
        return VALID;
    }

    /** {@return a refusal} @param reason why, safe to show an operator */
    @API(status = STABLE, since = "0.1")
    public static ConfigValidation invalid(String reason) {
        return new ConfigValidation(false, reason);
    }
}
