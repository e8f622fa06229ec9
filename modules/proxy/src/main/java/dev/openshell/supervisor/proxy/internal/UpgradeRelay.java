package dev.openshell.supervisor.proxy.internal;

import java.io.IOException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import dev.openshell.supervisor.proxy.WebSocketMessages;

/**
 * Relays bytes both ways between the client and an upstream connection until either side ends: after a
 * {@code 101 Switching Protocols} to a WebSocket upgrade (RFC 6455), and for a {@code tls: skip} tunnel (whose client
 * socket closes at once at the end). Frames are relayed without inspection ({@link #relay}), except on an L7
 * {@code protocol: websocket} endpoint ({@link #relayInspected}), where the client's frames are parsed and each text
 * message is held until the L7 policy allows it ({@link WebSocketFrames}). Server-to-client bytes are relayed
 * untouched, except after an upgrade whose response is scrubbed ({@link ResponseScrub}): then each server message is
 * parsed by {@link MessageRelay} and scrubbed ({@link ScrubbedMessages}).
 */
final class UpgradeRelay {
    private UpgradeRelay() {
    }

    /**
     * Relays an opaque {@code tls: skip} tunnel until either side closes, then closes both at once; its bytes are not
     * frames.
     *
     * @param client the client side
     * @param c the upstream connection
     * @param idle the idle limit of the upstream read side
     */
    static void relay(ClientStream client, UpstreamPool.Connection c, Duration idle) {
        relay(client, c, idle, new Sides(client.out, c.out()), null, null, MessageMemory.unbounded(), null);
    }

    /**
     * Relays a WebSocket session until either side closes, then closes both; the server's messages are scrubbed when
     * {@code toClient} is given. The client's side ends as {@link #endClient} says.
     *
     * @param client the client side
     * @param c the upstream connection
     * @param idle the idle limit of the upstream read side
     * @param toClient scrubs the server's messages, or {@code null} to relay its bytes untouched
     * @param maskKeys the masking keys of a close frame toward the upstream; needed with {@code toClient}
     * @param memory the body budget the scrubbed server messages are held in
     * @param timer runs the bounds of a lingering close of the client's side
     */
    static void relay(ClientStream client, UpstreamPool.Connection c, Duration idle, ScrubbedMessages toClient,
                      SecureRandom maskKeys, MessageMemory memory, ScheduledExecutorService timer) {
        // the sinks tell whether a peer's close frame passed; bytes copied untouched are followed, not held, and the
        // proxy's close frame goes only at a frame boundary ({@link FrameSink})
        Sides sides = toClient == null ? new Sides(new FrameSink(client.out, true), new FrameSink(c.out(), true))
                : Sides.framed(client, c);
        relay(client, c, idle, sides, toClient, maskKeys, memory, timer);
    }

    private static void relay(ClientStream client, UpstreamPool.Connection c, Duration idle, Sides sides,
                              ScrubbedMessages toClient, SecureRandom maskKeys, MessageMemory memory,
                              ScheduledExecutorService timer) {
        c.readTimeout(idle);
        Thread toUpstream = Thread.ofVirtual().name("proxy-relay-up").start(() -> {
            try {
                client.in.transferToEnd(sides.toUpstream());
            } catch (IOException e) {
                // either side closed
            } finally {
                c.shutdownOutput();
                boundUpstreamEnd(c, timer);
            }
        });
        finish(client, c, toUpstream, new AtomicInteger(), toClient, maskKeys, idle, memory, sides, timer);
    }

    /**
     * What each peer is written through: for a WebSocket session the proxy may close with a status, a
     * {@link FrameSink} each, so its close frames land between frames; the raw streams otherwise.
     */
    record Sides(java.io.OutputStream toClient, java.io.OutputStream toUpstream) {
        static Sides framed(ClientStream client, UpstreamPool.Connection c) {
            return new Sides(new FrameSink(client.out), new FrameSink(c.out()));
        }

        /** Writes the proxy's close frame to a peer, at a frame boundary when the side is framed. */
        static void close(java.io.OutputStream side, byte[] closeFrame) {
            if (side instanceof FrameSink s) {
                s.closeWith(closeFrame);
                return;
            }
            synchronized (side) {
                try {
                    side.write(closeFrame);
                    side.flush();
                } catch (IOException ignored) {
                    // the peer is gone
                }
            }
        }
    }

    /**
     * Relays a WebSocket connection whose client text messages the L7 policy decides on, until either side closes,
     * then closes both. When the client breaks RFC 6455 (1002, 1007, 1009) or the policy refuses a message (1008),
     * the supervisor sends a close frame with that status to the upstream (masked) and, once the upstream side has
     * stopped, to the client (unmasked), and closes both; the refused message never reaches the upstream.
     *
     * @param client the client side
     * @param c the upstream connection
     * @param idle the idle limit of the upstream read side
     * @param messages decides on each complete client text message ({@code false} closes with 1008); every other
     *     close the supervisor makes is recorded by the relay ({@link WebSocketCloses})
     * @param maskKeys the masking keys of the close frame toward the upstream
     * @param toClient scrubs the server's messages, or {@code null} to relay its bytes untouched
     * @param memory the body budget every message held is reserved from; without room the session closes with
     *     1013 (the refusal is reported by {@code memory})
     * @param timer runs the backstop of a lingering close after the proxy closes the client's side with a status
     */
    static void relayInspected(ClientStream client, UpstreamPool.Connection c, Duration idle,
                               WebSocketMessages messages, SecureRandom maskKeys, ScrubbedMessages toClient,
                               MessageMemory memory, ScheduledExecutorService timer) {
        c.readTimeout(idle);
        AtomicInteger closeStatus = new AtomicInteger();
        Sides sides = Sides.framed(client, c);
        Thread toUpstream = Thread.ofVirtual().name("proxy-relay-ws").start(() -> {
            try {
                // after each decision, its audit line is written before the message (or the close) goes on
                WebSocketFrames.Ended ended = MessageRelay.relay(client.in, sides.toUpstream(), true,
                        new MessageRelay.Policy() {
                    @Override
                    public MessageRelay.Outcome text(String message) {
                        boolean allowed = messages.allow(message);
                        client.connection.auditBarrier().await();
                        return allowed ? new MessageRelay.Outcome(false, message, false)
                                : MessageRelay.Outcome.closeSession();
                    }

                    @Override
                    public boolean uninspectedAllowed() {
                        return true; // L7 rules read text messages only; binary and control frames pass
                    }
                }, memory.direction());
                if (ended.closeStatus() != 0) {
                    client.connection.auditBarrier().await(); // the refusal's line before the close frames
                    LingeringClose.lingerOnClose(client, timer); // the client may still be sending
                    closeStatus.set(ended.closeStatus());
                    ProxyCore.LOG.log(System.Logger.Level.DEBUG, "WebSocket closed with {0}: {1}",
                            ended.closeStatus(), ended.reason());
                    Sides.close(sides.toUpstream(), WebSocketFrames.maskedCloseFrame(ended.closeStatus(), maskKeys));
                    c.close(); // ends the upstream-to-client side, which then sends the client its close frame
                }
            } catch (IOException e) {
                // either side closed
            } finally {
                c.shutdownOutput();
                boundUpstreamEnd(c, timer);
            }
        });
        finish(client, c, toUpstream, closeStatus, toClient, maskKeys, idle, memory, sides, timer);
    }

    /**
     * Relays upstream-to-client until the end (scrubbed with {@code toClient} when given), then closes both sides;
     * sends the client a close frame first when the client-to-upstream side ended with a status. When the scrubbed
     * server side ends with a status (1002, 1009), both peers get a close frame with it. Any other end of the
     * upstream side ends the client's side through {@link #endClient}. Held server messages go to the client after
     * {@link ResponseScrub#SILENCE_MILLIS} ms without upstream bytes.
     */
    private static void finish(ClientStream client, UpstreamPool.Connection c, Thread toUpstream,
                               AtomicInteger closeStatus, ScrubbedMessages toClient, SecureRandom maskKeys,
                               Duration idle, MessageMemory memory, Sides sides, ScheduledExecutorService timer) {
        try {
            if (toClient == null) {
                c.in().transferToEnd(sides.toClient());
            } else {
                c.in().silence(toClient.silence(c, sides.toClient(), idle));
                WebSocketFrames.Ended ended = MessageRelay.relay(c.in(), sides.toClient(), false, toClient,
                        memory.direction());
                c.in().silence(null);
                toClient.ended(ended);
                if (ended.closeStatus() == 0 && ended.reason().endsWith("closed the connection")) {
                    // nothing after the server's close frame reaches the client (RFC 6455, section 5.5.1); waiting
                    // for the server to end lets the client's answering close frame reach it
                    c.in().transferToEnd(java.io.OutputStream.nullOutputStream());
                }
                if (ended.closeStatus() > 0 && closeStatus.compareAndSet(0, ended.closeStatus())) {
                    client.connection.auditBarrier().await(); // the refusal's line before the close frames
                    ProxyCore.LOG.log(System.Logger.Level.DEBUG, "WebSocket closed with {0}: {1}",
                            ended.closeStatus(), ended.reason());
                    Sides.close(sides.toUpstream(), WebSocketFrames.maskedCloseFrame(ended.closeStatus(), maskKeys));
                }
            }
        } catch (IOException e) {
            // either side closed
        } finally {
            try {
                sides.toClient().flush();
            } catch (IOException ignored) {
                // client gone
            }
            // the client side sets its status before it closes the upstream connection, which ended this side
            endClient(client, sides, closeStatus.get() != 0 ? closeStatus.get() : WebSocketFrames.GOING_AWAY, timer);
            c.close();
            if (!client.state.lingers()) {
                client.closer.run(); // ends the client-to-upstream side too
            }
        }
        joinQuietly(toUpstream);
    }

    /**
     * How long the upstream has to end its connection once the client's side of a WebSocket session ended (its close
     * frame or its stream passed toward the upstream): RFC 6455 section 7.1.1 has the server close the TCP connection
     * first, once both close frames passed. A server that keeps it open is closed after this, instead of holding the
     * session, its relay threads and its session slot to the upstream read timeout (5 minutes by default).
     */
    static final Duration UPSTREAM_CLOSING = Duration.ofSeconds(10);

    /**
     * Closes the upstream connection {@link #UPSTREAM_CLOSING} after the client's side of a WebSocket session ended,
     * unless it ended before (closing twice is harmless). Not for an opaque {@code tls: skip} tunnel ({@code timer} is
     * {@code null} there): a half-closed connection may still carry a long answer.
     *
     * @param c the upstream connection
     * @param timer the proxy's timer, or {@code null}
     */
    static void boundUpstreamEnd(UpstreamPool.Connection c, ScheduledExecutorService timer) {
        if (timer != null) {
            timer.schedule(c::close, UPSTREAM_CLOSING.toNanos(), TimeUnit.NANOSECONDS);
        }
    }

    /**
     * Ends the client's side of a WebSocket session once its upstream side ended, whatever ended it: the upstream's
     * close frame and the end of its connection, the end or failure of its connection without a close frame, or a
     * close with a status the proxy made on either side. First the client gets a close frame (RFC 6455, sections
     * 5.5.1 and 7.1.1) unless one reached it already (the upstream's, or the proxy's own): {@code status}, the
     * proxy's status when it closed the session, else {@link WebSocketFrames#GOING_AWAY} (the upstream's connection
     * ended or failed without a close frame); a client that does not read has {@link LingeringClose#WEBSOCKET_BACKSTOP}
     * to take it.
     * Then, when the client may still be sending (neither its close frame passed toward the upstream nor its stream
     * ended), its reads are cut off and the connection closes through a drain of what it still sends
     * ({@link LingeringClose#cutOff}), so that no TCP reset discards the close frame or the frames before it; the
     * caller leaves the socket to it ({@link ConnectionState#lingers}). Otherwise, or when the connection lingers
     * already (the proxy closed the client's side with a status: {@link LingeringClose#lingerOnClose}), nothing more
     * happens here. An opaque tunnel's sides are not framed: nothing happens here either.
     *
     * <p>When part of a frame already went to the client (a frame longer than {@link FrameSink#HOLD}; on a session
     * copied byte for byte, any frame), no close frame can follow it ({@link FrameSink#closeWith}): the client's
     * endpoint then sees the connection fail (1006, RFC 6455 section 7.1.5), which section 7.1.7 allows.
     *
     * @param client the client side
     * @param sides the session's sides
     * @param status the close status the client gets when no close frame reached it (the proxy's, or 1001)
     * @param timer runs the backstop of the close frame's write and the drain's bounds
     */
    static void endClient(ClientStream client, Sides sides, int status, ScheduledExecutorService timer) {
        if (!(sides.toClient() instanceof FrameSink toClient) || timer == null) {
            return;
        }
        if (!toClient.ended()) {
            ScheduledFuture<?> backstop = timer.schedule(client.closer,
                    LingeringClose.WEBSOCKET_BACKSTOP.toNanos(), TimeUnit.NANOSECONDS);
            try {
                if (!toClient.closeWith(WebSocketFrames.closeFrame(status))) {
                    ProxyCore.LOG.log(System.Logger.Level.DEBUG, "WebSocket closed without a close frame to the"
                            + " client: it is gone, or the bytes relayed to it end inside a frame");
                }
            } finally {
                backstop.cancel(false);
            }
        }
        boolean clientDone = client.in.atEnd()
                || sides.toUpstream() instanceof FrameSink up && up.closeRelayed();
        if (!clientDone && !client.state.lingers()) {
            LingeringClose.cutOff(client, timer);
        }
    }

    private static void joinQuietly(Thread t) {
        try {
            t.join(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
