package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.audit.ConfigChange;
import dev.openshell.middleware.spi.host.HostCapabilities;
import dev.openshell.supervisor.audit.AuditSink;
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
import dev.openshell.supervisor.grpc.auth.ExtensionTokenIssuer;
import dev.openshell.supervisor.policy.BindingCatalog;
import dev.openshell.supervisor.policy.ConfigProblem;
import dev.openshell.supervisor.policy.Loaded;
import dev.openshell.supervisor.policy.PolicyException;
import dev.openshell.supervisor.policy.SandboxPolicy;
import dev.openshell.supervisor.policy.SandboxPolicyLoader;
import dev.openshell.supervisor.policy.gateway.GatewayConfig;
import dev.openshell.supervisor.policy.gateway.GatewayConfigLoader;
import dev.openshell.supervisor.policy.gateway.ListenAddress;
import dev.openshell.supervisor.policy.gateway.SupervisorSettings;
import dev.openshell.supervisor.proxy.NetworkSettings;
import dev.openshell.supervisor.proxy.SupervisorProxy;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
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
    /** Installs the first generation and every reload's. */
    private final PolicyInstaller installer;

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
        this.installer = new PolicyInstaller(options, registry, sources, engine, audit, events, current, policyName);
    }

    /** {@return the gateway configuration of the options, if any, its warnings logged} */
    private static Optional<Loaded<GatewayConfig>> loadGateway(Options options) {
        Optional<Loaded<GatewayConfig>> loaded;
        try {
            loaded = options.gateway().map(GatewayConfigLoader::load);
        } catch (PolicyException e) {
            throw new StartupException(describe(e), e);
        }
        loaded.ifPresent(g -> g.warnings().forEach(w -> LOG.log(System.Logger.Level.WARNING, w.describe())));
        return loaded;
    }

    /** Refuses to start with a plugins directory that is missing or unusable, naming where it came from. */
    private static void checkPluginsDirectory(Options options, GatewayConfig gateway, Optional<Path> pluginsDir) {
        Optional<String> pluginsProblem = pluginsDir.flatMap(PluginHost::directoryProblem);
        if (pluginsProblem.isPresent()) {
            throw new StartupException(pluginsProblem.get() + " (" + (options.plugins().isPresent() ? "--plugins"
                    : gateway.supervisor().pluginsDir().isPresent() ? "plugins_dir of the gateway configuration"
                    : "the image's plugins directory") + ")", null);
        }
    }

    /**
     * Loads everything and starts listening.
     *
     * @param options what to start
     * @return the running supervisor
     * @throws StartupException with every problem, when anything cannot be loaded or bound
     */
    public static Supervisor start(Options options) {
        Optional<Loaded<GatewayConfig>> gatewayLoaded = loadGateway(options);
        GatewayConfig gateway = gatewayLoaded.map(Loaded::value).orElseGet(ConnectedRegistry::defaultGateway);
        SupervisorSettings settings = gateway.supervisor();
        Path stateDir = stateDirectory(options.stateDir(), gateway);
        Optional<Path> pluginsDir = pluginsDirectory(options.plugins(), gateway);
        checkPluginsDirectory(options, gateway, pluginsDir);
        SupervisorMetrics metrics = new SupervisorMetrics();
        OcsfEvents events = new OcsfEvents(version(), SupervisorParts.hostname(), Clock.systemUTC());
        AuditSink audit = SupervisorParts.openAudit(options.auditLog().or(() -> settings.auditLog()
                .map(Path::toString)), stateDir, metrics);
        Supervisor s = null;
        AdminServer admin = null;
        AtomicBoolean ready = new AtomicBoolean();
        try {
            ExtensionTokenIssuer tokens = SupervisorParts.openTokens(gateway, stateDir);
            // before the first Describe: a service may fetch the JWKS for the supervisor's first call
            admin = SupervisorParts.startAdmin(options, settings, metrics, ready, tokens);
            AtomicReference<Generation> current = new AtomicReference<>();
            // restricted built-ins (openshell/sigv4) get the serving generation's credentials with each request from
            // the engine; these bound capabilities only serve a direct call outside a request, from the current one
            HostCapabilities capabilities = HostCapabilities.of((name, h) -> Optional.ofNullable(current.get())
                    .flatMap(gen -> gen.credentials().lookup(name, h)));
            ConnectedRegistry registry = ConnectedRegistry.connect(gatewayLoaded, pluginsDir, capabilities,
                    SupervisorParts.listener(audit, events, metrics), true, tokens);
            StagePool pool = SupervisorParts.stagePool(settings.limits(), audit, events, metrics);
            BulkLane bulk = BulkLane.create();
            ChainEngine engine = SupervisorParts.chainEngine(pool, bulk);
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
            s.installer.installFirst();

            Identities identities = Identities.create(settings.identity());
            SupervisorParts.reportIdentity(identities, audit, events, options.gateway());
            RefusalAudit refusals = new RefusalAudit(events, audit, metrics, Clock.systemUTC());
            s.refusals = refusals;
            refusals.start();
            RuntimeSteps steps = new RuntimeSteps(current::get, engine,
                    new ExchangeAudit(events, audit, metrics, refusals), identities);
            s.proxy = SupervisorParts.proxy(options, gateway, stateDir, steps, audit);
            s.proxy.start();
            s.admin = admin;
            s.adminReady = ready;
            admin = null;
            s.startReloading();
            s.ready = true;
            ready.set(true);
            return s;
        } catch (PolicyException e) {
            SupervisorParts.emitWritten(audit, events.configChange(ConfigChange.POLICY_VALIDATION, false, e.file(),
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
            SupervisorParts.emitWritten(audit, events.configChange(ConfigChange.REGISTRATION_VALIDATION, false, f.source(),
                    "plugin refused"));
        }
        for (PluginFailure f : registry.serviceRefusals()) {
            LOG.log(System.Logger.Level.WARNING, "middleware service refused: {0}", f);
            SupervisorParts.emitWritten(audit, events.configChange(ConfigChange.REGISTRATION_VALIDATION, false, f.source(),
                    "registration refused"));
        }
        for (PluginFailure f : registry.duplicateRefusals()) {
            LOG.log(System.Logger.Level.WARNING, "middleware binding refused: {0}", f);
            SupervisorParts.emitWritten(audit, events.configChange(ConfigChange.REGISTRATION_VALIDATION, false, f.source(),
                    "registration refused"));
        }
        for (var p : registry.services()) {
            metrics.serviceUp(p.registration().name(), true);
            SupervisorParts.emitWritten(audit, events.configChange(ConfigChange.REGISTRATION_VALIDATION, true,
                    p.registration().name(), "registration validated"));
        }
    }

    private void startReloading() {
        reloader = new Reloader(installer::attemptReload);
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

    static String version() {
        return Supervisor.class.getModule().getDescriptor() == null ? "dev"
                : Supervisor.class.getModule().getDescriptor().rawVersion().orElse("dev");
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
