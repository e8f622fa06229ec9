package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.EnvelopeLimits;
import java.net.InetAddress;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The proxy-wide budget of request-body bytes held in memory for middleware at one time, with a share per client
 * address (issue 18, "Fairness for the body budget").
 *
 * <p>A request whose chain needs its body reserves the heap the body will take (segmented, see
 * {@link dev.openshell.middleware.spi.Body#heapBytes(long)}: its {@code Content-Length}, or the chain's body cap for
 * a chunked body, plus about 0.03 % of array headers; the unused part returned once the body is read) before reading
 * it, and gives the
 * reservation back when its exchange ends. One client address may hold at most its share of the budget
 * ({@code body_buffer_client_share_percent}, at least one largest body); a request over its client's share is
 * answered {@code 503 client_body_buffer_limit} at once, without waiting and without its body being read, so one
 * sandbox's uploads never make another's wait. A request within its share that cannot reserve within the wait bound is
 * answered {@code 503 body_buffer_busy}; bodies no chain needs are streamed and never reserve anything. The budget
 * bounds heap use under many concurrent uploads (each buffered body may also have one replacement of similar size
 * from a stage, so plan about twice the budget of heap). Waiters are served in arrival order (a fair semaphore), so a
 * large body is not starved by small ones.
 */
public final class BodyBudget {
    /** The default share of the budget one client address may hold, in percent. */
    public static final int DEFAULT_CLIENT_SHARE_PERCENT = 25;

    private final int totalBytes;
    private final int clientShareBytes;
    private final Duration maxWait;
    private final Semaphore permits;
    private final ConcurrentHashMap<InetAddress, Integer> perClient = new ConcurrentHashMap<>();

    /**
     * A budget with the default client share ({@value #DEFAULT_CLIENT_SHARE_PERCENT} percent).
     *
     * @param totalBytes the budget, in bytes; at least 1
     * @param maxWait how long a request may wait for room; zero refuses at once
     * @throws IllegalArgumentException when {@code totalBytes} is below 1 or {@code maxWait} is negative
     */
    public BodyBudget(long totalBytes, Duration maxWait) {
        this(totalBytes, maxWait, DEFAULT_CLIENT_SHARE_PERCENT);
    }

    /**
     * @param totalBytes the budget, in bytes; at least 1
     * @param maxWait how long a request may wait for room; zero refuses at once
     * @param clientSharePercent the share one client address may hold, 1 to 100 percent of {@code totalBytes}; never
     *     less than the heap of one body of {@link EnvelopeLimits#MAX_BODY_BYTES} (or the whole budget, if smaller)
     * @throws IllegalArgumentException when a value is out of range
     */
    public BodyBudget(long totalBytes, Duration maxWait, int clientSharePercent) {
        if (totalBytes < 1 || totalBytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("body buffer budget " + totalBytes + " bytes is outside 1.."
                    + Integer.MAX_VALUE);
        }
        if (maxWait.isNegative()) {
            throw new IllegalArgumentException("the body buffer wait must not be negative");
        }
        if (clientSharePercent < 1 || clientSharePercent > 100) {
            throw new IllegalArgumentException("body buffer client share " + clientSharePercent
                    + " % is outside 1..100");
        }
        this.totalBytes = (int) totalBytes;
        this.clientShareBytes = (int) Math.max(Math.min(totalBytes,
                dev.openshell.middleware.spi.Body.heapBytes(EnvelopeLimits.MAX_BODY_BYTES)),
                totalBytes * clientSharePercent / 100);
        this.maxWait = maxWait;
        this.permits = new Semaphore(this.totalBytes, true);
    }

    /** {@return the budget, in bytes} */
    public int totalBytes() {
        return totalBytes;
    }

    /** {@return the most one client address may hold, in bytes} */
    public int clientShareBytes() {
        return clientShareBytes;
    }

    /** {@return the bytes not reserved at this moment} */
    public int availableBytes() {
        return permits.availablePermits();
    }

    /** {@return the bytes {@code client} holds at this moment} @param client a client address */
    int heldBy(InetAddress client) {
        return perClient.getOrDefault(client, 0);
    }

    /**
     * What {@link #reserve} got.
     *
     * @param reservation the reservation, or {@code null} when refused
     * @param refusal {@code client_body_buffer_limit} or {@code body_buffer_busy} when refused, else {@code null}
     * @param waitedNanos how long the request waited for room, in nanoseconds
     */
    record Claim(Reservation reservation, String refusal, long waitedNanos) {
    }

    /**
     * Reserves room for a body, waiting at most the configured bound, unless {@code client} would hold more than its
     * share.
     *
     * @param bytes the size to reserve, in bytes; more than the whole budget is reserved as the whole budget (the
     *     request then waits until it is alone)
     * @param client the client address; {@code null} when unknown (counted in the total only)
     * @return the claim; never {@code null}
     * @throws InterruptedException if the waiting thread is interrupted
     */
    Claim reserve(long bytes, InetAddress client) throws InterruptedException {
        int n = (int) Math.max(0, Math.min(bytes, totalBytes));
        if (n == 0) {
            return new Claim(new Reservation(0, null), null, 0);
        }
        if (client != null && clientShareBytes < totalBytes && !claimShare(client, n)) {
            return new Claim(null, "client_body_buffer_limit", 0);
        }
        long start = System.nanoTime();
        boolean got = false;
        try {
            got = permits.tryAcquire(n, maxWait.toNanos(), TimeUnit.NANOSECONDS);
        } finally {
            if (!got && client != null && clientShareBytes < totalBytes) {
                releaseShare(client, n);
            }
        }
        long waited = System.nanoTime() - start;
        return got ? new Claim(new Reservation(n, client), null, waited) : new Claim(null, "body_buffer_busy", waited);
    }

    /** {@return whether {@code client} could add {@code n} bytes within its share (then they are added)} */
    private boolean claimShare(InetAddress client, int n) {
        boolean[] over = new boolean[1];
        perClient.compute(client, (k, held) -> {
            int h = held == null ? 0 : held;
            if ((long) h + n > clientShareBytes) {
                over[0] = true;
                return held;
            }
            return h + n;
        });
        return !over[0];
    }

    private void releaseShare(InetAddress client, int n) {
        perClient.computeIfPresent(client, (k, held) -> held - n <= 0 ? null : held - n);
    }

    /** Reserved bytes; {@link #close()} gives back what is still held. Used by one thread. */
    final class Reservation implements AutoCloseable {
        private final InetAddress client;
        private int held;

        private Reservation(int held, InetAddress client) {
            this.held = held;
            this.client = client;
        }

        /** Gives back the part of the reservation above {@code bytes} (a chunked body smaller than its cap). */
        void shrinkTo(long bytes) {
            int keep = (int) Math.max(0, Math.min(bytes, held));
            giveBack(held - keep);
            held = keep;
        }

        private void giveBack(int n) {
            if (n > 0) {
                if (client != null && clientShareBytes < totalBytes) {
                    releaseShare(client, n);
                }
                permits.release(n);
            }
        }

        @Override
        public void close() {
            giveBack(held);
            held = 0;
        }
    }
}
