package dev.openshell.supervisor.runtime;

import dev.openshell.middleware.spi.host.CredentialAccess;
import dev.openshell.middleware.spi.host.HostCapabilities;
import dev.openshell.supervisor.engine.PluginFailure;
import dev.openshell.supervisor.engine.PluginHost;
import dev.openshell.supervisor.engine.credentials.CredentialSources;
import dev.openshell.supervisor.grpc.RegistryListener;
import dev.openshell.supervisor.grpc.auth.CallerTokens;
import dev.openshell.supervisor.policy.ConfigProblem;
import dev.openshell.supervisor.policy.Loaded;
import dev.openshell.supervisor.policy.NetworkMiddlewareConfig;
import dev.openshell.supervisor.policy.NetworkPolicy;
import dev.openshell.supervisor.policy.PolicyException;
import dev.openshell.supervisor.policy.SandboxPolicy;
import dev.openshell.supervisor.policy.SourceLocation;
import dev.openshell.supervisor.policy.gateway.CredentialRule;
import dev.openshell.supervisor.policy.gateway.GatewayConfig;
import dev.openshell.supervisor.policy.gateway.GatewayConfigLoader;
import dev.openshell.supervisor.policy.gateway.TlsSettings;
import dev.openshell.supervisor.proxy.CaStore;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The validation {@code supervisor run} performs at start-up, run on its own ({@code supervisor validate}): every
 * problem of the gateway configuration and the sandbox policy, each with file, line, column and config key, without
 * listening anywhere.
 *
 * <p>What is checked, in this order, through the same code start-up uses ({@link ConnectedRegistry},
 * {@link Generation}):
 * <ol>
 *   <li>the gateway configuration file (TOML) and every rule of {@code docs/policy-reference.md};</li>
 *   <li>the registry: built-ins, plugins from the plugins directory, and, unless skipped, every registered external
 *       service, connected and described ({@code Describe}, manifest checks). A refused plugin, service or duplicate
 *       binding is a warning, as at start-up, where the supervisor starts without it; a policy that needs it then
 *       fails with an error;</li>
 *   <li>the TLS files of {@code [openshell.supervisor.tls]}: an operator CA must be a valid CA matching its key; the
 *       upstream CA bundle must hold a certificate;</li>
 *   <li>unless skipped, every credential source resolves ({@code env:} in the given environment, {@code file:}
 *       readable, non-empty, one line);</li>
 *   <li>the sandbox policy and every rule of {@code docs/policy-reference.md}, with every binding looked up and every
 *       config passed to its provider's {@code ValidateConfig}, then compiled into stages.</li>
 * </ol>
 * With external services skipped, a binding that no built-in or plugin provides is reported as a warning (not
 * checked) instead of an error, since one of the skipped services may provide it.
 */
public final class Validation {
    private static final Pattern PLAIN_KEY = Pattern.compile("[A-Za-z0-9_-]+");

    private Validation() {
    }

    /**
     * What to validate.
     *
     * @param policy the sandbox policy file; empty validates the embedded default policy
     * @param gateway the gateway configuration file, if any
     * @param plugins the plugins directory; empty uses the gateway's {@code plugins_dir}, else the image's
     * @param contactServices whether to connect to registered external services ({@code Describe} and
     *     {@code ValidateConfig})
     * @param checkCredentials whether to resolve every credential source
     * @param environment where {@code env:} credential sources are read
     */
    public record Request(Optional<Path> policy, Optional<Path> gateway, Optional<Path> plugins,
                          boolean contactServices, boolean checkCredentials, Map<String, String> environment) {
        /** @throws NullPointerException if a part is {@code null} */
        public Request {
            Objects.requireNonNull(policy, "policy");
            Objects.requireNonNull(gateway, "gateway");
            Objects.requireNonNull(plugins, "plugins");
            environment = Map.copyOf(environment);
        }
    }

    /**
     * The outcome.
     *
     * @param problems every problem, errors and warnings, grouped by step in the order above and in file order
     *     within a file
     */
    public record Report(List<ConfigProblem> problems) {
        /** @throws NullPointerException if {@code problems} or an element is {@code null} */
        public Report {
            problems = List.copyOf(problems);
        }

        /** {@return whether nothing is an error: {@code supervisor run} would start with these files} */
        public boolean valid() {
            return problems.stream().noneMatch(ConfigProblem::isError);
        }

        /** {@return the errors} */
        public List<ConfigProblem> errors() {
            return problems.stream().filter(ConfigProblem::isError).toList();
        }

        /** {@return the warnings} */
        public List<ConfigProblem> warnings() {
            return problems.stream().filter(p -> !p.isError()).toList();
        }
    }

    /**
     * Validates.
     *
     * @param request what to validate
     * @return every problem found; never throws for bad input
     */
    public static Report run(Request request) {
        List<ConfigProblem> out = new ArrayList<>();
        Optional<Loaded<GatewayConfig>> gatewayFile = Optional.empty();
        boolean gatewayOk = true;
        if (request.gateway().isPresent()) {
            try {
                Loaded<GatewayConfig> g = GatewayConfigLoader.load(request.gateway().get());
                out.addAll(g.warnings().castToList());
                gatewayFile = Optional.of(g);
            } catch (PolicyException e) {
                out.addAll(e.problems().castToList());
                gatewayOk = false;
            }
        }
        GatewayConfig gateway = gatewayFile.map(Loaded::value).orElseGet(ConnectedRegistry::defaultGateway);
        Optional<Path> plugins = Supervisor.pluginsDirectory(request.plugins(), gateway);
        Optional<String> pluginsProblem = plugins.flatMap(PluginHost::directoryProblem);
        if (pluginsProblem.isPresent()) {
            boolean fromGateway = request.plugins().isEmpty() && gatewayFile.isPresent()
                    && gateway.supervisor().pluginsDir().isPresent();
            String key = fromGateway ? "openshell.supervisor.plugins_dir" : "";
            out.add(ConfigProblem.error(fromGateway ? gatewayFile.get().locationOf(key)
                    : SourceLocation.of(plugins.get().toString()), key, pluginsProblem.get()
                    + "; supervisor run refuses to start"));
        }
        CallerTokens tokens = CallerTokens.NONE;
        if (request.contactServices() && gatewayOk && gateway.middleware().stream().anyMatch(r -> !r.insecure())) {
            try {
                tokens = ExtensionAuth.open(gateway, Supervisor.stateDirectory(Optional.empty(), gateway));
            } catch (IOException | RuntimeException e) {
                out.add(ConfigProblem.warning(SourceLocation.of("extension-keys"), "", "the extension token signing"
                        + " keys cannot be opened (" + message(e) + "); services registered over TLS are contacted"
                        + " without a token"));
            }
        }
        try (ConnectedRegistry registry = ConnectedRegistry.connect(gatewayFile, plugins,
                HostCapabilities.of(CredentialAccess.none()), RegistryListener.NONE,
                request.contactServices(), tokens)) {
            registryProblems(registry, gatewayFile, out);
            for (String note : registry.serviceNotes()) {
                out.add(ConfigProblem.warning(gatewayFile.map(g -> g.locationOf("openshell.supervisor.middleware"))
                        .orElse(SourceLocation.of("gateway")), "openshell.supervisor.middleware", note));
            }
            if (gatewayFile.isPresent()) {
                tlsProblems(gatewayFile.get(), out);
                if (request.checkCredentials()) {
                    credentialProblems(gatewayFile.get(), new CredentialSources(request.environment()), out);
                }
            }
            if (gatewayOk) {
                policyProblems(request.policy(), registry, gateway, registry.catalogAllowingUnchecked(),
                        "external services were not contacted", out);
            } else {
                // every rule that does not depend on the registrations is still checked, so that one run reports
                // every error of both files
                policyProblems(request.policy(), registry, gateway, registry.catalogAcceptingUnknown(),
                        "the gateway configuration has errors, so its registered services are not known", out);
            }
        }
        return new Report(out);
    }

    private static void registryProblems(ConnectedRegistry registry, Optional<Loaded<GatewayConfig>> gatewayFile,
                                         List<ConfigProblem> out) {
        for (PluginFailure f : registry.pluginRefusals()) {
            if (f.message().startsWith("the plugins ")) {
                continue; // the directory itself: reported as an error above
            }
            out.add(ConfigProblem.warning(SourceLocation.of(f.source()), "",
                    "plugin refused; start-up goes on without it: " + f.message()));
        }
        for (PluginFailure f : registry.serviceRefusals()) {
            out.add(serviceProblem(registry, gatewayFile, f, "middleware service refused; start-up goes on "
                    + "without it: "));
        }
        for (PluginFailure f : registry.duplicateRefusals()) {
            out.add(serviceProblem(registry, gatewayFile, f, "binding refused; start-up goes on without it: "));
        }
        if (!registry.servicesContacted() && gatewayFile.isPresent()
                && !gatewayFile.get().value().middleware().isEmpty()) {
            Loaded<GatewayConfig> g = gatewayFile.get();
            out.add(ConfigProblem.warning(g.locationOf("openshell.supervisor.middleware[0]"),
                    "openshell.supervisor.middleware", g.value().middleware().size() + " registered service(s) "
                            + "not contacted (--skip-services): their manifests, bindings and ValidateConfig are "
                            + "not checked"));
        }
    }

    private static ConfigProblem serviceProblem(ConnectedRegistry registry,
                                                Optional<Loaded<GatewayConfig>> gatewayFile, PluginFailure f,
                                                String prefix) {
        OptionalInt index = registry.registrationIndex(f.source());
        if (index.isPresent() && gatewayFile.isPresent()) {
            String key = "openshell.supervisor.middleware[" + index.getAsInt() + "]";
            return ConfigProblem.warning(gatewayFile.get().locationOf(key), key, prefix + f.message());
        }
        return ConfigProblem.warning(SourceLocation.of(f.source()), "", prefix + f.message());
    }

    private static void tlsProblems(Loaded<GatewayConfig> g, List<ConfigProblem> out) {
        TlsSettings tls = g.value().supervisor().tls();
        if (tls.caCert().isPresent() && tls.caKey().isPresent()) {
            try {
                CaStore.loadOperatorCa(tls.caCert().get(), tls.caKey().get());
            } catch (IOException | RuntimeException e) {
                String key = "openshell.supervisor.tls.ca_cert";
                out.add(ConfigProblem.error(g.locationOf(key), key, "the operator CA cannot be used: "
                        + message(e)));
            }
        }
        if (tls.upstreamCaBundle().isPresent()) {
            try {
                CaStore.readCertificate(tls.upstreamCaBundle().get());
            } catch (IOException | RuntimeException e) {
                String key = "openshell.supervisor.tls.upstream_ca_bundle";
                out.add(ConfigProblem.error(g.locationOf(key), key, "the upstream CA bundle cannot be used: "
                        + message(e)));
            }
        }
    }

    private static void credentialProblems(Loaded<GatewayConfig> g, CredentialSources sources,
                                           List<ConfigProblem> out) {
        List<CredentialRule> rules = g.value().credentials().castToList();
        for (int i = 0; i < rules.size(); i++) {
            CredentialRule rule = rules.get(i);
            try {
                sources.resolve(rule.name(), Generation.source(rule));
            } catch (IllegalArgumentException e) {
                String key = "openshell.supervisor.credentials[" + i + "].source";
                out.add(ConfigProblem.error(g.locationOf(key), key, message(e)
                        + " (validate resolves credentials in its own environment; --skip-credentials skips this)"));
            }
        }
    }

    private static void policyProblems(Optional<Path> policyFile, ConnectedRegistry registry, GatewayConfig gateway,
                                       dev.openshell.supervisor.policy.BindingCatalog catalog, String whyUnchecked,
                                       List<ConfigProblem> out) {
        Loaded<SandboxPolicy> loaded;
        try {
            loaded = Supervisor.loadPolicy(policyFile, catalog);
        } catch (PolicyException e) {
            out.addAll(e.problems().castToList());
            return;
        }
        out.addAll(loaded.warnings().castToList());
        scopingProblems(loaded, gateway, out);
        Set<String> unchecked = new HashSet<>();
        for (NetworkMiddlewareConfig c : loaded.value().networkMiddlewares().valuesView()) {
            if (registry.registry().lookup(c.middleware()).isEmpty()) {
                unchecked.add(c.key());
                String key = middlewareKey(c.key(), "middleware");
                out.add(ConfigProblem.warning(loaded.locationOf(key), key, "binding '" + c.middleware()
                        + "' not checked: no built-in or plugin provides it, and " + whyUnchecked
                        + "; start-up requires a registered service to provide it"));
            }
        }
        List<Generation.StageException> stageProblems = new ArrayList<>();
        Generation.compile(loaded.value(), registry.gateway(), registry.registry(), stageProblems);
        for (Generation.StageException e : stageProblems) {
            if (!unchecked.contains(e.configKey())) {
                String key = middlewareKey(e.configKey(), "middleware");
                out.add(ConfigProblem.error(loaded.locationOf(key), key, e.getMessage()));
            }
        }
    }

    /**
     * Binary scoping that will not hold: with {@code endpoint-only}, every policy with {@code binaries} loses its
     * scoping (one warning each); where process identity is unavailable (not Linux), such a policy admits nothing.
     */
    private static void scopingProblems(Loaded<SandboxPolicy> loaded, GatewayConfig gateway,
                                        List<ConfigProblem> out) {
        boolean enforced = gateway.supervisor().identity().enforced();
        boolean available = Identities.platformSupported();
        for (NetworkPolicy p : loaded.value().networkPolicies().valuesView()) {
            if (!p.binaryScoped()) {
                continue;
            }
            String key = policyKey(p.key(), "binaries");
            if (!enforced) {
                out.add(ConfigProblem.warning(loaded.locationOf(key), key, "binary scoping is off"
                        + " ([openshell.supervisor.identity] mode = \"endpoint-only\"): every process in the sandbox"
                        + " can reach these endpoints, not only the listed binaries"));
            } else if (!available) {
                out.add(ConfigProblem.warning(loaded.locationOf(key), key, "process identity is unavailable on this"
                        + " platform (it needs Linux /proc): this policy admits no connection"));
            }
        }
    }

    /**
     * {@return the key path of a field of a {@code network_policies} entry, as problems spell it}
     *
     * @param policyKey the entry's key
     * @param field the field
     */
    static String policyKey(String policyKey, String field) {
        String segment = PLAIN_KEY.matcher(policyKey).matches() ? policyKey
                : "\"" + policyKey.replace("\"", "\\\"") + "\"";
        return "network_policies." + segment + "." + field;
    }

    /**
     * {@return the key path of a field of a {@code network_middlewares} entry, as problems spell it}
     *
     * @param configKey the entry's key
     * @param field the field
     */
    static String middlewareKey(String configKey, String field) {
        String segment = PLAIN_KEY.matcher(configKey).matches() ? configKey
                : "\"" + configKey.replace("\"", "\\\"") + "\"";
        return "network_middlewares." + segment + "." + field;
    }

    private static String message(Exception e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
