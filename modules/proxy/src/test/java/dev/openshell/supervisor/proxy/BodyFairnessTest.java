package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.EnvelopeLimits;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fairness for the body buffer budget and a minimum data rate for bodies (issue 18, items 2 and 3): one client address
 * holds at most its share of the budget (a request over it waits for that address's own bodies, holding none of
 * the budget, while another address is served; past the wait it is refused with 503 {@code client_body_buffer_limit}), and a body, buffered or streamed, that arrives
 * slower than the minimum rate after its grace period is answered 408 {@code body_min_rate} long before the whole-body
 * deadline.
 */
class BodyFairnessTest {
    private static final int MAX = EnvelopeLimits.MAX_BODY_BYTES;
    private static final int BIG = MAX - 8192; // the heap of two (Body.heapBytes) fits a share of 2 * MAX

    @TempDir
    Path tmp;

    private static String post(ProxyFixture fx, long length) {
        return "POST " + fx.apiUrl("/upload") + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\nContent-Length: "
                + length + "\r\n\r\n";
    }

    private static InetAddress addr(String a) throws Exception {
        return InetAddress.getByName(a);
    }

    /** Chain every request; a body of {@link #BIG} bytes stays in the chain (counted in {@code held}) until released. */
    private static void holdBigBodies(ProxyFixture fx, CountDownLatch held, CountDownLatch release) {
        fx.hook.selector = r -> ChainSelection.selected(MAX, false);
        fx.hook.holdBodiesOf(BIG, held, release);
    }

    /**
     * {@return the status of a POST of {@code length} zero bytes from {@code from}, sent on its own thread} (a body
     * left unread blocks its sender once the socket buffers are full)
     */
    private static CompletableFuture<Integer> postAsync(ProxyFixture fx, String from, int length,
                                                        java.util.concurrent.Executor threads) {
        return CompletableFuture.supplyAsync(() -> {
            try (RawClient c = new RawClient(fx.port, addr(from))) {
                c.socket().setSoTimeout(60_000); // answered only once the test releases the chain
                c.send(post(fx, length)).send(new byte[length]);
                return c.read().status();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, threads);
    }

    @Test
    void oneAddressHoldsAtMostItsShareAndAnotherAddressIsServedMeanwhile() throws Exception {
        // 4 bodies of budget, 50 %: two large bodies per address; the wait is long, so a refusal that came from
        // waiting would take 30 s and fail the test's own bounds
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.bodyBufferBudget(4L * MAX)
                .bodyBufferClientSharePercent(50).bodyBufferWait(Duration.ofSeconds(30)))) {
            CountDownLatch held = new CountDownLatch(2);
            CountDownLatch release = new CountDownLatch(1);
            holdBigBodies(fx, held, release); // the attacker's bodies stay in the chain until released
            List<CompletableFuture<Integer>> attacker = new ArrayList<>();
            java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors
                    .newVirtualThreadPerTaskExecutor();
            for (int i = 0; i < 2; i++) {
                attacker.add(postAsync(fx, "127.0.0.1", BIG, threads));
            }
            assertTrue(held.await(60, TimeUnit.SECONDS), "the attacker holds its whole share");
            // a third body of the same address waits for its own share, unread, and holds none of the budget
            // (sent from its own thread: its body stays unread, so the send blocks once the socket buffers are full)
            CompletableFuture<Integer> third = postAsync(fx, "127.0.0.1", BIG, threads);
            try (RawClient victim = new RawClient(fx.port, addr("127.0.0.2"))) {
                victim.send(post(fx, 5)).send("hello");
                assertEquals(200, victim.read().status(), "another address is not held back by the attacker");
            }
            try (RawClient victimBig = new RawClient(fx.port, addr("127.0.0.2"))) {
                victimBig.send(post(fx, BIG - 1)).send(new byte[BIG - 1]);
                assertEquals(200, victimBig.read().status(), "nor are its large bodies, with the third one waiting");
            }
            assertEquals(List.of(), fx.hook.limitRefusals);
            release.countDown();
            for (CompletableFuture<Integer> f : attacker) {
                assertEquals(200, f.get(60, TimeUnit.SECONDS));
            }
            assertEquals(200, third.get(60, TimeUnit.SECONDS), "the waiting body is served once its share frees");
            threads.close();
            try (RawClient again = new RawClient(fx.port, addr("127.0.0.1"))) {
                again.send(post(fx, BIG - 2)).send(new byte[BIG - 2]);
                assertEquals(200, again.read().status(), "the share comes back when the exchanges end");
            }
            assertEquals(List.of(), fx.hook.limitRefusals);
            assertEquals(6, fx.hook.bodyBufferWaits.size(), "every buffered body reports its wait for room");
        }
    }

    @Test
    void aBodyOverItsAddressShareForTheWholeWaitIsRefused() throws Exception {
        // 4 bodies of budget, 25 %: one large body per address; a 300 ms wait
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.bodyBufferBudget(4L * MAX)
                .bodyBufferClientSharePercent(25).bodyBufferWait(Duration.ofMillis(300)))) {
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            holdBigBodies(fx, held, release);
            CompletableFuture<Integer> first = postAsync(fx, "127.0.0.1", BIG,
                    java.util.concurrent.ForkJoinPool.commonPool());
            assertTrue(held.await(60, TimeUnit.SECONDS));
            try (RawClient second = new RawClient(fx.port, addr("127.0.0.1"))) {
                second.send(post(fx, BIG)); // the head only: refused unread once the wait is over
                RawClient.Response r = second.read();
                assertEquals(503, r.status());
                assertTrue(r.bodyText().contains("\"error\":\"client_body_buffer_limit\""), r.bodyText());
            }
            assertEquals(List.of("client_body_buffer_limit"), fx.hook.limitRefusals);
            release.countDown();
            assertEquals(200, first.get(60, TimeUnit.SECONDS));
        }
    }

    @Test
    void aTrickledBufferedBodyIsCutByTheMinimumRateBeforeItsDeadline() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.bodyBufferTimeout(Duration.ofMinutes(10))
                .bodyMinBytesPerSecond(1024).bodyMinRateGrace(Duration.ofMillis(200)))) {
            fx.hook.selector = r -> ChainSelection.selected(MAX, false);
            try (RawClient slow = fx.client()) {
                slow.send(post(fx, 100_000)).send(new byte[10]); // then nothing: far below 1 KiB/s
                RawClient.Response r = slow.read();
                assertEquals(408, r.status());
                assertTrue(r.bodyText().contains("\"error\":\"body_min_rate\""), r.bodyText());
                assertTrue(slow.closedByPeer());
            }
            assertEquals(List.of("body_min_rate"), fx.hook.limitRefusals);
            assertTrue(fx.hook.evaluatedBodies.isEmpty(), "the unfinished body never reached the chain");
        }
    }

    @Test
    void aTrickledStreamedBodyIsCutToo() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.bodyMinBytesPerSecond(1024)
                .bodyMinRateGrace(Duration.ofMillis(200)))) {
            fx.hook.selector = r -> ChainSelection.none(); // no chain: the body is streamed upstream
            try (RawClient slow = fx.client()) {
                slow.send(post(fx, 100_000)).send(new byte[10]);
                RawClient.Response r = slow.read();
                assertEquals(408, r.status());
                assertTrue(r.bodyText().contains("\"error\":\"body_min_rate\""), r.bodyText());
            }
            assertEquals(List.of("body_min_rate"), fx.hook.limitRefusals);
        }
    }

    @Test
    void aBodyAtTheRateIsNotCut() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.bodyMinBytesPerSecond(1024)
                .bodyMinRateGrace(Duration.ofMillis(200)))) {
            fx.hook.selector = r -> ChainSelection.selected(MAX, false);
            try (RawClient c = fx.client()) {
                // 64 KiB in the first write, then the rest: far above 1 KiB/s however the writes are scheduled
                c.send(post(fx, 128 * 1024)).send(new byte[64 * 1024]);
                c.send(new byte[64 * 1024]);
                assertEquals(200, c.read().status());
            }
            assertTrue(fx.hook.limitRefusals.isEmpty());
        }
    }

    @Test
    void outOfRangeSettingsAreRefused() {
        assertThrows(IllegalArgumentException.class,
                () -> SupervisorProxy.builder().bodyBufferClientSharePercent(0));
        assertThrows(IllegalArgumentException.class,
                () -> SupervisorProxy.builder().bodyBufferClientSharePercent(101));
        assertThrows(IllegalArgumentException.class, () -> SupervisorProxy.builder().bodyMinBytesPerSecond(-1));
        assertThrows(IllegalArgumentException.class,
                () -> SupervisorProxy.builder().bodyMinRateGrace(Duration.ZERO));
    }
}
