package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.STABLE;

import java.util.List;
import java.util.Objects;
import org.apiguardian.api.API;

/**
 * A provider's self-description (RFC 0009, "Terminology": Manifest; wire message {@code MiddlewareManifest}).
 *
 * @param name a diagnostic service name, for logs only (never a policy key)
 * @param serviceVersion the implementation version, informational
 * @param bindings the hooks the provider implements, at least one; IDs unique within the manifest
 */
@API(status = STABLE, since = "0.1")
public record MiddlewareManifest(String name, String serviceVersion, List<MiddlewareBinding> bindings) {
    /**
     * Copies the binding list and checks it.
     *
     * @throws IllegalArgumentException if there are no bindings or an ID repeats within one kind (request or
     *     response bindings)
     * @throws NullPointerException if any argument or binding is {@code null}
     */
    @API(status = STABLE, since = "0.1")
    public MiddlewareManifest {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(serviceVersion, "serviceVersion");
        bindings = List.copyOf(bindings);
        if (bindings.isEmpty()) {
            throw new IllegalArgumentException("manifest '%s' declares no bindings".formatted(name));
        }
        // one request binding and one response binding may share an ID: a policy config naming it runs both
        if (bindings.stream().map(b -> b.id().value() + (b.operation() == Operation.HTTP_RESPONSE ? "#r" : ""))
                .distinct().count() != bindings.size()) {
            throw new IllegalArgumentException("manifest '%s' declares a binding ID twice".formatted(name));
        }
    }
}
