package dev.openshell.supervisor.grpc.tck;

import java.util.Map;
import java.util.Objects;

/**
 * The result of one named check of {@code supervisor tck}.
 *
 * @param name the check's stable name, e.g. {@code describe.binding_ids} or {@code latency.max_body}
 * @param status the verdict
 * @param reason one line saying why, in the supervisor's terms (platform codes, never text the service sent)
 * @param figure the measured figure as text, e.g. {@code p50 1.2 ms, p99 3.4 ms (n=20) of 500 ms}; may be empty
 * @param measured the same figures as numbers, keyed by {@code snake_case} names with their unit ({@code p99_ms},
 *     {@code bytes}, {@code count}); unmodifiable
 */
public record Check(String name, Status status, String reason, String figure, Map<String, Number> measured) {
    /** A check's verdict. */
    public enum Status {
        /** The service meets the rule. */
        PASS,
        /** The service works with the supervisor, but something will hurt in production (latency, limits). */
        WARN,
        /** The supervisor would refuse the service, fail its stage, or lose what the service meant. */
        FAIL,
        /** Not run, because an earlier check failed (the reason names it). */
        SKIP
    }

    /** @throws NullPointerException if any part is {@code null} */
    public Check {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(figure, "figure");
        measured = Map.copyOf(measured);
    }

    static Check of(String name, Status status, String reason, String figure) {
        return new Check(name, status, reason, figure, Map.of());
    }

    static Check of(String name, Status status, String reason) {
        return new Check(name, status, reason, "", Map.of());
    }
}
