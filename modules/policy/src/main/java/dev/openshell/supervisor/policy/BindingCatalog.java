package dev.openshell.supervisor.policy;

import dev.openshell.middleware.spi.BindingId;

import java.util.Map;
import java.util.Optional;

/**
 * The bindings the supervisor can run, as policy validation sees them. The engine's registry implements it once the
 * built-ins, plugins and external services are loaded; without a catalog the loader checks structure only.
 *
 * <p>With a catalog, the loader also rejects a policy that names a binding nobody provides, that claims the reserved
 * {@code openshell/} namespace for anything but a built-in, or whose config the binding's {@code ValidateConfig}
 * refuses (RFC 0009, "Contract versioning" and "Policy integration").
 */
@FunctionalInterface
public interface BindingCatalog {
    /**
     * {@return the facts about {@code id}, or empty when no built-in, plugin or service provides it}
     *
     * @param id a binding ID
     */
    Optional<BindingFacts> lookup(BindingId id);

    /**
     * {@return a catalog of fixed facts, keyed by their IDs}
     *
     * @param facts the bindings
     */
    static BindingCatalog of(BindingFacts... facts) {
        Map<BindingId, BindingFacts> byId = new java.util.HashMap<>();
        for (BindingFacts f : facts) {
            byId.put(f.id(), f);
        }
        Map<BindingId, BindingFacts> frozen = Map.copyOf(byId);
        return id -> Optional.ofNullable(frozen.get(id));
    }
}
