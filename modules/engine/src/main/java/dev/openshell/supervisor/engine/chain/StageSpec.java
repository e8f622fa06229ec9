package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.MiddlewareProvider;
import dev.openshell.middleware.spi.internal.RpcTimeout;
import jakarta.json.JsonObject;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * One resolved middleware config, ready to run as a stage (RFC 0009, "Policy integration": one entry of
 * {@code network_middlewares}, bound to the provider that serves its binding ID). The chain engine's only input
 * besides the request: it knows nothing of policy files or plugin layers.
 *
 * @param configKey the policy-local map key: the stage's identity, the metadata namespace and the name in
 *     diagnostics; non-empty, without control characters
 * @param bindingId the validated binding ID the config selects with {@code middleware:}
 * @param provider the provider that serves {@code bindingId}; shared, thread-safe
 * @param provenance whether the provider's text is trusted ({@link Provenance})
 * @param order the config's {@code order}; stages run in ascending order, and orders are unique in a chain
 * @param onError the failure policy
 * @param maxBodyBytes the effective body limit for this stage, in bytes: 0 to {@link EnvelopeLimits#MAX_BODY_BYTES}
 *     (the smaller of the operator's and the binding's limit); a larger body is this stage's {@code on_error} event
 * @param timeoutMillis the effective timeout, in milliseconds: {@link EnvelopeLimits#MIN_TIMEOUT_MILLIS} to
 *     {@link EnvelopeLimits#MAX_TIMEOUT_MILLIS}; enforced by the engine for in-process providers too
 * @param config the implementation-owned config mapping from policy; its encoded size is measured once, when a
 *     {@link ChainSelector} is built, and a config over {@link EnvelopeLimits#MAX_CONFIG_BYTES} fails the stage at evaluation time
 * @param selector the config's {@code endpoints} selector: {@code true} for an admitted host (lowercase, no trailing
 *     dot) that {@code include} matches and {@code exclude} does not
 */
public record StageSpec(String configKey, BindingId bindingId, MiddlewareProvider provider, Provenance provenance,
                        long order, OnError onError, int maxBodyBytes, long timeoutMillis, JsonObject config,
                        Predicate<String> selector) {
    /**
     * Checks ranges.
     *
     * @throws NullPointerException if any reference is {@code null}
     * @throws IllegalArgumentException if {@code configKey} is empty or holds a control character, or
     *     {@code maxBodyBytes} or {@code timeoutMillis} is out of range
     */
    public StageSpec {
        Objects.requireNonNull(configKey, "configKey");
        Objects.requireNonNull(bindingId, "bindingId");
        Objects.requireNonNull(provider, "provider");
        Objects.requireNonNull(provenance, "provenance");
        Objects.requireNonNull(onError, "onError");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(selector, "selector");
        if (configKey.isEmpty() || !SafeText.hasNoControls(configKey)) {
            throw new IllegalArgumentException("config key must be non-empty and free of control characters");
        }
        if (maxBodyBytes < 0 || maxBodyBytes > EnvelopeLimits.MAX_BODY_BYTES) {
            throw new IllegalArgumentException("config '%s': max body bytes %d is outside 0..%d"
                    .formatted(configKey, maxBodyBytes, EnvelopeLimits.MAX_BODY_BYTES));
        }
        String timeoutProblem = RpcTimeout.problem(Duration.ofMillis(timeoutMillis));
        if (timeoutProblem != null) {
            throw new IllegalArgumentException("config '%s': invalid timeout %d ms: %s".formatted(configKey,
                    timeoutMillis, timeoutProblem));
        }
    }

    /** {@return the config's encoded size as a {@code google.protobuf.Struct}, in bytes (computed on each call)} */
    public long configEncodedBytes() {
        return Wire.struct(config);
    }

    /** {@return whether this stage's provider text is trusted} */
    public boolean trusted() {
        return provenance == Provenance.BUILT_IN;
    }

    /** {@return key, binding, order and policy only: the config may hold secrets} */
    @Override
    public String toString() {
        return "StageSpec[" + configKey + ", " + bindingId + ", order " + order + ", " + onError.policyName() + ", "
                + maxBodyBytes + " bytes, " + timeoutMillis + " ms, " + provenance + "]";
    }
}
