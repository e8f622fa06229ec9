package dev.openshell.supervisor.proxy.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The close of a client connection the proxy ends while the client may still be sending: an error answer (400, 413,
 * 502, ...) written before the request body was read, the read watchdog's {@code 408} ({@link ReadDeadline}: a head
 * or body past its deadline or under its minimum data rate, answered while the client is still sending it), a
 * WebSocket session the proxy closed with a status (1013, 1008, 1009, ...) while client frames were in flight, or a
 * WebSocket session whose server side ended (the upstream's close frame and end, its end or failure without one, a
 * stage's denial of a server message: {@link UpgradeRelay#endClient}) while the client may still be sending.
 * Closing a TCP socket with received data still unread makes the kernel send a reset (RFC 1122 section 4.2.2.13), and a reset can make the client's kernel discard the answer or the
 * close frame before the client reads it. So, as nginx's {@code lingering_close}: the answer is written and flushed,
 * then what the client still sends is read and discarded, then the socket is closed.
 *
 * <p>Bounds (a client cannot hold the connection, its thread or memory longer): the drain stops at the client's end
 * of stream, after {@value #MAX_BYTES} bytes, after {@link #QUIET} without a byte, or {@link #TIME} after it began,
 * whichever comes first; it reads into one buffer of {@value #BUFFER} bytes. A client still sending at the time or
 * byte bound may then get the reset: it had {@link #TIME} to stop. The socket's output is not shut down first
 * (Helidon's socket offers no half-close): the answer carries {@code Connection: close}, or the close frame ends the
 * session, so the client knows the proxy is done; inside an intercepted CONNECT the TLS {@code close_notify} is sent
 * first ({@link ConnectTunnel}).
 *
 * <p>Who drains: the session's thread once its session ended ({@link ConnectionState#lingerOnClose}, drained by the
 * connection), except after the watchdog's answer, when that thread may be blocked in a read of the client or a write
 * upstream: the watchdog then cuts the connection's reads off ({@link HttpInput#cutOff}: the session reads nothing
 * more of the request) and a thread of its own drains at once ({@link #cutOff}); the session's thread, when it ends,
 * waits for that drain. The same after the server side of a WebSocket session ended: the relay reading the client may
 * be blocked in that read, so its reads are cut off and a thread of its own drains ({@link #cutOff}, inside an
 * intercepted tunnel too: the raw TLS records). Inside a TLS tunnel the watchdog answers nothing and closes at once.
 */
final class LingeringClose {
    /** The longest drain, from its start. */
    static final Duration TIME = Duration.ofSeconds(2);
    /** The longest pause of the client's bytes the drain waits through. */
    static final Duration QUIET = Duration.ofMillis(500);
    /** The most bytes discarded. */
    static final long MAX_BYTES = 4L * 1024 * 1024;
    /** The drain's read buffer, in bytes. */
    static final int BUFFER = 8 * 1024;
    /**
     * How long after the proxy's own close frame a WebSocket connection is closed at the latest, drained or not: a
     * relay thread blocked writing to a client that does not read is then freed; a client reading the messages still
     * queued before the close frame has this long to read them.
     */
    static final Duration WEBSOCKET_BACKSTOP = Duration.ofSeconds(10);

    private LingeringClose() {
    }

    /**
     * Reads and discards what the client still sends, within the bounds of the class description; the caller closes
     * the socket afterwards (the bounds' timer may have closed it already).
     *
     * @param in the client connection's input (outside any TLS tunnel: the raw bytes)
     * @param timer runs the time and quiet checks
     * @param close closes the socket, which ends a read the drain is blocked in; called from the timer's thread
     * @return the bytes discarded
     */
    static long drain(HttpInput in, ScheduledExecutorService timer, Runnable close) {
        long start = System.nanoTime();
        AtomicLong seen = new AtomicLong(in.received());
        ScheduledFuture<?> check = timer.scheduleAtFixedRate(() -> {
            long now = in.received();
            if (System.nanoTime() - start >= TIME.toNanos() || seen.getAndSet(now) == now) {
                close.run(); // over time, or quiet: the blocked read ends
                throw new CancellationException("the drain ended"); // ends the periodic check
            }
        }, QUIET.toNanos(), QUIET.toNanos(), TimeUnit.NANOSECONDS);
        long total = 0;
        byte[] buf = new byte[BUFFER];
        try {
            while (total < MAX_BYTES) {
                int n = in.discard(buf, (int) Math.min(buf.length, MAX_BYTES - total));
                if (n < 0) {
                    break;
                }
                total += n;
            }
        } catch (IOException | UncheckedIOException e) {
            // closed by the check, or by the client
        } finally {
            check.cancel(false);
        }
        return total;
    }

    /**
     * Cuts the reads of a connection the proxy ends while another thread may be blocked reading it (the read
     * watchdog's answer; a WebSocket session whose upstream side ended, {@link UpgradeRelay#endClient}), and drains
     * it on a thread of its own, at once, within the bounds of the class description; then closes it. The session's
     * thread waits for that drain once its session ends ({@link ConnectionState#drainer}). A blocked read ends when
     * the client's next bytes arrive (they are dropped) or when the drain's bounds close the socket.
     *
     * @param client the client side; inside a TLS tunnel both the decrypted and the raw input are cut off and the
     *     raw bytes (the client's TLS records) are drained
     * @param timer runs the time and quiet checks
     */
    static void cutOff(ClientStream client, ScheduledExecutorService timer) {
        client.in.cutOff();
        client.raw.cutOff(); // inside a TLS tunnel: the records too, drained undecrypted
        client.state.lingerOnClose();
        client.state.drainer(Thread.ofVirtual().name("proxy-linger").start(() -> {
            drain(client.raw, timer, client.closer);
            client.closer.run();
        }));
    }

    /**
     * Ends a connection that lingers ({@link ConnectionState#lingers}) once its session ended: waits for the drain
     * already under way ({@link #cutOff}), or drains here; the caller closes the socket afterwards.
     *
     * @param in the connection's raw input
     * @param state the connection's state
     * @param timer runs the time and quiet checks
     * @param close closes the socket at once (from the timer's thread)
     */
    static void end(HttpInput in, ConnectionState state, ScheduledExecutorService timer, Runnable close) {
        Thread drainer = state.drainer();
        if (drainer == null) {
            drain(in, timer, close);
            return;
        }
        try {
            if (!drainer.join(TIME.plus(QUIET).plus(QUIET))) {
                close.run(); // the drain's own bounds failed to end it: never held longer
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            close.run();
        }
    }

    /**
     * Marks a WebSocket connection the proxy closed with a status of its own to close through {@link #drain} once its
     * session ends, and closes it anyway {@link #WEBSOCKET_BACKSTOP} later: a relay thread blocked writing to a
     * client that does not read is freed as a close at once would have freed it.
     *
     * @param client the client side
     * @param timer runs the backstop
     */
    static void lingerOnClose(ClientStream client, ScheduledExecutorService timer) {
        client.state.lingerOnClose();
        timer.schedule(client.closer, WEBSOCKET_BACKSTOP.toNanos(), TimeUnit.NANOSECONDS);
    }
}
