package dev.openshell.supervisor.grpc;

import dev.openshell.middleware.proto.v1.MiddlewareSessionEnd;
import dev.openshell.middleware.proto.v1.MiddlewareSessionEndReason;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewareGrpc;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewarePhase;
import dev.openshell.middleware.proto.v1.WebSocketSessionEvent;
import dev.openshell.middleware.proto.v1.WebSocketSessionEventResult;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.SessionEndReason;
import dev.openshell.middleware.spi.WebSocketMessage;
import dev.openshell.middleware.spi.WebSocketMessageResult;
import dev.openshell.middleware.spi.WebSocketPreflight;
import dev.openshell.middleware.spi.WebSocketPreflightDecision;
import dev.openshell.middleware.spi.WebSocketSession;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * One stage stream of {@code EvaluateWebSocketSession} (a bidirectional gRPC stream; RFC 0009 appendix "Additional
 * operation phases"): each SPI call sends one {@code WebSocketSessionEvent} and, for the preflight and each message,
 * waits for the service's one {@code WebSocketSessionEventResult}. The chain engine bounds each wait (it interrupts
 * the waiting thread). A result of the wrong kind, a stream error or an early end is a stage failure
 * ({@link MiddlewareException}); {@link #end} sends {@code session_end} and half-closes the stream. A preflight whose
 * stream failed on the transport before any answer is sent once more on a new stream ({@link #retryable}): an HTTP/2
 * server may reset the connection as the previous session's stream ends, failing the next stream in flight.
 */
final class GrpcWebSocketSession implements WebSocketSession {
    /** A result, or the stream's end ({@code error} set, possibly to an end-of-stream marker). */
    private record Received(WebSocketSessionEventResult result, Throwable error) {
    }

    private final String who;
    private final String middlewareName;
    private final ManagedChannel channel;
    /** The current stream's results; replaced with the stream when a preflight is retried. */
    private LinkedBlockingQueue<Received> results;
    private StreamObserver<WebSocketSessionEvent> events;
    private boolean ended;

    GrpcWebSocketSession(ManagedChannel channel, String middlewareName, String who) {
        this.who = who;
        this.middlewareName = middlewareName;
        this.channel = channel;
        openStream();
    }

    /** Opens a new {@code EvaluateWebSocketSession} stream whose results go to a queue of its own. */
    private synchronized void openStream() {
        LinkedBlockingQueue<Received> queue = new LinkedBlockingQueue<>();
        this.results = queue;
        this.events = SupervisorMiddlewareGrpc.newStub(channel).evaluateWebSocketSession(new StreamObserver<>() {
            @Override
            public void onNext(WebSocketSessionEventResult value) {
                queue.add(new Received(value, null));
            }

            @Override
            public void onError(Throwable t) {
                queue.add(new Received(null, t));
            }

            @Override
            public void onCompleted() {
                queue.add(new Received(null, new IllegalStateException("the service ended the stream")));
            }
        });
    }

    /**
     * {@return whether a preflight that failed with {@code error} is tried once more on a new stream} Only when the
     * transport failed before the service answered: {@code UNAVAILABLE} (a connection reset or refused stream, a
     * GOAWAY), {@code CANCELLED} by the peer, {@code INTERNAL} or {@code UNKNOWN} (an HTTP/2 stream reset). Nothing
     * but the preflight was sent, so the service has decided nothing; a status the service chose (denied,
     * unauthenticated, invalid) is not retried.
     */
    static boolean retryable(Throwable error) {
        if (!(error instanceof io.grpc.StatusRuntimeException) && !(error instanceof io.grpc.StatusException)) {
            return false; // the service completed the stream without answering: its own choice
        }
        io.grpc.Status.Code code = io.grpc.Status.fromThrowable(error).getCode();
        return code == io.grpc.Status.Code.UNAVAILABLE || code == io.grpc.Status.Code.CANCELLED
                || code == io.grpc.Status.Code.INTERNAL || code == io.grpc.Status.Code.UNKNOWN;
    }

    @Override
    public WebSocketPreflightDecision preflight(WebSocketPreflight p) {
        var t = p.target();
        var preflight = dev.openshell.middleware.proto.v1.WebSocketPreflight.newBuilder()
                .setSessionId(p.sessionId())
                .setPhase(p.phase() == Phase.PRE_RETURN ? SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_RETURN
                        : SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS)
                .setContext(ProtoTranslation.context(p.context()))
                .setTarget(dev.openshell.middleware.proto.v1.HttpRequestTarget.newBuilder().setScheme(t.scheme())
                        .setHost(t.host()).setPort(t.port()).setMethod("GET").setPath(t.path()).setQuery(""))
                .addAllRequestedSubprotocols(p.requestedSubprotocols())
                .setMiddlewareName(middlewareName)
                .setConfig(ProtoTranslation.config(p.config()))
                .build();
        WebSocketSessionEvent event = WebSocketSessionEvent.newBuilder().setPreflight(preflight).build();
        WebSocketSessionEventResult r;
        try {
            r = exchange(event);
        } catch (MiddlewareException e) {
            if (e.getCause() == null || !retryable(e.getCause()) || Thread.currentThread().isInterrupted()) {
                throw e;
            }
            openStream(); // the failed stream is over; its queue is dropped with it
            r = exchange(event);
        }
        if (!r.hasPreflightDecision()) {
            throw new MiddlewareException(StageFailureCodes.ADAPTER_FAILURE, who
                    + ": answered a preflight with a message result");
        }
        var d = r.getPreflightDecision();
        WebSocketPreflightDecision.Action action = switch (d.getAction()) {
            case WEB_SOCKET_PREFLIGHT_ACTION_INSPECT -> WebSocketPreflightDecision.Action.INSPECT;
            case WEB_SOCKET_PREFLIGHT_ACTION_SKIP -> WebSocketPreflightDecision.Action.SKIP;
            case WEB_SOCKET_PREFLIGHT_ACTION_DENY -> WebSocketPreflightDecision.Action.DENY;
            default -> throw new MiddlewareException(StageFailureCodes.ADAPTER_FAILURE, who
                    + ": a preflight decision without a valid action");
        };
        return new WebSocketPreflightDecision(action, d.getReason(), d.getReasonCode(),
                findings(d.getFindingsList()), d.getMetadataMap());
    }

    @Override
    public void start(String selectedSubprotocol) {
        send(WebSocketSessionEvent.newBuilder().setSessionStart(
                dev.openshell.middleware.proto.v1.WebSocketSessionStart.newBuilder()
                        .setSelectedSubprotocol(selectedSubprotocol)).build());
    }

    @Override
    public WebSocketMessageResult message(WebSocketMessage m) {
        var r = exchange(WebSocketSessionEvent.newBuilder().setMessage(
                dev.openshell.middleware.proto.v1.WebSocketMessage.newBuilder().setSequence(m.sequence())
                        .setText(m.text())).build());
        if (!r.hasMessageResult()) {
            throw new MiddlewareException(StageFailureCodes.ADAPTER_FAILURE, who
                    + ": answered a message with a preflight decision");
        }
        var x = r.getMessageResult();
        if (x.hasBinary()) {
            throw new MiddlewareException(StageFailureCodes.ADAPTER_FAILURE, who
                    + ": replaced a text message with a binary one");
        }
        Decision decision = switch (x.getDecision()) {
            case DECISION_ALLOW -> Decision.ALLOW;
            case DECISION_DENY -> Decision.DENY;
            default -> throw new MiddlewareException(StageFailureCodes.ADAPTER_FAILURE, who
                    + ": a message result without a valid decision");
        };
        return new WebSocketMessageResult(x.getSequence(), decision,
                x.hasText() ? Optional.of(x.getText()) : Optional.empty(), x.getReason(), x.getReasonCode(),
                findings(x.getFindingsList()), x.getMetadataMap());
    }

    @Override
    public synchronized void end(SessionEndReason reason) {
        if (ended) {
            return;
        }
        ended = true;
        try {
            events.onNext(WebSocketSessionEvent.newBuilder().setSessionEnd(MiddlewareSessionEnd.newBuilder()
                    .setReasonValue(reason.ordinal() + 1)
                    .build()).build());
            events.onCompleted();
        } catch (RuntimeException e) {
            // best effort
        }
    }

    /** {@return the wire number of a session end reason} (the SPI's constants are in wire order from 1) */
    static MiddlewareSessionEndReason wire(SessionEndReason r) {
        return MiddlewareSessionEndReason.forNumber(r.ordinal() + 1);
    }

    private synchronized void send(WebSocketSessionEvent e) {
        if (ended) {
            throw new MiddlewareException(StageFailureCodes.ADAPTER_FAILURE, who + ": the stream has ended");
        }
        try {
            events.onNext(e);
        } catch (RuntimeException x) {
            throw new MiddlewareException(StageFailureCodes.ADAPTER_FAILURE, who + ": " + Transport.oneLine(x), x);
        }
    }

    private WebSocketSessionEventResult exchange(WebSocketSessionEvent e) {
        LinkedBlockingQueue<Received> queue;
        synchronized (this) {
            queue = results;
        }
        send(e);
        Received r;
        try {
            r = queue.take();
        } catch (InterruptedException x) {
            Thread.currentThread().interrupt();
            end(SessionEndReason.MIDDLEWARE_FAILURE);
            throw new MiddlewareException(StageFailureCodes.ADAPTER_FAILURE, who + ": interrupted", x);
        }
        if (r.error() != null) {
            queue.add(r); // every later call fails the same way
            throw new MiddlewareException(StageFailureCodes.ADAPTER_FAILURE, who + ": "
                    + Transport.oneLine(r.error()), r.error());
        }
        return r.result();
    }

    private static List<Finding> findings(List<dev.openshell.middleware.proto.v1.Finding> in) {
        List<Finding> out = new ArrayList<>(in.size());
        for (var f : in) {
            out.add(new Finding(f.getType(), f.getLabel(), Integer.toUnsignedLong(f.getCount()), f.getConfidence(),
                    f.getSeverity()));
        }
        return out;
    }
}
