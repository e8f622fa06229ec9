package dev.openshell.supervisor.engine;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareProvider;
import java.util.Objects;

/**
 * A binding the registry accepted, with the provider that serves it and where that provider came from.
 *
 * @param binding the binding as the provider's manifest declared it
 * @param provider the provider to call
 * @param serviceName the manifest's diagnostic name
 * @param origin where the provider was found
 */
public record RegisteredBinding(MiddlewareBinding binding, MiddlewareProvider provider, String serviceName,
                                ProviderOrigin origin) {
    /** @throws NullPointerException if any part is {@code null} */
    public RegisteredBinding {
        Objects.requireNonNull(binding, "binding");
        Objects.requireNonNull(provider, "provider");
        Objects.requireNonNull(serviceName, "serviceName");
        Objects.requireNonNull(origin, "origin");
    }

    /** {@return the binding ID} */
    public BindingId id() {
        return binding.id();
    }
}
