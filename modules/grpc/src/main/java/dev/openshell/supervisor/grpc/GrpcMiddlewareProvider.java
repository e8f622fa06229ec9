package dev.openshell.supervisor.grpc;

import com.google.protobuf.Empty;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewareGrpc;
import dev.openshell.middleware.proto.v1.ValidateConfigResponse;
import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.MiddlewareManifest;
import dev.openshell.middleware.spi.MiddlewareProvider;
import dev.openshell.middleware.spi.Operation;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.WebSocketSession;
import dev.openshell.supervisor.engine.ProviderOrigin;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import jakarta.json.JsonObject;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A {@link MiddlewareProvider} for one registered external service, backed by a grpc-java channel (RFC 0009, "The
 * middleware contract"). Created by {@link ExternalServices} once the service's manifest was accepted; thread-safe.
 *
 * <h2>Calls and deadlines</h2>
 * <ul>
 *   <li>{@code Describe} (start-up and recovery probes): the registration's timeout. It starts once the connection
 *       is set up: TCP and TLS handshakes get their own budget of {@code max(timeout, 5 s)} first.</li>
 *   <li>{@code ValidateConfig} and {@code EvaluateHttpRequest}: the binding's effective timeout, which is the
 *       timeout the binding advertised in {@code Describe} when it advertised a shorter one, else the
 *       registration's (the published proto: a binding's timeout "may shorten but cannot extend the operator
 *       timeout"). The effective value is also the registered binding's {@link MiddlewareBinding#timeout()}.</li>
 * </ul>
 * Over TLS every call also carries the extension token (the channel's call credentials, see
 * {@link ExternalServices#connect(List, RegistryListener, RetryPolicy, dev.openshell.supervisor.grpc.auth.CallerTokens)}).
 * Every call sends {@code middleware_name} (the registration name) and {@code binding_id}. Messages up to
 * {@link dev.openshell.middleware.spi.EnvelopeLimits#MIN_GRPC_MESSAGE_BYTES} are accepted.
 *
 * <h2>Failures</h2>
 * {@link #evaluate} and {@link #validateConfig} throw only {@link MiddlewareException}, with a code from
 * {@link StageFailureCodes}; the chain engine applies the stage's {@code on_error}. Messages never contain text the
 * service sent. When a call finds the service unreachable ({@code UNAVAILABLE}), the provider marks it unavailable:
 * later calls fail at once with {@link StageFailureCodes#SERVICE_UNAVAILABLE} while a background virtual thread
 * re-probes with {@code Describe} per the {@link RetryPolicy}; when the service answers with the same bindings again,
 * the provider is available again and logs the recovery once.
 *
 * <h2>Results</h2>
 * The result is translated exactly: decisions other than {@code ALLOW} and {@code DENY}, header mutations with no
 * operation, and replacement bodies over the binding's limit are stage failures; everything else (mutation rules,
 * finding, metadata and reason limits) is checked by the chain engine afterwards. {@code ExistingHeaderAction} 0 and
 * unknown numbers arrive as {@code UNSPECIFIED} and {@code UNRECOGNIZED} so the header rules can report them.
 */
public final class GrpcMiddlewareProvider implements MiddlewareProvider, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(GrpcMiddlewareProvider.class.getName());

    /** Availability, as seen by stages. */
    public enum State {
        /** Calls go to the service. */
        AVAILABLE,
        /** The service was unreachable; calls fail at once while the background probe retries. */
        UNAVAILABLE,
        /** The service came back with different bindings; calls fail until the supervisor restarts. */
        MANIFEST_CHANGED,
        /** The provider was closed. */
        CLOSED
    }

    private final ServiceRegistration registration;
    private final ManagedChannel channel;
    private final SupervisorMiddlewareGrpc.SupervisorMiddlewareBlockingStub stub;
    private final MiddlewareManifest manifest;
    /** The WebSocket directions the service advertises ({@code WEBSOCKET_MESSAGE} bindings). */
    private final Set<Phase> messagePhases;
    private final Map<BindingId, ManifestValidation.Accepted> bindings;
    private final Map<BindingId, ManifestValidation.Accepted> responseBindings;
    private final List<ManifestValidation.Accepted> accepted;
    private final ProviderOrigin origin;
    private final RegistryListener listener;
    private final RetryPolicy retry;
    private final Object lock = new Object();
    private final CountDownLatch closed = new CountDownLatch(1);
    private volatile State state = State.AVAILABLE;
    private Thread prober; // guarded by lock

    GrpcMiddlewareProvider(ServiceRegistration registration, ManagedChannel channel,
                           ManifestValidation.Outcome outcome, RegistryListener listener, RetryPolicy retry) {
        this.registration = registration;
        this.channel = channel;
        this.stub = SupervisorMiddlewareGrpc.newBlockingStub(channel);
        this.accepted = outcome.bindings();
        Map<BindingId, ManifestValidation.Accepted> m = new LinkedHashMap<>();
        Map<BindingId, ManifestValidation.Accepted> r = new LinkedHashMap<>();
        for (ManifestValidation.Accepted a : accepted) {
            (a.binding().operation() == Operation.HTTP_RESPONSE ? r : m)
                    .putIfAbsent(a.binding().id(), a);
        }
        for (var e : r.entrySet()) {
            m.putIfAbsent(e.getKey(), e.getValue()); // ValidateConfig for a response-only ID
        }
        this.bindings = Map.copyOf(m);
        this.responseBindings = Map.copyOf(r);
        List<MiddlewareBinding> all = new java.util.ArrayList<>();
        for (ManifestValidation.Accepted a : accepted) {
            all.add(a.binding());
        }
        for (ManifestValidation.Accepted a : accepted) {
            if (a.binding().operation() != Operation.HTTP_REQUEST) {
                continue; // a session's message chain joins through the config's request binding
            }
            for (Phase phase : outcome.messagePhases().stream().sorted().toList()) {
                // every config of the service joins its WebSocket sessions in the directions it advertises
                all.add(new MiddlewareBinding(a.binding().id(), Operation.WEBSOCKET_MESSAGE, phase, 0,
                        a.binding().timeout()));
            }
        }
        this.messagePhases = Set.copyOf(outcome.messagePhases());
        this.manifest = new MiddlewareManifest(outcome.serviceName(), outcome.serviceVersion(), List.copyOf(all));
        this.origin = new ProviderOrigin(ProviderOrigin.Kind.EXTERNAL, registration.name(),
                Optional.of(registration.endpoint().toString()));
        this.listener = listener;
        this.retry = retry;
    }

    /** {@return the registration this provider serves} */
    public ServiceRegistration registration() {
        return registration;
    }

    /** {@return where the provider comes from: kind EXTERNAL, the registration name, the endpoint} */
    public ProviderOrigin origin() {
        return origin;
    }

    /** {@return the current availability} */
    public State state() {
        return state;
    }

    /**
     * {@return the accepted manifest: the service's diagnostic name and version, and only the
     * {@code HTTP_REQUEST/PRE_CREDENTIALS} bindings, each with the registration's body limit and its effective
     * timeout}
     */
    @Override
    public MiddlewareManifest manifest() {
        return manifest;
    }

    /**
     * {@return the effective deadline of {@code ValidateConfig} and {@code EvaluateHttpRequest} for a binding}
     *
     * @param id a binding of this service
     * @throws MiddlewareException {@link StageFailureCodes#UNKNOWN_BINDING} if the service does not own {@code id}
     */
    public Duration timeout(BindingId id) {
        return binding(id).binding().timeout().orElse(registration.timeout());
    }

    /**
     * Calls the service's {@code ValidateConfig} for one policy config (RFC 0009, "Registration and delivery": policy
     * creation and update "call the owning service's ValidateConfig before persistence").
     *
     * @return {@link ConfigValidation#ok()}, or a refusal carrying the service's own reason (untrusted text: policy
     *     loading keeps it apart from the platform message, as detail shown to the operator on the console of
     *     {@code validate} and {@code run}, sanitised and length-limited, never in an audit event or a client
     *     response); {@code (the service gave no reason)} when it is empty
     * @throws MiddlewareException when the service cannot answer (a {@link StageFailureCodes} code); policy load
     *     must then refuse the config as well
     */
    @Override
    public ConfigValidation validateConfig(BindingId bindingId, JsonObject config) {
        Objects.requireNonNull(config, "config");
        ManifestValidation.Accepted a = binding(bindingId);
        String who = who(bindingId);
        try {
            usable(who);
            var request = ProtoTranslation.validateConfig(config, registration.name(), bindingId.value());
            ValidateConfigResponse response = stub.withDeadlineAfter(timeout(a), TimeUnit.MILLISECONDS)
                    .validateConfig(request);
            if (response.getValid()) {
                return ConfigValidation.ok();
            }
            String reason = response.getReason();
            return ConfigValidation.invalid(reason.isBlank() ? "(the service gave no reason)" : reason);
        } catch (StatusRuntimeException e) {
            throw failure(e, who);
        } catch (MiddlewareException e) {
            throw prefixed(e, who);
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            throw new MiddlewareException(StageFailureCodes.ADAPTER_FAILURE, who + ": " + Transport.oneLine(e), e);
        }
    }

    /**
     * Calls the service's {@code EvaluateHttpRequest}.
     *
     * @throws MiddlewareException always with a {@link StageFailureCodes} code, whatever went wrong
     */
    @Override
    public HttpRequestResult evaluate(HttpRequestEvaluation evaluation) {
        Objects.requireNonNull(evaluation, "evaluation");
        String who = who(evaluation.bindingId());
        try {
            ManifestValidation.Accepted a = binding(evaluation.bindingId());
            usable(who);
            long limit = a.binding().maxBodyBytes();
            var request = ProtoTranslation.evaluation(evaluation, registration.name(), limit);
            var result = stub.withDeadlineAfter(timeout(a), TimeUnit.MILLISECONDS).evaluateHttpRequest(request);
            return ProtoTranslation.result(result, limit, who);
        } catch (StatusRuntimeException e) {
            throw failure(e, who);
        } catch (MiddlewareException e) {
            throw prefixed(e, who);
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            throw new MiddlewareException(StageFailureCodes.ADAPTER_FAILURE, who + ": " + Transport.oneLine(e), e);
        }
    }

    /**
     * Opens the service's {@code HttpResponsePreReturn.Evaluate} stream for one response ({@link GrpcResponseStage}).
     *
     * @throws MiddlewareException {@link StageFailureCodes#UNKNOWN_BINDING} when the service has no response binding
     *     with this ID, or the provider is unusable
     */
    @Override
    public dev.openshell.middleware.spi.HttpResponseStage openResponse(BindingId bindingId) {
        ManifestValidation.Accepted a = responseBindings.get(Objects.requireNonNull(bindingId, "bindingId"));
        String who = who(bindingId);
        if (a == null) {
            throw new MiddlewareException(StageFailureCodes.UNKNOWN_BINDING,
                    who + ": the service does not serve this response binding");
        }
        usable(who);
        return new GrpcResponseStage(channel, registration.name(), who, timeout(a), e -> failure(e, who));
    }

    /**
     * Opens one {@code EvaluateWebSocketSession} stream for a session's direction; the service advertised the
     * direction's {@code WEBSOCKET_MESSAGE} binding.
     *
     * @throws MiddlewareException when the binding or direction is not served, or the service is unusable
     */
    @Override
    public WebSocketSession openWebSocketSession(BindingId bindingId, Phase phase) {
        String who = who(bindingId);
        binding(bindingId);
        if (!messagePhases.contains(phase)) {
            throw new MiddlewareException(StageFailureCodes.UNKNOWN_BINDING, who + ": no WEBSOCKET_MESSAGE/"
                    + phase + " binding");
        }
        usable(who);
        return new GrpcWebSocketSession(channel, registration.name(), who);
    }

    /** Stops the background probe and shuts the channel down; later calls fail with {@code provider_closed}. */
    @Override
    public void close() {
        Thread p;
        synchronized (lock) {
            if (state == State.CLOSED) {
                return;
            }
            state = State.CLOSED;
            p = prober;
            prober = null;
        }
        closed.countDown();
        if (p != null) {
            p.interrupt();
        }
        channel.shutdownNow();
        try {
            if (p != null) {
                p.join(Duration.ofSeconds(2));
            }
            channel.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "GrpcMiddlewareProvider[" + registration.name() + ", " + registration.endpoint() + ", " + state + "]";
    }

    // ---- internals ---------------------------------------------------------------------------------------------

    private ManifestValidation.Accepted binding(BindingId id) {
        ManifestValidation.Accepted a = bindings.get(Objects.requireNonNull(id, "bindingId"));
        if (a == null) {
            throw new MiddlewareException(StageFailureCodes.UNKNOWN_BINDING,
                    who(id) + ": the service does not serve this binding");
        }
        return a;
    }

    private long timeout(ManifestValidation.Accepted a) {
        return a.binding().timeout().orElse(registration.timeout()).toMillis();
    }

    private String who(BindingId id) {
        return "binding '" + id + "' (middleware service '" + registration.name() + "')";
    }

    private void usable(String who) {
        switch (state) {
            case AVAILABLE -> { }
            case UNAVAILABLE -> throw new MiddlewareException(StageFailureCodes.SERVICE_UNAVAILABLE,
                    who + ": the service is unavailable; retrying in the background");
            case MANIFEST_CHANGED -> throw new MiddlewareException(StageFailureCodes.SERVICE_MANIFEST_CHANGED,
                    who + ": the service came back with different bindings; restart the supervisor to register "
                            + "it again");
            case CLOSED -> throw new MiddlewareException(StageFailureCodes.PROVIDER_CLOSED,
                    who + ": the provider is closed");
        }
    }

    private static MiddlewareException prefixed(MiddlewareException e, String who) {
        String msg = e.getMessage() == null ? "" : e.getMessage();
        return msg.startsWith(who) ? e : new MiddlewareException(e.code(), who + ": " + msg, e);
    }

    private MiddlewareException failure(StatusRuntimeException e, String who) {
        Status.Code code = e.getStatus().getCode();
        String detail = Transport.describe(e);
        return switch (code) {
            case UNAVAILABLE -> {
                markUnavailable(StageFailureCodes.SERVICE_UNAVAILABLE, detail);
                yield new MiddlewareException(StageFailureCodes.SERVICE_UNAVAILABLE, who + ": " + detail, e);
            }
            case DEADLINE_EXCEEDED -> new MiddlewareException(StageFailureCodes.SERVICE_TIMEOUT,
                    who + ": no answer within the deadline (" + detail + ")", e);
            default -> new MiddlewareException(StageFailureCodes.SERVICE_ERROR, who + ": " + detail, e);
        };
    }

    private void markUnavailable(String code, String detail) {
        synchronized (lock) {
            if (state != State.AVAILABLE) {
                return;
            }
            state = State.UNAVAILABLE;
            LOG.log(System.Logger.Level.WARNING, "external middleware service ''{0}'' ({1}) is unavailable: {2}; its "
                    + "stages fail and follow on_error while it is re-probed in the background", registration.name(),
                    registration.endpoint(), detail);
            prober = Thread.ofVirtual().name("middleware-probe-" + registration.name()).start(this::probe);
        }
        notify(() -> listener.serviceUnavailable(registration.name(), code));
    }

    /** The background probe: Describe with backoff until the service answers with the same bindings. */
    private void probe() {
        boolean changeReported = false;
        for (int attempt = 0; ; attempt++) {
            long base = retry.delay(attempt).toMillis();
            long wait = base - ThreadLocalRandom.current().nextLong(base / 5 + 1);
            try {
                if (closed.await(Math.max(wait, 1), TimeUnit.MILLISECONDS)) {
                    return;
                }
            } catch (InterruptedException e) {
                return;
            }
            channel.resetConnectBackoff();
            dev.openshell.middleware.proto.v1.MiddlewareManifest m;
            try {
                Transport.connect(channel, registration.timeout());
            } catch (InterruptedException e) {
                return;
            }
            try {
                m = stub.withDeadlineAfter(registration.timeout().toMillis(), TimeUnit.MILLISECONDS)
                        .describe(Empty.getDefaultInstance());
            } catch (StatusRuntimeException e) {
                if (closed.getCount() == 0) {
                    return;
                }
                continue;
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "probe of middleware service ''{0}'' failed: {1}",
                        registration.name(), Transport.oneLine(e));
                continue;
            }
            Optional<String> difference = ManifestValidation.difference(m, registration, accepted);
            int attempts = attempt + 1;
            synchronized (lock) {
                if (state == State.CLOSED) {
                    return;
                }
                if (difference.isEmpty()) {
                    state = State.AVAILABLE;
                    prober = null;
                    LOG.log(System.Logger.Level.INFO, "external middleware service ''{0}'' ({1}) recovered after {2} "
                            + "probe(s); its stages run again", registration.name(), registration.endpoint(), attempts);
                } else {
                    state = State.MANIFEST_CHANGED;
                }
            }
            if (difference.isEmpty()) {
                notify(() -> listener.serviceRecovered(registration.name(), attempts));
                return;
            }
            if (!changeReported) {
                changeReported = true;
                LOG.log(System.Logger.Level.WARNING, "external middleware service ''{0}'' ({1}) answers again, but "
                        + "{2}; its stages keep failing until the supervisor restarts", registration.name(),
                        registration.endpoint(), difference.get());
                notify(() -> listener.serviceManifestChanged(registration.name(), difference.get()));
            }
        }
    }

    private void notify(Runnable event) {
        try {
            event.run();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "registry listener failed: {0}", Transport.oneLine(e));
        }
    }
}
