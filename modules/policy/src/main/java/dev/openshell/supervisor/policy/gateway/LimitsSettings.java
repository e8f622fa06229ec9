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
 * @param bodyMinBytesPerSecond {@code body_min_bytes_per_second}: the least average rate, in bytes per second, of a
 *     request body after its first 5 seconds, 0 (off) to 1000000000
 * @param bodyBufferClientSharePercent {@code body_buffer_client_share_percent}: the share of the body buffer budget
 *     one client address may hold, in percent, 1 to 100
 * @param stageThreads {@code stage_threads}: the platform threads that run plugin stages, 1 to 4096
 * @param maxStuckStagesPerBinding {@code max_stuck_stages_per_binding}: stages of one binding past their timeout
 *     and still running after which the binding is unavailable, 1 to 4096 (the supervisor uses at most
 *     {@code stage_threads})
 * @param maxConcurrentMiddlewareWork {@code max_concurrent_middleware_work}: requests whose middleware stages are
 *     evaluated at once, 1 to 65536 (OpenShell's 32 by default)
 * @param maxQueuedMiddlewareWork {@code max_queued_middleware_work}: requests that may wait for one of those; one
 *     more is shed (503 with {@code Retry-After}), 0 to 65536 (OpenShell's 64 by default)
 * @param maxConnectionsPerProcess {@code max_connections_per_process}: connections one process may open beyond its
 *     client address's {@code max_connections_per_client} (connections over the address's share are tied to their
 *     process), 0 (none: the address's cap is a hard cap) to 1000000
 */
public record LimitsSettings(OptionalLong maxConnections, OptionalLong maxConnectionsPerClient,
                             OptionalLong requestHeadTimeoutMillis, OptionalLong bodyBufferTimeoutMillis,
                             OptionalLong bodyMinBytesPerSecond, OptionalLong bodyBufferClientSharePercent,
                             OptionalLong stageThreads, OptionalLong maxStuckStagesPerBinding,
                             OptionalLong maxConcurrentMiddlewareWork, OptionalLong maxQueuedMiddlewareWork,
                             OptionalLong maxConnectionsPerProcess) {
    /** @throws NullPointerException if any component is {@code null} */
    public LimitsSettings {
        Objects.requireNonNull(maxConnections, "maxConnections");
        Objects.requireNonNull(maxConnectionsPerClient, "maxConnectionsPerClient");
        Objects.requireNonNull(requestHeadTimeoutMillis, "requestHeadTimeoutMillis");
        Objects.requireNonNull(bodyBufferTimeoutMillis, "bodyBufferTimeoutMillis");
        Objects.requireNonNull(bodyMinBytesPerSecond, "bodyMinBytesPerSecond");
        Objects.requireNonNull(bodyBufferClientSharePercent, "bodyBufferClientSharePercent");
        Objects.requireNonNull(stageThreads, "stageThreads");
        Objects.requireNonNull(maxStuckStagesPerBinding, "maxStuckStagesPerBinding");
        Objects.requireNonNull(maxConcurrentMiddlewareWork, "maxConcurrentMiddlewareWork");
        Objects.requireNonNull(maxQueuedMiddlewareWork, "maxQueuedMiddlewareWork");
        Objects.requireNonNull(maxConnectionsPerProcess, "maxConnectionsPerProcess");
    }

    /**
     * Limits without the middleware work bound and the per-process connections: those take the defaults.
     *
     * @param maxConnections {@code max_connections}
     * @param maxConnectionsPerClient {@code max_connections_per_client}
     * @param requestHeadTimeoutMillis {@code request_head_timeout_ms}
     * @param bodyBufferTimeoutMillis {@code body_buffer_timeout_ms}
     * @param bodyMinBytesPerSecond {@code body_min_bytes_per_second}
     * @param bodyBufferClientSharePercent {@code body_buffer_client_share_percent}
     * @param stageThreads {@code stage_threads}
     * @param maxStuckStagesPerBinding {@code max_stuck_stages_per_binding}
     */
    public LimitsSettings(OptionalLong maxConnections, OptionalLong maxConnectionsPerClient,
                          OptionalLong requestHeadTimeoutMillis, OptionalLong bodyBufferTimeoutMillis,
                          OptionalLong bodyMinBytesPerSecond, OptionalLong bodyBufferClientSharePercent,
                          OptionalLong stageThreads, OptionalLong maxStuckStagesPerBinding) {
        this(maxConnections, maxConnectionsPerClient, requestHeadTimeoutMillis, bodyBufferTimeoutMillis,
                bodyMinBytesPerSecond, bodyBufferClientSharePercent, stageThreads, maxStuckStagesPerBinding,
                OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty());
    }

    /** {@return no key written: every limit takes the proxy's default} */
    public static LimitsSettings defaults() {
        OptionalLong none = OptionalLong.empty();
        return new LimitsSettings(none, none, none, none, none, none, none, none, none, none, none);
    }
}
