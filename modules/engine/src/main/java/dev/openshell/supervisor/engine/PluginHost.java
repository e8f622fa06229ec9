package dev.openshell.supervisor.engine;

import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareManifest;
import dev.openshell.middleware.spi.MiddlewareProvider;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.host.CredentialAccess;
import dev.openshell.middleware.spi.host.HostCapabilities;
import dev.openshell.middleware.spi.host.RestrictedMiddlewareProvider;
import java.io.IOException;
import java.lang.module.Configuration;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Objects;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.eclipse.collections.api.factory.Lists;
import org.eclipse.collections.api.list.ImmutableList;

/**
 * Discovers every {@link MiddlewareProvider}: built-ins in the host's layer (the boot layer in the runtime image) and
 * third-party plugins from a plugins directory, each loaded into its own child {@link ModuleLayer}.
 *
 * <h2>Plugins directory</h2>
 * Each entry is one plugin: a {@code .jar} file (a modular JAR, or an automatic module with
 * {@code META-INF/services}), or a directory of JARs (the plugin and its own dependencies). Entries are loaded in name
 * order; hidden entries and {@code .txt}/{@code .md} files are skipped, and other files are skipped with a warning. Each plugin gets its own layer
 * ({@link ModuleLayer#defineModulesWithManyLoaders}), so one plugin's failure never affects another.
 *
 * <h2>Rules (RFC 0009, "Registration and delivery"; the rules are checked before a binding is usable)</h2>
 * <ul>
 *   <li>Only plugins the operator pinned load ({@link PluginPins}): an entry with no pin, or whose bytes no longer
 *       have the pinned SHA-256, is refused before any of its code runs; the checked bytes are what loads.</li>
 *   <li>Module names starting with {@value #FIRST_PARTY_PREFIX} are reserved for modules that ship with the
 *       supervisor; a plugin module with such a name is refused before any of its code runs.</li>
 *   <li>Of the supervisor's modules a plugin module may {@code requires} only the SPI, {@value #SPI_MODULE}: a
 *       plugin that requires any other {@value #FIRST_PARTY_PREFIX} module (the engine, the policy model, the
 *       runtime, ...) is refused whole, before resolution and before any of its code runs. (An automatic module
 *       declares no {@code requires}; it can read only what the supervisor exports without qualification.)</li>
 *   <li>Binding IDs follow the RFC grammar ({@link dev.openshell.middleware.spi.BindingId}); the {@code openshell/}
 *       namespace belongs to built-ins whose module name starts with {@value #FIRST_PARTY_PREFIX}.</li>
 *   <li>{@link Phase#POST_CREDENTIALS} bindings and {@link RestrictedMiddlewareProvider} implementations are accepted
 *       only from built-ins listed in {@link #RESTRICTED_BUILT_INS}; those receive the host capabilities.</li>
 *   <li>A binding ID claimed twice is refused with both owners named (see {@link ProviderRegistry#assemble}).</li>
 *   <li>A provider whose manifest breaks any rule is refused whole.</li>
 * </ul>
 *
 * <h2>Failures</h2>
 * A plugin that cannot be read or resolved, a provider that throws (anything but a {@link VirtualMachineError}), or a
 * rule broken: each becomes a {@link PluginFailure} and the host carries on without it. Start-up does not fail here:
 * a policy that names a binding which did not load fails policy validation, so no traffic ever flows with a missing
 * stage (RFC 0009's fail-closed default).
 */
public final class PluginHost {
    /**
     * {@return what is wrong with a plugins directory, if anything}: it does not exist, is not a directory, or cannot
     * be read. A configured plugins directory with such a problem stops {@code supervisor run} and fails
     * {@code supervisor plugins}: a typo in {@code --plugins} or {@code plugins_dir} must not start a supervisor that
     * silently lacks the plugins a policy was written for.
     *
     * @param dir the plugins directory
     */
    public static Optional<String> directoryProblem(Path dir) {
        if (!Files.exists(dir)) {
            return Optional.of("the plugins directory " + dir + " does not exist");
        }
        if (!Files.isDirectory(dir)) {
            return Optional.of("the plugins path " + dir + " is not a directory");
        }
        if (!Files.isReadable(dir) || !Files.isExecutable(dir)) {
            return Optional.of("the plugins directory " + dir + " cannot be read (permission denied)");
        }
        return Optional.empty();
    }

    /** Module-name prefix reserved for modules that ship with the supervisor. */
    public static final String FIRST_PARTY_PREFIX = "dev.openshell.";
    /** The one supervisor module a plugin may require: the SPI. */
    public static final String SPI_MODULE = "dev.openshell.middleware.spi";
    /** Built-in modules that may implement {@link RestrictedMiddlewareProvider} and bind the post-credentials phase. */
    public static final Set<String> RESTRICTED_BUILT_INS = Set.of("dev.openshell.builtin.sigv4");

    private static final System.Logger LOG = System.getLogger(PluginHost.class.getName());

    private final ProviderRegistry registry;
    private final ImmutableList<PluginFailure> failures;
    private final ImmutableList<ModuleLayer> pluginLayers;

    private PluginHost(ProviderRegistry registry, List<PluginFailure> failures, List<ModuleLayer> pluginLayers) {
        this.registry = registry;
        this.failures = Lists.immutable.ofAll(failures);
        this.pluginLayers = Lists.immutable.ofAll(pluginLayers);
    }

    /** {@return a builder; by default built-ins come from the boot layer and no plugins directory is read} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return the bindings that loaded} */
    public ProviderRegistry registry() {
        return registry;
    }

    /** {@return everything refused, in discovery order} */
    public ImmutableList<PluginFailure> failures() {
        return failures;
    }

    /** {@return the child layers made for plugins that resolved} */
    public ImmutableList<ModuleLayer> pluginLayers() {
        return pluginLayers;
    }

    /** Configures and runs discovery. */
    public static final class Builder {
        private ModuleLayer hostLayer = ModuleLayer.boot();
        private Path pluginsDirectory;
        private HostCapabilities capabilities = HostCapabilities.of(CredentialAccess.none());
        private boolean loadBuiltIns = true;
        private PluginPins pins = PluginPins.none();

        private Builder() {
        }

        /**
         * {@return this}
         *
         * @param layer the layer whose providers are the built-ins, and the parent of every plugin layer
         */
        public Builder hostLayer(ModuleLayer layer) {
            this.hostLayer = Objects.requireNonNull(layer, "layer");
            return this;
        }

        /** {@return this} @param directory the plugins directory; it need not exist */
        public Builder pluginsDirectory(Path directory) {
            this.pluginsDirectory = Objects.requireNonNull(directory, "directory");
            return this;
        }

        /** {@return this} @param capabilities what restricted built-ins receive */
        public Builder hostCapabilities(HostCapabilities capabilities) {
            this.capabilities = Objects.requireNonNull(capabilities, "capabilities");
            return this;
        }

        /**
         * {@return this}
         *
         * @param pins which plugins the operator chose; by default {@link PluginPins#none()}: no plugin loads
         */
        public Builder pins(PluginPins pins) {
            this.pins = Objects.requireNonNull(pins, "pins");
            return this;
        }

        /** {@return this} @param load whether to load the host layer's providers (tests turn it off) */
        public Builder loadBuiltIns(boolean load) {
            this.loadBuiltIns = load;
            return this;
        }

        /**
         * Discovers and checks every provider.
         *
         * @return the host; never {@code null}
         */
        public PluginHost load() {
            List<PluginFailure> failures = new ArrayList<>();
            List<RegisteredBinding> claims = new ArrayList<>();
            List<ModuleLayer> layers = new ArrayList<>();
            if (loadBuiltIns) {
                loadProviders(hostLayer, null, claims, failures);
            }
            if (pluginsDirectory != null) {
                for (Path entry : pluginEntries(pluginsDirectory, failures)) {
                    PluginPins.Check check = pins.stage(entry);
                    if (check.refusal().isPresent()) {
                        failures.add(new PluginFailure(entry.toString(), check.refusal().get()));
                        continue;
                    }
                    ModuleLayer layer = definePluginLayer(check.staged().orElseThrow(), entry.toString(), failures);
                    if (layer != null) {
                        layers.add(layer);
                        loadProviders(layer, entry.getFileName().toString(), claims, failures);
                    }
                }
            }
            ProviderRegistry registry = ProviderRegistry.assemble(claims, failures);
            for (PluginFailure f : failures) {
                LOG.log(System.Logger.Level.WARNING, "middleware provider refused: {0}", f);
            }
            return new PluginHost(registry, failures, layers);
        }

        private static List<Path> pluginEntries(Path dir, List<PluginFailure> failures) {
            Optional<String> problem = directoryProblem(dir);
            if (problem.isPresent()) {
                failures.add(new PluginFailure(dir.toString(), problem.get()));
                return List.of();
            }
            try (Stream<Path> s = Files.list(dir)) {
                List<Path> entries = new ArrayList<>();
                for (Path p : s.sorted().toList()) {
                    String name = p.getFileName().toString();
                    if (name.startsWith(".") || name.endsWith(".txt") || name.endsWith(".md")) {
                        continue; // hidden entries and documentation
                    }
                    if (Files.isDirectory(p) || (Files.isRegularFile(p) && name.endsWith(".jar"))) {
                        entries.add(p);
                    } else {
                        LOG.log(System.Logger.Level.WARNING,
                                "ignoring {0} in the plugins directory: not a .jar file or a directory", p);
                    }
                }
                return entries;
            } catch (IOException e) {
                failures.add(new PluginFailure(dir.toString(), "cannot list the plugins directory: " + e));
                return List.of();
            }
        }

        private ModuleLayer definePluginLayer(Path entry, String source, List<PluginFailure> failures) {
            try {
                ModuleFinder finder = ModuleFinder.of(entry);
                Set<ModuleReference> refs = finder.findAll();
                if (refs.isEmpty()) {
                    failures.add(new PluginFailure(source, "no module found in the plugin"));
                    return null;
                }
                Set<String> roots = refs.stream().map(r -> r.descriptor().name())
                        .collect(Collectors.toCollection(TreeSet::new));
                List<String> reserved = roots.stream().filter(n -> n.startsWith(FIRST_PARTY_PREFIX)).toList();
                if (!reserved.isEmpty()) {
                    failures.add(new PluginFailure(source, ("module name %s is reserved for modules that ship with "
                            + "the supervisor (prefix '%s'); plugin refused").formatted(reserved, FIRST_PARTY_PREFIX)));
                    return null;
                }
                List<String> overreach = new ArrayList<>();
                for (ModuleReference r : refs) {
                    for (ModuleDescriptor.Requires q : r.descriptor().requires()) {
                        if (q.name().startsWith(FIRST_PARTY_PREFIX) && !q.name().equals(SPI_MODULE)) {
                            overreach.add(r.descriptor().name() + " requires " + q.name());
                        }
                    }
                }
                if (!overreach.isEmpty()) {
                    failures.add(new PluginFailure(source, ("module %s: a plugin may require only %s of the "
                            + "supervisor's modules; plugin refused").formatted(String.join(", ", overreach.stream()
                            .sorted().toList()), SPI_MODULE)));
                    return null;
                }
                Configuration cf = hostLayer.configuration().resolveAndBind(finder, ModuleFinder.of(), roots);
                return hostLayer.defineModulesWithManyLoaders(cf, PluginHost.class.getClassLoader());
            } catch (RuntimeException | LinkageError e) {
                // name the entry the operator knows, not the private staging copy it was loaded from
                failures.add(new PluginFailure(source, "cannot load the plugin: "
                        + safe(e).replace(entry.toString(), source)));
                return null;
            }
        }

        private void loadProviders(ModuleLayer layer, String fileName, List<RegisteredBinding> claims,
                                   List<PluginFailure> failures) {
            boolean plugin = fileName != null;
            Iterator<ServiceLoader.Provider<MiddlewareProvider>> it =
                    ServiceLoader.load(layer, MiddlewareProvider.class).stream().iterator();
            while (true) {
                ServiceLoader.Provider<MiddlewareProvider> p;
                try {
                    if (!it.hasNext()) {
                        break;
                    }
                    p = it.next();
                } catch (ServiceConfigurationError e) {
                    failures.add(new PluginFailure(plugin ? fileName : "boot layer",
                            "cannot load a provider: " + safe(e)));
                    continue;
                }
                Module module = p.type().getModule();
                if (plugin ? module.getLayer() != layer : !isInOrAbove(module.getLayer(), layer)) {
                    continue; // a parent layer's provider: it was (or will be) loaded as a built-in
                }
                String moduleName = module.isNamed() ? module.getName() : "unnamed module";
                ProviderOrigin origin = plugin ? ProviderOrigin.plugin(moduleName, fileName)
                        : ProviderOrigin.builtIn(moduleName);
                if (plugin && moduleName.startsWith(FIRST_PARTY_PREFIX)) {
                    failures.add(new PluginFailure(origin.describe(), "module name is reserved for modules that "
                            + "ship with the supervisor; provider refused"));
                    continue;
                }
                accept(p, origin, claims, failures);
            }
        }

        private void accept(ServiceLoader.Provider<MiddlewareProvider> p, ProviderOrigin origin,
                            List<RegisteredBinding> claims, List<PluginFailure> failures) {
            String who = origin.describe();
            MiddlewareProvider provider;
            MiddlewareManifest manifest;
            try {
                provider = p.get();
                manifest = Objects.requireNonNull(provider.manifest(), "manifest() returned null");
            } catch (VirtualMachineError e) {
                throw e;
            } catch (Throwable e) {
                failures.add(new PluginFailure(who, "provider " + p.type().getName() + " failed: " + safe(e)));
                return;
            }
            boolean restrictedAllowed = origin.kind() == ProviderOrigin.Kind.BUILT_IN
                    && RESTRICTED_BUILT_INS.contains(origin.name());
            boolean firstParty = origin.kind() == ProviderOrigin.Kind.BUILT_IN
                    && origin.name().startsWith(FIRST_PARTY_PREFIX);
            List<String> problems = new ArrayList<>();
            if (provider instanceof RestrictedMiddlewareProvider && !restrictedAllowed) {
                problems.add("only the built-ins " + new TreeSet<>(RESTRICTED_BUILT_INS)
                        + " may implement RestrictedMiddlewareProvider");
            }
            for (MiddlewareBinding b : manifest.bindings()) {
                if (b.id().isReserved() && !firstParty) {
                    problems.add("binding ID '%s' is in the reserved 'openshell/' namespace, which belongs to "
                            .formatted(b.id()) + "built-ins that ship with the supervisor");
                }
                if (!invoked(b)) {
                    problems.add("binding '%s' asks for %s/%s, which this supervisor does not invoke"
                            .formatted(b.id(), b.operation(), b.phase()));
                }
                if (b.phase() == Phase.POST_CREDENTIALS && !restrictedAllowed) {
                    problems.add("binding '%s' asks for the POST_CREDENTIALS phase, which only restricted built-ins "
                            .formatted(b.id()) + "may bind");
                }
            }
            if (!problems.isEmpty()) {
                failures.add(new PluginFailure(who, String.join("; ", problems) + "; provider refused"));
                return;
            }
            if (provider instanceof RestrictedMiddlewareProvider restricted) {
                try {
                    restricted.bind(capabilities);
                } catch (VirtualMachineError e) {
                    throw e;
                } catch (Throwable e) {
                    failures.add(new PluginFailure(who, "bind(HostCapabilities) failed: " + safe(e)));
                    return;
                }
            }
            for (MiddlewareBinding b : manifest.bindings()) {
                claims.add(new RegisteredBinding(b, provider, manifest.name(), origin));
            }
        }

        /** {@return whether the supervisor invokes a binding of this operation and phase} */
        private static boolean invoked(MiddlewareBinding b) {
            if (b.operation() == dev.openshell.middleware.spi.Operation.WEBSOCKET_MESSAGE
                    || b.operation() == dev.openshell.middleware.spi.Operation.HTTP_RESPONSE) {
                return b.phase() == Phase.PRE_RETURN
                        || (b.operation() == dev.openshell.middleware.spi.Operation.WEBSOCKET_MESSAGE
                        && b.phase() == Phase.PRE_CREDENTIALS);
            }
            return b.operation() == dev.openshell.middleware.spi.Operation.HTTP_REQUEST
                    && (b.phase() == Phase.PRE_CREDENTIALS || b.phase() == Phase.POST_CREDENTIALS);
        }

        private static boolean isInOrAbove(ModuleLayer candidate, ModuleLayer layer) {
            if (candidate == null) {
                return false;
            }
            if (candidate == layer) {
                return true;
            }
            for (ModuleLayer parent : layer.parents()) {
                if (isInOrAbove(candidate, parent)) {
                    return true;
                }
            }
            return false;
        }
    }

    /** The throwable's class and message, one line, at most 300 characters: plugin messages are not request data. */
    static String safe(Throwable e) {
        String msg = e.getMessage();
        String s = e.getClass().getSimpleName() + (msg == null ? "" : ": " + msg.replaceAll("[\\r\\n\\t]+", " "));
        return s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }
}
