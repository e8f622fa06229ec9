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
     */
    void emit(JsonObject event);

    /**
     * Waits, bounded, until the events the calling thread emitted are written (the proxy calls it before it writes
     * to or closes a client connection, so that what the thread sends next never precedes them). The default returns
     * at once: for a sink whose {@link #emit} writes before it returns, or one that keeps nothing.
     */
    default void awaitOwn() {
    }

    /** Flushes and releases resources; later events are dropped. */
    @Override
    void close();

    /** {@return a sink that drops everything} */
    static AuditSink discard() {
        return new AuditSink() {
            @Override
            public void emit(JsonObject event) {
            }

            @Override
            public void close() {
            }
        };
    }
}
