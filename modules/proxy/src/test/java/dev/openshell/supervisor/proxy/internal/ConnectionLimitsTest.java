package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link ConnectionLimits} beyond an address's share: connections tied to their process, a cap per process, and at
 * most as many owner lookups of one address waiting at once as one process may hold beyond the share. Lookups are
 * held with latches.
 */
class ConnectionLimitsTest {
    private static final InetAddress A = Loopback.A;
    private static final InetAddress B = Loopback.B;

    @Test
    void beyondTheShareEachProcessHasItsOwnConnections() {
        ConnectionLimits limits = new ConnectionLimits(100, 2, 1);
        AtomicInteger lookups = new AtomicInteger();
        java.util.function.Supplier<OptionalLong> counted = () -> {
            lookups.incrementAndGet();
            return OptionalLong.of(1);
        };
        ConnectionLimits.Claim s1 = limits.acquire(A, counted);
        ConnectionLimits.Claim s2 = limits.acquire(A, counted);
        assertEquals(0, lookups.get(), "under the share no process is looked up");
        ConnectionLimits.Claim p1 = limits.acquire(A, () -> OptionalLong.of(1));
        assertNull(p1.refusal());
        assertEquals("process_connection_limit", limits.acquire(A, () -> OptionalLong.of(1)).refusal());
        ConnectionLimits.Claim p2 = limits.acquire(A, () -> OptionalLong.of(2));
        assertNull(p2.refusal(), "another process of the address");
        assertEquals("client_connection_limit", limits.acquire(A, OptionalLong::empty).refusal(),
                "no process found: the share is a hard cap");
        assertNull(limits.acquire(B, OptionalLong::empty).refusal(), "another address has its own share");
        limits.release(p1.slot());
        assertNull(limits.acquire(A, () -> OptionalLong.of(1)).refusal(), "the process's slot came back");
        limits.release(s1.slot());
        limits.release(s2.slot());
        assertEquals(3, limits.open(), "p2, the other address's and the process's new one");
    }

    @Test
    void whileOneAddressHasAsManyLookupsWaitingAsAProcessMayHoldItsNextConnectionIsRefusedAtOnce()
            throws Exception {
        ConnectionLimits limits = new ConnectionLimits(100, 1, 1);
        assertNull(limits.acquire(A, OptionalLong::empty).refusal());
        CountDownLatch inLookup = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<ConnectionLimits.Claim> waiting = CompletableFuture.supplyAsync(() -> limits.acquire(A,
                () -> {
                    inLookup.countDown();
                    try {
                        assertTrue(release.await(30, TimeUnit.SECONDS));
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    return OptionalLong.of(7);
                }));
        assertTrue(inLookup.await(30, TimeUnit.SECONDS));
        AtomicInteger asked = new AtomicInteger();
        assertEquals("client_connection_limit", limits.acquire(A, () -> {
            asked.incrementAndGet();
            return OptionalLong.of(8);
        }).refusal());
        assertEquals(0, asked.get(), "refused without a lookup");
        release.countDown();
        assertNull(waiting.get(30, TimeUnit.SECONDS).refusal());
        assertNull(limits.acquire(A, () -> OptionalLong.of(8)).refusal(), "the lookup place came back");
    }
}
