package dev.openshell.supervisor.engine;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Operation;
import dev.openshell.middleware.spi.Phase;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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
 * {@link #lookupResponse} the response binding. The rule is one binding per ID, operation and phase: an ID's
 * {@code WEBSOCKET_MESSAGE} bindings (one per direction, {@link #messagePhases}) join its request binding and need the
 * same owner.
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

    /** The WebSocket message phases each binding ID's owner serves (its WEBSOCKET_MESSAGE bindings). */
    private final Map<BindingId, Set<Phase>> messagePhases;
    /** The accepted {@code WEBSOCKET_MESSAGE} claims, so that a registry can be assembled again with more claims. */
    private final List<RegisteredBinding> messageClaims;

    private ProviderRegistry(ImmutableMap<Key, RegisteredBinding> byId,
                             ImmutableList<RegisteredBinding> ordered, Map<BindingId, Set<Phase>> messagePhases,
                             List<RegisteredBinding> messageClaims) {
        this.byId = byId;
        this.ordered = ordered;
        this.messagePhases = Map.copyOf(messagePhases);
        this.messageClaims = List.copyOf(messageClaims);
    }

    /** {@return whether a binding is a response binding ({@code HTTP_RESPONSE})} @param b the binding */
    public static boolean isResponse(RegisteredBinding b) {
        return b.binding().operation() == dev.openshell.middleware.spi.Operation.HTTP_RESPONSE;
    }

    /** {@return a registry with no bindings} */
    public static ProviderRegistry empty() {
        return new ProviderRegistry(Maps.immutable.empty(), Lists.immutable.empty(), Map.of(), List.of());
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
        List<RegisteredBinding> messages = new ArrayList<>();
        for (RegisteredBinding claim : claims) {
            if (claim.binding().operation() == Operation.WEBSOCKET_MESSAGE) {
                messages.add(claim);
                continue;
            }
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
        Map<BindingId, Set<Phase>> phases = new LinkedHashMap<>();
        List<RegisteredBinding> kept = new ArrayList<>();
        for (RegisteredBinding m : messages) {
            RegisteredBinding owner = accepted.get(new Key(m.id(), false));
            if (owner == null || owner.provider() != m.provider()) {
                failures.add(new PluginFailure(m.origin().describe(), ("WEBSOCKET_MESSAGE binding '%s' has no "
                        + "HTTP_REQUEST binding of the same ID and provider; the message binding is ignored")
                        .formatted(m.id())));
                continue;
            }
            phases.computeIfAbsent(m.id(), k -> java.util.EnumSet.noneOf(Phase.class)).add(m.binding().phase());
            kept.add(m);
        }
        phases.replaceAll((k, v) -> Set.copyOf(v));
        return new ProviderRegistry(Maps.immutable.ofMap(accepted), Lists.immutable.ofAll(list), phases, kept);
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

    /**
     * {@return the WebSocket message phases the owner of a binding ID serves} A config that selects the ID joins a
     * session's message chain in these directions ({@link Phase#PRE_CREDENTIALS}: client-to-upstream,
     * {@link Phase#PRE_RETURN}: upstream-to-client); empty when the owner has no {@code WEBSOCKET_MESSAGE} binding.
     *
     * @param id the binding ID a config selects
     */
    public Set<Phase> messagePhases(BindingId id) {
        return messagePhases.getOrDefault(id, Set.of());
    }

    /**
     * {@return every claim this registry accepted: the bindings ({@link #bindings()}) and the {@code WEBSOCKET_MESSAGE}
     * claims beside them} What to pass to {@link #assemble} to build a larger registry from this one.
     */
    public List<RegisteredBinding> claims() {
        List<RegisteredBinding> all = new ArrayList<>(ordered.castToList());
        all.addAll(messageClaims);
        return all;
    }

    /** {@return every registered binding, sorted by binding ID} */
    public ImmutableList<RegisteredBinding> bindings() {
        return ordered;
    }
}
