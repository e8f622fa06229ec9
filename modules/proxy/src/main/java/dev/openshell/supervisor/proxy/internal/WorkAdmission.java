package dev.openshell.supervisor.proxy.internal;

import java.net.InetAddress;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The bound on middleware work evaluated at once: requests whose buffered body (or head) is being evaluated by the
 * request chain, with their post-credentials stages, as OpenShell bounds middleware work
 * ({@code MAX_CONCURRENT_MIDDLEWARE_WORK}, 32 running, and {@code MAX_QUEUED_MIDDLEWARE_WORK}, 64 waiting).
 *
 * <p>A request takes one permit after its body is buffered (the body buffer budget bounds the memory of bodies being
 * read; this bounds the evaluation) and gives it back once its stages have run, before it is forwarded. When every
 * permit is taken it waits in a bounded queue; when the queue is full too it is <em>shed</em>: answered {@code 503
 * middleware_admission_exhausted} with {@code Retry-After}, never evaluated. Waiters are served round-robin over client
 * addresses (in arrival order within one address), so one address with many waiting requests does not delay another
 * address's single request behind all of them. Requests that need no evaluation (no stage, no body-aware L7 rule)
 * never take a permit.
 *
 * <p>Thread-safe. Waiting virtual threads unmount (a {@link ReentrantLock}).
 */
public final class WorkAdmission {
    /** OpenShell's {@code MAX_CONCURRENT_MIDDLEWARE_WORK}: evaluations running at once. */
    public static final int DEFAULT_RUNNING = 32;
    /** OpenShell's {@code MAX_QUEUED_MIDDLEWARE_WORK}: evaluations waiting for a permit. */
    public static final int DEFAULT_QUEUED = 64;
    /** The {@code Retry-After} of a shed request, in seconds. */
    public static final int RETRY_AFTER_SECONDS = 1;

    private final int maxRunning;
    private final int maxQueued;
    private final ReentrantLock lock = new ReentrantLock();
    /** The waiters by client address ({@code null} for an unknown address); the first key is served next. */
    private final LinkedHashMap<InetAddress, ArrayDeque<Waiter>> waiting = new LinkedHashMap<>();
    private int running;
    private int queued;

    /** One waiting request: granted by the releasing thread, under the lock. */
    private static final class Waiter {
        final Condition granted;
        boolean admitted;

        Waiter(Condition granted) {
            this.granted = granted;
        }
    }

    /**
     * @param maxRunning evaluations at once, 1 to 65536
     * @param maxQueued evaluations waiting for a permit, 0 to 65536 (0 sheds as soon as every permit is taken)
     * @throws IllegalArgumentException when a number is out of range
     */
    public WorkAdmission(int maxRunning, int maxQueued) {
        if (maxRunning < 1 || maxRunning > 65536 || maxQueued < 0 || maxQueued > 65536) {
            throw new IllegalArgumentException("middleware work bound " + maxRunning + " running, " + maxQueued
                    + " queued is out of range (1..65536 running, 0..65536 queued)");
        }
        this.maxRunning = maxRunning;
        this.maxQueued = maxQueued;
    }

    /** {@return the evaluations that may run at once} */
    public int maxRunning() {
        return maxRunning;
    }

    /** {@return the evaluations that may wait} */
    public int maxQueued() {
        return maxQueued;
    }

    /** {@return the evaluations holding a permit now} */
    int running() {
        lock.lock();
        try {
            return running;
        } finally {
            lock.unlock();
        }
    }

    /** {@return the evaluations waiting now} */
    int queued() {
        lock.lock();
        try {
            return queued;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes a permit, waiting in the queue while every permit is taken.
     *
     * @param client the client address, for round-robin among waiters; {@code null} when unknown
     * @return the permit to close once the stages have run, or {@code null} when shed (permits and queue full)
     * @throws InterruptedException if interrupted while waiting (nothing is then held)
     */
    Permit acquire(InetAddress client) throws InterruptedException {
        lock.lock();
        try {
            if (running < maxRunning && queued == 0) {
                running++;
                return new Permit();
            }
            if (queued >= maxQueued) {
                return null;
            }
            Waiter w = new Waiter(lock.newCondition());
            waiting.computeIfAbsent(client, k -> new ArrayDeque<>()).add(w);
            queued++;
            try {
                while (!w.admitted) {
                    w.granted.await();
                }
            } catch (InterruptedException e) {
                if (w.admitted) {
                    grantNext(); // the permit it was handed goes to the next waiter
                } else {
                    remove(client, w);
                }
                throw e;
            }
            return new Permit();
        } finally {
            lock.unlock();
        }
    }

    /** Hands a freed permit to the next waiter (round-robin over addresses), or frees it (under the lock). */
    private void grantNext() {
        Iterator<Map.Entry<InetAddress, ArrayDeque<Waiter>>> it = waiting.entrySet().iterator();
        if (!it.hasNext()) {
            running--;
            return;
        }
        Map.Entry<InetAddress, ArrayDeque<Waiter>> first = it.next();
        InetAddress client = first.getKey();
        ArrayDeque<Waiter> queue = first.getValue();
        Waiter next = queue.poll();
        it.remove();
        if (!queue.isEmpty()) {
            waiting.put(client, queue); // to the back: the other addresses' first waiters go before its next one
        }
        queued--;
        next.admitted = true;
        next.granted.signal();
    }

    private void remove(InetAddress client, Waiter w) {
        ArrayDeque<Waiter> queue = waiting.get(client);
        if (queue != null && queue.remove(w)) {
            queued--;
            if (queue.isEmpty()) {
                waiting.remove(client);
            }
        }
    }

    /** One evaluation's permit; {@link #close()} gives it back (once). Used by one thread. */
    final class Permit implements AutoCloseable {
        private boolean held = true;

        private Permit() {
        }

        @Override
        public void close() {
            if (held) {
                held = false;
                lock.lock();
                try {
                    grantNext();
                } finally {
                    lock.unlock();
                }
            }
        }
    }
}
