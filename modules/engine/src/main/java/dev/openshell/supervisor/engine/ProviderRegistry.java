package dev.openshell.supervisor.engine;

import dev.openshell.middleware.spi.BindingId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.eclipse.collections.api.factory.Lists;
import org.eclipse.collections.api.factory.Maps;
import org.eclipse.collections.api.list.ImmutableList;
import org.eclipse.collections.api.map.ImmutableMap;

/**
 * The immutable set of bindings a runtime generation can use, keyed by binding ID (RFC 0009, "Registration and
 * delivery").
 *
 * <p>A binding ID names at most one request binding ({@code HTTP_REQUEST}) and at most one response binding
 * ({@code HTTP_RESPONSE/PRE_RETURN}); a policy config that names the ID runs both, each at its phase (the manifest
 * decides the phases, as for a service written for the published contract, whose registration name stands in for
 * both). {@link #lookup} finds the request binding (or the response binding when there is none),
 * {@link #lookupResponse} the response binding.
 *
 * <p>Built by {@link #assemble}: each binding ID and kind has exactly one owner. When several providers claim one ID, a single
 * built-in claimant keeps it and the others are refused; with no built-in among them every claim is refused, so
 * policy that names the ID fails validation instead of running an arbitrary one. Every refusal names all owners.
 */
public final class ProviderRegistry {
    private final ImmutableMap<Key, RegisteredBinding> byId;
    private final ImmutableList<RegisteredBinding> ordered;

    /** A binding ID and whether it names a response binding. */
    private record Key(BindingId id, boolean response) {
        static Key of(RegisteredBinding b) {
            return new Key(b.id(), isResponse(b));
        }

        @Override
        public String toString() {
            return id.value();
        }
    }

    private ProviderRegistry(ImmutableMap<Key, RegisteredBinding> byId,
                             ImmutableList<RegisteredBinding> ordered) {
        this.byId = byId;
        this.ordered = ordered;
    }

    /** {@return whether a binding is a response binding ({@code HTTP_RESPONSE})} @param b the binding */
    public static boolean isResponse(RegisteredBinding b) {
        return b.binding().operation() == dev.openshell.middleware.spi.Operation.HTTP_RESPONSE;
    }

    /** {@return a registry with no bindings} */
    public static ProviderRegistry empty() {
        return new ProviderRegistry(Maps.immutable.empty(), Lists.immutable.empty());
    }

    /**
     * Resolves claims into a registry.
     *
     * @param claims every binding claimed, in discovery order (built-ins first)
     * @param failures receives one failure per refused claim
     * @return the registry of unambiguous bindings
     */
    public static ProviderRegistry assemble(List<RegisteredBinding> claims, List<PluginFailure> failures) {
        Map<Key, List<RegisteredBinding>> byId = new LinkedHashMap<>();
        for (RegisteredBinding claim : claims) {
            byId.computeIfAbsent(Key.of(claim), k -> new ArrayList<>()).add(claim);
        }
        Map<Key, RegisteredBinding> accepted = new LinkedHashMap<>();
        for (Map.Entry<Key, List<RegisteredBinding>> e : byId.entrySet()) {
            List<RegisteredBinding> owners = e.getValue();
            if (owners.size() == 1) {
                accepted.put(e.getKey(), owners.get(0));
                continue;
            }
            List<RegisteredBinding> builtIns = owners.stream()
                    .filter(o -> o.origin().kind() == ProviderOrigin.Kind.BUILT_IN).toList();
            String all = owners.stream().map(o -> o.origin().describe()).collect(Collectors.joining(", "));
            if (builtIns.size() == 1) {
                RegisteredBinding keeper = builtIns.get(0);
                accepted.put(e.getKey(), keeper);
                for (RegisteredBinding o : owners) {
                    if (o != keeper) {
                        failures.add(new PluginFailure(o.origin().describe(),
                                "duplicate binding ID '%s': already provided by %s; refused from %s"
                                        .formatted(e.getKey(), keeper.origin().describe(), o.origin().describe())));
                    }
                }
            } else {
                for (RegisteredBinding o : owners) {
                    failures.add(new PluginFailure(o.origin().describe(),
                            "duplicate binding ID '%s' claimed by %s; all claims refused"
                                    .formatted(e.getKey(), all)));
                }
            }
        }
        List<RegisteredBinding> list = new ArrayList<>(accepted.values());
        list.sort((a, b) -> a.id().compareTo(b.id()));
        return new ProviderRegistry(Maps.immutable.ofMap(accepted), Lists.immutable.ofAll(list));
    }

    /**
     * {@return the request binding with this ID, or the response binding when the ID names no request binding}
     *
     * @param id the binding ID
     */
    public Optional<RegisteredBinding> lookup(BindingId id) {
        RegisteredBinding b = byId.get(new Key(id, false));
        return Optional.ofNullable(b != null ? b : byId.get(new Key(id, true)));
    }

    /** {@return the response binding ({@code HTTP_RESPONSE/PRE_RETURN}) with this ID, if registered} @param id the ID */
    public Optional<RegisteredBinding> lookupResponse(BindingId id) {
        return Optional.ofNullable(byId.get(new Key(id, true)));
    }

    /** {@return every registered binding, sorted by binding ID} */
    public ImmutableList<RegisteredBinding> bindings() {
        return ordered;
    }
}
