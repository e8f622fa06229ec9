package dev.openshell.supervisor.grpc;

import dev.openshell.middleware.spi.internal.Syntax;
import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.Empty;
import com.google.protobuf.UnknownFieldSet;
import dev.openshell.middleware.proto.v1.HttpRequestResult;
import dev.openshell.middleware.proto.v1.MiddlewareManifest;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewareGrpc;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewareOperation;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewarePhase;
import dev.openshell.middleware.proto.v1.ValidateConfigResponse;
import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.supervisor.grpc.auth.CallerTokens;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Context;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.StatusRuntimeException;
import jakarta.json.JsonObject;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A connection to one external middleware service made exactly as the supervisor makes it, for the conformance kit
 * ({@code supervisor tck}, package {@code dev.openshell.supervisor.grpc.tck}): the same channel set-up (TLS, mutual
 * TLS, message limits, user agent), the same connection budget and {@code Describe} deadline, the same manifest rules
 * ({@code ManifestValidation}, by rule), and a {@link GrpcMiddlewareProvider} over this channel, so evaluations go
 * through the supervisor's own adapter. Besides, it makes the few raw calls the adapter hides on purpose (a
 * {@code ValidateConfig} reason, a call with a short deadline, an evaluation padded to the contract's message size)
 * and reports what the adapter reads from each {@code EvaluateHttpRequest} answer before translating it.
 *
 * <p>Nothing here reaches the supervisor's request path; no protobuf or grpc type appears in this API. Text sent by
 * the service (reasons, status descriptions) is never returned, only its length. Thread-safe.
 */
public final class ServiceProbe implements AutoCloseable {
    /** Field number used to pad an evaluation: above every field of {@code openshell.middleware.v1}. */
    static final int PADDING_FIELD = 2047;

    private static final Context.Key<Consumer<RawAnswer>> WATCH = Context.key("openshell-tck-watch");

    private final ServiceRegistration registration;
    private final ManagedChannel channel;
    private final SupervisorMiddlewareGrpc.SupervisorMiddlewareBlockingStub stub;
    private volatile MiddlewareManifest manifest;
    private volatile GrpcMiddlewareProvider provider;
    private volatile long warmUpNanos = -1;

    private ServiceProbe(ServiceRegistration registration, ManagedChannel channel) {
        this.registration = registration;
        this.channel = channel;
        this.stub = SupervisorMiddlewareGrpc.newBlockingStub(channel);
    }

    /**
     * Opens the channel (it connects on {@link #describe()}).
     *
     * @param registration the registration the supervisor would have: endpoint, TLS files, the service timeout; its
     *     {@code max_body_bytes} is replaced in {@link #provider}
     * @return the probe
     * @throws IOException if a PEM file cannot be read
     * @throws IllegalArgumentException if a PEM file does not hold what it should
     */
    public static ServiceProbe open(ServiceRegistration registration) throws IOException {
        return open(registration, CallerTokens.NONE);
    }

    /**
     * Opens the channel as {@link #open(ServiceRegistration)} does, sending the supervisor's extension token on every
     * call when the registration is {@code https://}.
     *
     * @param registration the registration the supervisor would have
     * @param tokens the tokens the supervisor would send
     * @return the probe
     * @throws IOException if a PEM file cannot be read
     */
    public static ServiceProbe open(ServiceRegistration registration, CallerTokens tokens) throws IOException {
        Objects.requireNonNull(registration, "registration");
        Objects.requireNonNull(tokens, "tokens");
        return new ServiceProbe(registration, Transport.open(registration, tokens, List.of(new Watch())));
    }

    /**
     * Calls {@code Describe} once on a fresh channel to the same endpoint that carries exactly {@code token} (or no
     * {@code authorization} at all when empty), for the kit's token checks.
     *
     * @param token the bearer token to send, or empty for none
     * @return the gRPC status code's name: {@code OK} when the service answered
     * @throws IOException if a PEM file cannot be read
     */
    public String describeWithToken(Optional<String> token) throws IOException {
        ManagedChannel c = Transport.open(registration, audience -> token, List.of());
        try {
            Transport.connect(c, registration.timeout());
            SupervisorMiddlewareGrpc.newBlockingStub(c)
                    .withDeadlineAfter(registration.timeout().toMillis(), TimeUnit.MILLISECONDS)
                    .describe(Empty.getDefaultInstance());
            return "OK";
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode().name();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "CANCELLED";
        } finally {
            c.shutdownNow();
        }
    }

    /** {@return how long the first, unmeasured {@code Describe} took (class loading on both sides), -1 before it} */
    public long warmUpNanos() {
        return warmUpNanos;
    }

    /** {@return the registration the probe was opened with} */
    public ServiceRegistration registration() {
        return registration;
    }

    // ---- Describe ----------------------------------------------------------------------------------------------

    /**
     * One binding as the service advertised it, before any rule.
     *
     * @param id the binding ID, possibly empty
     * @param operation the operation's name without prefix ({@code HTTP_REQUEST}), or {@code number N}
     * @param phase the phase's name without prefix ({@code PRE_CREDENTIALS}), or {@code number N}
     * @param maxBodyBytes the advertised capability, in bytes (unsigned on the wire; saturated at
     *     {@link Long#MAX_VALUE})
     * @param timeout the advertised timeout text, possibly empty (returned only when short and printable)
     */
    public record AdvertisedBinding(String id, String operation, String phase, long maxBodyBytes, String timeout) {
    }

    /**
     * A rule of the supervisor's manifest validation that the answer breaks.
     *
     * @param rule {@code text}, {@code bindings}, {@code operation_phase}, {@code binding_id}, {@code max_body_bytes}
     *     or {@code timeout}
     * @param message the supervisor's own message
     */
    public record ManifestProblem(String rule, String message) {
    }

    /**
     * The {@code Describe} answer.
     *
     * @param status {@code OK}, or the gRPC status code's name when the call failed (then nothing else is set)
     * @param detail for a failure, the supervisor's safe description of it (status code and local cause)
     * @param latencyNanos time of the call itself, after connection set-up
     * @param name the manifest's name (only when printable and at most 256 bytes, else empty)
     * @param version the manifest's {@code service_version} (same rule)
     * @param bindings every advertised binding
     * @param problems every rule the manifest breaks, in the supervisor's words; empty when it would be accepted
     * @param skipped bindings the supervisor would skip (not invoked in v1)
     */
    public record Described(String status, String detail, long latencyNanos, String name, String version,
                            List<AdvertisedBinding> bindings, List<ManifestProblem> problems, List<String> skipped) {
        /** {@return whether the call succeeded} */
        public boolean answered() {
            return status.equals("OK");
        }
    }

    /**
     * Connects (the supervisor's budget of {@code max(timeout, 5 s)}), makes one unmeasured warm-up call (with the
     * same budget) on a fresh channel, and calls {@code Describe} with the registration's timeout as deadline, then applies the supervisor's manifest rules with the registration's
     * {@code max_body_bytes}.
     *
     * @return the answer; never {@code null}
     * @throws InterruptedException if interrupted while connecting
     */
    public Described describe() throws InterruptedException {
        Transport.connect(channel, registration.timeout());
        if (warmUpNanos < 0) {
            // the first call on a fresh channel pays for class loading in this process (and the service's): made
            // once, with the connection budget, so the measured call below is the service's own time
            long start = System.nanoTime();
            try {
                stub.withDeadlineAfter(Math.max(registration.timeout().toMillis(),
                        Transport.MIN_CONNECT_BUDGET.toMillis()), TimeUnit.MILLISECONDS)
                        .describe(Empty.getDefaultInstance());
            } catch (StatusRuntimeException e) {
                // reported by the measured call
            }
            warmUpNanos = System.nanoTime() - start;
        }
        long start = System.nanoTime();
        MiddlewareManifest m;
        try {
            m = stub.withDeadlineAfter(registration.timeout().toMillis(), TimeUnit.MILLISECONDS)
                    .describe(Empty.getDefaultInstance());
        } catch (StatusRuntimeException e) {
            return new Described(e.getStatus().getCode().name(), Transport.describe(e), System.nanoTime() - start,
                    "", "", List.of(), List.of(), List.of());
        }
        long latency = System.nanoTime() - start;
        this.manifest = m;
        ManifestValidation.Outcome o = ManifestValidation.check(m, registration);
        List<AdvertisedBinding> advertised = new ArrayList<>();
        for (var b : m.getBindingsList()) {
            long cap = b.getMaxPayloadBytes() < 0 ? Long.MAX_VALUE : b.getMaxPayloadBytes();
            advertised.add(new AdvertisedBinding(shown(b.getId()),
                    name(SupervisorMiddlewareOperation.forNumber(b.getOperationValue()), b.getOperationValue(),
                            "SUPERVISOR_MIDDLEWARE_OPERATION_"),
                    name(SupervisorMiddlewarePhase.forNumber(b.getPhaseValue()), b.getPhaseValue(),
                            "SUPERVISOR_MIDDLEWARE_PHASE_"),
                    cap, shown(b.getTimeout())));
        }
        List<ManifestProblem> problems = o.issues().stream()
                .map(p -> new ManifestProblem(p.rule().name().toLowerCase(Locale.ROOT), p.message())).toList();
        return new Described("OK", "", latency, o.serviceName(), o.serviceVersion(), List.copyOf(advertised),
                problems, o.skipped());
    }

    /** Short printable text as is; anything else described by its length (it is untrusted). */
    private static String shown(String text) {
        String q = Syntax.quote(text);
        return text.isEmpty() ? "" : q.startsWith("'") ? text : q;
    }

    private static String name(Enum<?> e, int number, String prefix) {
        return e == null ? "number " + number : e.name().replace(prefix, "");
    }

    /**
     * {@return the supervisor's adapter for this service over this probe's channel, as start-up would register it}
     * Its manifest is the last {@link #describe()} answer checked with the supervisor's rules against this probe's
     * registration with {@code maxBodyBytes} as {@code max_body_bytes}. The provider is closed with the probe.
     *
     * @param maxBodyBytes the registration's body limit, 0 to 4 MiB, at most each binding's capability
     * @throws IllegalStateException if {@code describe()} has not answered, or the manifest breaks a rule with this
     *     limit (the message lists every problem)
     */
    public synchronized GrpcMiddlewareProvider provider(long maxBodyBytes) {
        if (manifest == null) {
            throw new IllegalStateException("Describe has not answered");
        }
        if (provider != null && provider.registration().maxBodyBytes() == maxBodyBytes) {
            return provider;
        }
        ServiceRegistration reg = registration.withMaxBodyBytes(maxBodyBytes);
        ManifestValidation.Outcome o = ManifestValidation.check(manifest, reg);
        if (!o.ok()) {
            throw new IllegalStateException("invalid manifest: " + String.join("; ", o.problems()));
        }
        // the provider shares the probe's channel: it is closed with the probe, never on its own
        provider = new GrpcMiddlewareProvider(reg, channel, o, RegistryListener.NONE, RetryPolicy.DEFAULT);
        return provider;
    }

    // ---- raw calls ---------------------------------------------------------------------------------------------

    /**
     * A raw {@code ValidateConfig} answer.
     *
     * @param status {@code OK} or the gRPC status code's name
     * @param valid the answer's {@code valid} (false when the call failed)
     * @param reasonBytes the length of the answer's {@code reason} in UTF-8 bytes (the text is untrusted: never
     *     returned)
     * @param latencyNanos the call's time
     */
    public record RawValidation(String status, boolean valid, int reasonBytes, long latencyNanos) {
    }

    /**
     * Calls {@code ValidateConfig} as the adapter does (same request, translated by the adapter's code), but returns
     * what the adapter hides: whether a refusal carried a reason.
     *
     * @param bindingId the binding
     * @param config the config
     * @param deadline the call's deadline
     * @return the answer
     * @throws dev.openshell.middleware.spi.MiddlewareException if the config cannot be put on the wire
     */
    public RawValidation validateConfig(BindingId bindingId, JsonObject config, Duration deadline) {
        var request = ProtoTranslation.validateConfig(config, registration.name(), bindingId.value());
        long start = System.nanoTime();
        try {
            ValidateConfigResponse r = stub.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS)
                    .validateConfig(request);
            return new RawValidation("OK", r.getValid(), r.getReasonBytes().size(), System.nanoTime() - start);
        } catch (StatusRuntimeException e) {
            return new RawValidation(e.getStatus().getCode().name(), false, 0, System.nanoTime() - start);
        }
    }

    /**
     * What the adapter read from one {@code EvaluateHttpRequest} answer, before translating it.
     *
     * @param decisionNumber the wire decision number
     * @param hasBody the answer's {@code has_body}
     * @param bodyBytes the size of the answer's {@code body} field, whatever {@code has_body} says
     * @param messageBytes the answer's encoded size
     */
    public record RawAnswer(int decisionNumber, boolean hasBody, int bodyBytes, int messageBytes) {
    }

    /**
     * A raw {@code EvaluateHttpRequest} call.
     *
     * @param status {@code OK} or the gRPC status code's name
     * @param latencyNanos the call's time
     * @param requestBytes the encoded size of the request sent
     * @param answer the answer when {@code status} is {@code OK}
     */
    public record RawCall(String status, long latencyNanos, long requestBytes, Optional<RawAnswer> answer) {
    }

    /**
     * Sends one evaluation, translated by the adapter's code, with a deadline of its own, optionally padded with an
     * unknown field (number {@value #PADDING_FIELD}) to an exact encoded size.
     *
     * @param evaluation the evaluation
     * @param bodyLimit the binding's body limit, in bytes
     * @param deadline the deadline sent as {@code grpc-timeout}
     * @param padTo the request's encoded size after padding; 0 for no padding (a smaller request is not padded)
     * @return the outcome
     * @throws dev.openshell.middleware.spi.MiddlewareException if the evaluation cannot be put on the wire
     */
    public RawCall evaluate(HttpRequestEvaluation evaluation, long bodyLimit, Duration deadline, int padTo) {
        var request = ProtoTranslation.evaluation(evaluation, registration.name(), bodyLimit);
        if (padTo > request.getSerializedSize()) {
            request = pad(request, padTo);
        }
        long size = request.getSerializedSize();
        long start = System.nanoTime();
        try {
            HttpRequestResult r = stub.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS)
                    .evaluateHttpRequest(request);
            return new RawCall("OK", System.nanoTime() - start, size, Optional.of(answer(r)));
        } catch (StatusRuntimeException e) {
            return new RawCall(e.getStatus().getCode().name(), System.nanoTime() - start, size, Optional.empty());
        }
    }

    static dev.openshell.middleware.proto.v1.HttpRequestEvaluation pad(
            dev.openshell.middleware.proto.v1.HttpRequestEvaluation request, int padTo) {
        int base = request.getSerializedSize();
        int tag = CodedOutputStream.computeTagSize(PADDING_FIELD);
        int n = padTo - base - tag - 1;
        while (n > 0 && base + tag + CodedOutputStream.computeUInt32SizeNoTag(n) + n > padTo) {
            n--;
        }
        var padded = request.toBuilder().setUnknownFields(UnknownFieldSet.newBuilder()
                .addField(PADDING_FIELD, UnknownFieldSet.Field.newBuilder()
                        .addLengthDelimited(ByteString.copyFrom(new byte[Math.max(n, 0)])).build())
                .build()).build();
        return padded;
    }

    /**
     * Runs {@code call} (which uses {@link #provider}'s adapter on this thread) and hands every
     * {@code EvaluateHttpRequest} answer the adapter receives meanwhile to {@code sink}, before the adapter translates
     * it.
     *
     * @param sink receives the answers, on the calling thread
     * @param call the work
     * @param <T> the result type
     * @return what {@code call} returned
     * @throws Exception what {@code call} threw
     */
    public <T> T watching(Consumer<RawAnswer> sink, Callable<T> call) throws Exception {
        return Context.current().withValue(WATCH, Objects.requireNonNull(sink, "sink")).call(call);
    }

    private static RawAnswer answer(HttpRequestResult r) {
        return new RawAnswer(r.getDecisionValue(), r.getHasBody(), r.getBody().size(), r.getSerializedSize());
    }

    /** Shuts the channel down (the provider with it). */
    @Override
    public void close() {
        GrpcMiddlewareProvider p = provider;
        if (p != null) {
            p.close();
        }
        channel.shutdownNow();
        try {
            channel.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Hands each {@code EvaluateHttpRequest} answer to the sink in the caller's context, if any. */
    private static final class Watch implements ClientInterceptor {
        @Override
        public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options,
                                                     Channel next) {
            Consumer<RawAnswer> sink = WATCH.get();
            ClientCall<Q, R> call = next.newCall(method, options);
            if (sink == null) {
                return call;
            }
            return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
                @Override
                public void start(Listener<R> listener, Metadata headers) {
                    super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                        @Override
                        public void onMessage(R message) {
                            if (message instanceof HttpRequestResult r) {
                                sink.accept(answer(r));
                            }
                            super.onMessage(message);
                        }
                    }, headers);
                }
            };
        }
    }

    @Override
    public String toString() {
        return "ServiceProbe[" + registration + "]";
    }
}
