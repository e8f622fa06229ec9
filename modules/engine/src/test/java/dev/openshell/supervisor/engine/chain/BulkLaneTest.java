package dev.openshell.supervisor.engine.chain;

import static dev.openshell.supervisor.engine.chain.Stages.chain;
import static dev.openshell.supervisor.engine.chain.Stages.provider;
import static dev.openshell.supervisor.engine.chain.Stages.request;
import static dev.openshell.supervisor.engine.chain.Stages.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The bounded built-ins on large bodies run on the {@link BulkLane}'s platform threads, so CPU-bound scans do not
 * hold the virtual-thread carriers (issue 18, fairness); on small bodies, and for every other stage, nothing changes.
 */
class BulkLaneTest {
    private final BulkLane lane = BulkLane.create(2, 1024);
    private final ChainEngine engine = ChainEngine.builder().bulkLane(lane).build();

    @AfterEach
    void stop() {
        lane.close();
    }

    private Thread ranOn(String binding, int bodyBytes) {
        AtomicReference<Thread> ran = new AtomicReference<>();
        ChainResult r = engine.run(chain(spec("k", 1, provider(e -> {
            ran.set(Thread.currentThread());
            return HttpRequestResult.allow();
        })).binding(binding).build()), request("a".repeat(bodyBytes)));
        assertInstanceOf(ChainOutcome.Forward.class, r.outcome());
        return ran.get();
    }

    @Test
    void theRegexOnALargeBodyRunsOnALanePlatformThread() {
        Thread t = ranOn("openshell/regex", 1024);
        assertFalse(t.isVirtual());
        assertTrue(t.getName().startsWith("bulk-stage-"), t.getName());
    }

    @Test
    void belowTheThresholdItStaysOnTheCallersThread() {
        assertEquals(Thread.currentThread(), ranOn("openshell/regex", 1023));
    }

    @Test
    void otherStagesNeverTakeTheLane() {
        Thread t = ranOn("acme/test", 4096);
        assertFalse(t.getName().startsWith("bulk-stage-"), t.getName());
    }

    @Test
    void aStageErrorOnTheLaneIsTheStagesFailureAsInline() {
        ChainResult r = engine.run(chain(spec("k", 1, provider(e -> {
            throw new MiddlewareException("broken", "no");
        })).binding("openshell/regex").open().build()), request("a".repeat(4096)));
        assertInstanceOf(ChainOutcome.Forward.class, r.outcome(), "fail_open: the chain goes on");
        assertEquals("broken", r.stages().get(0).failure().orElseThrow().code());
    }

    @Test
    void anInterruptedCallerIsDeniedWhateverOnError() throws Exception {
        Thread.currentThread().interrupt();
        try {
            ChainResult r = engine.run(chain(spec("k", 1, provider(e -> HttpRequestResult.allow()))
                    .binding("openshell/regex").open().build()), request("a".repeat(4096)));
            assertInstanceOf(ChainOutcome.Deny.class, r.outcome());
        } finally {
            assertTrue(Thread.interrupted(), "the interrupt status is restored");
        }
    }

    @Test
    void aStageThatFindsTheLaneBusyRunsOnAnOverflowPlatformThreadInsteadOfTimingOut() throws Exception {
        whileTheOnlyLaneThreadIsHeld(engine1 -> {
            AtomicReference<Thread> ran = new AtomicReference<>();
            // timeout 400 ms: after 100 ms without a lane thread the stage is taken back and run elsewhere
            ChainResult r = engine1.run(chain(spec("k", 1, provider(e -> {
                ran.set(Thread.currentThread());
                return HttpRequestResult.allow();
            })).binding("openshell/regex").timeout(400).build()), request("a".repeat(4096)));
            assertInstanceOf(ChainOutcome.Forward.class, r.outcome());
            assertTrue(r.stages().get(0).failure().isEmpty(), "the wait for the lane is not the stage's time");
            assertFalse(ran.get().isVirtual());
            assertTrue(ran.get().getName().startsWith("bulk-overflow-"), "never on a carrier: " + ran.get());
        });
    }

    /** What a test does with an engine whose one-thread lane is held by another stage. */
    private interface LaneUser {
        void use(ChainEngine engine) throws Exception;
    }

    private static void whileTheOnlyLaneThreadIsHeld(LaneUser user) throws Exception {
        BulkLane one = BulkLane.create(1, 1024);
        ChainEngine engine1 = ChainEngine.builder().bulkLane(one).build();
        CountDownLatch release = new CountDownLatch(1);
        Thread busy = holdTheLane(engine1, release);
        try {
            user.use(engine1);
        } finally {
            release.countDown();
            busy.join();
            one.close();
        }
    }

    /**
     * {@return a thread whose stage holds {@code engine}'s one-thread lane until {@code release} (stage timeout 10 s),
     * once the stage has started}
     */
    private static Thread holdTheLane(ChainEngine engine, CountDownLatch release) throws InterruptedException {
        CountDownLatch started = new CountDownLatch(1);
        Thread busy = Thread.ofVirtual().start(() -> engine.run(chain(spec("k", 1, provider(e -> {
            started.countDown();
            try {
                release.await();
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            return HttpRequestResult.allow();
        })).binding("openshell/regex").timeout(10_000).build()), request("a".repeat(4096))));
        assertTrue(started.await(30, TimeUnit.SECONDS));
        return busy;
    }

    /** A stage that reads until its thread is interrupted, as the regex scan does every 64 KiB; records where. */
    private static HttpRequestResult scanUntilInterrupted(AtomicReference<Thread> ranOn) {
        ranOn.set(Thread.currentThread());
        while (!Thread.currentThread().isInterrupted()) {
            Thread.onSpinWait();
        }
        throw new CancellationException("interrupted");
    }

    @Test
    void aStageStillRunningAtItsTimeoutIsInterruptedThereAndTimesOut() {
        AtomicReference<Thread> ran = new AtomicReference<>();
        java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
        // without the deadline the stage never returns and this test hangs
        ChainResult r = engine.run(chain(spec("k", 1, provider(e -> {
            runs.incrementAndGet();
            return scanUntilInterrupted(ran);
        })).binding("openshell/regex").timeout(400).build()), request("a".repeat(4096)));
        assertInstanceOf(ChainOutcome.Deny.class, r.outcome(), "fail_closed: nothing unread is forwarded");
        assertEquals(PlatformCodes.STAGE_TIMEOUT, r.stages().get(0).failure().orElseThrow().code());
        // running past the lane's start window (a quarter of the timeout) is not waiting for the lane: it runs once
        assertEquals(1, runs.get());
        assertFalse(Thread.currentThread().isInterrupted());
    }

    @Test
    void theDeadlinesInterruptNeverReachesTheLaneThreadsNextStage() {
        BulkLane one = BulkLane.create(1, 1024);
        ChainEngine engine1 = ChainEngine.builder().bulkLane(one).build();
        try {
            AtomicReference<Thread> lane = new AtomicReference<>();
            engine1.run(chain(spec("k", 1, provider(e -> {
                lane.set(Thread.currentThread());
                return HttpRequestResult.allow();
            })).binding("openshell/regex").timeout(20_000).build()), request("a".repeat(4096)));
            assertTrue(lane.get().getName().startsWith("bulk-stage-"), "the lane's thread is started");
            AtomicReference<Thread> first = new AtomicReference<>();
            engine1.run(chain(spec("k", 1, provider(e -> scanUntilInterrupted(first)))
                    .binding("openshell/regex").timeout(400).build()), request("a".repeat(4096)));
            AtomicReference<Thread> second = new AtomicReference<>();
            AtomicBoolean interruptedAtStart = new AtomicBoolean(true);
            ChainResult r = engine1.run(chain(spec("k", 1, provider(e -> {
                second.set(Thread.currentThread());
                interruptedAtStart.set(Thread.currentThread().isInterrupted());
                return HttpRequestResult.allow();
            })).binding("openshell/regex").timeout(5_000).build()), request("a".repeat(4096)));
            assertInstanceOf(ChainOutcome.Forward.class, r.outcome());
            assertEquals(lane.get(), first.get(), "the lane's one thread ran all three");
            assertEquals(lane.get(), second.get());
            assertFalse(interruptedAtStart.get());
        } finally {
            one.close();
        }
    }

    @Test
    void aStageThatAnswersAfterItsInterruptIsStillLateAndItsAnswerDiscarded() {
        ChainResult r = engine.run(chain(spec("k", 1, provider(e -> {
            try {
                new CountDownLatch(1).await(); // only the deadline's interrupt ends this wait
            } catch (InterruptedException ex) {
                return HttpRequestResult.allow(); // swallows it and answers
            }
            return HttpRequestResult.allow();
        })).binding("openshell/regex").timeout(100).build()), request("a".repeat(4096)));
        assertInstanceOf(ChainOutcome.Deny.class, r.outcome());
        assertEquals(PlatformCodes.STAGE_TIMEOUT, r.stages().get(0).failure().orElseThrow().code());
    }

    @Test
    void aStageTakenBackFromABusyLaneIsInterruptedOnItsOverflowThreadAndTheCallerLeftUninterrupted()
            throws Exception {
        whileTheOnlyLaneThreadIsHeld(engine1 -> {
            AtomicReference<Thread> ran = new AtomicReference<>();
            ChainResult r = engine1.run(chain(spec("k", 1, provider(e -> scanUntilInterrupted(ran)))
                    .binding("openshell/regex").timeout(200).build()), request("a".repeat(4096)));
            assertTrue(ran.get().getName().startsWith("bulk-overflow-"), "taken back after 50 ms: " + ran.get());
            assertEquals(PlatformCodes.STAGE_TIMEOUT, r.stages().get(0).failure().orElseThrow().code());
            assertFalse(Thread.interrupted(), "the deadline interrupted the overflow thread, not the caller");
        });
    }

    @Test
    void outOfRangeLanesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> BulkLane.create(0, 0));
        assertThrows(IllegalArgumentException.class, () -> BulkLane.create(1, -1));
    }
}
