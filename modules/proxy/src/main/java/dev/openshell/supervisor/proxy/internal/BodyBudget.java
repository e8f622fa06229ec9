package dev.openshell.supervisor.proxy.internal;

import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The proxy-wide budget of request-body bytes held in memory for middleware at one time.
 *
 * <p>A request whose chain needs its body reserves the body's size (its {@code Content-Length}, or the chain's body
 * cap for a chunked body, the unused part returned once the body is read) before reading it, and gives the
 * reservation back when its exchange ends. A request that cannot reserve within the wait bound is answered
 * {@code 503 body_buffer_busy} without its body being read; bodies no chain needs are streamed and never reserve
 * anything. The budget bounds heap use under many concurrent uploads (each buffered body may also have one
 * replacement of similar size from a stage, so plan about twice the budget of heap). Waiters are served in arrival
 * order (a fair semaphore), so a large body is not starved by small ones.
 */
public final class BodyBudget {
    private final int totalBytes;
    private final Duration maxWait;
    private final Semaphore permits;

    /**
     * @param totalBytes the budget, in bytes; at least 1
     * @param maxWait how long a request may wait for room; zero refuses at once
     * @throws IllegalArgumentException when {@code totalBytes} is below 1 or {@code maxWait} is negative
     */
    public BodyBudget(long totalBytes, Duration maxWait) {
        if (totalBytes < 1 || totalBytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("body buffer budget " + totalBytes + " bytes is outside 1.."
                    + Integer.MAX_VALUE);
        }
        if (maxWait.isNegative()) {
            throw new IllegalArgumentException("the body buffer wait must not be negative");
        }
        this.totalBytes = (int) totalBytes;
        this.maxWait = maxWait;
        this.permits = new Semaphore(this.totalBytes, true);
    }

    /** {@return the budget, in bytes} */
    public int totalBytes() {
        return totalBytes;
    }

    /** {@return the bytes not reserved at this moment} */
    public int availableBytes() {
        return permits.availablePermits();
    }

    /**
     * Reserves room for a body, waiting at most the configured bound.
     *
     * @param bytes the size to reserve, in bytes; more than the whole budget is reserved as the whole budget (the
     *     request then waits until it is alone)
     * @return the reservation, or {@code null} when no room came free in time
     * @throws InterruptedException if the waiting thread is interrupted
     */
    Reservation reserve(long bytes) throws InterruptedException {
        int n = (int) Math.max(0, Math.min(bytes, totalBytes));
        if (n == 0) {
            return new Reservation(0);
        }
        if (!permits.tryAcquire(n, maxWait.toNanos(), TimeUnit.NANOSECONDS)) {
            return null;
        }
        return new Reservation(n);
    }

    /** Reserved bytes; {@link #close()} gives back what is still held. Used by one thread. */
    final class Reservation implements AutoCloseable {
        private int held;

        private Reservation(int held) {
            this.held = held;
        }

        /** Gives back the part of the reservation above {@code bytes} (a chunked body smaller than its cap). */
        void shrinkTo(long bytes) {
            int keep = (int) Math.max(0, Math.min(bytes, held));
            permits.release(held - keep);
            held = keep;
        }

        @Override
        public void close() {
            permits.release(held);
            held = 0;
        }
    }
}
