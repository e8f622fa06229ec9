package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.audit.ConfigChange;
import dev.openshell.middleware.spi.BindingId;
import dev.openshell.supervisor.audit.AuditSink;
import dev.openshell.supervisor.audit.JsonlAuditSink;
import dev.openshell.supervisor.audit.OcsfEvents;
import dev.openshell.supervisor.audit.SupervisorMetrics;
import dev.openshell.supervisor.engine.chain.BulkLane;
import dev.openshell.supervisor.engine.chain.ChainEngine;
import dev.openshell.supervisor.engine.chain.StagePool;
import dev.openshell.supervisor.grpc.RegistryListener;
import dev.openshell.supervisor.grpc.auth.ExtensionTokenIssuer;
import dev.openshell.supervisor.policy.gateway.GatewayConfig;
import dev.openshell.supervisor.policy.gateway.LimitsSettings;
import dev.openshell.supervisor.policy.gateway.ListenAddress;
import dev.openshell.supervisor.policy.gateway.SupervisorSettings;
import dev.openshell.supervisor.proxy.SupervisorProxy;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The parts {@link Supervisor#start} assembles, each built here from the gateway configuration and the options: the
 * audit sink, the token issuer, the admin listener, the registry listener, the stage pool and the chain engine, the
 * proxy; and the start-up reports (process identity). Nothing here holds state.
 */
final class SupervisorParts {
    private static final System.Logger LOG = System.getLogger(Supervisor.class.getName());

    private SupervisorParts() {
    }

    /** {@return the proxy, configured from the options and the gateway's settings, not yet started} */
    static SupervisorProxy proxy(Supervisor.Options options, GatewayConfig gateway, Path stateDir,
                                 RuntimeSteps steps, AuditSink audit) {
        SupervisorSettings settings = gateway.supervisor();
        ListenAddress listen = options.listen().map(ListenAddress::parse).orElse(settings.listen());
        SupervisorProxy.Builder pb = SupervisorProxy.builder()
                .listen(new InetSocketAddress(listen.address(), listen.port()))
                .stateDirectory(stateDir)
                .policy(steps)
                .auditLog(audit::awaitWritten)
                .network(Supervisor.networkSettings(gateway));
        settings.tls().upstreamCaBundle().ifPresent(pb::upstreamTrust);
        settings.bodyBufferBudgetBytes().ifPresent(pb::bodyBufferBudget);
        settings.limits().maxConnections().ifPresent(n -> pb.maxConnections((int) n));
        settings.limits().maxConnectionsPerClient().ifPresent(n -> pb.maxConnectionsPerClient((int) n));
        settings.limits().requestHeadTimeoutMillis().ifPresent(ms -> pb.requestHeadTimeout(Duration.ofMillis(ms)));
        settings.limits().bodyBufferTimeoutMillis().ifPresent(ms -> pb.bodyBufferTimeout(Duration.ofMillis(ms)));
        settings.limits().bodyMinBytesPerSecond().ifPresent(pb::bodyMinBytesPerSecond);
        settings.limits().bodyBufferClientSharePercent().ifPresent(p -> pb.bodyBufferClientSharePercent((int) p));
        settings.limits().maxConcurrentMiddlewareWork().ifPresent(n -> pb.maxMiddlewareWork((int) n));
        settings.limits().maxQueuedMiddlewareWork().ifPresent(n -> pb.maxQueuedMiddlewareWork((int) n));
        settings.limits().maxConnectionsPerProcess().ifPresent(n -> pb.maxConnectionsPerProcess((int) n));
        pb.connectionOwner(steps::owner);
        if (settings.tls().caCert().isPresent() && settings.tls().caKey().isPresent()) {
            pb.operatorCa(settings.tls().caCert().get(), settings.tls().caKey().get());
        }
        return pb.build();
    }

    /**
     * Logs how processes are identified; {@code endpoint-only} (binary scoping off) is a warning and an At Risk
     * configuration event, as is a platform where identification is unavailable.
     */
    static void reportIdentity(Identities identities, AuditSink audit, OcsfEvents events,
                                       Optional<Path> gatewayFile) {
        String subject = gatewayFile.map(Path::toString).orElse("(no gateway configuration)");
        if (!identities.settings().enforced()) {
            LOG.log(System.Logger.Level.WARNING, "binary scoping is off ([openshell.supervisor.identity] mode ="
                    + " \"endpoint-only\"): network policies with binaries admit every process");
            SupervisorParts.emitWritten(audit, events.configChange(ConfigChange.BINARY_SCOPING_OFF, true, subject,
                    "identity mode endpoint-only"));
        } else if (!Identities.platformSupported()) {
            LOG.log(System.Logger.Level.WARNING, "process identity is unavailable on this platform (it needs Linux"
                    + " /proc): network policies with binaries admit no connection");
        } else {
            LOG.log(System.Logger.Level.INFO, "process identity: enforce"
                    + identities.settings().entrypointPid().stream().mapToObj(p -> ", entrypoint " + p)
                    .findFirst().orElse(""));
        }
    }

    static ExtensionTokenIssuer openTokens(GatewayConfig gateway, Path stateDir) {
        try {
            return ExtensionAuth.open(gateway, stateDir);
        } catch (java.io.IOException | RuntimeException e) {
            throw new Supervisor.StartupException("cannot open the extension token signing keys: " + e.getMessage(), e);
        }
    }

    /** Starts the admin listener unless it is {@code off}; {@code null} then. */
    static AdminServer startAdmin(Supervisor.Options options, SupervisorSettings settings, SupervisorMetrics metrics,
                                          AtomicBoolean ready, ExtensionTokenIssuer tokens) {
        String adminSpec = options.adminListen().orElseGet(() -> settings.adminListen()
                .map(ListenAddress::toString).orElse(Supervisor.DEFAULT_ADMIN.toString()));
        if (adminSpec.equals("off")) {
            return null;
        }
        ListenAddress a = ListenAddress.parse(adminSpec);
        return AdminServer.start(new InetSocketAddress(a.address(), a.port()), metrics, ready::get, tokens);
    }

    static RegistryListener listener(AuditSink audit, OcsfEvents events, SupervisorMetrics metrics) {
        return new RegistryListener() {
            @Override
            public void plaintextRegistration(String name, URI endpoint) {
                // the console warning is the gateway configuration's (once, with file:line:col); this is the event
                SupervisorParts.emitWritten(audit, events.configChange(ConfigChange.INSECURE_REGISTRATION, true, name,
                        "plaintext gRPC under allow_insecure"));
            }

            @Override
            public void serviceUnavailable(String name, String code) {
                LOG.log(System.Logger.Level.WARNING, "middleware service ''{0}'' unavailable ({1}); its stages "
                        + "follow on_error while it is retried", name, code);
                metrics.serviceUp(name, false);
            }

            @Override
            public void serviceRecovered(String name, int attempts) {
                LOG.log(System.Logger.Level.INFO, "middleware service ''{0}'' recovered after {1} probe(s)", name,
                        attempts);
                metrics.serviceUp(name, true);
            }
        };
    }

    /**
     * Stages the engine runs on the request's own thread instead of handing them to a new thread it can stop waiting
     * for: the bounded built-ins ({@link ChainEngine#BOUNDED_BUILT_IN_STAGES}) and stages served by this supervisor's
     * gRPC adapter, whose calls carry a gRPC deadline equal to the stage's effective timeout (the binding's advertised
     * timeout, else the registration's: {@link Generation}), so the call itself ends when the stage's time is up. The
     * adapter's constructor is not public, so no plugin can present a provider of that class. The hand-off cost two
     * thread wake-ups per external call, most of an external stage's supervisor-side CPU under load.
     */
    static final java.util.function.Predicate<dev.openshell.supervisor.engine.chain.StageSpec> INLINE_STAGES =
            ChainEngine.BOUNDED_BUILT_IN_STAGES
                    .or(s -> s.provider() instanceof dev.openshell.supervisor.grpc.GrpcMiddlewareProvider);

    /**
     * {@return the one chain engine; the body-aware L7 re-evaluation is each request's own (L7Step); stages
     * that are not inline run on {@code pool}, the bounded built-ins on large bodies on {@code bulk}}
     */
    static ChainEngine chainEngine(StagePool pool, BulkLane bulk) {
        return ChainEngine.builder().inlineStages(INLINE_STAGES).stagePool(pool).bulkLane(bulk).build();
    }

    /**
     * {@return the pool of platform threads for every stage that does not run inline (plugin stages and built-ins
     * not bounded by construction), sized by {@code [openshell.supervisor.limits]}: {@code stage_threads} (default
     * {@value StagePool#DEFAULT_THREADS}) and
     * {@code max_stuck_stages_per_binding} (default
     * {@value StagePool#DEFAULT_MAX_STUCK_PER_BINDING}, at most the threads).
     * A stuck stage is counted and a binding that becomes unavailable or available again is logged and reported as a
     * Detection Finding (High when unavailable)}
     */
    static StagePool stagePool(
            LimitsSettings limits, AuditSink audit, OcsfEvents events,
            SupervisorMetrics metrics) {
        int threads = (int) limits.stageThreads()
                .orElse(StagePool.DEFAULT_THREADS);
        int stuck = (int) Math.min(threads, limits.maxStuckStagesPerBinding()
                .orElse(StagePool.DEFAULT_MAX_STUCK_PER_BINDING));
        return StagePool.create(threads, stuck,
                new StagePool.Listener() {
                    @Override
                    public void stuck(BindingId binding, int stuckThreads) {
                        metrics.stageStuck(binding.value(), stuckThreads);
                    }

                    @Override
                    public void released(BindingId binding, int stuckThreads) {
                        metrics.stageReleased(binding.value(), stuckThreads);
                    }

                    @Override
                    public void availability(BindingId binding, boolean available,
                                             int stuckThreads) {
                        metrics.bindingAvailable(binding.value(), available);
                        if (available) {
                            LOG.log(System.Logger.Level.INFO, "middleware binding {0} is available again",
                                    binding.value());
                        } else {
                            LOG.log(System.Logger.Level.WARNING, "middleware binding {0} is unavailable: {1} of its"
                                    + " stages overran their timeout and are still running; its stages fail per"
                                    + " on_error until one returns", binding.value(), stuckThreads);
                        }
                        try {
                            SupervisorParts.emitWritten(audit,
                                    events.bindingAvailability(binding.value(), available, stuckThreads, stuck));
                        } catch (RuntimeException e) {
                            LOG.log(System.Logger.Level.WARNING, "audit event for binding availability failed: "
                                    + e.getClass().getSimpleName());
                        }
                    }
                });
    }

    /**
     * Emits a configuration or availability event and waits, bounded, until it is written: these events come from
     * start-up, reloads and the stuck-stage watch, not from a request, so no client write waits for them
     * ({@link AuditSink#awaitWritten}); an operator who sees the start-up line or a reload's log line finds the event in
     * the file.
     */
    static void emitWritten(AuditSink audit, jakarta.json.JsonObject event) {
        long sequence = audit.emit(event);
        if (sequence > 0) {
            audit.awaitWritten(sequence);
        }
    }

    static AuditSink openAudit(Optional<String> spec, Path stateDir, SupervisorMetrics metrics) {
        String s = spec.orElse(stateDir.resolve("audit").resolve("audit.jsonl").toString());
        if (s.equals("-")) {
            return JsonlAuditSink.toStream(System.out, metrics::auditDropped);
        }
        if (s.equals("off")) {
            return AuditSink.discard();
        }
        try {
            return JsonlAuditSink.toFile(Path.of(s), JsonlAuditSink.DEFAULT_MAX_BYTES, Clock.systemUTC(),
                    metrics::auditDropped);
        } catch (IOException e) {
            throw new Supervisor.StartupException("cannot open the audit log " + s + " (" + e.getClass().getSimpleName()
                    + ")", e);
        }
    }

    static String hostname() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "localhost";
        }
    }
}
