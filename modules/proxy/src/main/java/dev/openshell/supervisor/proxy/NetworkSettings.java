package dev.openshell.supervisor.proxy;

import java.net.InetAddress;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Gateway network settings for tests and local development ({@code [openshell.supervisor.network]} in the gateway
 * config). Both loosen SSRF protection, so {@link SupervisorProxy#start()} logs a warning for each one in use.
 *
 * @param allowLoopbackUpstreams admit loopback destinations ({@code 127.0.0.0/8}, {@code ::1}); they stay subject to
 *     network policy ({@code allow_loopback_upstreams})
 * @param staticHosts host name to address, used instead of DNS, like {@code curl --resolve}; keys are matched after
 *     normalisation (lowercase, no trailing dot) ({@code [openshell.supervisor.network.static_hosts]}). The address
 *     still goes through every SSRF check.
 */
public record NetworkSettings(boolean allowLoopbackUpstreams, Map<String, InetAddress> staticHosts) {
    /** Copies the map with lowercase keys without a trailing dot. */
    public NetworkSettings {
        Map<String, InetAddress> copy = new TreeMap<>();
        staticHosts.forEach((k, v) -> {
            String key = k.toLowerCase(Locale.ROOT);
            copy.put(key.endsWith(".") ? key.substring(0, key.length() - 1) : key, v);
        });
        staticHosts = Map.copyOf(copy);
    }

    /** {@return the production default: nothing loosened} */
    public static NetworkSettings defaults() {
        return new NetworkSettings(false, Map.of());
    }
}
