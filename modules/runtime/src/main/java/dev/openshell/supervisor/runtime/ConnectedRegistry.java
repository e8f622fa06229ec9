package dev.openshell.supervisor.runtime;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.host.HostCapabilities;
import dev.openshell.supervisor.engine.PluginFailure;
import dev.openshell.supervisor.engine.PluginHost;
import dev.openshell.supervisor.engine.PluginPins;
import dev.openshell.supervisor.engine.ProviderOrigin;
import dev.openshell.supervisor.engine.ProviderRegistry;
import dev.openshell.supervisor.engine.RegisteredBinding;
import dev.openshell.supervisor.grpc.ExternalServices;
import dev.openshell.supervisor.grpc.GrpcMiddlewareProvider;
import dev.openshell.supervisor.grpc.RegistryListener;
import dev.openshell.supervisor.grpc.RetryPolicy;
import dev.openshell.supervisor.grpc.ServiceRegistration;
import dev.openshell.supervisor.grpc.auth.CallerTokens;
import dev.openshell.supervisor.policy.BindingCatalog;
import dev.openshell.supervisor.policy.BindingFacts;
import dev.openshell.supervisor.policy.Loaded;
import dev.openshell.supervisor.policy.gateway.GatewayConfig;
import dev.openshell.supervisor.policy.gateway.MiddlewareRegistration;
import dev.openshell.supervisor.policy.gateway.SupervisorSettings;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import org.eclipse.collections.api.factory.Lists;

/**
 * The middleware registry a runtime generation is built on (RFC 0009, "Registration and delivery"): the gateway
 * configuration, the built-ins and plugins the plugin host installed, and the external services registered in the
 * gateway configuration, connected and described. Built once at start-up; a policy-only reload reuses it, with its
 * connections ("A policy-only update reuses an already connected registry"). The gateway configuration is not
 * hot-reloaded, so neither is this.
 *
 * <p>{@code supervisor run} and {@code supervisor validate} both build it through one method, so validation
 * installs exactly what start-up installs. Refusals do not stop anything: a refused plugin, service or duplicate
 * binding contributes no binding, and a policy that needs it fails validation.
 */
public final class ConnectedRegistry implements AutoCloseable {
    private final Optional<Loaded<GatewayConfig>> gatewayFile;
    private final GatewayConfig gateway;
    private final Optional<Path> pluginsDirectory;
    private final PluginHost host;
    private final ExternalServices external;
    private final ProviderRegistry registry;
    private final List<PluginFailure> duplicateRefusals;
    private final boolean servicesContacted;

    private ConnectedRegistry(Optional<Loaded<GatewayConfig>> gatewayFile, GatewayConfig gateway,
                              Optional<Path> pluginsDirectory, PluginHost host, ExternalServices external,
                              ProviderRegistry registry, List<PluginFailure> duplicateRefusals,
                              boolean servicesContacted) {
        this.gatewayFile = gatewayFile;
        this.gateway = gateway;
        this.pluginsDirectory = pluginsDirectory;
        this.host = host;
        this.external = external;
        this.registry = registry;
        this.duplicateRefusals = List.copyOf(duplicateRefusals);
        this.servicesContacted = servicesContacted;
    }

    /**
     * {@return the plugins the gateway configuration pins}
     *
     * @param gateway a gateway configuration
     */
    static PluginPins pins(GatewayConfig gateway) {
        Map<String, String> pins = new LinkedHashMap<>();
        gateway.pluginPins().forEach(p -> pins.put(p.entry(), p.sha256()));
        return PluginPins.of(pins);
    }

    /** {@return the gateway configuration used when no file is given: every default, no registrations} */
    public static GatewayConfig defaultGateway() {
        return new GatewayConfig(SupervisorSettings.defaults(), Lists.immutable.empty(), Lists.immutable.empty());
    }

    /**
     * Installs built-ins and plugins, then connects to every registered external service and calls {@code Describe}
     * (built-ins first: "Supervisors install built-in bindings before attempting external connections"), then
     * assembles the registry, refusing duplicate binding IDs.
     *
     * @param gatewayFile the loaded gateway configuration, or empty for the defaults
     * @param pluginsDirectory the plugins directory, or empty for none
     * @param capabilities what restricted built-ins receive
     * @param listener external-service events (plaintext registrations, availability)
     * @param connectServices whether to contact the registered services; when {@code false} no service is
     *     contacted and none contributes a binding ({@code supervisor validate --skip-services})
     * @param tokens the extension tokens sent to services registered over TLS
     * @return the registry; never {@code null}. Never throws for a bad plugin or service: see the refusal lists.
     */
    static ConnectedRegistry connect(Optional<Loaded<GatewayConfig>> gatewayFile,
                                     Optional<Path> pluginsDirectory, HostCapabilities capabilities,
                                     RegistryListener listener, boolean connectServices, CallerTokens tokens) {
        Objects.requireNonNull(gatewayFile, "gatewayFile");
        Objects.requireNonNull(pluginsDirectory, "pluginsDirectory");
        GatewayConfig gateway = gatewayFile.map(Loaded::value).orElseGet(ConnectedRegistry::defaultGateway);
        PluginHost.Builder hb = PluginHost.builder().hostCapabilities(capabilities).pins(pins(gateway));
        pluginsDirectory.ifPresent(hb::pluginsDirectory);
        PluginHost host = hb.load();
        ExternalServices external = connectServices && !gateway.middleware().isEmpty()
                ? ExternalServices.connect(registrations(gateway), listener, RetryPolicy.DEFAULT, tokens)
                : ExternalServices.connect(List.of());
        List<PluginFailure> duplicates = new ArrayList<>();
        List<RegisteredBinding> claims = new ArrayList<>(host.registry().claims());
        claims.addAll(external.claims().castToList());
        ProviderRegistry registry = ProviderRegistry.assemble(claims, duplicates);
        return new ConnectedRegistry(gatewayFile, gateway, pluginsDirectory, host, external, registry, duplicates,
                connectServices);
    }

    /**
     * Installs and connects as start-up does, for tools that do not serve traffic ({@code supervisor explain}): restricted
     * built-ins get no credential access, and service availability events are not reported.
     *
     * @param gatewayFile the loaded gateway configuration, or empty for the defaults
     * @param pluginsDirectory the plugins directory, or empty for none
     * @param connectServices whether to contact the registered services
     * @return the registry; never {@code null}
     */
    public static ConnectedRegistry forTools(Optional<Loaded<GatewayConfig>> gatewayFile,
                                             Optional<Path> pluginsDirectory, boolean connectServices) {
        return forTools(gatewayFile, pluginsDirectory, connectServices, CallerTokens.NONE);
    }

    /**
     * Installs and connects as {@link #forTools(Optional, Optional, boolean)} does, sending extension tokens to
     * services registered over TLS.
     *
     * @param gatewayFile the loaded gateway configuration, or empty for the defaults
     * @param pluginsDirectory the plugins directory, or empty for none
     * @param connectServices whether to contact the registered services
     * @param tokens the extension tokens ({@link ExtensionAuth#open})
     * @return the registry; never {@code null}
     */
    public static ConnectedRegistry forTools(Optional<Loaded<GatewayConfig>> gatewayFile,
                                             Optional<Path> pluginsDirectory, boolean connectServices,
                                             CallerTokens tokens) {
        return connect(gatewayFile, pluginsDirectory,
                HostCapabilities.of(dev.openshell.middleware.spi.host.CredentialAccess.none()), RegistryListener.NONE,
                connectServices, tokens);
    }

    /** {@return the registered services' notes: manifest requests not granted (a binding timeout capped)} */
    public List<String> serviceNotes() {
        return external.notes().castToList();
    }

    private static List<ServiceRegistration> registrations(GatewayConfig gateway) {
        List<ServiceRegistration> regs = new ArrayList<>();
        for (MiddlewareRegistration r : gateway.middleware()) {
            regs.add(registration(r));
        }
        return regs;
    }

    private static ServiceRegistration registration(MiddlewareRegistration r) {
        ServiceRegistration.Builder b = ServiceRegistration.builder(r.name(), URI.create(r.endpoint().toString()),
                r.maxBodyBytes()).timeout(r.timeout()).allowInsecure(r.allowInsecure());
        r.audience().ifPresent(b::audience);
        r.tlsCaBundle().ifPresent(b::caBundle);
        if (r.tlsClientCert().isPresent() && r.tlsClientKey().isPresent()) {
            b.clientCertificate(r.tlsClientCert().get(), r.tlsClientKey().get());
        }
        return b.build();
    }

    /** {@return the gateway file as loaded (with its key positions), or empty when the defaults are used} */
    public Optional<Loaded<GatewayConfig>> gatewayFile() {
        return gatewayFile;
    }

    /** {@return the gateway configuration in use} */
    public GatewayConfig gateway() {
        return gateway;
    }

    /** {@return the plugins directory read, if any} */
    public Optional<Path> pluginsDirectory() {
        return pluginsDirectory;
    }

    /** {@return the assembled registry: every binding that loaded and was not refused} */
    public ProviderRegistry registry() {
        return registry;
    }

    /** {@return the plugins, providers and bindings the plugin host refused, in discovery order} */
    public List<PluginFailure> pluginRefusals() {
        return host.failures().castToList();
    }

    /** {@return the registered services refused at connection (unreachable, invalid manifest, duplicate name)} */
    public List<PluginFailure> serviceRefusals() {
        return external.failures().castToList();
    }

    /** {@return claims refused because another owner claimed the same binding ID} */
    public List<PluginFailure> duplicateRefusals() {
        return duplicateRefusals;
    }

    /** {@return the services that were connected and described} */
    List<GrpcMiddlewareProvider> services() {
        return external.providers().castToList();
    }

    /** {@return whether registered services were contacted ({@code false} under {@code --skip-services})} */
    public boolean servicesContacted() {
        return servicesContacted;
    }

    /**
     * {@return the index of the registration a refusal or an origin names, if it names one}
     *
     * @param source a {@link PluginFailure#source()} or {@link ProviderOrigin#describe()}
     */
    public OptionalInt registrationIndex(String source) {
        List<MiddlewareRegistration> regs = gateway.middleware().castToList();
        for (int i = 0; i < regs.size(); i++) {
            MiddlewareRegistration r = regs.get(i);
            String described = new ProviderOrigin(ProviderOrigin.Kind.EXTERNAL, r.name(),
                    Optional.of(URI.create(r.endpoint().toString()).toString())).describe();
            if (described.equals(source)) {
                return OptionalInt.of(i);
            }
        }
        return OptionalInt.empty();
    }

    /**
     * {@return the catalog policy validation uses: every registered binding, its owner and capability, and its
     * provider's {@code validateConfig}}
     */
    public BindingCatalog catalog() {
        return catalog(registry);
    }

    /**
     * {@return the catalog of a registry}
     *
     * @param registry the registry
     */
    static BindingCatalog catalog(ProviderRegistry registry) {
        return id -> registry.lookup(id).map(rb -> BindingFacts.of(id, kind(rb), rb.origin().name(),
                rb.binding().maxBodyBytes(), config -> validate(rb, id, config))
                .readingWebSocketMessages(registry.messagePhases(id)
                        .contains(dev.openshell.middleware.spi.Phase.PRE_CREDENTIALS)));
    }

    /**
     * {@return a catalog that, besides the registered bindings, accepts without checking any binding outside
     * {@code openshell/} when services were not contacted and the gateway registers at least one: such a binding
     * may belong to a service that {@code --skip-services} left out} Its owner is reported as an external service
     * named {@value #UNCHECKED_OWNER}.
     */
    public BindingCatalog catalogAllowingUnchecked() {
        BindingCatalog known = catalog();
        if (servicesContacted || gateway.middleware().isEmpty()) {
            return known;
        }
        return catalogAcceptingUnknown();
    }

    /**
     * {@return the catalog of the registered bindings, which also accepts, unchecked, any binding outside the
     * {@code openshell/} namespace that none of them provides} For validating a policy when the registrations cannot
     * be known (a gateway configuration with errors): every other rule is still checked.
     */
    public BindingCatalog catalogAcceptingUnknown() {
        BindingCatalog known = catalog();
        return id -> known.lookup(id).or(() -> id.value().startsWith("openshell/") ? Optional.empty()
                : Optional.of(BindingFacts.of(id, BindingFacts.OwnerKind.EXTERNAL, UNCHECKED_OWNER,
                        dev.openshell.middleware.spi.EnvelopeLimits.MAX_BODY_BYTES, c -> ConfigValidation.ok())));
    }

    /** The owner name of a binding accepted without checking. */
    public static final String UNCHECKED_OWNER = "(services not contacted)";

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

    /** Closes every external service connection (background probes stop, channels shut down). */
    @Override
    public void close() {
        external.close();
    }
}
