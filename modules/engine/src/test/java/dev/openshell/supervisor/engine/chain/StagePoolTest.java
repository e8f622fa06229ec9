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

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.internal.StageResult;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Stuck stages contained ({@link StagePool}, issue 18 item 4): plugin stages run on bounded platform threads, a stage
 * past its timeout is abandoned and counted as stuck, and a binding with too many stuck threads fails at once per its
 * {@code on_error} without being run, until a stuck thread returns.
 */
class StagePoolTest {
    private static final BindingId ACME = new BindingId("acme/test");
    private final CountDownLatch releaseLatch = new CountDownLatch(1);
    private final List<String> events = new CopyOnWriteArrayList<>();
    private final Semaphore released = new Semaphore(0);
    /** Released after each "available" event: a binding's availability is told after its stuck threads' release. */
    private final Semaphore availableAgain = new Semaphore(0);
    private final StagePool pool = StagePool.create(4, 2, new StagePool.Listener() {
        @Override
        public void stuck(BindingId binding, int stuckThreads) {
            events.add("stuck " + binding + " " + stuckThreads);
        }

        @Override
        public void released(BindingId binding, int stuckThreads) {
            events.add("released " + binding + " " + stuckThreads);
            released.release();
        }

        @Override
        public void availability(BindingId binding, boolean available, int stuckThreads) {
            events.add((available ? "available " : "unavailable ") + binding + " " + stuckThreads);
            if (available) {
                availableAgain.release();
            }
        }
    });
    private final ChainEngine engine = ChainEngine.builder().stagePool(pool).build();

    @AfterEach
    void stop() {
        releaseLatch.countDown();
        pool.close();
    }

    /**
     * A stage that ignores interrupts until the test releases it (as a spinning one does, without burning a core
     * while the suite runs; the image test {@code StuckStageIT} uses a plugin that really spins).
     */
    private Stages.Scripted spinner(AtomicInteger calls) {
        return provider(e -> {
            calls.incrementAndGet();
            while (true) {
                try {
                    releaseLatch.await();
                    return HttpRequestResult.allow();
                } catch (InterruptedException ignored) {
                    // ignored, as a stuck stage does
                }
            }
        });
    }

    @Test
    void pluginStagesRunOnNamedDaemonPlatformThreads() {
        AtomicReference<Thread> ran = new AtomicReference<>();
        ChainResult r = engine.run(chain(spec("k", 1, provider(e -> {
            ran.set(Thread.currentThread());
            return HttpRequestResult.allow();
        })).thirdParty().build()), request("x"));
        assertInstanceOf(ChainOutcome.Forward.class, r.outcome());
        assertFalse(ran.get().isVirtual(), "a spinning stage must not pin a virtual thread's carrier");
        assertTrue(ran.get().isDaemon());
        assertTrue(ran.get().getName().startsWith("middleware-stage-"), ran.get().getName());
    }

    @Test
    void theBoundedBuiltInsStayOnTheCallersThread() {
        AtomicReference<Thread> ran = new AtomicReference<>();
        engine.run(chain(spec("k", 1, provider(e -> {
            ran.set(Thread.currentThread());
            return HttpRequestResult.allow();
        })).binding("openshell/regex").build()), request("x"));
        assertEquals(Thread.currentThread(), ran.get());
    }

    @Test
    void spinningStagesAreStuckAndTheirBindingThenFailsAtOnceWithoutRunning() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        Stages.Scripted spin = spinner(calls);
        Stages.Scripted after = Stages.identity();
        Chain open = chain(spec("spin", 1, spin).thirdParty().open().timeout(1000).build(),
                spec("after", 2, after).build());
        for (int i = 1; i <= 2; i++) {
            ChainResult r = engine.run(open, request("x"));
            assertInstanceOf(ChainOutcome.Forward.class, r.outcome(), "fail_open: the chain goes on");
            assertEquals(PlatformCodes.STAGE_TIMEOUT, r.stages().get(0).failure().orElseThrow().code());
            assertEquals(i, pool.stuckThreads(ACME));
        }
        assertFalse(pool.available(ACME));
        assertEquals(2, calls.get());

        ChainResult skipped = engine.run(open, request("x"));
        assertEquals(2, calls.get(), "an unavailable binding's stage is not run, nor queued");
        StageRecord rec = skipped.stages().get(0);
        assertEquals(StageResult.BYPASSED, rec.outcome());
        assertEquals(FailureCategory.UNAVAILABLE, rec.failure().orElseThrow().category());
        assertEquals(PlatformCodes.MIDDLEWARE_UNAVAILABLE, rec.failure().orElseThrow().code());
        assertTrue(rec.findings().stream().anyMatch(f -> f.type().equals(PlatformCodes.FINDING_UNAVAILABLE)
                && f.severity().equals("high")), rec.findings().toString());
        assertEquals(3, after.calls(), "the later stage ran every time");

        ChainResult closed = engine.run(chain(spec("spin", 1, spin).thirdParty().timeout(1000).build()),
                request("x"));
        ChainOutcome.Deny deny = assertInstanceOf(ChainOutcome.Deny.class, closed.outcome(), "fail_closed denies");
        assertEquals(PlatformCodes.MIDDLEWARE_UNAVAILABLE, deny.response().reasonCode());
        assertTrue(closed.stages().get(0).findings().stream().map(Finding::severity).anyMatch("high"::equals));

        releaseLatch.countDown();
        assertTrue(released.tryAcquire(2, 30, TimeUnit.SECONDS), "both stuck stages return once released");
        assertEquals(0, pool.stuckThreads(ACME));
        assertTrue(pool.available(ACME), "available again when its stuck threads returned");
        assertEquals(2, pool.stuckTotal(ACME));
        // the first thread back tells the availability after its release; the second one's release may come first
        assertTrue(availableAgain.tryAcquire(30, TimeUnit.SECONDS), "the binding is reported available again");
        assertTrue(events.containsAll(List.of("stuck acme/test 1", "stuck acme/test 2", "unavailable acme/test 2",
                "available acme/test 1")), events.toString());
        assertInstanceOf(ChainOutcome.Forward.class, engine.run(open, request("x")).outcome());
        assertEquals(3, calls.get());
    }

    @Test
    void aStageStillQueuedAtItsDeadlineNeverRunsAndIsNotStuck() throws Exception {
        try (StagePool one = StagePool.create(1, 1, StagePool.Listener.NONE)) {
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch hold = new CountDownLatch(1);
            BindingId blocker = new BindingId("acme/blocker");
            Thread t = Thread.ofVirtual().start(() -> one.run(blocker, 30_000, () -> {
                started.countDown();
                hold.await();
                return "done";
            }));
            assertTrue(started.await(30, TimeUnit.SECONDS));
            AtomicBoolean ran = new AtomicBoolean();
            StagePool.Outcome<String> late = one.run(ACME, 10, () -> {
                ran.set(true);
                return "late";
            });
            assertEquals(new StagePool.Outcome.TimedOut<String>(false), late);
            assertEquals(0, one.stuckThreads(ACME));
            hold.countDown();
            t.join();
            // the pool's only thread is free again: a new stage runs, and the abandoned one never did
            assertEquals(new StagePool.Outcome.Done<>("next"), one.run(ACME, 30_000, () -> "next"));
            assertFalse(ran.get());
        }
    }

    @Test
    void anAbandonedStageIsInterruptedAndItsInterruptDoesNotReachTheNextStage() throws Exception {
        try (StagePool one = StagePool.create(1, 1, new StagePool.Listener() {
            @Override
            public void released(BindingId binding, int stuckThreads) {
                released.release();
            }
        })) {
            // 1 s: long enough for the pool thread to start the stage on a loaded machine, so it is running (stuck)
            StagePool.Outcome<String> out = one.run(ACME, 1000, () -> {
                Thread.sleep(60_000); // interruptible: returns as soon as it is abandoned
                return "slept";
            });
            assertEquals(new StagePool.Outcome.TimedOut<String>(true), out);
            assertTrue(released.tryAcquire(30, TimeUnit.SECONDS), "the interrupt ended the abandoned stage");
            assertEquals(new StagePool.Outcome.Done<>(false),
                    one.run(ACME, 30_000, () -> Thread.currentThread().isInterrupted()));
        }
    }

    /**
     * Eight stages of one binding abandoned at once, then released at once, in five rounds: the listener hears the
     * counts one at a time and in order (each call one more or one less than the one before), so a gauge set from
     * each call ends at the pool's count. Before the counts were reported in order, two stuck threads could leave the
     * gauge at 1 ({@code StuckStageIT}).
     */
    @Test
    void countsReachTheListenerInTheOrderTheyWereMade() throws Exception {
        List<Integer> heard = new CopyOnWriteArrayList<>();
        AtomicReference<StagePool> pool8 = new AtomicReference<>();
        StagePool.Listener gauge = new StagePool.Listener() {
            @Override
            public void stuck(BindingId binding, int stuckThreads) {
                if (stuckThreads == 1) {
                    // the schedule that lost a count: give another abandonment up to 0.3 s to count before this
                    // call is heard (it must not be able to: counts and calls are made in one order)
                    long until = System.nanoTime() + 300_000_000L;
                    while (pool8.get().stuckThreads(ACME) == 1 && System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                }
                heard.add(stuckThreads);
            }

            @Override
            public void released(BindingId binding, int stuckThreads) {
                heard.add(stuckThreads);
            }
        };
        try (StagePool eight = StagePool.create(8, 8, gauge)) {
            pool8.set(eight);
            for (int round = 0; round < 5; round++) {
                heard.clear();
                CountDownLatch go = new CountDownLatch(1);
                CountDownLatch started = new CountDownLatch(8);
                List<Thread> callers = new java.util.ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    // each caller stops waiting when interrupted, which abandons its running stage at once
                    callers.add(Thread.ofPlatform().start(() -> eight.run(ACME, 60_000, () -> {
                        started.countDown();
                        awaitIgnoringInterrupts(go);
                        return null;
                    })));
                }
                assertTrue(started.await(30, TimeUnit.SECONDS));
                callers.forEach(Thread::interrupt);
                for (Thread t : callers) {
                    t.join(30_000);
                }
                assertEquals(8, eight.stuckThreads(ACME));
                assertEquals(8, heard.get(heard.size() - 1), "the last count heard is the count now: " + heard);
                go.countDown();
                while (heard.size() < 16) {
                    Thread.onSpinWait(); // the releases are told by the pool threads as they return
                }
                for (int i = 1; i < heard.size(); i++) {
                    assertEquals(1, Math.abs(heard.get(i) - heard.get(i - 1)), "in order: " + heard);
                }
                assertEquals(0, heard.get(15), heard.toString());
            }
        }
    }

    private static void awaitIgnoringInterrupts(CountDownLatch latch) {
        while (true) {
            try {
                latch.await();
                return;
            } catch (InterruptedException ignored) {
                // as a stuck stage does
            }
        }
    }

    @Test
    void aFullPoolFailsTheStageAtOnce() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        StagePool tiny = StagePool.create(1, 1, 1, StagePool.Listener.NONE);
        try (tiny) {
            CountDownLatch hold = new CountDownLatch(1);
            CountDownLatch started = new CountDownLatch(1);
            Thread running = Thread.ofVirtual().start(() -> tiny.run(new BindingId("acme/blocker"), 30_000, () -> {
                started.countDown();
                hold.await();
                return 0;
            }));
            assertTrue(started.await(30, TimeUnit.SECONDS));
            Thread queued = Thread.ofVirtual().start(() -> tiny.run(new BindingId("acme/queued"), 30_000,
                    () -> 0));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (tiny.queued() < 1 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(1, tiny.queued());
            ChainResult r = ChainEngine.builder().stagePool(tiny).build().run(chain(spec("k", 1,
                    provider(e -> {
                        calls.incrementAndGet();
                        return HttpRequestResult.allow();
                    })).thirdParty().build()), request("x"));
            assertEquals(PlatformCodes.STAGE_THREADS_BUSY, r.stages().get(0).failure().orElseThrow().code());
            assertEquals(FailureCategory.UNAVAILABLE, r.stages().get(0).failure().orElseThrow().category());
            hold.countDown();
            running.join();
            queued.join();
            assertEquals(0, calls.get(), "the refused stage never ran");
        }
    }

    @Test
    void aVirtualMachineErrorOfAPooledStageIsRethrown() {
        Chain c = chain(spec("k", 1, provider(e -> {
            throw new StackOverflowError();
        })).thirdParty().open().build());
        assertThrows(StackOverflowError.class, () -> engine.run(c, request("x")));
    }

    @Test
    void limitsAreChecked() {
        assertThrows(IllegalArgumentException.class, () -> StagePool.create(0, 1, StagePool.Listener.NONE));
        assertThrows(IllegalArgumentException.class, () -> StagePool.create(2, 3, StagePool.Listener.NONE));
        assertThrows(IllegalArgumentException.class, () -> StagePool.create(2, 0, StagePool.Listener.NONE));
    }
}
