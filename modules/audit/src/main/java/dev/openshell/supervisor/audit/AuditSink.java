package dev.openshell.supervisor.audit;

import jakarta.json.JsonObject;

/**
 * Receives audit events. Implementations are thread-safe and never throw into the request path: a sink that cannot
 * write counts the loss and reports it in the log, once per failure streak.
 */
public interface AuditSink extends AutoCloseable {
    /**
     * Records one event.
     *
     * @param event an OCSF event built by {@link OcsfEvents}
     * @return the event's line sequence number, for {@link #awaitWritten}: positive and increasing in emit order;
     *     0 when there is nothing to wait for (the event was written before {@code emit} returned, dropped, or the
     *     sink keeps nothing)
     */
    long emit(JsonObject event);

    /**
     * Waits, bounded, until every line up to {@code sequence} is written (or dropped and counted): the proxy's
     * {@code AuditBarrier} calls it before it writes to or closes a client connection, so that what it sends next
     * never precedes the lines about that connection. The default returns at once: for a sink whose {@link #emit}
     * writes before it returns, or one that keeps nothing.
     *
     * @param sequence a sequence number {@link #emit} returned
     * @return {@code true} when written (or dropped); {@code false} when the wait timed out
     */
    default boolean awaitWritten(long sequence) {
        return true;
    }

    /** Flushes and releases resources; later events are dropped. */
    @Override
    void close();

    /** {@return a sink that drops everything} */
    static AuditSink discard() {
        return new AuditSink() {
            @Override
            public long emit(JsonObject event) {
                return 0;
            }

            @Override
            public void close() {
            }
        };
    }
}
