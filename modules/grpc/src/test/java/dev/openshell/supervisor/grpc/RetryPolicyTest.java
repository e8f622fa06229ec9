package dev.openshell.supervisor.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {
    @Test
    void delaysDoubleUpToTheMaximumAndNeverOverflow() {
        RetryPolicy p = new RetryPolicy(Duration.ofMillis(200), Duration.ofSeconds(30));
        assertEquals(Duration.ofMillis(200), p.delay(0));
        assertEquals(Duration.ofMillis(400), p.delay(1));
        assertEquals(Duration.ofMillis(25_600), p.delay(7));
        assertEquals(Duration.ofSeconds(30), p.delay(8));
        assertEquals(Duration.ofSeconds(30), p.delay(Integer.MAX_VALUE));
        assertEquals(Duration.ofMillis(200), p.delay(-3));
        RetryPolicy big = new RetryPolicy(Duration.ofMinutes(10), Duration.ofMinutes(10));
        assertEquals(Duration.ofMinutes(10), big.delay(1_000));
    }

    @Test
    void unboundedOrInvertedPoliciesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new RetryPolicy(Duration.ZERO, Duration.ofSeconds(1)));
        assertThrows(IllegalArgumentException.class,
                () -> new RetryPolicy(Duration.ofSeconds(2), Duration.ofSeconds(1)));
        assertThrows(IllegalArgumentException.class,
                () -> new RetryPolicy(Duration.ofSeconds(1), Duration.ofMinutes(11)));
    }
}
