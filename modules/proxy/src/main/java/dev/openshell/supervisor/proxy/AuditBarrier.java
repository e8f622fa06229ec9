package dev.openshell.supervisor.proxy;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The audit lines emitted on behalf of one client connection, and a bounded wait for them to be written: the handle
 * an exchange carries so that what the proxy sends the client next never precedes the audit lines about it
 * ({@code docs/observability.md}, "Ordering"). Every connection has one ({@link ClientConnection#auditBarrier()});
 * the audit step notes the sequence number of each line it emits for that connection ({@link #emitted}), and the
 * proxy calls {@link #await()} before each write to the client socket and before closing it.
 *
 * <p>It replaces a per-thread mark: lines emitted for a connection on another thread (a watchdog answering a
 * deadline, the relay thread of a WebSocket session) hold back that connection's next write too. Thread-safe.
 */
public final class AuditBarrier {
    /**
     * The audit log's side: waits until its line with a sequence number is written.
     */
    @FunctionalInterface
    public interface Log {
        /**
         * Waits, bounded, until every line up to {@code sequence} has been handed to the operating system (or
         * dropped and counted).
         *
         * @param sequence the sequence number {@code emit} returned, positive
         * @return {@code true} when written (or dropped); {@code false} when the wait timed out
         */
        boolean awaitWritten(long sequence);
    }

    private static final AuditBarrier NONE = new AuditBarrier(sequence -> true);

    private final Log log;
    private final AtomicLong last = new AtomicLong();

    /**
     * A barrier over an audit log.
     *
     * @param log the log's wait
     * @throws NullPointerException if {@code log} is {@code null}
     */
    public AuditBarrier(Log log) {
        this.log = Objects.requireNonNull(log, "log");
    }

    /** {@return a barrier for a connection whose audit lines need no wait (tests, tools)} */
    public static AuditBarrier none() {
        return NONE;
    }

    /**
     * Notes a line emitted for this connection.
     *
     * @param sequence the line's sequence number; 0 (a sink that keeps nothing, or a dropped line) is ignored
     */
    public void emitted(long sequence) {
        if (this == NONE || sequence <= 0) {
            return;
        }
        last.accumulateAndGet(sequence, Math::max);
    }

    /**
     * Waits, bounded by the log, until every line noted so far is written. Cheap when there is nothing to wait for.
     * A line the wait timed out on (a stalled disk) is not waited for again, so each line holds the connection back
     * once, never once per write of a long response.
     */
    public void await() {
        long seq = last.get();
        if (seq <= 0) {
            return;
        }
        if (!log.awaitWritten(seq)) {
            last.compareAndSet(seq, 0);
        }
    }
}
