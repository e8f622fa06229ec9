package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.grpc.RetryPolicy;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Runs reload attempts one at a time on one thread ({@code supervisor-reload}), off the request path.
 *
 * <ul>
 *   <li>{@link #reloadNow} runs an attempt and waits for it.</li>
 *   <li>{@link #request} schedules one after a delay (the file watcher's debounce). Requests that arrive while one
 *       is pending join it, so a burst of file events costs one attempt, and the attempt reads the file after the
 *       last event of the burst that came before it started. A forced request makes the pending one forced.</li>
 *   <li>After a failed attempt another one is scheduled with exponential backoff ({@link #BACKOFF}: from 1 s,
 *       doubling, to 60 s; the one backoff type of the supervisor, {@link RetryPolicy}) ("continues retrying"); any
 *       success resets the backoff, and a new request replaces a pending retry.</li>
 * </ul>
 */
final class Reloader implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Reloader.class.getName());
    /** Retry delays after failed attempts: 1 s doubling to 60 s. */
    static final RetryPolicy BACKOFF = new RetryPolicy(Duration.ofSeconds(1), Duration.ofSeconds(60));

    /** One attempt; never throws for a bad policy (it reports a {@link ReloadOutcome.Failed}). */
    interface Attempt {
        /**
         * {@return the outcome}
         *
         * @param force whether to prepare and swap even when the policy file is unchanged
         */
        ReloadOutcome run(boolean force);
    }

    private final Attempt attempt;
    private final ScheduledExecutorService executor;
    private final List<Consumer<ReloadOutcome>> listeners = new CopyOnWriteArrayList<>();
    private final Object lock = new Object();
    private ScheduledFuture<?> pending; // guarded by lock
    private boolean pendingIsRetry; // guarded by lock
    private boolean pendingForce; // guarded by lock
    private boolean closed; // guarded by lock
    private final RetryPolicy backoff;
    private int failedInARow; // guarded by lock

    Reloader(Attempt attempt) {
        this(attempt, BACKOFF);
    }

    /** @param backoff the retry delays (tests shorten them) */
    Reloader(Attempt attempt, RetryPolicy backoff) {
        this.attempt = Objects.requireNonNull(attempt, "attempt");
        this.backoff = Objects.requireNonNull(backoff, "backoff");
        ScheduledThreadPoolExecutor ex = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "supervisor-reload");
            t.setDaemon(true);
            return t;
        });
        ex.setRemoveOnCancelPolicy(true);
        ex.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.executor = ex;
    }

    /** @param listener called on the reload thread after every attempt */
    void addListener(Consumer<ReloadOutcome> listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /**
     * Runs an attempt now, after any attempt already running, and waits for it.
     *
     * @param force whether to swap even when the policy file is unchanged
     * @return the outcome
     * @throws IllegalStateException when closed
     */
    ReloadOutcome reloadNow(boolean force) {
        Future<ReloadOutcome> f;
        try {
            f = executor.submit(() -> run(force));
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("the supervisor is closed", e);
        }
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for a reload", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("reload failed unexpectedly", e.getCause());
        }
    }

    /**
     * Schedules an attempt after {@code delay}, or joins the one already pending.
     *
     * @param force whether to swap even when the policy file is unchanged
     * @param delay how long to wait first
     */
    void request(boolean force, Duration delay) {
        synchronized (lock) {
            if (closed) {
                return;
            }
            if (pending != null && !pendingIsRetry) {
                pendingForce |= force;
                return;
            }
            if (pending != null) {
                pending.cancel(false);
            }
            schedule(force, delay.toMillis(), false);
        }
    }

    // guarded by lock
    private void schedule(boolean force, long delayMillis, boolean retry) {
        pendingForce = force;
        pendingIsRetry = retry;
        pending = executor.schedule(() -> {
            boolean f;
            synchronized (lock) {
                f = pendingForce;
                pending = null;
            }
            run(f);
        }, delayMillis, TimeUnit.MILLISECONDS);
    }

    private ReloadOutcome run(boolean force) {
        ReloadOutcome outcome = attempt.run(force);
        synchronized (lock) {
            if (outcome instanceof ReloadOutcome.Failed) {
                if (pending == null && !closed) {
                    schedule(false, backoff.delay(failedInARow).toMillis(), true);
                    failedInARow = Math.min(failedInARow + 1, 30);
                }
            } else {
                failedInARow = 0;
                if (pending != null && pendingIsRetry) {
                    pending.cancel(false);
                    pending = null;
                }
            }
        }
        for (Consumer<ReloadOutcome> l : listeners) {
            try {
                l.accept(outcome);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "reload listener failed: {0}", e.getClass().getName());
            }
        }
        return outcome;
    }

    /** Stops: pending attempts are dropped; an attempt already running finishes (bounded wait of 10 s). */
    @Override
    public void close() {
        synchronized (lock) {
            closed = true;
            if (pending != null) {
                pending.cancel(false);
                pending = null;
            }
        }
        executor.shutdown();
        try {
            if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
                executor.shutdownNow();
            }
        } catch (InterruptedException e) {
            executor.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
