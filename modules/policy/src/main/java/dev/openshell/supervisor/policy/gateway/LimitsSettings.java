package dev.openshell.supervisor.policy.gateway;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * {@code [openshell.supervisor.limits]}: what hostile or broken clients may hold of the proxy (issue 18). Each key
 * left out takes the proxy's default (see {@code docs/policy-reference.md} for the defaults and why).
 *
 * @param maxConnections {@code max_connections}: client connections open at once over all clients, 1 to 1000000
 * @param maxConnectionsPerClient {@code max_connections_per_client}: open at once from one client address, 1 to
 *     1000000 (the proxy uses at most {@code max_connections})
 * @param requestHeadTimeoutMillis {@code request_head_timeout_ms}: the deadline for a whole request head from its
 *     first byte, in milliseconds, 1 to 3600000
 * @param bodyBufferTimeoutMillis {@code body_buffer_timeout_ms}: the deadline for a whole body buffered for the
 *     chain, in milliseconds, 1 to 3600000
 */
public record LimitsSettings(OptionalLong maxConnections, OptionalLong maxConnectionsPerClient,
                             OptionalLong requestHeadTimeoutMillis, OptionalLong bodyBufferTimeoutMillis) {
    /** @throws NullPointerException if any component is {@code null} */
    public LimitsSettings {
        Objects.requireNonNull(maxConnections, "maxConnections");
        Objects.requireNonNull(maxConnectionsPerClient, "maxConnectionsPerClient");
        Objects.requireNonNull(requestHeadTimeoutMillis, "requestHeadTimeoutMillis");
        Objects.requireNonNull(bodyBufferTimeoutMillis, "bodyBufferTimeoutMillis");
    }

    /** {@return no key written: every limit takes the proxy's default} */
    public static LimitsSettings defaults() {
        return new LimitsSettings(OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty(),
                OptionalLong.empty());
    }
}
