package dev.openshell.supervisor.policy;

import java.util.Comparator;
import java.util.Objects;

import org.eclipse.collections.api.list.ImmutableList;
import org.eclipse.collections.api.map.sorted.ImmutableSortedMap;

/**
 * A loaded, validated sandbox policy: the parts of an OpenShell policy file that this supervisor enforces.
 *
 * <p>An immutable value: two policies are equal when they enforce the same thing, whatever the layout or comments of
 * their files, so the reload logic can compare the old and the new policy. Maps are sorted by key.
 *
 * @param version the policy schema version (1)
 * @param networkPolicies {@code network_policies} by key
 * @param networkMiddlewares {@code network_middlewares} by config key; at most
 *     {@link dev.openshell.middleware.spi.EnvelopeLimits#MAX_CHAIN_STAGES}
 */
public record SandboxPolicy(int version, ImmutableSortedMap<String, NetworkPolicy> networkPolicies,
                            ImmutableSortedMap<String, NetworkMiddlewareConfig> networkMiddlewares) {
    /** The only schema version this supervisor reads. */
    public static final int VERSION = 1;

    /**
     * Checks the components.
     *
     * @throws NullPointerException if any component is {@code null}
     */
    public SandboxPolicy {
        Objects.requireNonNull(networkPolicies, "networkPolicies");
        Objects.requireNonNull(networkMiddlewares, "networkMiddlewares");
    }

    /** {@return every middleware config by ascending {@code order}} */
    public ImmutableList<NetworkMiddlewareConfig> middlewaresInOrder() {
        return networkMiddlewares.valuesView().toSortedList(Comparator.comparingInt(NetworkMiddlewareConfig::order))
                .toImmutable();
    }

    /**
     * Selects the chain for one admitted host (RFC 0009, "Middleware ordering"): every config whose selector
     * selects the host, by ascending order, each once.
     *
     * @param host the admitted host, canonicalised ({@link HostPattern#canonicalHost(String)})
     * @return the chain; empty when no middleware applies, in which case the request streams straight through
     */
    public ImmutableList<NetworkMiddlewareConfig> middlewaresFor(String host) {
        return middlewaresInOrder().select(c -> c.selects(host));
    }

    /** {@return whether any middleware is configured} */
    public boolean hasMiddleware() {
        return networkMiddlewares.notEmpty();
    }
}
