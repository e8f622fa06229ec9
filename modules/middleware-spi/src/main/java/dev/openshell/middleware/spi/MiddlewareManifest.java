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
 * @param bindings the hooks the provider implements, at least one; an ID at most once per operation and phase
 */
@API(status = STABLE, since = "0.1")
public record MiddlewareManifest(String name, String serviceVersion, List<MiddlewareBinding> bindings) {
    /**
     * Copies the binding list and checks it.
     *
     * @throws IllegalArgumentException if there are no bindings or an ID repeats for one operation and phase (one ID
     *     may have an {@code HTTP_REQUEST}, an {@code HTTP_RESPONSE} and {@code WEBSOCKET_MESSAGE} bindings)
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
        if (bindings.stream().map(b -> java.util.List.of(b.id(), b.operation(), b.phase())).distinct().count()
                != bindings.size()) {
            throw new IllegalArgumentException("manifest '%s' declares a binding ID twice for one operation and phase"
                    .formatted(name));
        }
    }
}
