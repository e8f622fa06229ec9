package dev.openshell.supervisor.proxy.internal;

import java.time.Duration;

/** Idle and drain bookkeeping for one client connection, read by Helidon's idle-timeout and shutdown handling. */
final class ConnectionState {
    private volatile boolean busy;
    private volatile boolean draining;
    private volatile long lastActivity = System.nanoTime();
    /** Whether the proxy ends the connection while the client may still be sending ({@link LingeringClose}). */
    private volatile boolean linger;
    /** The thread draining the connection on its own ({@link LingeringClose#cutOff}), or {@code null}. */
    private volatile Thread drainer;

    /** Waiting for the next request head (idle, may be closed by shutdown or the idle timeout). */
    void waiting() {
        busy = false;
        lastActivity = System.nanoTime();
    }

    /** {@return false when the connection is draining and must not start a request} */
    boolean startRequest() {
        busy = true;
        return !draining;
    }

    void endRequest() {
        lastActivity = System.nanoTime();
    }

    boolean isBusy() {
        return busy;
    }

    boolean draining() {
        return draining;
    }

    void drain() {
        draining = true;
    }

    Duration idleTime() {
        return busy ? Duration.ZERO : Duration.ofNanos(System.nanoTime() - lastActivity);
    }

    /**
     * Notes that the proxy ends the connection with an answer or a close frame while the client may still be
     * sending: it is closed through {@link LingeringClose}, not at once.
     */
    void lingerOnClose() {
        linger = true;
    }

    /** {@return whether the connection is to close through {@link LingeringClose}} */
    boolean lingers() {
        return linger;
    }

    /** Notes the thread that drains the connection on its own ({@link LingeringClose#cutOff}). */
    void drainer(Thread t) {
        drainer = t;
    }

    /** {@return the thread that drains the connection on its own, or {@code null}: the session's thread drains} */
    Thread drainer() {
        return drainer;
    }
}
