package dev.openshell.benchmarks;

import com.google.protobuf.ByteString;
import dev.openshell.middleware.proto.v1.Decision;
import dev.openshell.middleware.proto.v1.ExistingHeaderAction;
import dev.openshell.middleware.proto.v1.Finding;
import dev.openshell.middleware.proto.v1.HeaderMutation;
import dev.openshell.middleware.proto.v1.RemoveHeader;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewareGrpc;
import dev.openshell.middleware.proto.v1.WriteHeader;
import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.OriginatingProcess;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.supervisor.engine.chain.HeaderRules;
import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import jakarta.json.Json;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The gRPC adapter's in-process cost for one external stage (RFC 0009, "The middleware contract"), without the
 * network: issue 10, item 2 "the gRPC adapter's encode/decode of a 4 MiB evaluation", and the share of the item 3
 * target "one external gRPC stage on loopback adds at most 1 ms p50 for a 2 KiB body" that is not transport.
 * Average time per call, in microseconds.
 *
 * <ul>
 *   <li>{@link #encode}: SPI {@link HttpRequestEvaluation} to the {@code openshell.middleware.v1.HttpRequestEvaluation}
 *       message (the adapter's own translation and envelope checks; the body is wrapped, not copied), then to bytes
 *       the way grpc-java's client sends it: the method's protobuf marshaller streams the message and the stream is
 *       drained ({@link Drainable#drainTo}) into an output buffer, as grpc-java's message framer does. The buffer is
 *       a reused array here, not the transport's pooled buffers.</li>
 *   <li>{@link #decode}: the bytes of a reply ({@code ALLOW} with a replacement body of {@code bodyBytes}, two header
 *       mutations, a finding, two metadata entries) through the same marshaller's {@code parse}, given a
 *       {@link KnownLength} stream as the transport gives it (a 4 MiB reply is over grpc-java's 4 MiB bulk-read
 *       size, so it takes the streaming parse a real 4 MiB reply takes), then the adapter's translation to the SPI
 *       {@link HttpRequestResult} (the replacement body is copied once into the result's {@link Body}).</li>
 * </ul>
 * Request and reply bodies are chat-completion-like JSON of {@code bodyBytes} bytes: 2 KiB, and 4 MiB, the largest
 * body a stage may receive or return ({@link EnvelopeLimits#MAX_BODY_BYTES}).
 *
 * <p><b>How the adapter's code is reached.</b> The translation lives in the package-private
 * {@code dev.openshell.supervisor.grpc.ProtoTranslation}; its only public caller,
 * {@code GrpcMiddlewareProvider.evaluate}, sends the message over a channel, and only a network connection creates
 * one. Rather than widen the module's API, the benchmark finds the two translation methods by name with
 * {@link MethodHandles#privateLookupIn}. That works because JMH runs the benchmark on the class path (as
 * {@code scripts/run-benchmarks.sh} does), where every class belongs to the unnamed module; on the module path the
 * set-up fails with an {@link IllegalAccessException}, and a changed signature fails the set-up with a
 * {@link NoSuchMethodException}, never a wrong figure.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class GrpcAdapterBenchmark {
    private static final String REGISTRATION = "privacy-guard";
    private static final String WHO = REGISTRATION + " (example/privacy-guard)";

    /** Request and replacement body size, in bytes. */
    @Param({"2048", "4194304"})
    public int bodyBytes;

    private HttpRequestEvaluation evaluation;
    private long bodyLimit;
    private byte[] replyBytes;
    private Sink sink;

    /** The adapter's translation methods, found once; constants, so the JIT inlines the calls. */
    private static final class Adapter {
        static final String CLASS = "dev.openshell.supervisor.grpc.ProtoTranslation";
        static final MethodHandle EVALUATION;
        static final MethodHandle RESULT;
        static final MethodDescriptor.Marshaller<dev.openshell.middleware.proto.v1.HttpRequestEvaluation> REQUEST =
                SupervisorMiddlewareGrpc.getEvaluateHttpRequestMethod().getRequestMarshaller();
        static final MethodDescriptor.Marshaller<dev.openshell.middleware.proto.v1.HttpRequestResult> REPLY =
                SupervisorMiddlewareGrpc.getEvaluateHttpRequestMethod().getResponseMarshaller();

        static {
            try {
                Class<?> c = Class.forName(CLASS);
                MethodHandles.Lookup l = MethodHandles.privateLookupIn(c, MethodHandles.lookup());
                EVALUATION = l.findStatic(c, "evaluation", MethodType.methodType(
                        dev.openshell.middleware.proto.v1.HttpRequestEvaluation.class, HttpRequestEvaluation.class,
                        String.class, long.class));
                RESULT = l.findStatic(c, "result", MethodType.methodType(HttpRequestResult.class,
                        dev.openshell.middleware.proto.v1.HttpRequestResult.class, long.class, String.class));
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(new IllegalStateException("cannot reach " + CLASS
                        + " (run on the class path, as scripts/run-benchmarks.sh does): " + e, e));
            }
        }
    }

    /** A reusable output buffer: the bytes a channel would write. */
    static final class Sink extends OutputStream {
        private final byte[] buf;
        private int size;

        Sink(int capacity) {
            buf = new byte[capacity];
        }

        @Override
        public void write(int b) {
            buf[size++] = (byte) b;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            System.arraycopy(b, off, buf, size, len);
            size += len;
        }

        void reset() {
            size = 0;
        }

        int size() {
            return size;
        }

        byte[] toByteArray() {
            return Arrays.copyOf(buf, size);
        }
    }

    /** A received message as the transport hands it to the marshaller: its length is known. */
    static final class Received extends ByteArrayInputStream implements KnownLength {
        Received(byte[] bytes) {
            super(bytes);
        }
    }

    /** Builds the evaluation and encodes the reply once per trial, and checks both directions. */
    @Setup
    public void setUp() throws Throwable {
        byte[] body = RegexChainBenchmark.body(bodyBytes, false).getBytes(StandardCharsets.UTF_8);
        bodyLimit = EnvelopeLimits.MAX_BODY_BYTES;
        List<HttpHeader> request = HeaderRulesBenchmark.REQUEST;
        List<HttpHeader> visible = HeaderRules.visible(request, HeaderRules.connectionNominated(request));
        RequestContext context = new RequestContext("req-0195f3c2-8a41-7d2e-9b6c-3f0e1a2b4c5d", "sbx-42",
                "agent-sandbox", "default", Optional.of(new OriginatingProcess("/usr/bin/python3", 4242,
                        List.of("/bin/bash", "/usr/bin/tini"))));
        evaluation = new HttpRequestEvaluation(new BindingId("example/privacy-guard"), Phase.PRE_CREDENTIALS,
                context, Json.createObjectBuilder().add("pii", "redact").add("images", "redact").build(),
                new HttpRequestTarget("https", "api.openai.com", 443, "POST", "/v1/chat/completions", ""),
                visible, Body.of(body));
        sink = new Sink(EnvelopeLimits.MIN_GRPC_MESSAGE_BYTES);

        var reply = dev.openshell.middleware.proto.v1.HttpRequestResult.newBuilder()
                .setDecision(Decision.DECISION_ALLOW)
                .setReason("redacted 2 e-mail addresses")
                .setReasonCode("pii_redacted")
                .setHasBody(true)
                .setBody(ByteString.copyFrom(body))
                .addHeaderMutations(HeaderMutation.newBuilder().setWrite(WriteHeader.newBuilder()
                        .setName("x-openshell-middleware-pii").setValue("email=2")
                        .setOnExisting(ExistingHeaderAction.EXISTING_HEADER_ACTION_OVERWRITE)))
                .addHeaderMutations(HeaderMutation.newBuilder().setRemove(RemoveHeader.newBuilder()
                        .setName("x-stainless-os")))
                .addFindings(Finding.newBuilder().setType("pii.email").setLabel("e-mail address").setCount(2)
                        .setConfidence("high").setSeverity("medium"))
                .putMetadata("redactions", "2")
                .putMetadata("engine", "privacy-guard/1")
                .build();
        replyBytes = reply.toByteArray();

        // both directions round-trip before anything is measured
        encode();
        var sent = dev.openshell.middleware.proto.v1.HttpRequestEvaluation.parseFrom(sink.toByteArray());
        if (sent.getBody().size() != bodyBytes || sent.getHeadersCount() != visible.size()
                || !sent.getMiddlewareName().equals(REGISTRATION)) {
            throw new IllegalStateException("encoded evaluation does not round-trip");
        }
        HttpRequestResult r = decode();
        if (!r.body().orElseThrow().equals(Body.of(body)) || r.headerMutations().size() != 2
                || r.findings().size() != 1 || r.metadata().size() != 2) {
            throw new IllegalStateException("decoded result does not match the reply");
        }
    }

    /** {@return the number of bytes written for the message} */
    @Benchmark
    public int encode() throws Throwable {
        var message = (dev.openshell.middleware.proto.v1.HttpRequestEvaluation)
                Adapter.EVALUATION.invokeExact(evaluation, REGISTRATION, bodyLimit);
        sink.reset();
        try {
            ((Drainable) Adapter.REQUEST.stream(message)).drainTo(sink);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return sink.size();
    }

    /** {@return the SPI result} */
    @Benchmark
    public HttpRequestResult decode() throws Throwable {
        var reply = Adapter.REPLY.parse(new Received(replyBytes));
        return (HttpRequestResult) Adapter.RESULT.invokeExact(reply, bodyLimit, WHO);
    }
}
