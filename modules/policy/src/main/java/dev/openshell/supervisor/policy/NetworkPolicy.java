package dev.openshell.supervisor.policy;

import java.util.Objects;

import org.eclipse.collections.api.list.ImmutableList;

/**
 * One entry of {@code network_policies}: a named group of endpoints the sandbox may reach.
 *
 * @param key the map key
 * @param name the display name; the key when none is written
 * @param endpoints the endpoints, in file order
 * @param binaries the {@code binaries[].path} values as written. This supervisor does not scope endpoints by binary
 *     (the loader warns): every process in the sandbox reaches every endpoint
 */
public record NetworkPolicy(String key, String name, ImmutableList<NetworkEndpoint> endpoints,
                            ImmutableList<String> binaries) {
    /**
     * Checks the components.
     *
     * @throws NullPointerException if any component is {@code null}
     */
    public NetworkPolicy {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(endpoints, "endpoints");
        Objects.requireNonNull(binaries, "binaries");
    }
}
