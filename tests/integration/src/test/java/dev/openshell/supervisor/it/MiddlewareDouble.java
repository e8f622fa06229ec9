package dev.openshell.supervisor.it;

import com.google.protobuf.Empty;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.openshell.middleware.proto.v1.Decision;
import dev.openshell.middleware.proto.v1.HttpRequestEvaluation;
import dev.openshell.middleware.proto.v1.HttpRequestResult;
import dev.openshell.middleware.proto.v1.MiddlewareBinding;
import dev.openshell.middleware.proto.v1.MiddlewareManifest;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewareGrpc;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewareOperation;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewarePhase;
import dev.openshell.middleware.proto.v1.ValidateConfigRequest;
import dev.openshell.middleware.proto.v1.ValidateConfigResponse;
import dev.openshell.middleware.spi.EnvelopeLimits;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * An external middleware service run by the test (grpc-java, plaintext, 127.0.0.1), speaking the full contract, that
 * can misbehave on purpose: its {@code EvaluateHttpRequest} answer is scripted per call as a {@link Reply}, including
 * bytes that are not a protobuf message at all and a hang (a latch, opened when the double closes: never a sleep).
 * Records every evaluation and config validation it receives. It can be stopped and started again on the same port
 * to simulate an outage.
 */
final class MiddlewareDouble implements AutoCloseable {
    /** What one {@code EvaluateHttpRequest} call answers. */
    sealed interface Reply {
        /** A well-formed result message (which may still break the contract's rules). */
        record Result(HttpRequestResult result) implements Reply {
        }

        /** Raw response bytes, for example ones that do not parse as a protobuf message. */
        record Raw(byte[] bytes) implements Reply {
        }

        /** No answer until the double closes. */
        record Hang() implements Reply {
        }
    }

    final List<HttpRequestEvaluation> evaluations = new CopyOnWriteArrayList<>();
    final List<ValidateConfigRequest> validations = new CopyOnWriteArrayList<>();
    private final MiddlewareManifest manifest;
    private volatile CountDownLatch release = new CountDownLatch(1);
    private volatile Function<HttpRequestEvaluation, Reply> script = e -> allow();
    private volatile ValidateConfigResponse validation = ValidateConfigResponse.newBuilder().setValid(true).build();
    private volatile Server server;
    private final int port;

    private MiddlewareDouble(MiddlewareManifest manifest, int port) throws IOException {
        this.manifest = manifest;
        this.server = serve(port);
        this.port = server.getPort();
    }

    /** Starts a double with one {@code HTTP_REQUEST/PRE_CREDENTIALS} binding {@code id}, capability 4 MiB. */
    static MiddlewareDouble start(String id) throws IOException {
        return start(id, EnvelopeLimits.MAX_BODY_BYTES);
    }

    /** Starts a double with one {@code HTTP_REQUEST/PRE_CREDENTIALS} binding {@code id} accepting bodies up to
     * {@code capability} bytes. */
    static MiddlewareDouble start(String id, long capability) throws IOException {
        return new MiddlewareDouble(MiddlewareManifest.newBuilder().setName("double").setServiceVersion("1")
                .addBindings(MiddlewareBinding.newBuilder().setId(id)
                        .setOperation(SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_HTTP_REQUEST)
                        .setPhase(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS)
                        .setMaxPayloadBytes(capability)).build(), 0);
    }

    /** Every later {@code ValidateConfig} call answers invalid with {@code reason} (untrusted text). */
    void refuseConfigs(String reason) {
        this.validation = ValidateConfigResponse.newBuilder().setValid(false).setReason(reason).build();
    }

    static Reply.Result allow() {
        return new Reply.Result(HttpRequestResult.newBuilder().setDecision(Decision.DECISION_ALLOW).build());
    }

    int port() {
        return port;
    }

    /** Scripts every later {@code EvaluateHttpRequest} answer. */
    void answer(Function<HttpRequestEvaluation, Reply> f) {
        this.script = f;
    }

    /** Simulates an outage: stops listening and cancels calls in flight; the port is free afterwards. */
    void stop() {
        Server s = server;
        s.shutdownNow();
        try {
            s.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Serves again on the same port, with the same manifest. */
    void restart() throws IOException {
        server = serve(port);
    }

    private Server serve(int onPort) throws IOException {
        MethodDescriptor<HttpRequestEvaluation, HttpRequestResult> typed =
                SupervisorMiddlewareGrpc.getEvaluateHttpRequestMethod();
        MethodDescriptor<byte[], byte[]> raw = MethodDescriptor.<byte[], byte[]>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName(typed.getFullMethodName())
                .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
        ServerServiceDefinition service = ServerServiceDefinition.builder(SupervisorMiddlewareGrpc.SERVICE_NAME)
                .addMethod(ServerMethodDefinition.create(SupervisorMiddlewareGrpc.getDescribeMethod(),
                        ServerCalls.asyncUnaryCall((Empty e, StreamObserver<MiddlewareManifest> o) -> {
                            o.onNext(manifest);
                            o.onCompleted();
                        })))
                .addMethod(ServerMethodDefinition.create(SupervisorMiddlewareGrpc.getValidateConfigMethod(),
                        ServerCalls.asyncUnaryCall((ValidateConfigRequest v,
                                                    StreamObserver<ValidateConfigResponse> o) -> {
                            validations.add(v);
                            o.onNext(validation);
                            o.onCompleted();
                        })))
                .addMethod(ServerMethodDefinition.create(raw, ServerCalls.asyncUnaryCall(this::evaluate)))
                .build();
        return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", onPort))
                .maxInboundMessageSize(EnvelopeLimits.MIN_GRPC_MESSAGE_BYTES)
                .addService(service).build().start();
    }

    private void evaluate(byte[] request, StreamObserver<byte[]> out) {
        HttpRequestEvaluation e;
        try {
            e = HttpRequestEvaluation.parseFrom(request);
        } catch (InvalidProtocolBufferException x) {
            out.onError(Status.INVALID_ARGUMENT.asRuntimeException());
            return;
        }
        evaluations.add(e);
        switch (script.apply(e)) {
            case Reply.Result r -> out.onNext(r.result().toByteArray());
            case Reply.Raw r -> out.onNext(r.bytes());
            case Reply.Hang h -> {
                try {
                    release.await();
                } catch (InterruptedException x) {
                    Thread.currentThread().interrupt();
                }
                out.onError(Status.CANCELLED.asRuntimeException());
                return;
            }
        }
        out.onCompleted();
    }

    /** Lets every call hanging so far finish (with {@code CANCELLED}); later hangs wait again. */
    void releaseHangs() {
        CountDownLatch l = release;
        release = new CountDownLatch(1);
        l.countDown();
    }

    /** Opens every hanging call, then stops. */
    @Override
    public void close() {
        releaseHangs();
        stop();
    }

    private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };
}
