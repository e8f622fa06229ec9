package dev.openshell.supervisor.policy.gateway;

import java.util.Objects;
import java.util.Optional;

import org.eclipse.collections.api.factory.Lists;
import org.eclipse.collections.api.list.ImmutableList;

/**
 * A loaded, validated gateway configuration: what one TOML file says about a supervisor deployment.
 *
 * <p>An immutable value, comparable with {@code equals}: a reload can tell whether the gateway side changed (RFC
 * 0009: registrations change only with a restart, policies at run time).
 *
 * @param supervisor the supervisor's own settings
 * @param middleware the external middleware registrations, in file order; names unique
 * @param credentials the credentials, in file order; names unique
 * @param pluginPins the plugins the operator chose to load, in file order; entries unique. With none, no plugin
 *     of the plugins directory loads (built-ins need no pin)
 */
public record GatewayConfig(SupervisorSettings supervisor, ImmutableList<MiddlewareRegistration> middleware,
                            ImmutableList<CredentialRule> credentials, ImmutableList<PluginPin> pluginPins) {
    /**
     * Checks the components.
     *
     * @throws NullPointerException if any component is {@code null}
     */
    public GatewayConfig {
        Objects.requireNonNull(supervisor, "supervisor");
        Objects.requireNonNull(middleware, "middleware");
        Objects.requireNonNull(credentials, "credentials");
        Objects.requireNonNull(pluginPins, "pluginPins");
    }

    /**
     * A configuration that pins no plugin.
     *
     * @param supervisor the supervisor's own settings
     * @param middleware the external middleware registrations
     * @param credentials the credentials
     */
    public GatewayConfig(SupervisorSettings supervisor, ImmutableList<MiddlewareRegistration> middleware,
                         ImmutableList<CredentialRule> credentials) {
        this(supervisor, middleware, credentials, Lists.immutable.empty());
    }

    /**
     * {@return the registration called {@code name}}
     *
     * @param name a registration name
     */
    public Optional<MiddlewareRegistration> registration(String name) {
        return middleware.detectOptional(r -> r.name().equals(name));
    }

    /** {@return the registrations reached in plaintext, which the caller must warn about and audit} */
    public ImmutableList<MiddlewareRegistration> insecureRegistrations() {
        return middleware.select(MiddlewareRegistration::insecure);
    }
}
