package dev.openshell.supervisor.grpc;

import com.google.protobuf.Empty;
import dev.openshell.middleware.proto.v1.HttpRequestEvaluation;
import dev.openshell.middleware.proto.v1.HttpRequestResult;
import dev.openshell.middleware.proto.v1.MiddlewareBinding;
import dev.openshell.middleware.proto.v1.MiddlewareManifest;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewareGrpc;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewareOperation;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewarePhase;
import dev.openshell.middleware.proto.v1.ValidateConfigRequest;
import dev.openshell.middleware.proto.v1.ValidateConfigResponse;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;

/**
 * A test double speaking the full contract: a fixed manifest, and scripted answers. Records every request it gets.
 * Optionally blocks every call on a latch (never sleeps) to simulate a hanging service.
 */
final class ScriptedService extends SupervisorMiddlewareGrpc.SupervisorMiddlewareImplBase {
    final List<HttpRequestEvaluation> evaluations = new CopyOnWriteArrayList<>();
    final List<ValidateConfigRequest> validations = new CopyOnWriteArrayList<>();
    private final MiddlewareManifest manifest;
    private volatile Function<HttpRequestEvaluation, HttpRequestResult> evaluate =
            e -> HttpRequestResult.newBuilder().setDecisionValue(1).build();
    private volatile Function<ValidateConfigRequest, ValidateConfigResponse> validate =
            v -> ValidateConfigResponse.newBuilder().setValid(true).build();
    private volatile CountDownLatch hang;
    /** Added to every echoed WebSocket message sequence (0: a correct echo). */
    volatile long sequenceOffset;
    /** Session streams still to fail at once with {@link #sessionFailure}, before any answer. */
    final java.util.concurrent.atomic.AtomicInteger failingSessions = new java.util.concurrent.atomic.AtomicInteger();
    /** How a failing session stream fails. */
    volatile io.grpc.Status sessionFailure = io.grpc.Status.UNAVAILABLE;
    /** The session streams (numbered from 1, in the order opened) that fail at once with {@link #sessionFailure}. */
    volatile java.util.Set<Integer> failingSessionNumbers = java.util.Set.of();
    /** Session streams opened so far. */
    final java.util.concurrent.atomic.AtomicInteger sessionsOpened = new java.util.concurrent.atomic.AtomicInteger();
    private volatile boolean hangDescribe;

    ScriptedService(MiddlewareManifest manifest) {
        this.manifest = manifest;
    }

    /** One HTTP_REQUEST/PRE_CREDENTIALS binding with the given ID, capability 4 MiB, no timeout. */
    static ScriptedService withBinding(String id) {
        return new ScriptedService(manifest(binding(id, 4L << 20, "")));
    }

    static MiddlewareBinding binding(String id, long capability, String timeout) {
        return MiddlewareBinding.newBuilder().setId(id)
                .setOperation(SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_HTTP_REQUEST)
                .setPhase(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS)
                .setMaxPayloadBytes(capability).setTimeout(timeout).build();
    }

    /** A WEBSOCKET_MESSAGE binding with the given ID and phase. */
    static MiddlewareBinding messages(String id, SupervisorMiddlewarePhase phase) {
        return MiddlewareBinding.newBuilder().setId(id)
                .setOperation(SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_WEBSOCKET_MESSAGE)
                .setPhase(phase).build();
    }

    static MiddlewareManifest manifest(MiddlewareBinding... bindings) {
        return MiddlewareManifest.newBuilder().setName("scripted").setServiceVersion("1.0")
                .addAllBindings(List.of(bindings)).build();
    }

    ScriptedService answering(Function<HttpRequestEvaluation, HttpRequestResult> f) {
        this.evaluate = f;
        return this;
    }

    ScriptedService validating(Function<ValidateConfigRequest, ValidateConfigResponse> f) {
        this.validate = f;
        return this;
    }

    /** Every later Evaluate/ValidateConfig call blocks until the latch opens; Describe too when asked. */
    ScriptedService hangingOn(CountDownLatch latch, boolean alsoDescribe) {
        this.hang = latch;
        this.hangDescribe = alsoDescribe;
        return this;
    }

    @Override
    public void describe(Empty request, StreamObserver<MiddlewareManifest> out) {
        if (hangDescribe) {
            await();
        }
        out.onNext(manifest);
        out.onCompleted();
    }

    @Override
    public void validateConfig(ValidateConfigRequest request, StreamObserver<ValidateConfigResponse> out) {
        validations.add(request);
        await();
        out.onNext(validate.apply(request));
        out.onCompleted();
    }

    @Override
    public void evaluateHttpRequest(HttpRequestEvaluation request, StreamObserver<HttpRequestResult> out) {
        evaluations.add(request);
        await();
        HttpRequestResult r;
        try {
            r = evaluate.apply(request);
        } catch (io.grpc.StatusRuntimeException e) {
            out.onError(e);
            return;
        }
        out.onNext(r);
        out.onCompleted();
    }

    /** Inspects every session and allows every message, echoing its sequence plus {@link #sequenceOffset}. */
    @Override
    public StreamObserver<dev.openshell.middleware.proto.v1.WebSocketSessionEvent> evaluateWebSocketSession(
            StreamObserver<dev.openshell.middleware.proto.v1.WebSocketSessionEventResult> out) {
        int number = sessionsOpened.incrementAndGet();
        if (failingSessions.getAndUpdate(n -> Math.max(0, n - 1)) > 0 || failingSessionNumbers.contains(number)) {
            out.onError(sessionFailure.asRuntimeException());
        }
        return new StreamObserver<>() {
            @Override
            public void onNext(dev.openshell.middleware.proto.v1.WebSocketSessionEvent e) {
                var r = dev.openshell.middleware.proto.v1.WebSocketSessionEventResult.newBuilder();
                switch (e.getEventCase()) {
                    case PREFLIGHT -> out.onNext(r.setPreflightDecision(
                            dev.openshell.middleware.proto.v1.WebSocketPreflightDecision.newBuilder().setAction(
                                    dev.openshell.middleware.proto.v1.WebSocketPreflightAction
                                            .WEB_SOCKET_PREFLIGHT_ACTION_INSPECT)).build());
                    case MESSAGE -> out.onNext(r.setMessageResult(
                            dev.openshell.middleware.proto.v1.WebSocketMessageResult.newBuilder()
                                    .setSequence(e.getMessage().getSequence() + sequenceOffset)
                                    .setDecisionValue(1)).build());
                    case SESSION_END -> out.onCompleted();
                    default -> { }
                }
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
            }
        };
    }

    private void await() {
        CountDownLatch l = hang;
        if (l != null) {
            try {
                l.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw Status.CANCELLED.asRuntimeException();
            }
        }
    }
}
