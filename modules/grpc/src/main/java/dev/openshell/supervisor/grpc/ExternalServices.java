package dev.openshell.supervisor.grpc;

import com.google.protobuf.Empty;
import dev.openshell.middleware.proto.v1.MiddlewareManifest;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewareGrpc;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.internal.RpcTimeout;
import dev.openshell.middleware.spi.internal.Syntax;
import dev.openshell.supervisor.engine.PluginFailure;
import dev.openshell.supervisor.engine.ProviderOrigin;
import dev.openshell.supervisor.engine.RegisteredBinding;
import dev.openshell.supervisor.grpc.auth.CallerTokens;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.eclipse.collections.api.factory.Lists;
import org.eclipse.collections.api.list.ImmutableList;

/**
 * The registry of external middleware services (RFC 0009, "Registration and delivery"): connects to every
 * {@link ServiceRegistration}, calls {@code Describe}, validates the manifest, and yields the accepted bindings as
 * {@link RegisteredBinding} claims of kind {@link ProviderOrigin.Kind#EXTERNAL}, ready to pass to
 * {@code ProviderRegistry.assemble} together with the built-in and plugin claims (built-ins first: "Supervisors install
 * built-in bindings before attempting external connections").
 *
 * <h2>What start-up rejects (each rejection is a {@link PluginFailure}; the service contributes no binding)</h2>
 * <ul>
 *   <li>Two registrations with the same name: all of them (the name identifies the connection in logs, and may stand
 *       in for a binding ID).</li>
 *   <li>A service that cannot be set up (unreadable or invalid PEM files) or does not answer {@code Describe} within
 *       the registration's timeout ("Startup rejects unavailable or invalid services").</li>
 *   <li>An invalid manifest: see {@code ManifestValidation}'s rules (operation and phase, reserved
 *       {@code openshell/} claims, binding ID grammar and uniqueness, a registration {@code max_body_bytes} above a
 *       binding's capability, an invalid advertised timeout, text fields over 256 bytes).</li>
 * </ul>
 * Duplicate binding IDs across services, and against built-ins or plugins, are refused by
 * {@code ProviderRegistry.assemble}, which names every owner.
 *
 * <p>Plaintext registrations ({@code http://} with {@code allow_insecure = true}) are reported to
 * {@link RegistryListener#plaintextRegistration} before connecting (the console warning is the gateway
 * configuration's, given once by its loader).
 *
 * <p>Services are contacted in parallel, one virtual thread each; the result keeps registration order. Closing the
 * registry closes every provider (background probes stop, channels shut down).
 */
public final class ExternalServices implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ExternalServices.class.getName());

    private final ImmutableList<GrpcMiddlewareProvider> providers;
    private final ImmutableList<RegisteredBinding> claims;
    private final ImmutableList<PluginFailure> failures;
    private final ImmutableList<String> notes;

    private ExternalServices(List<GrpcMiddlewareProvider> providers, List<RegisteredBinding> claims,
                             List<PluginFailure> failures, List<String> notes) {
        this.notes = Lists.immutable.ofAll(notes);
        this.providers = Lists.immutable.ofAll(providers);
        this.claims = Lists.immutable.ofAll(claims);
        this.failures = Lists.immutable.ofAll(failures);
    }

    /**
     * Connects with the default {@link RetryPolicy} and no listener.
     *
     * @param registrations the operator's registrations, in configuration order
     * @return the registry; never {@code null}
     */
    public static ExternalServices connect(List<ServiceRegistration> registrations) {
        return connect(registrations, RegistryListener.NONE, RetryPolicy.DEFAULT);
    }

    /**
     * Connects to every registration, validates, and collects claims and refusals. Never throws for a bad service.
     * Services are contacted in parallel; each takes at most its connection budget ({@code max(timeout, 5 s)}) plus
     * its {@code Describe} deadline ({@code timeout}).
     *
     * @param registrations the operator's registrations, in configuration order
     * @param listener receives plaintext-registration and availability events
     * @param retry backoff of the background probe after a service becomes unavailable
     * @return the registry; never {@code null}
     */
    public static ExternalServices connect(List<ServiceRegistration> registrations, RegistryListener listener,
                                           RetryPolicy retry) {
        return connect(registrations, listener, retry, CallerTokens.NONE);
    }

    /**
     * Connects as {@link #connect(List, RegistryListener, RetryPolicy)} does, sending an extension token on every call
     * to each {@code https://} registration (RFC 0009 appendix "Extension Authentication"; none to plaintext ones),
     * and refusing a registration whose service advertises an {@code expected_audience} other than the registration's
     * {@code audience} after an authenticated {@code Describe} (the refusal names both).
     *
     * @param registrations the operator's registrations, in configuration order
     * @param listener receives plaintext-registration and availability events
     * @param retry backoff of the background probe after a service becomes unavailable
     * @param tokens the caller tokens; {@link CallerTokens#NONE} sends none
     * @return the registry; never {@code null}
     */
    public static ExternalServices connect(List<ServiceRegistration> registrations, RegistryListener listener,
                                           RetryPolicy retry, CallerTokens tokens) {
        Objects.requireNonNull(tokens, "tokens");
        List<ServiceRegistration> regs = List.copyOf(registrations);
        Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(retry, "retry");
        Map<String, List<ServiceRegistration>> byName = regs.stream()
                .collect(Collectors.groupingBy(ServiceRegistration::name));
        List<Slot> slots = new ArrayList<>();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (ServiceRegistration reg : regs) {
                List<ServiceRegistration> same = byName.get(reg.name());
                if (same.size() > 1) {
                    String endpoints = same.stream().map(r -> r.endpoint().toString())
                            .collect(Collectors.joining(", "));
                    slots.add(new Slot(reg, null, new PluginFailure(origin(reg).describe(),
                            "registration name '%s' is used by %d registrations (%s); all of them refused"
                                    .formatted(reg.name(), same.size(), endpoints))));
                    continue;
                }
                if (reg.plaintext()) {
                    // the operator is warned once, by the gateway configuration's own warning (with file, line and
                    // column); the listener records the insecure registration as an auditable event
                    try {
                        listener.plaintextRegistration(reg.name(), reg.endpoint());
                    } catch (RuntimeException e) {
                        LOG.log(System.Logger.Level.WARNING, "registry listener failed: {0}", Transport.oneLine(e));
                    }
                }
                slots.add(new Slot(reg, pool.submit(() -> connectOne(reg, listener, retry, tokens)), null));
            }
        }
        List<GrpcMiddlewareProvider> providers = new ArrayList<>();
        List<RegisteredBinding> claims = new ArrayList<>();
        List<PluginFailure> failures = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        for (Slot s : slots) {
            if (s.failure != null) {
                failures.add(s.failure);
                continue;
            }
            Outcome o = join(s);
            if (o.failure != null) {
                failures.add(o.failure);
                continue;
            }
            providers.add(o.provider);
            notes.addAll(o.notes);
            for (MiddlewareBinding b : o.provider.manifest().bindings()) {
                claims.add(new RegisteredBinding(b, o.provider, o.provider.manifest().name(), o.provider.origin()));
            }
        }
        for (PluginFailure f : failures) {
            LOG.log(System.Logger.Level.WARNING, "external middleware service refused: {0}", f);
        }
        return new ExternalServices(providers, claims, failures, notes);
    }

    /** {@return one claim per accepted binding, in registration order} */
    public ImmutableList<RegisteredBinding> claims() {
        return claims;
    }

    /** {@return every refused registration, in registration order} */
    public ImmutableList<PluginFailure> failures() {
        return failures;
    }

    /**
     * {@return what an accepted service's manifest asked for and did not get, one line each, prefixed with the
     * registration (a binding timeout above the registration's, capped to it)}
     */
    public ImmutableList<String> notes() {
        return notes;
    }

    /** {@return the provider of every accepted service, in registration order} */
    public ImmutableList<GrpcMiddlewareProvider> providers() {
        return providers;
    }

    /**
     * {@return the provider of a registration, if it was accepted}
     *
     * @param name the registration name
     */
    public Optional<GrpcMiddlewareProvider> provider(String name) {
        return providers.detectOptional(p -> p.registration().name().equals(name));
    }

    /** Closes every provider: background probes stop and channels shut down. */
    @Override
    public void close() {
        providers.forEach(GrpcMiddlewareProvider::close);
    }

    // ---- internals ---------------------------------------------------------------------------------------------

    private record Slot(ServiceRegistration reg, Future<Outcome> outcome, PluginFailure failure) {
    }

    private record Outcome(GrpcMiddlewareProvider provider, PluginFailure failure, List<String> notes) {
        Outcome(GrpcMiddlewareProvider provider, PluginFailure failure) {
            this(provider, failure, List.of());
        }
    }

    static ProviderOrigin origin(ServiceRegistration reg) {
        return new ProviderOrigin(ProviderOrigin.Kind.EXTERNAL, reg.name(), Optional.of(reg.endpoint().toString()));
    }

    private static Outcome join(Slot s) {
        try {
            return s.outcome.get();
        } catch (ExecutionException e) {
            return refused(s.reg, "unexpected failure while connecting: " + Transport.oneLine(e.getCause()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return refused(s.reg, "interrupted while connecting");
        }
    }

    private static Outcome connectOne(ServiceRegistration reg, RegistryListener listener, RetryPolicy retry,
                                      CallerTokens tokens) {
        ManagedChannel channel;
        try {
            channel = Transport.open(reg, tokens, List.of());
        } catch (java.io.IOException | RuntimeException e) {
            return refused(reg, "cannot set up the " + (reg.plaintext() ? "plaintext" : "TLS") + " channel: "
                    + Transport.oneLine(e));
        }
        boolean keep = false;
        try {
            MiddlewareManifest m;
            try {
                Transport.connect(channel, reg.timeout());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return refused(reg, "interrupted while connecting");
            }
            Optional<String> tokenProblem = mintFirstToken(reg, tokens);
            if (tokenProblem.isPresent()) {
                return refused(reg, tokenProblem.get());
            }
            try {
                m = SupervisorMiddlewareGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(reg.timeout().toMillis(), TimeUnit.MILLISECONDS)
                        .describe(Empty.getDefaultInstance());
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() == io.grpc.Status.Code.UNAUTHENTICATED) {
                    return refused(reg, "Describe was refused UNAUTHENTICATED: the service did not accept "
                            + (reg.plaintext() || tokens == CallerTokens.NONE ? "a call without an extension token"
                            : "the extension token for audience " + Syntax.quote(reg.audience()) + " (check the "
                            + "service's audience, issuer and JWKS)"));
                }
                return refused(reg, "Describe failed within the %s timeout: %s; the service is unavailable or "
                        .formatted(RpcTimeout.format(reg.timeout()), Transport.describe(e))
                        + "does not speak openshell.middleware.v1");
            }
            Optional<String> audienceProblem = audienceProblem(m, reg, tokens);
            if (audienceProblem.isPresent()) {
                return refused(reg, audienceProblem.get());
            }
            ManifestValidation.Outcome o = ManifestValidation.check(m, reg);
            if (!o.ok()) {
                return refused(reg, "invalid manifest: " + String.join("; ", o.problems()));
            }
            for (String skipped : o.skipped()) {
                LOG.log(System.Logger.Level.INFO, "middleware service ''{0}'': skipping {1}", reg.name(), skipped);
            }
            keep = true;
            for (String note : o.notes()) {
                LOG.log(System.Logger.Level.WARNING, "middleware service ''{0}'': {1}", reg.name(), note);
            }
            return new Outcome(new GrpcMiddlewareProvider(reg, channel, o, listener, retry), null,
                    o.notes().stream().map(n -> "middleware service '" + reg.name() + "': " + n).toList());
        } finally {
            if (!keep) {
                channel.shutdownNow();
            }
        }
    }

    /**
     * Mints (and caches) the first extension token before {@code Describe}, with connection set-up: in a fresh process
     * the first token loads the JOSE and Ed25519 classes, which must not eat the {@code Describe} deadline.
     */
    private static Optional<String> mintFirstToken(ServiceRegistration reg, CallerTokens tokens) {
        if (reg.plaintext() || tokens == CallerTokens.NONE) {
            return Optional.empty();
        }
        try {
            tokens.token(reg.audience());
            return Optional.empty();
        } catch (RuntimeException e) {
            return Optional.of("cannot make the extension token: " + Transport.oneLine(e));
        }
    }

    /**
     * The audience agreement (RFC 0009 appendix "Extension Authentication", "Audience agreement"): after an
     * authenticated {@code Describe}, a non-empty {@code expected_audience} must equal the registration's audience.
     * Skipped for registrations that send no token. The service's value is quoted, escaped and cut.
     */
    static Optional<String> audienceProblem(MiddlewareManifest m, ServiceRegistration reg, CallerTokens tokens) {
        String expected = m.getExpectedAudience();
        if (reg.plaintext() || tokens == CallerTokens.NONE || expected.isEmpty() || expected.equals(reg.audience())) {
            return Optional.empty();
        }
        return Optional.of("the service verifies audience " + Syntax.quote(expected) + " (expected_audience in its "
                + "Describe manifest) but this registration's audience is " + Syntax.quote(reg.audience())
                + "; set audience to the service's value, or reconfigure the service");
    }

    private static Outcome refused(ServiceRegistration reg, String message) {
        return new Outcome(null, new PluginFailure(origin(reg).describe(), message));
    }

    @Override
    public String toString() {
        return "ExternalServices[" + providers.size() + " services, " + claims.size() + " bindings, "
                + failures.size() + " refused]";
    }
}
