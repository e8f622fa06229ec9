package dev.openshell.supervisor.runtime;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.host.HostCapabilities;
import dev.openshell.supervisor.audit.AuditSink;
import dev.openshell.supervisor.audit.JsonlAuditSink;
import dev.openshell.supervisor.audit.OcsfEvents;
import dev.openshell.supervisor.audit.RefusalAudit;
import dev.openshell.supervisor.audit.SupervisorMetrics;
import dev.openshell.supervisor.engine.PluginFailure;
import dev.openshell.supervisor.engine.PluginHost;
import dev.openshell.supervisor.engine.ProviderOrigin;
import dev.openshell.supervisor.engine.ProviderRegistry;
import dev.openshell.supervisor.engine.chain.BulkLane;
import dev.openshell.supervisor.engine.chain.ChainEngine;
import dev.openshell.supervisor.engine.chain.StagePool;
import dev.openshell.supervisor.engine.credentials.CredentialSources;
import dev.openshell.supervisor.grpc.RegistryListener;
import dev.openshell.supervisor.grpc.auth.ExtensionTokenIssuer;
import dev.openshell.supervisor.policy.BindingCatalog;
import dev.openshell.supervisor.policy.ConfigProblem;
import dev.openshell.supervisor.policy.Loaded;
import dev.openshell.supervisor.policy.NetworkEndpoint;
import dev.openshell.supervisor.policy.NetworkPolicy;
import dev.openshell.supervisor.policy.PolicyException;
import dev.openshell.supervisor.policy.SandboxPolicy;
import dev.openshell.supervisor.policy.SandboxPolicyLoader;
import dev.openshell.supervisor.policy.gateway.GatewayConfig;
import dev.openshell.supervisor.policy.gateway.GatewayConfigLoader;
import dev.openshell.supervisor.policy.gateway.LimitsSettings;
import dev.openshell.supervisor.policy.gateway.ListenAddress;
import dev.openshell.supervisor.policy.gateway.SupervisorSettings;
import dev.openshell.supervisor.proxy.NetworkSettings;
import dev.openshell.supervisor.proxy.SupervisorProxy;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * A running supervisor: the proxy listener, the current runtime {@link Generation}, the audit sink, metrics, the
 * admin listener, and live reload of the policy.
 *
 * <p>Start-up order (RFC 0009, "Registration and delivery"): read the gateway configuration; install built-ins and
 * plugins, then connect to the registered external services ({@link ConnectedRegistry}); validate the sandbox policy
 * against them (every binding must exist; every config goes through its provider's {@code validateConfig}); prepare
 * the generation; start the proxy; start the admin listener; start watching the policy file. Any failure before the
 * proxy listens stops start-up with a {@link StartupException} whose message lists every problem with file, line and
 * column.
 *
 * <h2>Live reload</h2>
 * {@link #reload()} (and {@link #requestReload()}, which {@code supervisor run} calls on {@code SIGHUP}) and a change
 * of the policy file (watched, debounced by {@link Options#policyWatch()}) re-read the policy and prepare a candidate
 * generation off to the side, with the connected registry: a policy-only change reuses built-ins, plugins and external
 * connections. Credential files named by the gateway configuration are read again. The candidate replaces the
 * current generation only when complete; requests already selected finish on the generation they started with
 * ({@link RuntimeSteps}). A failed preparation keeps the last-known-good generation serving, logs why (every
 * problem with file, line and column), emits an OCSF config event ({@code registry_reload}, failure), and is retried
 * with backoff from 1 s to 60 s. The gateway configuration is not reloaded (RFC 0009: registration is not
 * hot-reloaded); a change to it is logged as needing a restart.
 */
public final class Supervisor implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Supervisor.class.getName());
    /** Default admin listener. */
    public static final ListenAddress DEFAULT_ADMIN = new ListenAddress("127.0.0.1", 9464);
    /** The name the embedded default policy is reported under. */
    public static final String DEFAULT_POLICY_NAME = "(embedded default policy)";
    /** Default debounce of the policy file watcher: 500 ms. */
    public static final Duration DEFAULT_WATCH_DEBOUNCE = Duration.ofMillis(500);

    private final AtomicReference<Generation> current;
    private final ConnectedRegistry registry;
    private final Options options;
    private final CredentialSources sources;
    private final ChainEngine engine;
    private final AuditSink audit;
    /** The refusal auditor, once the proxy is being built. */
    private volatile RefusalAudit refusals;
    private final SupervisorMetrics metrics;
    private final OcsfEvents events;
    private final String policyName;
    private SupervisorProxy proxy;
    private AdminServer admin;
    /** The platform threads of plugin stages, shared by every engine; closed with the supervisor. */
    private StagePool stagePool;
    private BulkLane bulkLane;
    private Reloader reloader;
    private PolicyWatcher watcher;
    private volatile boolean ready;
    private AtomicBoolean adminReady; // what the admin listener's /health/ready reads
    // the fields below are used by reload attempts only, which run one at a time on the reload thread
    private byte[] installedDigest;
    private byte[] failedDigest;
    private String failedReason;
    private final byte[] gatewayDigest;
    private byte[] warnedGatewayDigest;

    /**
     * What to start; every part overrides the gateway configuration, which overrides the defaults.
     *
     * @param policy the sandbox policy file; empty uses the embedded default (all hosts on ports 80 and 443,
     *     {@code openshell/regex} redacting on every host, {@code fail_closed})
     * @param gateway the gateway configuration file
     * @param listen the proxy listen address ({@code HOST:PORT}; default 127.0.0.1:3128)
     * @param plugins the plugins directory
     * @param stateDir the state directory (the supervisor CA lives in {@code <state>/ca})
     * @param auditLog the audit log file, or {@code -} for standard output
     * @param adminListen the admin listener ({@code HOST:PORT}; default 127.0.0.1:9464), or {@code off}
     * @param environment where {@code env:} credential sources are read
     * @param policyWatch the debounce of the policy file watcher (positive; a burst of changes within it is one
     *     reload); empty does not watch. Ignored without a policy file.
     */
    public record Options(Optional<Path> policy, Optional<Path> gateway, Optional<String> listen,
                          Optional<Path> plugins, Optional<Path> stateDir, Optional<String> auditLog,
                          Optional<String> adminListen, Map<String, String> environment,
                          Optional<Duration> policyWatch) {
        /**
         * Checks the parts.
         *
         * @throws IllegalArgumentException if the watch debounce is zero or negative
         * @throws NullPointerException if a part is {@code null}
         */
        public Options {
            Objects.requireNonNull(policy, "policy");
            Objects.requireNonNull(gateway, "gateway");
            Objects.requireNonNull(listen, "listen");
            Objects.requireNonNull(plugins, "plugins");
            Objects.requireNonNull(stateDir, "stateDir");
            Objects.requireNonNull(auditLog, "auditLog");
            Objects.requireNonNull(adminListen, "adminListen");
            environment = Map.copyOf(environment);
            if (policyWatch.filter(d -> d.isNegative() || d.isZero()).isPresent()) {
                throw new IllegalArgumentException("the policy watch debounce must be positive");
            }
        }

        /**
         * Options that watch the policy file with the {@linkplain #DEFAULT_WATCH_DEBOUNCE default debounce}.
         *
         * @param policy the sandbox policy file
         * @param gateway the gateway configuration file
         * @param listen the proxy listen address
         * @param plugins the plugins directory
         * @param stateDir the state directory
         * @param auditLog the audit log
         * @param adminListen the admin listener
         * @param environment where {@code env:} credential sources are read
         */
        public Options(Optional<Path> policy, Optional<Path> gateway, Optional<String> listen,
                       Optional<Path> plugins, Optional<Path> stateDir, Optional<String> auditLog,
                       Optional<String> adminListen, Map<String, String> environment) {
            this(policy, gateway, listen, plugins, stateDir, auditLog, adminListen, environment,
                    Optional.of(DEFAULT_WATCH_DEBOUNCE));
        }

        /** {@return options with nothing set: the defaults} */
        public static Options defaults() {
            return new Options(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                    Optional.empty(), Optional.empty(), Optional.empty(), System.getenv());
        }

        /**
         * {@return these options with another policy watch setting}
         *
         * @param debounce the watcher's debounce, or empty not to watch
         */
        public Options withPolicyWatch(Optional<Duration> debounce) {
            return new Options(policy, gateway, listen, plugins, stateDir, auditLog, adminListen, environment,
                    debounce);
        }
    }

    /** Start-up failed; the message is complete and safe to print. */
    public static final class StartupException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        StartupException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private Supervisor(Options options, ConnectedRegistry registry, AuditSink audit, SupervisorMetrics metrics,
                       OcsfEvents events, AtomicReference<Generation> current, ChainEngine engine) {
        this.options = options;
        this.registry = registry;
        this.audit = audit;
        this.metrics = metrics;
        this.events = events;
        this.current = current;
        this.engine = engine;
        this.sources = new CredentialSources(options.environment());
        this.policyName = options.policy().map(Path::toString).orElse(DEFAULT_POLICY_NAME);
        this.gatewayDigest = options.gateway().map(Supervisor::digestOf).orElse(null);
    }

    /**
     * Loads everything and starts listening.
     *
     * @param options what to start
     * @return the running supervisor
     * @throws StartupException with every problem, when anything cannot be loaded or bound
     */
    public static Supervisor start(Options options) {
        Optional<Loaded<GatewayConfig>> gatewayLoaded;
        try {
            gatewayLoaded = options.gateway().map(GatewayConfigLoader::load);
        } catch (PolicyException e) {
            throw new StartupException(describe(e), e);
        }
        GatewayConfig gateway = gatewayLoaded.map(Loaded::value).orElseGet(ConnectedRegistry::defaultGateway);
        gatewayLoaded.ifPresent(g -> g.warnings().forEach(w -> LOG.log(System.Logger.Level.WARNING, w.describe())));
        SupervisorSettings settings = gateway.supervisor();
        Path stateDir = stateDirectory(options.stateDir(), gateway);
        Optional<Path> pluginsDir = pluginsDirectory(options.plugins(), gateway);
        Optional<String> pluginsProblem = pluginsDir.flatMap(PluginHost::directoryProblem);
        if (pluginsProblem.isPresent()) {
            throw new StartupException(pluginsProblem.get() + " (" + (options.plugins().isPresent() ? "--plugins"
                    : gateway.supervisor().pluginsDir().isPresent() ? "plugins_dir of the gateway configuration"
                    : "the image's plugins directory") + ")", null);
        }

        SupervisorMetrics metrics = new SupervisorMetrics();
        OcsfEvents events = new OcsfEvents(version(), hostname(), Clock.systemUTC());
        AuditSink audit = openAudit(options.auditLog().or(() -> settings.auditLog().map(Path::toString)), stateDir,
                metrics);
        Supervisor s = null;
        AdminServer admin = null;
        AtomicBoolean ready = new AtomicBoolean();
        try {
            ExtensionTokenIssuer tokens = openTokens(gateway, stateDir);
            // before the first Describe: a service may fetch the JWKS for the supervisor's first call
            admin = startAdmin(options, settings, metrics, ready, tokens);
            AtomicReference<Generation> current = new AtomicReference<>();
            // restricted built-ins (openshell/sigv4) get the serving generation's credentials with each request from
            // the engine; these bound capabilities only serve a direct call outside a request, from the current one
            HostCapabilities capabilities = HostCapabilities.of((name, h) -> Optional.ofNullable(current.get())
                    .flatMap(gen -> gen.credentials().lookup(name, h)));
            ConnectedRegistry registry = ConnectedRegistry.connect(gatewayLoaded, pluginsDir, capabilities,
                    listener(audit, events, metrics), true, tokens);
            StagePool pool = stagePool(settings.limits(), audit, events, metrics);
            BulkLane bulk = BulkLane.create();
            ChainEngine engine = chainEngine(pool, bulk);
            try {
                s = new Supervisor(options, registry, audit, metrics, events, current, engine);
            } catch (RuntimeException e) {
                pool.close();
                bulk.close();
                throw e;
            }
            s.stagePool = pool;
            s.bulkLane = bulk;
            s.reportRegistry();
            s.installFirst();

            Identities identities = Identities.create(settings.identity());
            reportIdentity(identities, audit, events, options.gateway());
            RefusalAudit refusals = new RefusalAudit(events, audit, metrics, Clock.systemUTC());
            s.refusals = refusals;
            refusals.start();
            RuntimeSteps steps = new RuntimeSteps(current::get, engine,
                    new ExchangeAudit(events, audit, metrics, refusals), identities);
            ListenAddress listen = options.listen().map(ListenAddress::parse).orElse(settings.listen());
            SupervisorProxy.Builder pb = SupervisorProxy.builder()
                    .listen(new InetSocketAddress(listen.address(), listen.port()))
                    .stateDirectory(stateDir)
                    .policy(steps)
                    .auditLog(audit::awaitWritten)
                    .network(networkSettings(gateway));
            settings.tls().upstreamCaBundle().ifPresent(pb::upstreamTrust);
            settings.bodyBufferBudgetBytes().ifPresent(pb::bodyBufferBudget);
            settings.limits().maxConnections().ifPresent(n -> pb.maxConnections((int) n));
            settings.limits().maxConnectionsPerClient().ifPresent(n -> pb.maxConnectionsPerClient((int) n));
            settings.limits().requestHeadTimeoutMillis()
                    .ifPresent(ms -> pb.requestHeadTimeout(Duration.ofMillis(ms)));
            settings.limits().bodyBufferTimeoutMillis()
                    .ifPresent(ms -> pb.bodyBufferTimeout(Duration.ofMillis(ms)));
            settings.limits().bodyMinBytesPerSecond().ifPresent(pb::bodyMinBytesPerSecond);
            settings.limits().bodyBufferClientSharePercent().ifPresent(p -> pb.bodyBufferClientSharePercent((int) p));
            if (settings.tls().caCert().isPresent() && settings.tls().caKey().isPresent()) {
                pb.operatorCa(settings.tls().caCert().get(), settings.tls().caKey().get());
            }
            s.proxy = pb.build();
            s.proxy.start();
            s.admin = admin;
            s.adminReady = ready;
            admin = null;
            s.startReloading();
            s.ready = true;
            ready.set(true);
            return s;
        } catch (PolicyException e) {
            emitWritten(audit, events.configChange(OcsfEvents.ConfigChange.POLICY_VALIDATION, false, e.file(),
                    e.errors().size() + " errors"));
            closeQuietly(admin);
            closeQuietly(s, audit);
            throw new StartupException(describe(e), e);
        } catch (StartupException e) {
            closeQuietly(admin);
            closeQuietly(s, audit);
            throw e;
        } catch (RuntimeException e) {
            closeQuietly(admin);
            closeQuietly(s, audit);
            throw new StartupException(e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage(), e);
        }
    }

    /**
     * Logs how processes are identified; {@code endpoint-only} (binary scoping off) is a warning and an At Risk
     * configuration event, as is a platform where identification is unavailable.
     */
    private static void reportIdentity(Identities identities, AuditSink audit, OcsfEvents events,
                                       Optional<Path> gatewayFile) {
        String subject = gatewayFile.map(Path::toString).orElse("(no gateway configuration)");
        if (!identities.settings().enforced()) {
            LOG.log(System.Logger.Level.WARNING, "binary scoping is off ([openshell.supervisor.identity] mode ="
                    + " \"endpoint-only\"): network policies with binaries admit every process");
            emitWritten(audit, events.configChange(OcsfEvents.ConfigChange.BINARY_SCOPING_OFF, true, subject,
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

    /**
     * {@return the proxy's network settings from the gateway's {@code [openshell.supervisor.network]}}
     *
     * @param gateway the gateway configuration
     */
    public static NetworkSettings networkSettings(GatewayConfig gateway) {
        SupervisorSettings settings = gateway.supervisor();
        return new NetworkSettings(settings.network().allowLoopbackUpstreams(),
                Map.copyOf(settings.network().staticHosts().castToSortedMap()));
    }

    private static void closeQuietly(AdminServer admin) {
        if (admin != null) {
            admin.close();
        }
    }

    private static ExtensionTokenIssuer openTokens(GatewayConfig gateway, Path stateDir) {
        try {
            return ExtensionAuth.open(gateway, stateDir);
        } catch (java.io.IOException | RuntimeException e) {
            throw new StartupException("cannot open the extension token signing keys: " + e.getMessage(), e);
        }
    }

    /** Starts the admin listener unless it is {@code off}; {@code null} then. */
    private static AdminServer startAdmin(Options options, SupervisorSettings settings, SupervisorMetrics metrics,
                                          AtomicBoolean ready, ExtensionTokenIssuer tokens) {
        String adminSpec = options.adminListen().orElseGet(() -> settings.adminListen()
                .map(ListenAddress::toString).orElse(DEFAULT_ADMIN.toString()));
        if (adminSpec.equals("off")) {
            return null;
        }
        ListenAddress a = ListenAddress.parse(adminSpec);
        return AdminServer.start(new InetSocketAddress(a.address(), a.port()), metrics, ready::get, tokens);
    }

    private static void closeQuietly(Supervisor s, AuditSink audit) {
        if (s != null) {
            s.close();
        } else {
            audit.close();
        }
    }

    /**
     * {@return the state directory: the option, else the gateway's {@code state_dir}, else
     * {@code ~/.openshell/supervisor}}
     *
     * @param option the command-line option
     * @param gateway the gateway configuration
     */
    public static Path stateDirectory(Optional<Path> option, GatewayConfig gateway) {
        return option.or(() -> gateway.supervisor().stateDir())
                .orElse(Path.of(System.getProperty("user.home"), ".openshell", "supervisor"));
    }

    /**
     * {@return the plugins directory: the option, else the gateway's {@code plugins_dir}, else the image's
     * {@code plugins/} (from {@code -Dsupervisor.home}), else none}
     *
     * @param option the command-line option
     * @param gateway the gateway configuration
     */
    public static Optional<Path> pluginsDirectory(Optional<Path> option, GatewayConfig gateway) {
        return option.or(() -> gateway.supervisor().pluginsDir())
                .or(() -> Optional.ofNullable(System.getProperty("supervisor.home")).map(h -> Path.of(h, "plugins")));
    }

    private void reportRegistry() {
        for (PluginFailure f : registry.pluginRefusals()) {
            emitWritten(audit, events.configChange(OcsfEvents.ConfigChange.REGISTRATION_VALIDATION, false, f.source(),
                    "plugin refused"));
        }
        for (PluginFailure f : registry.serviceRefusals()) {
            LOG.log(System.Logger.Level.WARNING, "middleware service refused: {0}", f);
            emitWritten(audit, events.configChange(OcsfEvents.ConfigChange.REGISTRATION_VALIDATION, false, f.source(),
                    "registration refused"));
        }
        for (PluginFailure f : registry.duplicateRefusals()) {
            LOG.log(System.Logger.Level.WARNING, "middleware binding refused: {0}", f);
            emitWritten(audit, events.configChange(OcsfEvents.ConfigChange.REGISTRATION_VALIDATION, false, f.source(),
                    "registration refused"));
        }
        for (var p : registry.services()) {
            metrics.serviceUp(p.registration().name(), true);
            emitWritten(audit, events.configChange(OcsfEvents.ConfigChange.REGISTRATION_VALIDATION, true,
                    p.registration().name(), "registration validated"));
        }
    }

    private static RegistryListener listener(AuditSink audit, OcsfEvents events, SupervisorMetrics metrics) {
        return new RegistryListener() {
            @Override
            public void plaintextRegistration(String name, URI endpoint) {
                // the console warning is the gateway configuration's (once, with file:line:col); this is the event
                emitWritten(audit, events.configChange(OcsfEvents.ConfigChange.INSECURE_REGISTRATION, true, name,
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

    /** The policy of a candidate and the generation prepared from it. */
    private record Candidate(Loaded<SandboxPolicy> policy, Generation generation) {
    }

    /**
     * Prepares a candidate generation off to the side: the policy validated against the connected registry, then
     * compiled, with credentials resolved.
     *
     * @throws PolicyException with every problem of the policy file
     * @throws IllegalArgumentException with a safe message when a credential cannot be resolved or a config cannot
     *     be compiled
     */
    private Candidate prepare() {
        Loaded<SandboxPolicy> policy = loadPolicy(options.policy(), registry.catalog());
        Generation g = Generation.prepare(policy.value(), registry.gateway(), registry.registry(), sources, engine);
        return new Candidate(policy, g);
    }

    /**
     * Logs, and records as a config event, every endpoint that opts in to uninspected upgrades
     * ({@code upgrades: allow_uninspected}): the operator's explicit exception to RFC 0009's rule that traffic that
     * becomes uninspectable under a {@code fail_closed} chain is denied.
     */
    private void announceUninspectedUpgrades(SandboxPolicy policy) {
        for (NetworkPolicy p : policy.networkPolicies().valuesView()) {
            for (int i = 0; i < p.endpoints().size(); i++) {
                NetworkEndpoint e = p.endpoints().get(i);
                if (e.upgradesOptedIn()) {
                    String where = "network_policies." + p.key() + ".endpoints[" + i + "]";
                    LOG.log(System.Logger.Level.WARNING, "{0}: upgrades: allow_uninspected: the bytes after a protocol"
                            + " upgrade (WebSocket) to this endpoint are relayed without middleware inspection, also"
                            + " under fail_closed middleware", where);
                    emitWritten(audit, events.configChange(OcsfEvents.ConfigChange.UNINSPECTED_UPGRADES, true, where,
                            "upgrades: allow_uninspected"));
                }
            }
        }
    }

    private void installFirst() {
        byte[] digest = options.policy().map(Supervisor::digestOf).orElse(null);
        Candidate c = prepare();
        c.policy().warnings().forEach(w -> LOG.log(System.Logger.Level.WARNING, w.describe()));
        emitWritten(audit, events.configChange(OcsfEvents.ConfigChange.POLICY_VALIDATION, true, policyName,
                c.policy().value().networkMiddlewares().size() + " middleware configs"));
        announceUninspectedUpgrades(c.policy().value());
        current.set(c.generation());
        installedDigest = digest;
        emitWritten(audit, events.configChange(OcsfEvents.ConfigChange.SUPERVISOR_START, true, policyName,
                c.generation().summary()));
        LOG.log(System.Logger.Level.INFO, "starting with {0}: {1}", policyName, c.generation().summary());
    }

    private void startReloading() {
        reloader = new Reloader(this::attemptReload);
        if (options.policy().isPresent() && options.policyWatch().isPresent()) {
            Duration debounce = options.policyWatch().get();
            try {
                watcher = PolicyWatcher.start(options.policy().get(), () -> reloader.request(false, debounce));
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "cannot watch the policy file {0} ({1}); reload with SIGHUP",
                        policyName, e.getClass().getSimpleName());
            }
        }
    }

    /** One reload attempt, on the reload thread. */
    private ReloadOutcome attemptReload(boolean force) {
        Generation serving = current.get();
        warnIfGatewayChanged();
        byte[] digest = options.policy().map(Supervisor::digestOf).orElse(null);
        if (!force && Arrays.equals(digest, installedDigest)) {
            if (failedReason != null) {
                restored(serving, "the policy file is back to the policy generation " + serving.number()
                        + " serves");
            }
            return new ReloadOutcome.Unchanged(serving.number());
        }
        Candidate c;
        try {
            c = prepare();
        } catch (PolicyException e) {
            List<ConfigProblem> problems = e.problems().castToList();
            String reason = e.errors().size() + " error(s) in " + e.file() + "; first: "
                    + e.errors().getFirst().describe();
            return failed(serving, force, digest, reason, problems);
        } catch (RuntimeException e) {
            String reason = e instanceof IllegalArgumentException && e.getMessage() != null ? e.getMessage()
                    : "preparation failed (" + e.getClass().getSimpleName() + ")";
            if (!(e instanceof IllegalArgumentException)) {
                LOG.log(System.Logger.Level.ERROR, "policy reload failed unexpectedly", e);
            }
            return failed(serving, force, digest, reason, List.of());
        }
        boolean recovering = failedReason != null;
        failedDigest = null;
        failedReason = null;
        if (!force && c.policy().value().equals(serving.policy())) {
            installedDigest = digest;
            if (recovering) {
                restored(serving, "the policy file enforces the policy generation " + serving.number()
                        + " serves");
            }
            LOG.log(System.Logger.Level.DEBUG, "policy file {0} changed but enforces the same policy", policyName);
            return new ReloadOutcome.Unchanged(serving.number());
        }
        c.policy().warnings().forEach(w -> LOG.log(System.Logger.Level.WARNING, w.describe()));
        emitWritten(audit, events.configChange(OcsfEvents.ConfigChange.POLICY_VALIDATION, true, policyName,
                c.policy().value().networkMiddlewares().size() + " middleware configs"));
        announceUninspectedUpgrades(c.policy().value());
        current.set(c.generation());
        installedDigest = digest;
        String summary = c.generation().summary();
        emitWritten(audit, events.configChange(OcsfEvents.ConfigChange.REGISTRY_RELOAD, true, policyName, summary
                + (recovering ? "; valid again after a failed reload" : "")));
        LOG.log(System.Logger.Level.INFO, "policy reloaded from {0}: {1} replaces generation {2}{3}", policyName,
                summary, serving.number(), recovering ? " (a valid policy again after a failed reload)" : "");
        return new ReloadOutcome.Installed(c.generation().number(), serving.number(), summary);
    }

    /** A reload after a failed one found a valid policy that is already serving: says so once. */
    private void restored(Generation serving, String how) {
        failedDigest = null;
        failedReason = null;
        LOG.log(System.Logger.Level.INFO, "policy reload: {0} is valid again; {1}, which keeps serving", policyName,
                how);
        emitWritten(audit, events.configChange(OcsfEvents.ConfigChange.REGISTRY_RELOAD, true, policyName,
                "valid again after a failed reload; generation " + serving.number() + " keeps serving"));
    }

    private ReloadOutcome failed(Generation serving, boolean force, byte[] digest, String reason,
                                 List<ConfigProblem> problems) {
        boolean repeat = !force && Arrays.equals(digest, failedDigest) && reason.equals(failedReason);
        failedDigest = digest;
        failedReason = reason;
        if (repeat) {
            LOG.log(System.Logger.Level.DEBUG, "policy reload retry failed again; generation {0} keeps serving",
                    serving.number());
        } else {
            long errors = problems.stream().filter(ConfigProblem::isError).count();
            StringBuilder b = new StringBuilder("policy reload failed; generation ").append(serving.number())
                    .append(" keeps serving: ").append(problems.isEmpty() ? reason
                            : errors + " error(s) in " + policyName);
            for (ConfigProblem p : problems) {
                b.append(System.lineSeparator()).append("  ").append(p.describe());
                p.untrustedDetail().ifPresent(d -> b.append(System.lineSeparator()).append("      ")
                        .append(UNTRUSTED_LABEL).append(d));
            }
            LOG.log(System.Logger.Level.WARNING, b.toString());
            if (!problems.isEmpty()) {
                emitWritten(audit, events.configChange(OcsfEvents.ConfigChange.POLICY_VALIDATION, false, policyName,
                        problems.stream().filter(ConfigProblem::isError).count() + " errors"));
            }
            emitWritten(audit, events.configChange(OcsfEvents.ConfigChange.REGISTRY_RELOAD, false, policyName,
                    reason + "; generation " + serving.number() + " keeps serving"));
        }
        return new ReloadOutcome.Failed(serving.number(), reason, problems);
    }

    private void warnIfGatewayChanged() {
        if (gatewayDigest == null) {
            return;
        }
        byte[] now = digestOf(options.gateway().orElseThrow());
        if (!Arrays.equals(now, gatewayDigest) && !Arrays.equals(now, warnedGatewayDigest)) {
            warnedGatewayDigest = now;
            LOG.log(System.Logger.Level.WARNING, "the gateway configuration {0} changed on disk; it is read only at "
                    + "start-up (middleware registration is not hot-reloaded): restart the supervisor to apply it",
                    options.gateway().orElseThrow());
        }
    }

    /** {@return the SHA-256 of a file's bytes, or {@code null} when it cannot be read} */
    private static byte[] digestOf(Path file) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file));
        } catch (IOException e) {
            return null;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from the runtime", e);
        }
    }

    /**
     * Reloads the policy now: prepares a candidate generation from the policy file (or the embedded default) and
     * the connected registry, and swaps it in when complete, even when the file is unchanged (credential files are
     * read again). Waits for any reload already running.
     *
     * @return what happened; a failure keeps the current generation serving
     * @throws IllegalStateException when the supervisor is closed
     */
    public ReloadOutcome reload() {
        return reloader.reloadNow(true);
    }

    /** Schedules a {@linkplain #reload() reload} and returns at once (for signal handlers). */
    public void requestReload() {
        reloader.request(true, Duration.ZERO);
    }

    /**
     * Registers a listener called after every reload attempt, on the reload thread (for tests and tools).
     *
     * @param listener the listener; must return quickly
     */
    public void onReload(Consumer<ReloadOutcome> listener) {
        reloader.addListener(listener);
    }

    /**
     * {@return every error and warning of a policy or gateway file, one per line, with file:line:col}; a problem
     * with text from a plugin or external service (its own reason for refusing a config) is followed by that text
     * on its own line, marked as theirs ({@link #UNTRUSTED_LABEL}): console only, never in an audit event
     */
    public static String describe(PolicyException e) {
        StringBuilder b = new StringBuilder();
        b.append(e.file()).append(": ").append(e.errors().size()).append(" error(s)");
        for (ConfigProblem p : e.problems()) {
            b.append("\n  ").append(p.describe());
            p.untrustedDetail().ifPresent(d -> b.append("\n      ").append(UNTRUSTED_LABEL).append(d));
        }
        return b.toString();
    }

    /** How the console marks a plugin's or service's own text (sanitised, length-limited). */
    public static final String UNTRUSTED_LABEL = "its provider's own words (untrusted text): ";

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
                            emitWritten(audit, events.bindingAvailability(binding.value(), available, stuckThreads, stuck));
                        } catch (RuntimeException e) {
                            LOG.log(System.Logger.Level.WARNING, "audit event for binding availability failed: "
                                    + e.getClass().getSimpleName());
                        }
                    }
                });
    }

    static Loaded<SandboxPolicy> loadPolicy(Optional<Path> file, BindingCatalog catalog) {
        if (file.isPresent()) {
            return SandboxPolicyLoader.load(file.get(), catalog);
        }
        return SandboxPolicyLoader.parse(DEFAULT_POLICY_NAME, defaultPolicyText(), catalog);
    }

    /** {@return the embedded default policy, as YAML} */
    public static String defaultPolicyText() {
        try (InputStream in = Supervisor.class.getResourceAsStream("default-policy.yaml")) {
            if (in == null) {
                throw new IllegalStateException("embedded default policy missing from the runtime module");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * {@return the binding catalog policy validation uses: every registered binding, its owner and capability, and
     * its provider's {@code validateConfig}}
     *
     * @param registry the registry
     */
    public static BindingCatalog catalog(ProviderRegistry registry) {
        return ConnectedRegistry.catalog(registry);
    }

    /**
     * Emits a configuration or availability event and waits, bounded, until it is written: these events come from
     * start-up, reloads and the stuck-stage watch, not from a request, so no client write waits for them
     * ({@link AuditSink#awaitWritten}); an operator who sees the start-up line or a reload's log line finds the event in
     * the file.
     */
    private static void emitWritten(AuditSink audit, jakarta.json.JsonObject event) {
        long sequence = audit.emit(event);
        if (sequence > 0) {
            audit.awaitWritten(sequence);
        }
    }

    private static AuditSink openAudit(Optional<String> spec, Path stateDir, SupervisorMetrics metrics) {
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
            throw new StartupException("cannot open the audit log " + s + " (" + e.getClass().getSimpleName()
                    + ")", e);
        }
    }

    static String version() {
        return Supervisor.class.getModule().getDescriptor() == null ? "dev"
                : Supervisor.class.getModule().getDescriptor().rawVersion().orElse("dev");
    }

    private static String hostname() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "localhost";
        }
    }

    /** {@return the proxy's bound port} */
    public int port() {
        return proxy.port();
    }

    /** {@return the admin listener's bound port, if it runs} */
    public Optional<Integer> adminPort() {
        return admin == null ? Optional.empty() : Optional.of(admin.port());
    }

    /** {@return the supervisor CA certificate (PEM) that sandboxes must trust} */
    public String caCertificatePem() {
        return proxy.caCertificatePem();
    }

    /** {@return the current runtime generation} */
    public Generation generation() {
        return current.get();
    }

    /** {@return the metrics} */
    public SupervisorMetrics metrics() {
        return metrics;
    }

    /** {@return whether a generation is installed and the proxy listens} */
    public boolean ready() {
        return ready;
    }

    /**
     * Stops watching and reloading, stops accepting, lets in-flight requests finish (bounded), then stops the admin
     * listener, the external service connections and the audit log.
     */
    @Override
    public void close() {
        ready = false;
        if (adminReady != null) {
            adminReady.set(false);
        }
        try {
            if (watcher != null) {
                watcher.close();
            }
            if (reloader != null) {
                reloader.close();
            }
            if (proxy != null) {
                proxy.stop();
            }
        } finally {
            if (admin != null) {
                admin.close();
            }
            if (stagePool != null) {
                stagePool.close();
            }
            if (bulkLane != null) {
                bulkLane.close();
            }
            registry.close();
            if (refusals != null) {
                refusals.close(); // the pending aggregate events, before the log closes
            }
            audit.close();
        }
    }

    /** {@return the events builder (for start-up messages by callers)} */
    OcsfEvents events() {
        return events;
    }

    /** {@return the origin description of every registered binding, for listings} */
    public List<String> bindingOwners() {
        return current.get().registry().bindings().stream()
                .map(b -> b.id() + " <- " + b.origin().describe()).toList();
    }

    /** {@return whether {@code origin} is a built-in} @param origin an origin */
    static boolean builtIn(ProviderOrigin origin) {
        return origin.kind() == ProviderOrigin.Kind.BUILT_IN;
    }
}
