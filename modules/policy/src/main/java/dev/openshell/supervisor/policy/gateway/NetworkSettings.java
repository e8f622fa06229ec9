package dev.openshell.supervisor.policy.gateway;

import java.net.InetAddress;
import java.util.Objects;

import org.eclipse.collections.api.factory.SortedMaps;
import org.eclipse.collections.api.map.sorted.ImmutableSortedMap;

/**
 * {@code [openshell.supervisor.network]}: how the proxy reaches upstreams.
 *
 * @param allowLoopbackUpstreams whether upstreams on loopback addresses may be reached (tests and local benchmarks
 *     only; the SSRF block otherwise refuses them)
 * @param staticHosts host names resolved without DNS, lowercase name to address
 */
public record NetworkSettings(boolean allowLoopbackUpstreams, ImmutableSortedMap<String, InetAddress> staticHosts) {
    /**
     * Checks the components.
     *
     * @throws NullPointerException if {@code staticHosts} is {@code null}
     */
    public NetworkSettings {
        Objects.requireNonNull(staticHosts, "staticHosts");
    }

    /** {@return no loopback upstreams, no static hosts} */
    public static NetworkSettings defaults() {
        return new NetworkSettings(false, SortedMaps.immutable.empty());
    }
}
