package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.EnvelopeLimits;
import java.net.InetAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.OptionalLong;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The proxy-wide budget of request-body bytes held in memory for middleware at one time, with a share per client
 * address (issue 18, "Fairness for the body budget").
 *
 * <p>A request whose chain needs its body reserves the heap the body will take (segmented, see
 * {@link dev.openshell.middleware.spi.Body#heapBytes(long)}: its {@code Content-Length}, or the chain's body cap for
 * a chunked body, plus about 0.03 % of array headers; the unused part returned once the body is read) before reading
 * it, and gives the reservation back when its exchange ends. Bodies no chain needs are streamed and never reserve
 * anything. The budget bounds heap use under many concurrent uploads (each buffered body may also have one
 * replacement of similar size from a stage, so plan about twice the budget of heap).
 *
 * <p>Two bounds, one wait ({@code body_buffer_wait}, for both together):
 * <ol>
 *   <li>One client address holds at most its share ({@code body_buffer_client_share_percent}, at least one largest
 *       body). A request that would take its client over the share waits, without its body being read and without
 *       holding any of the budget, until that client's own earlier bodies give back enough; past the wait it is
 *       answered {@code 503 client_body_buffer_limit}. So one sandbox's uploads queue behind each other and never
 *       hold more than the share, and another address always finds the rest of the budget.</li>
 *   <li>Then the proxy-wide budget: waiters are served in arrival order (a fair semaphore), so a large body is not
 *       starved by small ones; past the wait: {@code 503 body_buffer_busy}.</li>
 * </ol>
 *
 * <p>Fairness within one address: a request that would take its address over its share is tied to its process (the
 * owner lookup, only then), and each process of the address may hold, beyond the address's share, the heap of one
 * largest body ({@link EnvelopeLimits#MAX_BODY_BYTES}) of its own. So one process that fills its address's share does
 * not make the address's other processes wait behind its uploads; it gets that one body more itself, then waits.
 */
public final class BodyBudget {
    /** The default share of the budget one client address may hold, in percent. */
    public static final int DEFAULT_CLIENT_SHARE_PERCENT = 25;

    private final int totalBytes;
    private final int clientShareBytes;
    /** What one process of an address may hold beyond the address's share: the heap of one largest body. */
    private final int processBytes;
    private static final long NO_PID = -1;
    private static final long REFUSED = -2;
    private final Duration maxWait;
    private final Semaphore permits;
    /** Guards {@link #perClient}; each client's waiters wait on its own condition. */
    private final ReentrantLock shareLock = new ReentrantLock();
    private final HashMap<InetAddress, Share> perClient = new HashMap<>();
    private static final long BUSY_WARNING_NANOS = 10_000_000_000L;
    /** When the last "budget full" warning was logged ({@link System#nanoTime()}). */
    private final java.util.concurrent.atomic.AtomicLong lastBusyWarning =
            new java.util.concurrent.atomic.AtomicLong(System.nanoTime() - 2 * BUSY_WARNING_NANOS);

    /** What one client address holds and how many of its requests wait for its share. */
    private static final class Share {
        final Condition freed;
        int held;
        int waiters;
        /** Bytes held beyond the share, by process (PID). */
        final HashMap<Long, Integer> beyond = new HashMap<>();

        Share(Condition freed) {
            this.freed = freed;
        }
    }

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
        this.processBytes = (int) Math.min(totalBytes, dev.openshell.middleware.spi.Body.heapBytes(
                EnvelopeLimits.MAX_BODY_BYTES));
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
        shareLock.lock();
        try {
            Share share = perClient.get(client);
            return share == null ? 0 : share.held;
        } finally {
            shareLock.unlock();
        }
    }

    /** {@return how many requests of {@code client} wait for room in its share now} @param client an address */
    int waitingFor(InetAddress client) {
        shareLock.lock();
        try {
            Share share = perClient.get(client);
            return share == null ? 0 : share.waiters;
        } finally {
            shareLock.unlock();
        }
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
     * Reserves room for a body, waiting at most the configured bound in all: first for room in {@code client}'s
     * share, then for room in the budget.
     *
     * @param bytes the size to reserve, in bytes; more than the whole budget is reserved as the whole budget (the
     *     request then waits until it is alone)
     * @param client the client address; {@code null} when unknown (counted in the total only)
     * @return the claim; never {@code null}
     * @throws InterruptedException if the waiting thread is interrupted
     */
    Claim reserve(long bytes, InetAddress client) throws InterruptedException {
        return reserve(bytes, client, OptionalLong::empty);
    }

    /**
     * As {@link #reserve(long, InetAddress)}, with the process of the request's connection for the room one process
     * may hold beyond its address's share.
     *
     * @param bytes the size to reserve, in bytes
     * @param client the client address; {@code null} when unknown
     * @param owner the PID of the process behind the request's connection, empty when not found; asked only when
     *     the request would take its address over its share, never under a lock (it may block)
     * @return the claim; never {@code null}
     * @throws InterruptedException if the waiting thread is interrupted
     */
    Claim reserve(long bytes, InetAddress client, Supplier<OptionalLong> owner) throws InterruptedException {
        int n = (int) Math.max(0, Math.min(bytes, totalBytes));
        if (n == 0) {
            return new Claim(new Reservation(0, null, NO_PID), null, 0);
        }
        long start = System.nanoTime();
        long deadline = start + maxWait.toNanos();
        boolean shared = client != null && clientShareBytes < totalBytes;
        long pid = NO_PID;
        if (shared) {
            pid = claimShare(client, n, deadline, owner);
            if (pid == REFUSED) {
                return new Claim(null, "client_body_buffer_limit", System.nanoTime() - start);
            }
        }
        boolean got = false;
        try {
            got = permits.tryAcquire(n, Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } finally {
            if (!got && shared) {
                releaseShare(client, pid, n);
            }
        }
        long waited = System.nanoTime() - start;
        if (!got) {
            warnBusy();
            return new Claim(null, "body_buffer_busy", waited);
        }
        return new Claim(new Reservation(n, shared ? client : null, pid), null, waited);
    }

    /** Logs that the budget stayed full, at most every 10 s: the operator's cue to raise it (or the heap). */
    private void warnBusy() {
        long now = System.nanoTime();
        long last = lastBusyWarning.get();
        if (now - last > BUSY_WARNING_NANOS && lastBusyWarning.compareAndSet(last, now)) {
            System.getLogger("dev.openshell.supervisor.proxy").log(System.Logger.Level.WARNING, "requests refused"
                    + " with 503: the body buffer budget of " + totalBytes + " bytes stayed full (raise"
                    + " body_buffer_budget_bytes, or the heap); logged at most every 10 s");
        }
    }

    /**
     * Takes {@code n} bytes for {@code client}: from its share, or, over the share, from the room of the request's
     * process beyond it; waits until {@code deadline} for either.
     *
     * @return {@link #NO_PID} when taken from the share, the PID when taken beyond it, {@link #REFUSED} when neither
     *     had room before the deadline
     */
    private long claimShare(InetAddress client, int n, long deadline, Supplier<OptionalLong> owner)
            throws InterruptedException {
        OptionalLong pid = null; // looked up once, outside the lock, the first time the share is full
        while (true) {
            shareLock.lock();
            try {
                Share share = perClient.computeIfAbsent(client, k -> new Share(shareLock.newCondition()));
                try {
                    while (true) {
                        if ((long) share.held + n <= clientShareBytes) {
                            share.held += n;
                            return NO_PID;
                        }
                        if (pid == null) {
                            break; // look the process up without the lock, then check again
                        }
                        if (pid.isPresent() && (long) share.beyond.getOrDefault(pid.getAsLong(), 0) + n
                                <= processBytes) {
                            share.beyond.merge(pid.getAsLong(), n, Integer::sum);
                            return pid.getAsLong();
                        }
                        long left = deadline - System.nanoTime();
                        if (left <= 0) {
                            return REFUSED;
                        }
                        share.waiters++;
                        try {
                            share.freed.awaitNanos(left);
                        } finally {
                            share.waiters--;
                        }
                    }
                } finally {
                    forgetIfIdle(client, share);
                }
            } finally {
                shareLock.unlock();
            }
            pid = ownerOf(owner);
        }
    }

    private static OptionalLong ownerOf(Supplier<OptionalLong> owner) {
        try {
            OptionalLong pid = owner.get();
            return pid == null ? OptionalLong.empty() : pid;
        } catch (RuntimeException e) {
            return OptionalLong.empty();
        }
    }

    private void releaseShare(InetAddress client, long pid, int n) {
        shareLock.lock();
        try {
            Share share = perClient.get(client);
            if (share == null) {
                return;
            }
            if (pid == NO_PID) {
                share.held = Math.max(0, share.held - n);
            } else {
                share.beyond.computeIfPresent(pid, (k, v) -> v - n <= 0 ? null : v - n);
            }
            if (share.waiters > 0) {
                share.freed.signalAll(); // waiters of different sizes: each checks whether it fits now
            }
            forgetIfIdle(client, share);
        } finally {
            shareLock.unlock();
        }
    }

    /** Drops a client's entry once it holds nothing and nobody waits on it (called under {@link #shareLock}). */
    private void forgetIfIdle(InetAddress client, Share share) {
        if (share.held == 0 && share.waiters == 0 && share.beyond.isEmpty()) {
            perClient.remove(client, share);
        }
    }

    /** Reserved bytes; {@link #close()} gives back what is still held. Used by one thread. */
    final class Reservation implements AutoCloseable {
        private final InetAddress client;
        private final long pid;
        private int held;

        private Reservation(int held, InetAddress client, long pid) {
            this.held = held;
            this.client = client;
            this.pid = pid;
        }

        /** Gives back the part of the reservation above {@code bytes} (a chunked body smaller than its cap). */
        void shrinkTo(long bytes) {
            int keep = (int) Math.max(0, Math.min(bytes, held));
            giveBack(held - keep);
            held = keep;
        }

        private void giveBack(int n) {
            if (n > 0) {
                if (client != null) {
                    releaseShare(client, pid, n);
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
