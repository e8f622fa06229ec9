package dev.openshell.supervisor.identity;

import java.io.IOException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * One expensive read shared by every caller waiting when it starts: {@link #after} returns a value computed by a run
 * that started at or after the caller's own start, running it only when no such run has finished or is about to.
 * A burst of callers therefore costs one run per run-duration, and no caller gets a value older than its request.
 * {@link #recent} also accepts an earlier run's value when it is young enough and holds what the caller needs (the
 * caller checks the value against the present itself). Times are {@link System#nanoTime()}. Thread-safe.
 *
 * @param <T> the value
 */
final class SingleFlight<T> {
    /** The computation. */
    @FunctionalInterface
    interface Read<T> {
        /** {@return the value} @throws IOException if it cannot be read */
        T read() throws IOException;
    }

    private record Run<T>(long startedNanos, T value) {
    }

    private final Read<T> read;
    private final LongSupplier clock;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition finished = lock.newCondition();
    private Run<T> last;
    private boolean running;
    private long runs;

    SingleFlight(Read<T> read) {
        this(read, System::nanoTime);
    }

    /**
     * @param read the computation
     * @param clock the time in nanoseconds, {@link System#nanoTime()} but in tests
     */
    SingleFlight(Read<T> read, LongSupplier clock) {
        this.read = read;
        this.clock = clock;
    }

    /** {@return the clock's time now, in nanoseconds} */
    long now() {
        return clock.getAsLong();
    }

    /**
     * {@return a value from a run that started at or after {@code since}}
     *
     * @param since {@link System#nanoTime()} when the caller's request started
     * @throws IOException if this caller's run failed
     */
    T after(long since) throws IOException {
        return recent(since, 0, v -> false).value();
    }

    /** A value and whether it came from a run that started before the caller did. */
    record Value<T>(T value, boolean earlier) {
    }

    /**
     * {@return a value from a run that started at or after {@code since}, or from an earlier run that started at most
     * {@code maxAgeNanos} ago and whose value {@code enough} accepts} A run in progress is waited for and then
     * offered to {@code enough} too; a new run is started only when neither will do.
     *
     * @param since {@link #now()} when the caller's request started
     * @param maxAgeNanos how old an earlier run may be, from its start; 0 accepts none
     * @param enough whether an earlier run's value answers the caller; called with the lock held, so it must be cheap
     * @throws IOException if this caller's run failed
     */
    Value<T> recent(long since, long maxAgeNanos, Predicate<T> enough) throws IOException {
        long start;
        lock.lock();
        try {
            while (true) {
                if (last != null && last.startedNanos() - since >= 0) {
                    return new Value<>(last.value(), false);
                }
                if (last != null && maxAgeNanos > 0 && clock.getAsLong() - last.startedNanos() <= maxAgeNanos
                        && enough.test(last.value())) {
                    return new Value<>(last.value(), true);
                }
                if (!running) {
                    running = true;
                    start = clock.getAsLong();
                    break;
                }
                finished.awaitUninterruptibly(); // the run in progress, or the next one, will do
            }
        } finally {
            lock.unlock();
        }
        Run<T> run = null;
        try {
            run = new Run<>(start, read.read());
            return new Value<>(run.value(), false);
        } finally {
            lock.lock();
            try {
                running = false;
                if (run != null) {
                    last = run;
                    runs++;
                }
                finished.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    /** {@return how many runs completed} */
    long runs() {
        lock.lock();
        try {
            return runs;
        } finally {
            lock.unlock();
        }
    }
}
