package dev.openshell.supervisor.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.openshell.supervisor.grpc.RetryPolicy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The reload scheduler: one attempt at a time, requests joining a pending attempt, retries after failures. */
class ReloaderTest {
    private static final ReloadOutcome OK = new ReloadOutcome.Installed(2, 1, "generation 2");
    private static final ReloadOutcome FAILED = new ReloadOutcome.Failed(1, "broken", List.of());

    @Test
    void requestsArrivingWhileOneIsPendingJoinItAndAForcedOneForcesIt() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        BlockingQueue<Boolean> forces = new LinkedBlockingQueue<>();
        try (Reloader r = new Reloader(force -> {
            forces.add(force);
            try {
                release.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return OK;
        })) {
            r.request(false, Duration.ZERO);
            assertEquals(Boolean.FALSE, forces.poll(20, TimeUnit.SECONDS), "the first attempt runs");
            // the first attempt is running (blocked): these four become one pending attempt
            r.request(false, Duration.ZERO);
            r.request(false, Duration.ZERO);
            r.request(true, Duration.ZERO);
            r.request(false, Duration.ZERO);
            release.countDown();
            assertEquals(Boolean.TRUE, forces.poll(20, TimeUnit.SECONDS), "the joined attempt is forced");
            // a synchronous reload runs after anything scheduled before it: the queue is drained by then
            assertEquals(OK, r.reloadNow(false));
            assertEquals(List.of(false), List.copyOf(forces), "only reloadNow's attempt after the joined one");
        }
    }

    @Test
    void aFailedAttemptIsRetriedUntilItSucceeds() throws Exception {
        BlockingQueue<ReloadOutcome> outcomes = new LinkedBlockingQueue<>();
        List<ReloadOutcome> script = List.of(FAILED, FAILED, OK);
        int[] calls = {0};
        try (Reloader r = new Reloader(force -> script.get(Math.min(calls[0]++, 2)),
                new RetryPolicy(Duration.ofMillis(5), Duration.ofSeconds(60)))) {
            r.addListener(outcomes::add);
            assertEquals(FAILED, r.reloadNow(true));
            assertEquals(FAILED, outcomes.poll(20, TimeUnit.SECONDS));
            assertEquals(FAILED, outcomes.poll(20, TimeUnit.SECONDS), "first retry");
            assertEquals(OK, outcomes.poll(20, TimeUnit.SECONDS), "second retry succeeds");
            assertEquals(OK, r.reloadNow(false));
            assertEquals(4, calls[0], "no retry after a success");
        }
    }

    @Test
    void aNewRequestReplacesAPendingRetry() throws Exception {
        BlockingQueue<Boolean> forces = new LinkedBlockingQueue<>();
        int[] calls = {0};
        try (Reloader r = new Reloader(force -> {
            forces.add(force);
            return calls[0]++ == 0 ? FAILED : OK;
        }, new RetryPolicy(Duration.ofMinutes(10), Duration.ofMinutes(10)))) {
            assertInstanceOf(ReloadOutcome.Failed.class, r.reloadNow(false));
            assertEquals(Boolean.FALSE, forces.poll(20, TimeUnit.SECONDS));
            r.request(true, Duration.ZERO);
            assertEquals(Boolean.TRUE, forces.poll(20, TimeUnit.SECONDS), "not after the 10-minute retry delay");
        }
    }

    @Test
    void aClosedReloaderRefusesSynchronousReloadsAndDropsRequests() {
        int[] calls = {0};
        Reloader r = new Reloader(force -> {
            calls[0]++;
            return OK;
        });
        r.close();
        r.request(true, Duration.ZERO);
        assertThrows(IllegalStateException.class, () -> r.reloadNow(true));
        assertEquals(0, calls[0]);
    }

    @Test
    void aThrowingListenerDoesNotStopReloads() {
        try (Reloader r = new Reloader(force -> OK)) {
            r.addListener(o -> {
                throw new IllegalStateException("listener bug");
            });
            assertEquals(OK, r.reloadNow(true));
            assertEquals(OK, r.reloadNow(true), "the reload thread survived the listener");
        }
    }
}
