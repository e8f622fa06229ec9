package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.EnvelopeLimits;
import java.net.InetAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The two bounds of {@link BodyBudget} (issue 18 item 3): a body over its address's share waits for that address's
 * own bodies, holding none of the budget, and another address reserves meanwhile; past the wait it is refused.
 */
class BodyBudgetTest {
    private static final int ONE = (int) Body.heapBytes(EnvelopeLimits.MAX_BODY_BYTES);

    @Test
    void aBodyOverItsShareWaitsForItsOwnAddressAndHoldsNothingMeanwhile() throws Exception {
        BodyBudget budget = new BodyBudget(4L * ONE, Duration.ofSeconds(30), 50);
        InetAddress a = InetAddress.getByName("127.0.0.1");
        InetAddress b = InetAddress.getByName("127.0.0.2");
        BodyBudget.Reservation r1 = budget.reserve(ONE, a).reservation();
        BodyBudget.Reservation r2 = budget.reserve(ONE, a).reservation();
        assertNotNull(r1);
        assertNotNull(r2);
        CompletableFuture<BodyBudget.Claim> third = CompletableFuture.supplyAsync(() -> {
            try {
                return budget.reserve(ONE, a);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (budget.waitingFor(a) == 0) { // polled with a bound: the third is now waiting for its share
            assertTrue(System.nanoTime() < until, "the third reservation never waited");
            Thread.onSpinWait();
        }
        // another address takes the whole rest of the budget while the third waits: the third holds none of it
        BodyBudget.Reservation other = budget.reserve(2L * ONE, b).reservation();
        assertNotNull(other, "the other address found the rest of the budget");
        assertEquals(0, budget.availableBytes());
        other.close();
        r1.close();
        BodyBudget.Claim got = third.get(30, TimeUnit.SECONDS);
        assertNull(got.refusal());
        assertEquals(2L * ONE, budget.heldBy(a));
        got.reservation().close();
        r2.close();
        assertEquals(0, budget.heldBy(a));
        assertEquals(4 * ONE, budget.availableBytes());
    }

    @Test
    void pastTheWaitABodyOverItsShareIsRefusedAndGivesNothingBack() throws Exception {
        BodyBudget budget = new BodyBudget(4L * ONE, Duration.ofMillis(100), 25);
        InetAddress a = InetAddress.getByName("127.0.0.1");
        BodyBudget.Reservation r1 = budget.reserve(ONE, a).reservation();
        assertNotNull(r1);
        BodyBudget.Claim refused = budget.reserve(ONE, a);
        assertEquals("client_body_buffer_limit", refused.refusal());
        assertTrue(refused.waitedNanos() >= TimeUnit.MILLISECONDS.toNanos(100), "it waited the bound first");
        assertEquals(ONE, budget.heldBy(a));
        r1.close();
        assertEquals(0, budget.heldBy(a));
        assertEquals(4 * ONE, budget.availableBytes());
    }

    @Test
    void overItsAddressShareAProcessHasOneBodyOfItsOwnAndAnotherProcessIsNotHeldBack() throws Exception {
        // 8 bodies of budget, 25 %: two large bodies per address, then one more per process of that address
        BodyBudget budget = new BodyBudget(8L * ONE, Duration.ofMillis(200), 25);
        InetAddress a = InetAddress.getByName("127.0.0.1");
        int[] lookups = new int[1];
        java.util.function.Supplier<java.util.OptionalLong> flood = () -> {
            lookups[0]++;
            return java.util.OptionalLong.of(1001);
        };
        BodyBudget.Reservation s1 = budget.reserve(ONE, a, flood).reservation();
        BodyBudget.Reservation s2 = budget.reserve(ONE, a, flood).reservation();
        assertNotNull(s1);
        assertNotNull(s2);
        assertEquals(0, lookups[0], "under the share, no process is looked up");
        BodyBudget.Reservation f3 = budget.reserve(ONE, a, flood).reservation();
        assertNotNull(f3, "the flooding process's own body beyond the share");
        assertEquals(1, lookups[0]);
        BodyBudget.Claim f4 = budget.reserve(ONE, a, flood);
        assertEquals("client_body_buffer_limit", f4.refusal(), "then it waits for its address's share, and here"
                + " past the wait is refused");
        BodyBudget.Claim victim = budget.reserve(ONE, a, () -> java.util.OptionalLong.of(1002));
        assertNull(victim.refusal(), "another process of the same address is not held back");
        BodyBudget.Claim unknown = budget.reserve(ONE, a);
        assertEquals("client_body_buffer_limit", unknown.refusal(), "a request whose process is not found waits");
        victim.reservation().close();
        f3.close();
        s1.close();
        s2.close();
        assertEquals(0, budget.heldBy(a));
        assertEquals(8 * ONE, budget.availableBytes());
        BodyBudget.Reservation again = budget.reserve(ONE, a, flood).reservation();
        assertNotNull(again);
        again.close();
    }
}
