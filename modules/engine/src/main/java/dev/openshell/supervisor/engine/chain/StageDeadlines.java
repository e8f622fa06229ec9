package dev.openshell.supervisor.engine.chain;

import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Interrupts the thread that runs an in-process stage when the stage's timeout has passed, so a stage that checks its
 * thread's interrupt status (the built-in {@code openshell/regex} does, every 64 KiB it reads) stops at its deadline
 * instead of running its scan to the end and being judged late afterwards (attacker passes 17b to 17e: a 4 MB body
 * dense with references scanned for 1.4 to 2.2 s against a 500 ms timeout, holding a lane thread all along).
 *
 * <p>Shape: one daemon platform thread named {@code stage-deadline}, which only interrupts; a watch costs a scheduled
 * task (a few microseconds), which is why only the stages on the {@link BulkLane} (bodies of 128 KiB or more) are
 * watched: below that a scan lasts milliseconds at most.
 *
 * <p>The interrupt is the watch's own business: {@link Watch#disarm} waits until an interrupt in flight has landed and
 * clears it, so it never reaches the stage's next work (a lane thread's next task, the request thread's next read).
 * An interrupt the thread received from elsewhere in the same instant is cleared with it; the stage is then judged
 * late, which is what the deadline said anyway.
 */
final class StageDeadlines implements AutoCloseable {
    private final ScheduledThreadPoolExecutor timer;

    StageDeadlines() {
        timer = new ScheduledThreadPoolExecutor(1, Thread.ofPlatform().name("stage-deadline").daemon(true)
                .inheritInheritableThreadLocals(false).factory());
        timer.setRemoveOnCancelPolicy(true);
        timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /**
     * {@return a watch that interrupts the calling thread once {@code timeoutMillis} have passed, unless disarmed
     * first} After {@link #close()} the watch never fires.
     *
     * @param timeoutMillis the stage's timeout, in milliseconds, from now
     */
    Watch arm(long timeoutMillis) {
        Watch w = new Watch(Thread.currentThread());
        try {
            w.task = timer.schedule(w, timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closed) {
            w.state.set(Watch.DONE);
        }
        return w;
    }

    /** Stops the timer thread; watches armed later never fire. */
    @Override
    public void close() {
        timer.shutdownNow();
    }

    /** One stage run's deadline. */
    static final class Watch implements Runnable {
        private static final int RUNNING = 0;
        private static final int DONE = 1;
        private static final int FIRING = 2;
        private static final int FIRED = 3;

        private final Thread thread;
        private final AtomicInteger state = new AtomicInteger(RUNNING);
        private volatile Future<?> task;

        private Watch(Thread thread) {
            this.thread = thread;
        }

        @Override
        public void run() {
            if (state.compareAndSet(RUNNING, FIRING)) {
                thread.interrupt();
                state.set(FIRED);
            }
        }

        /**
         * Ends the watch; call it on the watched thread when the stage has returned or thrown.
         *
         * @return whether the deadline passed first (the thread was interrupted for it, and its interrupt status is
         *     now clear again)
         */
        boolean disarm() {
            if (state.compareAndSet(RUNNING, DONE)) {
                Future<?> t = task;
                if (t != null) {
                    t.cancel(false);
                }
                return false;
            }
            if (state.get() == DONE) {
                return false; // never armed: the timer was closed
            }
            while (state.get() != FIRED) {
                Thread.onSpinWait(); // the interrupt is being delivered: at most a few instructions
            }
            Thread.interrupted();
            return true;
        }
    }
}
