package dev.openshell.supervisor.proxy.internal;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A deadline for reading one whole part of a request: the head from its first byte ({@code request_head_timeout}),
 * or a body buffered for the chain from its first byte ({@code body_buffer_timeout}). A client that trickles (a byte
 * every few seconds, each read well inside any per-read timeout) cannot hold its connection, its head buffer or its
 * body buffer reservation past it. On expiry a watchdog thread answers {@code 408} with the reason as error code
 * (outside a TLS tunnel: the reading thread writes nothing while it reads, and no response has begun), closes the
 * connection and counts the refusal. Exactly one of {@link #finish()} and the expiry wins.
 */
final class ReadDeadline {
    private static final ScheduledThreadPoolExecutor WATCHDOG = watchdog();
    private final AtomicBoolean done = new AtomicBoolean();
    private final ScheduledFuture<?> task;

    private ReadDeadline(Duration timeout, Runnable onExpiry) {
        this.task = WATCHDOG.schedule(() -> {
            if (done.compareAndSet(false, true)) {
                onExpiry.run();
            }
        }, timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Starts the deadline for the head about to be read on {@code client}. */
    static ReadDeadline head(ProxyCore core, ClientStream client, boolean inTunnel) {
        return start(core, client, inTunnel, core.limits().requestHeadTimeout(), "request_head_timeout",
                "the request head was not complete in time");
    }

    /** Starts the deadline for a body about to be buffered for the chain. */
    static ReadDeadline body(ProxyCore core, ClientStream client, boolean inTunnel) {
        return start(core, client, inTunnel, core.limits().bodyBufferTimeout(), "body_buffer_timeout",
                "the request body was not complete in time");
    }

    private static ReadDeadline start(ProxyCore core, ClientStream client, boolean inTunnel, Duration timeout,
                                      String reason, String detail) {
        return new ReadDeadline(timeout, () -> {
            core.report(dev.openshell.supervisor.proxy.ProxyRefusal.Kind.LIMIT, inTunnel ? 0 : 408, reason,
                    java.util.Optional.empty(), detail, client.connection, java.util.Optional.empty(),
                    java.util.Optional.empty(), java.util.Optional.empty());
            if (!inTunnel) {
                try {
                    client.send(ErrorResponses.response(408, reason, detail, true));
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
