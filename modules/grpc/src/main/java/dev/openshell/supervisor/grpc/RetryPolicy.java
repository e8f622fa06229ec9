package dev.openshell.supervisor.grpc;

import java.time.Duration;
import java.util.Objects;

/**
 * Exponential backoff: the supervisor's one retry type. It paces the background probe that re-checks a service after
 * it became unavailable (RFC 0009, "Registration and delivery": "a polling loop retries the service"; the probe takes
 * up to 20 % random jitter off each wait so that many supervisors do not probe in step, and continues until the
 * service recovers or the registry is closed), and the runtime's retries of a failed policy reload. The n-th wait
 * (n = 0, 1, ...) is {@link #delay(int)}: {@code min(initialDelay * 2^n, maxDelay)}.
 *
 * @param initialDelay the first wait, at least 1 ms
 * @param maxDelay the longest wait, at least {@code initialDelay}, at most 10 minutes
 */
public record RetryPolicy(Duration initialDelay, Duration maxDelay) {
    /** The default: 200 ms doubling up to 30 s. */
    public static final RetryPolicy DEFAULT = new RetryPolicy(Duration.ofMillis(200), Duration.ofSeconds(30));

    /**
     * @throws NullPointerException if any part is {@code null}
     * @throws IllegalArgumentException if a delay is out of range
     */
    public RetryPolicy {
        Objects.requireNonNull(initialDelay, "initialDelay");
        Objects.requireNonNull(maxDelay, "maxDelay");
        if (initialDelay.toMillis() < 1 || maxDelay.compareTo(initialDelay) < 0
                || maxDelay.compareTo(Duration.ofMinutes(10)) > 0) {
            throw new IllegalArgumentException("retry delays must satisfy 1 ms <= initial (%s) <= max (%s) <= 10 min"
                    .formatted(initialDelay, maxDelay));
        }
    }

    /**
     * {@return the wait before probe number {@code attempt}, without jitter}
     *
     * @param attempt 0 for the first probe
     */
    public Duration delay(int attempt) {
        long initial = initialDelay.toMillis();
        long max = maxDelay.toMillis();
        int shift = Math.min(Math.max(attempt, 0), 30);
        long d = initial << shift;
        return Duration.ofMillis(d <= 0 || d > max ? max : d);
    }
}
