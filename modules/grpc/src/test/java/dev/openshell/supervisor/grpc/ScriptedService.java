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
