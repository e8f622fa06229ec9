package dev.openshell.supervisor.it;

import com.google.protobuf.Empty;
import io.grpc.Server;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.TlsServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import openshell.published.v1.Decision;
import openshell.published.v1.Finding;
import openshell.published.v1.HttpRequestEvaluation;
import openshell.published.v1.HttpRequestResult;
import openshell.published.v1.MiddlewareBinding;
import openshell.published.v1.MiddlewareManifest;
import openshell.published.v1.MiddlewareSessionEndReason;
import openshell.published.v1.SupervisorMiddlewareGrpc;
import openshell.published.v1.SupervisorMiddlewareOperation;
import openshell.published.v1.SupervisorMiddlewarePhase;
import openshell.published.v1.ValidateConfigRequest;
import openshell.published.v1.ValidateConfigResponse;
import openshell.published.v1.WebSocketMessageResult;
import openshell.published.v1.WebSocketPreflight;
import openshell.published.v1.WebSocketPreflightAction;
import openshell.published.v1.WebSocketPreflightDecision;
import openshell.published.v1.WebSocketSessionEvent;
import openshell.published.v1.WebSocketSessionEventResult;

/**
 * A middleware service written against OpenShell's published proto only ({@code openshell.published.v1}), serving
 * {@code EvaluateWebSocketSession}: it answers every preflight with {@link #action}, replaces {@value #SECRET} in a
 * text message with {@code [REDACTED]}, denies a message containing {@value #DENY_MARKER} (reason code
 * {@code marker_denied}) and records what it receives. It advertises {@code WEBSOCKET_MESSAGE/PRE_CREDENTIALS} and,
 * when asked, {@code WEBSOCKET_MESSAGE/PRE_RETURN}.
 */
final class SessionService extends SupervisorMiddlewareGrpc.SupervisorMiddlewareImplBase implements AutoCloseable {
    static final String SECRET = "sk-live-0123456789";
    static final String DENY_MARKER = "DENYME";

    /** One message as seen: its phase (direction), sequence and text. */
    record Seen(SupervisorMiddlewarePhase phase, long sequence, String text) {
    }

    final String name;
    private final boolean returnPath;
    private final boolean messages;
    volatile WebSocketPreflightAction action = WebSocketPreflightAction.WEB_SOCKET_PREFLIGHT_ACTION_INSPECT;
    final List<WebSocketPreflight> preflights = new CopyOnWriteArrayList<>();
    final List<Seen> seen = new CopyOnWriteArrayList<>();
    final LinkedBlockingQueue<MiddlewareSessionEndReason> ends = new LinkedBlockingQueue<>();
    private Server server;

    private SessionService(String name, boolean returnPath, boolean messages) {
        this.name = name;
        this.returnPath = returnPath;
        this.messages = messages;
    }

    static SessionService start(String name, boolean returnPath) throws IOException {
        return start(name, returnPath, true);
    }

    /** @param messages whether to advertise any WEBSOCKET_MESSAGE binding (false: a request-only service) */
    static SessionService start(String name, boolean returnPath, boolean messages) throws IOException {
        SessionService s = new SessionService(name, returnPath, messages);
        s.server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(s).build().start();
        return s;
    }

    /**
     * Starts the service over TLS with {@code leaf}, every call (each stream included) passing {@code check} first,
     * as a service that verifies its callers does.
     */
    static SessionService start(String name, boolean returnPath, TestPki.Issued leaf, ServerInterceptor check)
            throws IOException {
        SessionService s = new SessionService(name, returnPath, true);
        s.server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0),
                        TlsServerCredentials.create(leaf.certFile().toFile(), leaf.keyFile().toFile()))
                .addService(ServerInterceptors.intercept(s, check)).build().start();
        return s;
    }

    int port() {
        return server.getPort();
    }

    /** {@return the next session end this service heard, waiting up to 30 s} */
    MiddlewareSessionEndReason nextEnd() throws InterruptedException {
        MiddlewareSessionEndReason r = ends.poll(30, TimeUnit.SECONDS);
        if (r == null) {
            throw new AssertionError(name + " heard no session_end");
        }
        return r;
    }

    void reset() {
        preflights.clear();
        seen.clear();
        ends.clear();
        action = WebSocketPreflightAction.WEB_SOCKET_PREFLIGHT_ACTION_INSPECT;
    }

    @Override
    public void describe(Empty request, StreamObserver<MiddlewareManifest> out) {
        MiddlewareManifest.Builder m = MiddlewareManifest.newBuilder().setName(name).setServiceVersion("1.0.0")
                .addBindings(MiddlewareBinding.newBuilder()
                        .setOperation(SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_HTTP_REQUEST)
                        .setPhase(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS)
                        .setMaxPayloadBytes(1 << 20));
        if (messages) {
            m.addBindings(MiddlewareBinding.newBuilder()
                    .setOperation(SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_WEBSOCKET_MESSAGE)
                    .setPhase(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS)
                    .setMaxPayloadBytes(1 << 20));
        }
        if (returnPath) {
            m.addBindings(MiddlewareBinding.newBuilder()
                    .setOperation(SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_WEBSOCKET_MESSAGE)
                    .setPhase(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_RETURN)
                    .setMaxPayloadBytes(1 << 20));
        }
        out.onNext(m.build());
        out.onCompleted();
    }

    @Override
    public void validateConfig(ValidateConfigRequest request, StreamObserver<ValidateConfigResponse> out) {
        out.onNext(ValidateConfigResponse.newBuilder().setValid(true).build());
        out.onCompleted();
    }

    @Override
    public void evaluateHttpRequest(HttpRequestEvaluation request, StreamObserver<HttpRequestResult> out) {
        out.onNext(HttpRequestResult.newBuilder().setDecision(Decision.DECISION_ALLOW).build());
        out.onCompleted();
    }

    @Override
    public StreamObserver<WebSocketSessionEvent> evaluateWebSocketSession(
            StreamObserver<WebSocketSessionEventResult> out) {
        return new StreamObserver<>() {
            private SupervisorMiddlewarePhase phase;

            @Override
            public void onNext(WebSocketSessionEvent e) {
                switch (e.getEventCase()) {
                    case PREFLIGHT -> {
                        preflights.add(e.getPreflight());
                        phase = e.getPreflight().getPhase();
                        out.onNext(WebSocketSessionEventResult.newBuilder().setPreflightDecision(
                                WebSocketPreflightDecision.newBuilder().setAction(action)
                                        .setReasonCode(action == WebSocketPreflightAction.WEB_SOCKET_PREFLIGHT_ACTION_DENY
                                                ? "session_declined" : "")).build());
                    }
                    case MESSAGE -> {
                        String text = e.getMessage().getText();
                        long seq = e.getMessage().getSequence();
                        seen.add(new Seen(phase, seq, text));
                        WebSocketMessageResult.Builder r = WebSocketMessageResult.newBuilder().setSequence(seq);
                        if (text.contains(DENY_MARKER)) {
                            r.setDecision(Decision.DECISION_DENY).setReasonCode("marker_denied");
                        } else if (text.contains(SECRET)) {
                            r.setDecision(Decision.DECISION_ALLOW).setText(text.replace(SECRET, "[REDACTED]"))
                                    .addFindings(Finding.newBuilder().setType("secret.api_key").setCount(1));
                        } else {
                            r.setDecision(Decision.DECISION_ALLOW);
                        }
                        out.onNext(WebSocketSessionEventResult.newBuilder().setMessageResult(r).build());
                    }
                    case SESSION_END -> {
                        ends.add(e.getSessionEnd().getReason());
                        out.onCompleted();
                    }
                    default -> { }
                }
            }

            @Override
            public void onError(Throwable t) {
                // the supervisor went away
            }

            @Override
            public void onCompleted() {
                // the supervisor half-closed after session_end
            }
        };
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
}
