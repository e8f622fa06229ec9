package dev.openshell.middleware.spi;

import java.util.List;
import java.util.Objects;

/**
 * A provider's self-description (RFC 0009, "Terminology": Manifest; wire message {@code MiddlewareManifest}).
 *
 * @param name a diagnostic service name, for logs only (never a policy key)
 * @param serviceVersion the implementation version, informational
 * @param bindings the hooks the provider implements, at least one; IDs unique within the manifest
 */
public record MiddlewareManifest(String name, String serviceVersion, List<MiddlewareBinding> bindings) {
    /**
     * Copies the binding list and checks it.
     *
     * @throws IllegalArgumentException if there are no bindings or an ID repeats
     * @throws NullPointerException if any argument or binding is {@code null}
     */
    public MiddlewareManifest {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(serviceVersion, "serviceVersion");
        bindings = List.copyOf(bindings);
        if (bindings.isEmpty()) {
            throw new IllegalArgumentException("manifest '%s' declares no bindings".formatted(name));
        }
        if (bindings.stream().map(MiddlewareBinding::id).distinct().count() != bindings.size()) {
            throw new IllegalArgumentException("manifest '%s' declares a binding ID twice".formatted(name));
        }
    }
}
