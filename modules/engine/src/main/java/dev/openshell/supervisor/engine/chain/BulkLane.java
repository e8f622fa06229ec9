package dev.openshell.supervisor.engine.chain;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A few platform threads for the CPU-bound built-in stages ({@link ChainEngine#BOUNDED_BUILT_IN_STAGES}: the regex
 * scan, the SigV4 hash) on large bodies, so that one client's large uploads cannot hold every carrier thread of the
 * virtual-thread scheduler (issue 18, "100 concurrent 4 MiB uploads").
 *
 * <p>Why: virtual threads are not preempted. A request thread that scans a 4 MiB body keeps its carrier for the
 * whole scan (milliseconds), and with dozens of such scans runnable, every other request (a small GET of another
 * sandbox, waiting for a carrier after each read and write) waits behind all of them: a victim's GET took 0.5 to
 * 2 s during 100 concurrent 4 MiB uploads on 2 cores. On this lane the scans run on platform threads, which the
 * operating system time-slices against the carriers, so the carriers stay free for the light work of every other
 * request; the request thread parks (unmounted) until its stage returns.
 *
 * <p>Shape: {@code threads} platform threads (default: the available processors, at least 2) named
 * {@code bulk-stage-N}, daemon, and a queue of at most {@value #QUEUE} tasks; when it is full the stage runs on a
 * platform thread of its own, {@code bulk-overflow-N} (never refused). Only stages on bodies of at least
 * {@code thresholdBytes} (default {@value #DEFAULT_THRESHOLD_BYTES}) take the lane: below it the hand-off (a park
 * and an unpark, some microseconds) would cost more than it saves. The stage's timeout is judged as for an inline
 * stage, on the stage's own run time: a stage that waited for a lane thread for a quarter of its timeout is taken
 * back and run on a {@code bulk-overflow-N} thread, so a saturated lane never turns into timeouts (with
 * {@code fail_open}: unscanned bodies) and never puts a scan on a carrier. The stages are bounded by their input, so
 * a lane thread is never stuck.
 *
 * <p>Deadline: wherever it runs (a lane thread, or an overflow thread), the stage's thread is interrupted
 * once the stage has run for its timeout ({@link StageDeadlines}); a stage that checks its interrupt status stops
 * there, and the run is {@linkplain Ran#overran() overran} whatever it returned or threw. A lane thread is thus held
 * for about the stage's timeout at most, however costly the body, and a caller interrupted while waiting interrupts
 * the stage too.
 */
public final class BulkLane implements AutoCloseable {
    /** The body size from which a bounded built-in stage runs on the lane: 128 KiB. */
    public static final int DEFAULT_THRESHOLD_BYTES = 128 * 1024;
    private static final int QUEUE = 4096;
    private static final int FREE = 0;
    private static final int LANE = 1;
    private static final int CALLER = 2;

    private final ThreadPoolExecutor executor;
    private final long thresholdBytes;
    private final StageDeadlines deadlines = new StageDeadlines();
    private static final java.util.concurrent.ThreadFactory OVERFLOW = Thread.ofPlatform().name("bulk-overflow-", 0)
            .daemon(true).inheritInheritableThreadLocals(false).factory();

    private BulkLane(int threads, long thresholdBytes) {
        this.thresholdBytes = thresholdBytes;
        this.executor = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(QUEUE), Thread.ofPlatform().name("bulk-stage-", 0).daemon(true)
                        .inheritInheritableThreadLocals(false).factory(),
                new ThreadPoolExecutor.AbortPolicy());
        executor.allowCoreThreadTimeOut(true);
    }

    /**
     * {@return a lane}
     *
     * @param threads its platform threads, at least 1
     * @param thresholdBytes the body size from which a stage takes the lane, in bytes; at least 0
     * @throws IllegalArgumentException when a value is out of range
     */
    public static BulkLane create(int threads, long thresholdBytes) {
        if (threads < 1 || thresholdBytes < 0) {
            throw new IllegalArgumentException("a bulk lane needs at least one thread and a threshold of 0 or more");
        }
        return new BulkLane(threads, thresholdBytes);
    }

    /** {@return a lane with the defaults: one thread per available processor (at least 2), 128 KiB} */
    public static BulkLane create() {
        return create(Math.max(2, Runtime.getRuntime().availableProcessors()), DEFAULT_THRESHOLD_BYTES);
    }

    /** {@return whether a stage on a body of {@code bodyBytes} bytes takes this lane} @param bodyBytes the size */
    boolean takes(long bodyBytes) {
        return bodyBytes >= thresholdBytes;
    }

    /**
     * What a stage run on the lane returned, with its own run time (not counting its wait in the queue).
     *
     * @param value the stage's value; {@code null} when it overran
     * @param runNanos how long the stage itself ran, in nanoseconds
     * @param overran whether it ran past its timeout and was interrupted there (what it returned or threw is
     *     discarded)
     */
    record Ran<T>(T value, long runNanos, boolean overran) {
    }

    /**
     * Runs {@code call} on a lane thread and waits for it. A call that has not started within {@code startMillis}
     * (every lane thread busy with earlier calls) is taken back and run on a platform thread of its own instead
     * ({@link #overflow}), so the wait for the lane never makes a stage late; a call that has started is waited for to
     * its end, which its deadline bounds. When the queue is full, or the lane is closed, it runs there at once.
     *
     * @param call the stage
     * @param startMillis how long the call may wait for a lane thread, in milliseconds
     * @param timeoutMillis the stage's timeout, in milliseconds of its own run time: its thread is interrupted then
     * @return its value and its run time, or that it overran
     * @throws Exception what {@code call} threw before its deadline
     * @throws InterruptedException when the caller was interrupted while waiting (a call not started yet is
     *     cancelled; a running one is interrupted, its result discarded)
     */
    <T> Ran<T> run(Callable<T> call, long startMillis, long timeoutMillis) throws Exception {
        // who runs the call: a lane thread or the caller, whichever claims it first (a FutureTask's cancel cannot
        // tell a running task from a queued one: the call would run twice, once abandoned on the lane)
        AtomicInteger claim = new AtomicInteger(FREE);
        FutureTask<Ran<T>> task = new FutureTask<>(
                () -> claim.compareAndSet(FREE, LANE) ? watched(call, timeoutMillis) : null);
        try {
            executor.execute(task);
        } catch (RejectedExecutionException full) {
            return overflow(call, timeoutMillis);
        }
        try {
            return task.get(startMillis, TimeUnit.MILLISECONDS);
        } catch (TimeoutException late) {
            if (claim.compareAndSet(FREE, CALLER)) {
                task.cancel(false);
                return overflow(call, timeoutMillis); // never started: the lane is saturated
            }
            return await(task);
        } catch (InterruptedException e) {
            task.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            throw unwrapped(e);
        }
    }

    /**
     * Runs {@code call} on a platform thread of its own and waits for it: the lane is saturated (or its queue full).
     * On the caller's virtual thread the scan would hold a carrier for up to its timeout, and with as many such scans
     * as carriers every other request of the proxy, {@code /health/live} included, would wait behind them; a platform
     * thread is time-sliced against the carriers instead. How many run at once is bounded by the proxy's middleware
     * work bound (32 by default). When no thread can be started, the call runs on the caller's thread.
     */
    private <T> Ran<T> overflow(Callable<T> call, long timeoutMillis) throws Exception {
        FutureTask<Ran<T>> task = new FutureTask<>(() -> watched(call, timeoutMillis));
        try {
            OVERFLOW.newThread(task).start();
        } catch (OutOfMemoryError cannotStart) { // "unable to create native thread"
            return watched(call, timeoutMillis);
        }
        return await(task);
    }

    /** {@return the task's result, waited for to its end} the caller's interrupt interrupts the task too */
    private static <T> Ran<T> await(FutureTask<Ran<T>> task) throws Exception {
        try {
            return task.get();
        } catch (InterruptedException e) {
            task.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            throw unwrapped(e);
        }
    }

    private static Exception unwrapped(ExecutionException e) {
        Throwable cause = e.getCause();
        if (cause instanceof Exception ex) {
            return ex;
        }
        if (cause instanceof Error err) {
            throw err;
        }
        return e;
    }

    /** Runs {@code call} on this thread under a deadline {@code timeoutMillis} from now. */
    private <T> Ran<T> watched(Callable<T> call, long timeoutMillis) throws Exception {
        StageDeadlines.Watch watch = deadlines.arm(timeoutMillis);
        long start = System.nanoTime();
        T value;
        try {
            value = call.call();
        } catch (Exception | Error e) {
            if (watch.disarm()) {
                return new Ran<>(null, System.nanoTime() - start, true); // what it threw once interrupted
            }
            throw e;
        }
        boolean overran = watch.disarm();
        return new Ran<>(overran ? null : value, System.nanoTime() - start, overran);
    }

    /** Stops the threads once their tasks end; later stages run on overflow threads. */
    @Override
    public void close() {
        executor.shutdown();
        deadlines.close();
    }
}
