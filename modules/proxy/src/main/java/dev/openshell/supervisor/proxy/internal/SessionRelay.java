package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.SessionEndReason;
import dev.openshell.supervisor.proxy.MessageSession;
import dev.openshell.supervisor.proxy.MessageSession.Direction;
import dev.openshell.supervisor.proxy.WebSocketMessages;
import java.io.IOException;
import java.io.OutputStream;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Relays a WebSocket session whose messages go through the middleware message chain ({@link MessageSession}) and,
 * toward the upstream, the L7 message rules ({@link WebSocketMessages}): each direction on its own thread, parsed by
 * {@link MessageRelay} when a stage reads it (or its frames must be refused), copied byte for byte otherwise. The
 * first direction to end decides the session's end: a close with a status (1008 for a denial, 1002, 1007, 1009)
 * sends a close frame with it to both peers (masked toward the upstream) and closes both connections; the session's
 * streams then hear {@code session_end} with the reason ({@link #reason}). However the upstream's side ends, the
 * client's side ends through {@link UpgradeRelay#endClient}: a close frame, then a lingering close while the client
 * may still be sending.
 */
final class SessionRelay {
    private final ClientStream client;
    private final UpstreamPool.Connection upstream;
    private final Optional<WebSocketMessages> l7;
    private final MessageSession session;
    private final SecureRandom maskKeys;
    private final AtomicReference<SessionEndReason> first = new AtomicReference<>();
    /** What the server's messages are scrubbed of, or {@code null} ({@link ScrubbedMessages}). */
    private final ResponseScrub scrub;
    /** The upstream read side's idle limit (restored after a wait for held messages). */
    private final Duration idle;
    /** The body budget each direction's held messages are reserved from. */
    private final MessageMemory memory;
    /** Runs the backstop of a lingering close ({@link LingeringClose#lingerOnClose}). */
    private final java.util.concurrent.ScheduledExecutorService timer;
    /** What each peer is written through: the close frames land between frames ({@link FrameSink}). */
    private final UpgradeRelay.Sides sides;

    private SessionRelay(ClientStream client, UpstreamPool.Connection upstream, Optional<WebSocketMessages> l7,
                         MessageSession session, SecureRandom maskKeys, ResponseScrub scrub, Duration idle,
                         MessageMemory memory, java.util.concurrent.ScheduledExecutorService timer) {
        this.client = client;
        this.timer = timer;
        this.memory = memory;
        this.idle = idle;
        this.maskKeys = maskKeys;
        this.scrub = scrub;
        this.upstream = upstream;
        this.l7 = l7;
        this.session = session;
        this.sides = UpgradeRelay.Sides.framed(client, upstream);
    }

    /**
     * Relays until either side ends, then closes both and ends the session.
     *
     * @param client the client side
     * @param c the upstream connection, after its 101
     * @param idle the idle limit of the upstream read side
     * @param l7 the L7 rules on the client's text messages, when the endpoint is {@code protocol: websocket}
     * @param session the message chain
     * @param maskKeys the masking keys of the close frame toward the upstream
     * @param scrub what the server's messages are scrubbed of before the chain reads them, or {@code null}
     * @param memory the body budget every message held is reserved from; without room the session closes with
     *     1013 and ends with {@code CANCELLATION}
     * @param timer runs the backstop of a lingering close after the proxy closes the client's side with a status
     */
    static void relay(ClientStream client, UpstreamPool.Connection c, Duration idle, Optional<WebSocketMessages> l7,
                      MessageSession session, SecureRandom maskKeys, ResponseScrub scrub, MessageMemory memory,
                      java.util.concurrent.ScheduledExecutorService timer) {
        c.readTimeout(idle);
        new SessionRelay(client, c, l7, session, maskKeys, scrub, idle, memory, timer).run();
    }

    private void run() {
        Thread up = Thread.ofVirtual().name("proxy-ws-up").start(() -> direction(Direction.TO_UPSTREAM));
        direction(Direction.TO_CLIENT);
        try {
            up.join(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        SessionEndReason r = first.get();
        session.end(r == null ? SessionEndReason.CANCELLATION : r);
    }

    private void direction(Direction d) {
        boolean toUpstream = d == Direction.TO_UPSTREAM;
        WebSocketFrames.Ended ended;
        try {
            ended = relay(d);
        } catch (IOException e) {
            ended = new WebSocketFrames.Ended(-1, "the connection failed");
        }
        first.compareAndSet(null, reason(d, ended));
        // one direction at a time: the other one's end (caused by this one's close frame) must not close the
        // connections before both close frames are written
        synchronized (this) {
            // every refusal's line (recorded where it was decided, or by the relay: WebSocketCloses) before the
            // close frames
            client.connection.auditBarrier().await();
            if (ended.closeStatus() > 0) {
                ProxyCore.LOG.log(System.Logger.Level.DEBUG, "WebSocket closed with {0}: {1}",
                        ended.closeStatus(), ended.reason());
                if (toUpstream) {
                    // the proxy closed the client's side (1013, 1008, ...): the client may still be sending frames,
                    // so the connection closes through LingeringClose once the session ends (or at its backstop)
                    LingeringClose.lingerOnClose(client, timer);
                    UpgradeRelay.Sides.close(sides.toClient(), WebSocketFrames.closeFrame(ended.closeStatus()));
                }
                UpgradeRelay.Sides.close(sides.toUpstream(),
                        WebSocketFrames.maskedCloseFrame(ended.closeStatus(), maskKeys));
            }
            if (toUpstream) {
                if (ended.closeStatus() > 0) {
                    upstream.close(); // ends the other direction
                } else {
                    // the client's close frame or end (the upstream answers it), or a failed connection (the
                    // upstream's, often: what it sent before its end still reaches the client): the other direction
                    // ends with the upstream's stream and then ends the client's side (UpgradeRelay.endClient),
                    // within UpgradeRelay.UPSTREAM_CLOSING
                    upstream.shutdownOutput();
                    UpgradeRelay.boundUpstreamEnd(upstream, timer);
                }
                return;
            }
            upstream.close();
            UpgradeRelay.endClient(client, sides,
                    ended.closeStatus() > 0 ? ended.closeStatus() : WebSocketFrames.GOING_AWAY, timer);
            if (!client.state.lingers()) {
                client.closer.run();
            }
        }
    }

    /**
     * Relays one direction until it ends; after the upstream's close frame, waits for the upstream to end its
     * connection, so that the client's answering close frame reaches it (RFC 6455, section 7.1.1: the server closes
     * the TCP connection first).
     */
    private WebSocketFrames.Ended relay(Direction d) throws IOException {
        boolean toUpstream = d == Direction.TO_UPSTREAM;
        HttpInput from = toUpstream ? client.in : upstream.in();
        OutputStream to = toUpstream ? sides.toUpstream() : sides.toClient();
        WebSocketFrames.Ended ended;
        if (!toUpstream && scrub != null) {
            ScrubbedMessages scrubbed = new ScrubbedMessages(scrub, session.inspects(d) ? policy(d) : null);
            from.silence(scrubbed.silence(upstream, to, idle));
            ended = MessageRelay.relay(from, to, false, scrubbed, memory.direction());
            from.silence(null);
            scrubbed.ended(ended);
        } else if (session.inspects(d) || (toUpstream && l7.isPresent())) {
            ended = MessageRelay.relay(from, to, toUpstream, policy(d), memory.direction());
        } else {
            from.transferToEnd(to); // flushes after every read
            return new WebSocketFrames.Ended(0, "the stream ended");
        }
        if (!toUpstream && ended.closeStatus() == 0 && ended.reason().endsWith("closed the connection")) {
            try {
                from.transferToEnd(OutputStream.nullOutputStream()); // nothing after a close frame reaches the client
            } catch (IOException e) {
                // the upstream's connection failed after its close frame: the close stands
            }
        }
        return ended;
    }

    /** {@return the session end a direction's end means} */
    private SessionEndReason reason(Direction d, WebSocketFrames.Ended e) {
        return switch (e.closeStatus()) {
            case 0 -> e.reason().endsWith("closed the connection") ? SessionEndReason.NORMAL
                    : d == Direction.TO_UPSTREAM ? SessionEndReason.DOWNSTREAM_DISCONNECT
                    : SessionEndReason.UPSTREAM_DISCONNECT;
            case -1 -> d == Direction.TO_UPSTREAM ? SessionEndReason.DOWNSTREAM_DISCONNECT
                    : SessionEndReason.UPSTREAM_DISCONNECT;
            case WebSocketFrames.TRY_AGAIN_LATER -> SessionEndReason.CANCELLATION;
            case WebSocketFrames.POLICY_VIOLATION -> e.reason().startsWith("a text message was denied")
                    ? SessionEndReason.MIDDLEWARE_DENIAL : SessionEndReason.POLICY_DENIAL;
            default -> SessionEndReason.PROTOCOL_ERROR;
        };
    }

    /** The message policy of one direction: the L7 rules first (toward the upstream), then the chain. */
    private MessageRelay.Policy policy(Direction d) {
        return new MessageRelay.Policy() {
            @Override
            public MessageRelay.Outcome text(String message) {
                if (d == Direction.TO_UPSTREAM && l7.isPresent()) {
                    boolean allowed = l7.get().allow(message);
                    client.connection.auditBarrier().await();
                    if (!allowed) {
                        first.compareAndSet(null, SessionEndReason.POLICY_DENIAL);
                        return MessageRelay.Outcome.closeSession();
                    }
                }
                if (!session.inspects(d)) {
                    return new MessageRelay.Outcome(false, message, false);
                }
                MessageSession.Verdict v = session.text(d, message);
                client.connection.auditBarrier().await();
                return v.forward() ? new MessageRelay.Outcome(false, v.text(), v.replaced())
                        : MessageRelay.Outcome.closeSession();
            }

            @Override
            public boolean uninspectedAllowed() {
                return !session.inspects(d) || session.uninspected(d);
            }

            /**
             * A close frame ends the session normally, decided before the frame goes on: the peer it reaches may
             * drop its connection at once, and that end must not race this one to name the reason.
             */
            @Override
            public byte[] control(int opcode, byte[] payload) {
                if (opcode == 8) {
                    first.compareAndSet(null, SessionEndReason.NORMAL);
                }
                return payload;
            }
        };
    }
}
