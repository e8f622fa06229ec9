package dev.openshell.supervisor.policy;

import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.middleware.spi.BindingId;

import java.util.Objects;

import jakarta.json.JsonObject;

/**
 * One entry of {@code network_middlewares} (RFC 0009, "Policy integration"): a stage that runs the binding
 * {@code middleware} with {@code config} on requests to the hosts {@code endpoints} selects.
 *
 * @param key the map key: the config's stable identity, and the namespace of its metadata and diagnostics
 * @param name the human-readable name; the key when none is written
 * @param middleware the binding ID to run (a built-in such as {@code openshell/regex}, or a binding an external
 *     service advertises through {@code Describe})
 * @param order the position in the chain; lower runs first; unique across the policy; 0 when not written
 * @param config the binding's configuration, handed to {@code ValidateConfig} and to every evaluation; at most
 *     64 KiB encoded ({@link dev.openshell.middleware.spi.EnvelopeLimits#MAX_CONFIG_BYTES})
 * @param onError the failure policy
 * @param endpoints the destination selector
 */
public record NetworkMiddlewareConfig(String key, String name, BindingId middleware, int order, JsonObject config,
                                      OnError onError, HostSelector endpoints) {
    /**
     * Checks the components.
     *
     * @throws NullPointerException if any component is {@code null}
     */
    public NetworkMiddlewareConfig {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(middleware, "middleware");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(onError, "onError");
        Objects.requireNonNull(endpoints, "endpoints");
    }

    /**
     * {@return whether this config's selector selects {@code host}}
     *
     * @param host the canonical admitted host
     */
    public boolean selects(String host) {
        return endpoints.matches(host);
    }

    /** {@return the key, binding and order; never the config, which may hold secrets} */
    @Override
    public String toString() {
        return "NetworkMiddlewareConfig[" + key + " -> " + middleware + ", order " + order + ", "
                + onError.policyName() + ", " + endpoints + "]";
    }
}
