package dev.openshell.middleware.spi;

import java.util.Objects;

/**
 * The answer to {@link MiddlewareProvider#validateConfig} (wire messages {@code ValidateConfigResponse}:
 * {@code valid} 1, {@code reason} 2).
 *
 * @param valid whether the config is acceptable
 * @param reason why not, safe to show an operator (no secrets from the config); empty when valid. Text from external
 *     services is untrusted: the host shows a platform message plus the binding ID instead.
 */
public record ConfigValidation(boolean valid, String reason) {
    private static final ConfigValidation VALID = new ConfigValidation(true, "");

    /** @throws NullPointerException if {@code reason} is {@code null} */
    public ConfigValidation {
        Objects.requireNonNull(reason, "reason");
    }

    /** {@return an acceptance} */
    public static ConfigValidation ok() {
        return VALID;
    }

    /** {@return a refusal} @param reason why, safe to show an operator */
    public static ConfigValidation invalid(String reason) {
        return new ConfigValidation(false, reason);
    }
}
