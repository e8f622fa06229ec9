package dev.openshell.supervisor.engine.chain;

import static dev.openshell.supervisor.engine.chain.StageAttempts.failed;
import static dev.openshell.supervisor.engine.chain.StageAttempts.interrupted;
import static dev.openshell.supervisor.engine.chain.StageAttempts.thrown;
import static dev.openshell.supervisor.engine.chain.StageAttempts.timedOut;

import dev.openshell.supervisor.engine.chain.StageAttempts.Invoked;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * Runs one stage's call within its timeout, where the {@link ChainEngine}'s configuration says: inline for bounded
 * built-ins (on the {@link BulkLane} for a large body), on the {@link StagePool} when there is one, else on a fresh
 * thread of the engine's factory. Never throws for a stage's failure: it comes back as an {@link Invoked} failure.
 */
final class StageInvoker {
    private final LongSupplier nanoClock;
    private final ThreadFactory threads;
    private final Predicate<StageSpec> inline;
    private final StagePool pool;
    private final BulkLane bulk;

    StageInvoker(LongSupplier nanoClock, ThreadFactory threads, Predicate<StageSpec> inline, StagePool pool,
                 BulkLane bulk) {
        this.nanoClock = nanoClock;
        this.threads = threads;
        this.inline = inline;
        this.pool = pool;
        this.bulk = bulk;
    }

    /**
     * Invokes a stage inline (on the {@link BulkLane} for a bounded built-in on a large body) or on a fresh
     * thread, within its timeout.
     */
    <T> Invoked<T> invoke(StageSpec s, Callable<T> call, long bodyBytes) {
        if (inline.test(s)) {
            if (Thread.currentThread().isInterrupted()) {
                return new Invoked<>(null, interrupted(s));
            }
            long start = nanoClock.getAsLong();
            T value;
            long laneRunNanos = -1;
            try {
                if (bulk != null && bulk.takes(bodyBytes) && ChainEngine.BOUNDED_BUILT_IN_STAGES.test(s)) {
                    BulkLane.Ran<T> ran = bulk.run(call, Math.max(1, s.timeoutMillis() / 4), s.timeoutMillis());
                    if (ran.overran()) {
                        return new Invoked<>(null, timedOut(s)); // interrupted at its deadline
                    }
                    value = ran.value();
                    laneRunNanos = ran.runNanos();
                } else {
                    value = call.call();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new Invoked<>(null, interrupted(s));
            } catch (Throwable t) {
                return new Invoked<>(null, thrown(s, t));
            }
            if (Thread.currentThread().isInterrupted()) {
                return new Invoked<>(null, interrupted(s));
            }
            // on the lane, the stage's own run time: the wait for a lane thread is bounded separately
            long took = laneRunNanos >= 0 ? laneRunNanos : nanoClock.getAsLong() - start;
            if (took > TimeUnit.MILLISECONDS.toNanos(s.timeoutMillis())) {
                return new Invoked<>(null, timedOut(s));
            }
            return new Invoked<>(value, null);
        }
        if (pool != null) {
            return pooled(s, call);
        }
        FutureTask<T> task = new FutureTask<>(call);
        threads.newThread(task).start();
        try {
            return new Invoked<>(task.get(s.timeoutMillis(), TimeUnit.MILLISECONDS), null);
        } catch (TimeoutException e) {
            task.cancel(true);
            return new Invoked<>(null, timedOut(s));
        } catch (InterruptedException e) {
            task.cancel(true);
            Thread.currentThread().interrupt();
            return new Invoked<>(null, interrupted(s));
        } catch (ExecutionException e) {
            return new Invoked<>(null, thrown(s, e.getCause()));
        }
    }

    /** Invokes a stage on the {@link StagePool}, within its timeout. */
    private <T> Invoked<T> pooled(StageSpec s, Callable<T> call) {
        return switch (pool.run(s.bindingId(), s.timeoutMillis(), call)) {
            case StagePool.Outcome.Done<T> d -> new Invoked<>(d.value(), null);
            case StagePool.Outcome.Threw<T> t -> new Invoked<>(null, thrown(s, t.cause()));
            case StagePool.Outcome.TimedOut<T> t -> new Invoked<>(null, timedOut(s));
            case StagePool.Outcome.Interrupted<T> i -> new Invoked<>(null, interrupted(s));
            case StagePool.Outcome.Unavailable<T> u -> new Invoked<>(null, failed(s, FailureCategory.UNAVAILABLE,
                    PlatformCodes.MIDDLEWARE_UNAVAILABLE, "middleware " + s.bindingId() + " is unavailable: "
                            + u.stuckThreads() + " of its stages overran their timeout and have not returned"));
            case StagePool.Outcome.Busy<T> b -> new Invoked<>(null, failed(s, FailureCategory.UNAVAILABLE,
                    PlatformCodes.STAGE_THREADS_BUSY, "every middleware stage thread is busy"));
        };
    }
}
