package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.BindingId;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A bounded pool of platform threads for in-process stages that are not bounded by construction (plugin stages), and
 * the bookkeeping of stages that overran their timeout (issue 18, "Stuck stages contained").
 *
 * <h2>Why platform threads</h2>
 * Virtual threads are not preempted: a stage that spins on a virtual thread keeps its carrier, and with as many such
 * stages as cores (2 on a small sandbox host) every virtual thread of the proxy, {@code /health/live} and the shutdown
 * included, waits for them. A platform thread is scheduled by the operating system, so a spinning stage costs at most
 * its share of the CPU while the carriers keep serving.
 *
 * <h2>Timeouts, stuck threads, unavailable bindings</h2>
 * The caller (the request's thread) waits for the stage at most its timeout, measured from the hand-off, so time
 * spent queued for a pool thread counts. A stage still queued at its deadline never runs. A stage still running is
 * <em>abandoned</em>: its thread is interrupted and counted as <em>stuck</em> for its binding until the stage returns
 * (Java cannot stop a thread that ignores interrupts; it keeps its pool thread until then, and its result is
 * discarded). While a binding has {@link #maxStuckPerBinding()} stuck threads it is <em>unavailable</em>: its stages
 * are not handed to the pool at all but fail at once ({@link Outcome.Unavailable}, the stage's {@code on_error}),
 * so a spinning plugin cannot take more than that many threads, nor make requests queue behind it. It is available
 * again as soon as one of them returns. A full pool (every thread busy and the queue full)
 * fails the stage at once as well ({@link Outcome.Busy}).
 *
 * <p>What a pool cannot contain: a stage that calls {@code System.exit} or {@code Runtime.halt}, or that allocates
 * without bound, affects the whole process (there is no SecurityManager to stop it in Java 21; see the plugin trust
 * section of {@code docs/plugin-authors.md}). Run such code as an external service instead.
 *
 * <p>Thread-safe. Pool threads are daemon threads named {@code middleware-stage-N}; idle ones end after 30 seconds.
 */
public final class StagePool implements AutoCloseable {
    /** The default number of pool threads: enough for 64 plugin stages running at once. */
    public static final int DEFAULT_THREADS = 64;
    /** The default number of stuck threads after which a binding is unavailable. */
    public static final int DEFAULT_MAX_STUCK_PER_BINDING = 2;
    /** The default number of stages that may wait for a pool thread; one more fails at once with {@link Outcome.Busy}. */
    public static final int DEFAULT_QUEUE_CAPACITY = 1024;

    private static final int QUEUED = 0;
    private static final int RUNNING = 1;
    private static final int DONE = 2;
    private static final int ABANDONED = 3;

    private final ThreadPoolExecutor executor;
    private final int threads;
    private final int maxStuck;
    private final Listener listener;
    private final Map<BindingId, BindingState> bindings = new ConcurrentHashMap<>();

    /**
     * What the pool reports to the operator. Calls come from request threads and pool threads; implementations must be
     * quick and must not throw. The calls for one binding come one at a time, in the order of its counts, so the
     * count of the last call is the count now (a gauge set from each call stays right).
     */
    public interface Listener {
        /** A listener that ignores everything. */
        Listener NONE = new Listener() {
        };

        /**
         * A stage overran its timeout while running, and its thread was abandoned.
         *
         * @param binding the stage's binding
         * @param stuckThreads the binding's stuck threads now
         */
        default void stuck(BindingId binding, int stuckThreads) {
        }

        /**
         * An abandoned stage returned; its thread is back in the pool.
         *
         * @param binding the stage's binding
         * @param stuckThreads the binding's stuck threads now
         */
        default void released(BindingId binding, int stuckThreads) {
        }

        /**
         * A binding became unavailable (it reached the stuck-thread limit) or available again.
         *
         * @param binding the binding
         * @param available whether it is available now
         * @param stuckThreads its stuck threads now
         */
        default void availability(BindingId binding, boolean available, int stuckThreads) {
        }
    }

    /**
     * The outcome of {@link #run}.
     *
     * @param <T> the stage's answer type
     */
    public sealed interface Outcome<T> {
        /** @param value the stage's answer @param <T> the answer type */
        record Done<T>(T value) implements Outcome<T> {
        }

        /** @param cause what the stage threw @param <T> the answer type */
        record Threw<T>(Throwable cause) implements Outcome<T> {
        }

        /**
         * The stage did not answer within its timeout.
         *
         * @param stuck whether it was running (its thread is now stuck) rather than still queued
         * @param <T> the answer type
         */
        record TimedOut<T>(boolean stuck) implements Outcome<T> {
        }

        /** The binding is unavailable: the stage was not run. @param stuckThreads its stuck threads @param <T> type */
        record Unavailable<T>(int stuckThreads) implements Outcome<T> {
        }

        /** Every pool thread is busy and the queue is full: the stage was not run. @param <T> the answer type */
        record Busy<T>() implements Outcome<T> {
        }

        /** The caller was interrupted while waiting (the stage was abandoned). @param <T> the answer type */
        record Interrupted<T>() implements Outcome<T> {
        }
    }

    private StagePool(int threads, int maxStuck, int queue, Listener listener) {
        this.threads = threads;
        this.maxStuck = maxStuck;
        this.listener = listener;
        AtomicInteger n = new AtomicInteger();
        ThreadFactory factory = r -> Thread.ofPlatform().daemon(true).name("middleware-stage-" + n.incrementAndGet())
                .unstarted(r);
        this.executor = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(queue), factory, new ThreadPoolExecutor.AbortPolicy());
        this.executor.allowCoreThreadTimeOut(true);
    }

    /**
     * {@return a pool}
     *
     * @param threads the number of platform threads, 1 to 4096
     * @param maxStuckPerBinding the stuck threads after which a binding is unavailable, 1 to {@code threads}
     * @param listener what to tell the operator
     * @throws IllegalArgumentException if a number is out of range
     */
    public static StagePool create(int threads, int maxStuckPerBinding, Listener listener) {
        return create(threads, maxStuckPerBinding, DEFAULT_QUEUE_CAPACITY, listener);
    }

    /**
     * {@return a pool}
     *
     * @param threads the number of platform threads, 1 to 4096
     * @param maxStuckPerBinding the stuck threads after which a binding is unavailable, 1 to {@code threads}
     * @param queueCapacity the stages that may wait for a thread, 1 to 65536
     * @param listener what to tell the operator
     * @throws IllegalArgumentException if a number is out of range
     */
    public static StagePool create(int threads, int maxStuckPerBinding, int queueCapacity, Listener listener) {
        if (queueCapacity < 1 || queueCapacity > 65536) {
            throw new IllegalArgumentException("stage queue capacity " + queueCapacity + " outside 1..65536");
        }
        if (threads < 1 || threads > 4096) {
            throw new IllegalArgumentException("stage threads " + threads + " outside 1..4096");
        }
        if (maxStuckPerBinding < 1 || maxStuckPerBinding > threads) {
            throw new IllegalArgumentException("stuck threads per binding " + maxStuckPerBinding + " outside 1.."
                    + threads);
        }
        return new StagePool(threads, maxStuckPerBinding, queueCapacity, Objects.requireNonNull(listener,
                "listener"));
    }

    /** {@return the number of pool threads} */
    public int threads() {
        return threads;
    }

    /** {@return the stuck threads after which a binding is unavailable} */
    public int maxStuckPerBinding() {
        return maxStuck;
    }

    /** {@return the stuck threads of {@code binding} now} @param binding a binding ID */
    public int stuckThreads(BindingId binding) {
        BindingState s = bindings.get(binding);
        return s == null ? 0 : s.stuck.get();
    }

    /** {@return how many stages of {@code binding} were abandoned while running, since start} @param binding an ID */
    public long stuckTotal(BindingId binding) {
        BindingState s = bindings.get(binding);
        return s == null ? 0 : s.stuckTotal.get();
    }

    /** {@return whether stages of {@code binding} are handed to the pool} @param binding a binding ID */
    public boolean available(BindingId binding) {
        return stuckThreads(binding) < maxStuck;
    }

    /**
     * Runs {@code call} on a pool thread and waits at most {@code timeoutMillis} for it.
     *
     * @param binding the stage's binding, for the stuck-thread bookkeeping
     * @param timeoutMillis the stage's timeout, in milliseconds, from now
     * @param call the stage
     * @param <T> the answer type
     * @return the outcome; never {@code null}. The caller's interrupt status is restored on
     *     {@link Outcome.Interrupted}
     */
    public <T> Outcome<T> run(BindingId binding, long timeoutMillis, Callable<T> call) {
        BindingState state = bindings.computeIfAbsent(binding, b -> new BindingState());
        int stuckNow = state.stuck.get();
        if (stuckNow >= maxStuck) {
            return new Outcome.Unavailable<>(stuckNow);
        }
        Job<T> job = new Job<>(call, binding, state);
        try {
            executor.execute(job);
        } catch (RejectedExecutionException e) {
            return new Outcome.Busy<>();
        }
        boolean interrupted = false;
        try {
            if (job.done.await(timeoutMillis, TimeUnit.MILLISECONDS)) {
                return job.outcome();
            }
        } catch (InterruptedException e) {
            interrupted = true;
        }
        Outcome<T> late = job.abandon();
        if (interrupted) {
            Thread.currentThread().interrupt();
            return late != null && !(late instanceof Outcome.TimedOut) ? late : new Outcome.Interrupted<>();
        }
        return late;
    }

    /** {@return the stages waiting for a thread now} */
    int queued() {
        return executor.getQueue().size();
    }

    /** Stops the pool: queued stages never run, running ones are interrupted. */
    @Override
    public void close() {
        executor.shutdownNow();
    }

    /** One binding's stuck threads. */
    private static final class BindingState {
        final AtomicInteger stuck = new AtomicInteger();
        final AtomicLong stuckTotal = new AtomicLong();
    }

    /** One stage hand-off. */
    private final class Job<T> implements Runnable {
        private final Callable<T> call;
        private final BindingId binding;
        private final BindingState state;
        private final AtomicInteger phase = new AtomicInteger(QUEUED);
        final CountDownLatch done = new CountDownLatch(1);
        /** The pool thread while it is inside this job; guarded by {@code this}. */
        private Thread runner;
        private T value;
        private Throwable thrown;

        Job(Callable<T> call, BindingId binding, BindingState state) {
            this.call = call;
            this.binding = binding;
            this.state = state;
        }

        @Override
        public void run() {
            synchronized (this) {
                if (!phase.compareAndSet(QUEUED, RUNNING)) {
                    return; // abandoned while queued
                }
                runner = Thread.currentThread();
            }
            try {
                value = call.call();
            } catch (Throwable t) {
                thrown = t; // a VirtualMachineError is handed to the caller, who rethrows it
            } finally {
                boolean inTime;
                synchronized (this) {
                    runner = null;
                    inTime = phase.compareAndSet(RUNNING, DONE);
                }
                Thread.interrupted(); // an abandonment's interrupt must not reach the next job
                if (inTime) {
                    done.countDown();
                } else {
                    synchronized (state) { // reports in the order of the counts (see abandon)
                        int now = state.stuck.decrementAndGet();
                        listener.released(binding, now);
                        if (now == maxStuck - 1) {
                            listener.availability(binding, true, now);
                        }
                    }
                }
            }
        }

        Outcome<T> outcome() {
            return thrown != null ? new Outcome.Threw<>(thrown) : new Outcome.Done<>(value);
        }

        /** {@return the outcome for a caller that stops waiting} */
        Outcome<T> abandon() {
            synchronized (this) {
                if (phase.compareAndSet(QUEUED, ABANDONED)) {
                    return new Outcome.TimedOut<>(false);
                }
                if (!phase.compareAndSet(RUNNING, ABANDONED)) {
                    return outcome(); // it finished just now
                }
                if (runner != null) {
                    runner.interrupt();
                }
                // counted under the job's lock, so the stage's return (which takes it) can only count down afterwards;
                // counted and reported under the binding's lock, so that two stages abandoned at once (or one
                // abandoned as another returns) report their counts in the order they were made: the last report,
                // which a gauge keeps, is the count now
                synchronized (state) {
                    int now = state.stuck.incrementAndGet();
                    state.stuckTotal.incrementAndGet();
                    listener.stuck(binding, now);
                    if (now == maxStuck) {
                        listener.availability(binding, false, now);
                    }
                }
            }
            return new Outcome.TimedOut<>(true);
        }
    }
}
