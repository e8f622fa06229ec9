package dev.openshell.supervisor.runtime;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.host.HostCapabilities;
import dev.openshell.supervisor.audit.AuditSink;
import dev.openshell.supervisor.audit.JsonlAuditSink;
import dev.openshell.supervisor.audit.OcsfEvents;
import dev.openshell.supervisor.audit.SupervisorMetrics;
import dev.openshell.supervisor.engine.PluginFailure;
import dev.openshell.supervisor.engine.PluginHost;
import dev.openshell.supervisor.engine.ProviderOrigin;
import dev.openshell.supervisor.engine.ProviderRegistry;
import dev.openshell.supervisor.engine.RegisteredBinding;
import dev.openshell.supervisor.engine.chain.ChainEngine;
import dev.openshell.supervisor.engine.credentials.CredentialSources;
import dev.openshell.supervisor.policy.BindingCatalog;
import dev.openshell.supervisor.policy.BindingFacts;
import dev.openshell.supervisor.policy.ConfigProblem;
import dev.openshell.supervisor.policy.Loaded;
import dev.openshell.supervisor.policy.SandboxPolicy;
import dev.openshell.supervisor.policy.SandboxPolicyLoader;
import dev.openshell.supervisor.policy.gateway.GatewayConfig;
import dev.openshell.supervisor.policy.gateway.GatewayConfigLoader;
import dev.openshell.supervisor.grpc.ExternalServices;
import dev.openshell.supervisor.grpc.RegistryListener;
import dev.openshell.supervisor.grpc.RetryPolicy;
import dev.openshell.supervisor.grpc.ServiceRegistration;
import dev.openshell.supervisor.policy.gateway.ListenAddress;
import dev.openshell.supervisor.policy.gateway.MiddlewareRegistration;
import java.net.URI;
import dev.openshell.supervisor.policy.gateway.SupervisorSettings;
import dev.openshell.supervisor.proxy.NetworkSettings;
import dev.openshell.supervisor.proxy.SupervisorProxy;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A running supervisor: the proxy listener, the current runtime {@link Generation}, the audit sink, metrics and the
 * admin listener.
 *
 * <p>Start-up order (RFC 0009, "Registration and delivery"): read the gateway configuration; install built-ins and
 * plugins (the plugin host); validate the sandbox policy against them (every binding must exist; every config goes
 * through its provider's {@code validateConfig}); prepare the generation; start the proxy; start the admin listener.
 * Any failure before the proxy listens stops start-up with a {@link StartupException} whose message lists every
 * problem with file, line and column.
 */
public final class Supervisor implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Supervisor.class.getName());
    /** Default admin listener. */
    public static final ListenAddress DEFAULT_ADMIN = new ListenAddress("127.0.0.1", 9464);
    /** The name the embedded default policy is reported under. */
    public static final String DEFAULT_POLICY_NAME = "(embedded default policy)";

    private final AtomicReference<Generation> current;
    private final SupervisorProxy proxy;
    private final AdminServer admin;
    private final AuditSink audit;
    private final SupervisorMetrics metrics;
    private final OcsfEvents events;
    private final ExternalServices external;
    private volatile boolean ready;

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
     */
    public record Options(Optional<Path> policy, Optional<Path> gateway, Optional<String> listen,
                          Optional<Path> plugins, Optional<Path> stateDir, Optional<String> auditLog,
                          Optional<String> adminListen, Map<String, String> environment) {
        /** {@return options with nothing set: the defaults} */
        public static Options defaults() {
            return new Options(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                    Optional.empty(), Optional.empty(), Optional.empty(), System.getenv());
        }
    }

    /** Start-up failed; the message is complete and safe to print. */
    public static final class StartupException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        StartupException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private Supervisor(AtomicReference<Generation> current, SupervisorProxy proxy, AdminServer admin,
                       AuditSink audit, SupervisorMetrics metrics, OcsfEvents events, ExternalServices external) {
        this.external = external;
        this.current = current;
        this.proxy = proxy;
        this.admin = admin;
        this.audit = audit;
        this.metrics = metrics;
        this.events = events;
    }

    /**
     * Loads everything and starts listening.
     *
     * @param options what to start
     * @return the running supervisor
     * @throws StartupException with every problem, when anything cannot be loaded or bound
     */
    public static Supervisor start(Options options) {
        Loaded<GatewayConfig> gatewayLoaded = options.gateway().map(Supervisor::loadGateway).orElse(null);
        GatewayConfig gateway = gatewayLoaded != null ? gatewayLoaded.value()
                : new GatewayConfig(SupervisorSettings.defaults(), org.eclipse.collections.api.factory.Lists.immutable
                        .empty(), org.eclipse.collections.api.factory.Lists.immutable.empty());
        if (gatewayLoaded != null) {
            gatewayLoaded.warnings().forEach(w -> LOG.log(System.Logger.Level.WARNING, w.describe()));
        }
        SupervisorSettings settings = gateway.supervisor();
        Path stateDir = options.stateDir().or(settings::stateDir)
                .orElse(Path.of(System.getProperty("user.home"), ".openshell", "supervisor"));
        Optional<Path> pluginsDir = options.plugins().or(settings::pluginsDir)
                .or(() -> Optional.ofNullable(System.getProperty("supervisor.home")).map(h -> Path.of(h, "plugins")));

        SupervisorMetrics metrics = new SupervisorMetrics();
        OcsfEvents events = new OcsfEvents(version(), hostname(), Clock.systemUTC());
        AuditSink audit = openAudit(options.auditLog().or(() -> settings.auditLog().map(Path::toString)), stateDir);
        try {
            AtomicReference<Generation> current = new AtomicReference<>();
            // restricted built-ins (openshell/sigv4) resolve credentials of whatever generation is current
            PluginHost.Builder hb = PluginHost.builder().hostCapabilities(HostCapabilities.of((name, h) ->
                    Optional.ofNullable(current.get()).flatMap(gen -> gen.credentials().lookup(name, h))));
            pluginsDir.ifPresent(hb::pluginsDirectory);
            PluginHost host = hb.load();
            for (PluginFailure f : host.failures()) {
                audit.emit(events.configChange(OcsfEvents.ConfigChange.REGISTRATION_VALIDATION, false, f.source(),
                        "plugin refused"));
            }
            ExternalServices external = connectExternal(gateway, audit, events, metrics);
            try {
                List<PluginFailure> refused = new java.util.ArrayList<>(external.failures().castToList());
                List<RegisteredBinding> claims = new java.util.ArrayList<>(host.registry().bindings().castToList());
                claims.addAll(external.claims().castToList());
                ProviderRegistry registry = ProviderRegistry.assemble(claims, refused);
                for (PluginFailure f : refused) {
                    LOG.log(System.Logger.Level.WARNING, "middleware service refused: {0}", f);
                    audit.emit(events.configChange(OcsfEvents.ConfigChange.REGISTRATION_VALIDATION, false, f.source(),
                            "registration refused"));
                }
                for (var p : external.providers()) {
                    audit.emit(events.configChange(OcsfEvents.ConfigChange.REGISTRATION_VALIDATION, true,
                            p.registration().name(), "registration validated"));
                }
                String policyName = options.policy().map(Path::toString).orElse(DEFAULT_POLICY_NAME);
                Loaded<SandboxPolicy> policy = loadPolicy(options.policy(), catalog(registry));
                policy.warnings().forEach(w -> LOG.log(System.Logger.Level.WARNING, w.describe()));
                audit.emit(events.configChange(OcsfEvents.ConfigChange.POLICY_VALIDATION, true, policyName,
                        policy.value().networkMiddlewares().size() + " middleware configs"));

                Map<Optional<String>, ChainEngine> engines = new ConcurrentHashMap<>();
                Generation g = Generation.prepare(policy.value(), gateway, registry,
                        new CredentialSources(options.environment()),
                        engines.computeIfAbsent(Optional.empty(), p -> engineFor(p)));
                current.set(g);
                audit.emit(events.configChange(OcsfEvents.ConfigChange.REGISTRY_RELOAD, true, policyName, g.summary()));
                LOG.log(System.Logger.Level.INFO, g.summary());

                SupervisorHook hook = new SupervisorHook(current::get, p -> engines.computeIfAbsent(p,
                        Supervisor::engineFor), events, audit, metrics);
                ListenAddress listen = options.listen().map(ListenAddress::parse).orElse(settings.listen());
                SupervisorProxy.Builder pb = SupervisorProxy.builder()
                        .listen(new InetSocketAddress(listen.address(), listen.port()))
                        .stateDirectory(stateDir)
                        .admission(g.admission())
                        .hook(hook)
                        .credentials(hook)
                        .network(new NetworkSettings(settings.network().allowLoopbackUpstreams(),
                                Map.copyOf(settings.network().staticHosts().castToSortedMap())));
                settings.tls().upstreamCaBundle().ifPresent(pb::upstreamTrust);
                if (settings.tls().caCert().isPresent() && settings.tls().caKey().isPresent()) {
                    pb.operatorCa(settings.tls().caCert().get(), settings.tls().caKey().get());
                }
                SupervisorProxy proxy = pb.build();
                proxy.start();
                AdminServer admin = null;
                String adminSpec = options.adminListen().orElseGet(() -> settings.adminListen()
                        .map(ListenAddress::toString).orElse(DEFAULT_ADMIN.toString()));
                Supervisor[] self = new Supervisor[1];
                if (!adminSpec.equals("off")) {
                    ListenAddress a = ListenAddress.parse(adminSpec);
                    try {
                        admin = AdminServer.start(new InetSocketAddress(a.address(), a.port()), metrics,
                                () -> self[0] != null && self[0].ready);
                    } catch (RuntimeException e) {
                        proxy.stop();
                        throw e;
                    }
                }
                Supervisor s = new Supervisor(current, proxy, admin, audit, metrics, events, external);
                self[0] = s;
                s.ready = true;
                return s;
            } catch (RuntimeException e) {
                external.close();
                throw e;
            }
        } catch (dev.openshell.supervisor.policy.PolicyException e) {
            audit.emit(events.configChange(OcsfEvents.ConfigChange.POLICY_VALIDATION, false, e.file(),
                    e.errors().size() + " errors"));
            audit.close();
            throw new StartupException(describe(e), e);
        } catch (RuntimeException e) {
            audit.close();
            throw new StartupException(e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage(), e);
        }
    }

    private static ExternalServices connectExternal(GatewayConfig gateway, AuditSink audit, OcsfEvents events,
                                                    SupervisorMetrics metrics) {
        List<ServiceRegistration> regs = new java.util.ArrayList<>();
        for (MiddlewareRegistration r : gateway.middleware()) {
            ServiceRegistration.Builder b = ServiceRegistration.builder(r.name(), URI.create(r.endpoint().toString()),
                    r.maxBodyBytes()).timeout(r.timeout()).allowInsecure(r.allowInsecure());
            r.tlsCaBundle().ifPresent(b::caBundle);
            if (r.tlsClientCert().isPresent() && r.tlsClientKey().isPresent()) {
                b.clientCertificate(r.tlsClientCert().get(), r.tlsClientKey().get());
            }
            regs.add(b.build());
        }
        if (regs.isEmpty()) {
            return ExternalServices.connect(List.of());
        }
        RegistryListener listener = new RegistryListener() {
            @Override
            public void plaintextRegistration(String name, URI endpoint) {
                LOG.log(System.Logger.Level.WARNING, "INSECURE: middleware service ''{0}'' at {1} uses plaintext "
                        + "gRPC (allow_insecure = true): request content crosses the network unencrypted and the "
                        + "service is not authenticated; for trusted local development only", name, endpoint);
                audit.emit(events.configChange(OcsfEvents.ConfigChange.INSECURE_REGISTRATION, true, name,
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
        ExternalServices ext = ExternalServices.connect(regs, listener, RetryPolicy.DEFAULT);
        ext.providers().forEach(p -> metrics.serviceUp(p.registration().name(), true));
        return ext;
    }

    /** {@return every error and warning of a policy or gateway file, one per line, with file:line:col} */
    public static String describe(dev.openshell.supervisor.policy.PolicyException e) {
        StringBuilder b = new StringBuilder();
        b.append(e.file()).append(": ").append(e.errors().size()).append(" error(s)");
        for (ConfigProblem p : e.problems()) {
            b.append("\n  ").append(p.describe());
        }
        return b.toString();
    }

    static ChainEngine engineFor(Optional<String> protocol) {
        return ChainEngine.builder().bodyRecheck(BodyAwarePolicy.forProtocol(protocol)).build();
    }

    /** Loads the gateway configuration; its problems stop start-up with every one listed (file:line:col). */
    private static Loaded<GatewayConfig> loadGateway(Path file) {
        try {
            return GatewayConfigLoader.load(file);
        } catch (dev.openshell.supervisor.policy.PolicyException e) {
            // no audit sink yet: where the audit log goes is itself a gateway setting
            throw new StartupException(describe(e), e);
        }
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
        return id -> registry.lookup(id).map(rb -> BindingFacts.of(id, kind(rb), rb.origin().name(),
                rb.binding().maxBodyBytes(), config -> validate(rb, id, config)));
    }

    private static ConfigValidation validate(RegisteredBinding rb, BindingId id, jakarta.json.JsonObject config) {
        try {
            ConfigValidation v = rb.provider().validateConfig(id, config);
            return v == null ? ConfigValidation.invalid("validateConfig returned nothing") : v;
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            return ConfigValidation.invalid("validateConfig failed (" + e.getClass().getSimpleName() + ")");
        }
    }

    private static BindingFacts.OwnerKind kind(RegisteredBinding rb) {
        return switch (rb.origin().kind()) {
            case BUILT_IN -> BindingFacts.OwnerKind.BUILTIN;
            case PLUGIN -> BindingFacts.OwnerKind.PLUGIN;
            case EXTERNAL -> BindingFacts.OwnerKind.EXTERNAL;
        };
    }

    private static AuditSink openAudit(Optional<String> spec, Path stateDir) {
        String s = spec.orElse(stateDir.resolve("audit").resolve("audit.jsonl").toString());
        if (s.equals("-")) {
            return JsonlAuditSink.toStream(System.out);
        }
        if (s.equals("off")) {
            return AuditSink.discard();
        }
        try {
            return JsonlAuditSink.toFile(Path.of(s), JsonlAuditSink.DEFAULT_MAX_BYTES, Clock.systemUTC());
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

    /** Stops accepting, lets in-flight requests finish (bounded), then stops the admin listener and the audit log. */
    @Override
    public void close() {
        ready = false;
        try {
            proxy.stop();
        } finally {
            if (admin != null) {
                admin.close();
            }
            external.close();
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
