package dev.openshell.supervisor.proxy.internal;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The deadline for reading one whole request head, counted from its first byte: a client that trickles a head (a
 * byte every few seconds, each read well inside any per-read timeout) cannot hold its connection and head buffer
 * past it. On expiry a watchdog thread answers {@code 408 request_head_timeout} (outside a TLS tunnel, where the
 * reading thread writes nothing while it reads a head), closes the connection and counts the refusal. Exactly one of
 * {@link #finish()} and the expiry wins.
 */
final class HeadDeadline {
    private static final ScheduledThreadPoolExecutor WATCHDOG = watchdog();
    private final AtomicBoolean done = new AtomicBoolean();
    private final ScheduledFuture<?> task;

    private HeadDeadline(Duration timeout, Runnable onExpiry) {
        this.task = WATCHDOG.schedule(() -> {
            if (done.compareAndSet(false, true)) {
                onExpiry.run();
            }
        }, timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Starts the deadline for the head about to be read on {@code client}. */
    static HeadDeadline start(ProxyCore core, ClientStream client, boolean inTunnel) {
        return new HeadDeadline(core.limits().requestHeadTimeout(), () -> {
            core.limitRefused("request_head_timeout");
            if (!inTunnel) {
                try {
                    client.send(ErrorResponses.response(408, "request_head_timeout",
                            "the request head was not complete in time", true));
                } catch (java.io.IOException | RuntimeException ignored) {
                    // the client went away
                }
            }
            client.closer.run();
        });
    }

    /** {@return true when the head was read in time (the reader may go on), false when the deadline had expired} */
    boolean finish() {
        if (done.compareAndSet(false, true)) {
            task.cancel(false);
            return true;
        }
        return false;
    }

    private static ScheduledThreadPoolExecutor watchdog() {
        ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "proxy-head-deadline");
            t.setDaemon(true);
            return t;
        });
        e.setRemoveOnCancelPolicy(true);
        return e;
    }
}
