package dev.openshell.supervisor.proxy.internal;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A deadline for reading one whole part of a request: the head from its first byte ({@code request_head_timeout}),
 * or a body buffered for the chain from its first byte ({@code body_buffer_timeout}). A client that trickles (a byte
 * every few seconds, each read well inside any per-read timeout) cannot hold its connection, its head buffer or its
 * body buffer reservation past it. On expiry a watchdog thread counts the refusal and answers {@code 408} with the
 * reason as error code (outside a TLS tunnel: the reading thread writes nothing while it reads, and no response has
 * begun); the connection then closes through {@link LingeringClose#cutOff} (the reads of the request are cut off and
 * what the client still sends is drained, so the answer is not lost to a reset). Inside a tunnel it closes at once,
 * unanswered. Exactly one of {@link #finish()} and the expiry wins.
 *
 * <p>A body (buffered or streamed) also has a minimum data rate ({@code body_min_bytes_per_second}): once its grace
 * period (5 s by default) has passed, the bytes received since its read began must average at least that rate over
 * the time after the grace, checked every second (or every grace period, if shorter); a body below it is answered {@code 408 body_min_rate} the same way. A trickle (slowloris) is so cut
 * after about the grace period instead of at the whole-body deadline, while a client that sends at the rate or faster
 * never meets it.
 */
final class ReadDeadline {
    private static final long CHECK_NANOS = TimeUnit.SECONDS.toNanos(1);
    private final AtomicBoolean done = new AtomicBoolean();
    private final ScheduledFuture<?> task;
    private final ScheduledFuture<?> rateCheck;

    private ReadDeadline(ScheduledThreadPoolExecutor watchdog, Duration timeout, Runnable onExpiry) {
        this(watchdog, timeout, onExpiry, null, 0, null, null);
    }

    /**
     * @param timeout the whole deadline, or {@code null} for none
     * @param in the stream whose received bytes are measured, or {@code null} for no minimum rate
     * @param minBytesPerSecond the minimum average rate; 0 for none
     */
    private ReadDeadline(ScheduledThreadPoolExecutor watchdog, Duration timeout, Runnable onExpiry, HttpInput in,
                         long minBytesPerSecond, Duration minRateGrace, Runnable onTooSlow) {
        this.task = timeout == null ? null : watchdog.schedule(() -> {
            if (done.compareAndSet(false, true)) {
                onExpiry.run();
            }
        }, timeout.toNanos(), TimeUnit.NANOSECONDS);
        if (in != null && minBytesPerSecond > 0) {
            long start = System.nanoTime();
            long startBytes = in.received();
            long grace = minRateGrace.toNanos();
            long period = Math.min(CHECK_NANOS, grace);
            this.rateCheck = watchdog.scheduleAtFixedRate(() -> {
                if (done.get()) {
                    throw new CancellationException("finished or expired"); // ends the periodic check
                }
                double seconds = (System.nanoTime() - start - grace) / 1e9;
                if (seconds > 0 && in.received() - startBytes < minBytesPerSecond * seconds
                        && done.compareAndSet(false, true)) {
                    if (task != null) {
                        task.cancel(false);
                    }
                    onTooSlow.run();
                    throw new CancellationException("the body was too slow"); // ends the periodic check
                }
            }, grace + period, period, TimeUnit.NANOSECONDS);
        } else {
            this.rateCheck = null;
        }
    }

    /** Starts the deadline for the head about to be read on {@code client}. */
    static ReadDeadline head(ProxyCore core, ClientStream client, boolean inTunnel) {
        return start(core, client, inTunnel, core.limits().requestHeadTimeout(), "request_head_timeout",
                "the request head was not complete in time");
    }

    /**
     * Starts the deadline for the client's TLS handshake inside a CONNECT tunnel, from its first byte: the head's
     * ({@code request_head_timeout_ms}), so a client that starts a handshake and stalls cannot hold its connection
     * and engine longer than one that stalls a head. Closed unanswered ({@code tls_handshake_timeout}).
     */
    static ReadDeadline handshake(ProxyCore core, ClientStream client) {
        return start(core, client, true, core.limits().requestHeadTimeout(), "tls_handshake_timeout",
                "the client TLS handshake was not complete in time");
    }

    /** Starts the deadline and the minimum data rate for a body about to be buffered for the chain. */
    static ReadDeadline body(ProxyCore core, ClientStream client, boolean inTunnel) {
        return new ReadDeadline(core.watchdog(), core.limits().bodyBufferTimeout(), expiry(core, client, inTunnel,
                "body_buffer_timeout", "the request body was not complete in time"), client.in,
                core.limits().bodyMinBytesPerSecond(), core.limits().bodyMinRateGrace(),
                tooSlow(core, client, inTunnel));
    }

    /**
     * Starts the minimum data rate for a body about to be streamed upstream (no whole deadline: a streamed body holds
     * no body buffer reservation, and the upstream paces it). Only while no response has begun.
     */
    static ReadDeadline streamed(ProxyCore core, ClientStream client, boolean inTunnel) {
        return new ReadDeadline(core.watchdog(), null, null, client.in, core.limits().bodyMinBytesPerSecond(),
                core.limits().bodyMinRateGrace(), tooSlow(core, client, inTunnel));
    }

    private static Runnable tooSlow(ProxyCore core, ClientStream client, boolean inTunnel) {
        return expiry(core, client, inTunnel, "body_min_rate", "the request body arrived slower than "
                + core.limits().bodyMinBytesPerSecond() + " bytes per second");
    }

    private static ReadDeadline start(ProxyCore core, ClientStream client, boolean inTunnel, Duration timeout,
                                      String reason, String detail) {
        return new ReadDeadline(core.watchdog(), timeout, expiry(core, client, inTunnel, reason, detail));
    }

    private static Runnable expiry(ProxyCore core, ClientStream client, boolean inTunnel, String reason,
                                   String detail) {
        return () -> {
            core.report(dev.openshell.supervisor.proxy.ProxyRefusal.Kind.LIMIT, inTunnel ? 0 : 408, reason,
                    java.util.Optional.empty(), detail, client.connection, java.util.Optional.empty(),
                    java.util.Optional.empty(), java.util.Optional.empty());
            if (inTunnel) {
                client.closer.run(); // nothing answered (the TLS engine is the reading thread's): nothing to lose
                return;
            }
            try {
                client.send(ErrorResponses.response(408, reason, detail, true));
            } catch (java.io.IOException | RuntimeException ignored) {
                // the client went away: the drain ends at once
            }
            // the client may still be sending the head or body: its bytes are drained, not read, and the connection
            // closes after them, so no reset discards the answer
            LingeringClose.cutOff(client, core.watchdog());
        };
    }

    /** {@return true when the head was read in time (the reader may go on), false when the deadline had expired} */
    boolean finish() {
        if (done.compareAndSet(false, true)) {
            if (task != null) {
                task.cancel(false);
            }
            if (rateCheck != null) {
                rateCheck.cancel(false);
            }
            return true;
        }
        return false;
    }

    /** {@return a new watchdog: one daemon platform thread, for one proxy} */
    static ScheduledThreadPoolExecutor watchdog() {
        ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "proxy-head-deadline");
            t.setDaemon(true);
            return t;
        });
        e.setRemoveOnCancelPolicy(true);
        return e;
    }
}
