package dev.openshell.supervisor.identity;

import java.io.IOException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One expensive read shared by every caller waiting when it starts: {@link #after} returns a value computed by a run
 * that started at or after the caller's own start, running it only when no such run has finished or is about to.
 * A burst of callers therefore costs one run per run-duration, and no caller gets a value older than its request.
 * Thread-safe.
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
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition finished = lock.newCondition();
    private Run<T> last;
    private boolean running;
    private long runs;

    SingleFlight(Read<T> read) {
        this.read = read;
    }

    /**
     * {@return a value from a run that started at or after {@code since}}
     *
     * @param since {@link System#nanoTime()} when the caller's request started
     * @throws IOException if this caller's run failed
     */
    T after(long since) throws IOException {
        long start;
        lock.lock();
        try {
            while (true) {
                if (last != null && last.startedNanos() - since >= 0) {
                    return last.value();
                }
                if (!running) {
                    running = true;
                    start = System.nanoTime();
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
            return run.value();
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
