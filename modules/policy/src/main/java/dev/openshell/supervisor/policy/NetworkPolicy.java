package dev.openshell.supervisor.policy;

import dev.openshell.middleware.spi.OriginatingProcess;
import java.util.Objects;

import org.eclipse.collections.api.list.ImmutableList;

/**
 * One entry of {@code network_policies}: a named group of endpoints the sandbox may reach, optionally only from
 * some binaries.
 *
 * @param key the map key
 * @param name the display name; the key when none is written
 * @param endpoints the endpoints, in file order
 * @param binaries the {@code binaries[].path} entries, in file order. Empty: every process may use the endpoints.
 *     Otherwise only a process whose executable, or an ancestor's, matches one of them
 *     ({@link #admitsCaller(Caller)})
 */
public record NetworkPolicy(String key, String name, ImmutableList<NetworkEndpoint> endpoints,
                            ImmutableList<BinaryPattern> binaries) {
    /**
     * Checks the components.
     *
     * @throws NullPointerException if any component is {@code null}
     */
    public NetworkPolicy {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(endpoints, "endpoints");
        Objects.requireNonNull(binaries, "binaries");
    }

    /** {@return whether this policy is scoped to binaries} */
    public boolean binaryScoped() {
        return binaries.notEmpty();
    }

    /**
     * {@return whether this policy's {@code binaries} admit the caller} Always, for a policy without
     * {@code binaries} and in {@code endpoint-only} mode ({@link Caller.Unscoped}); never for an unidentified caller
     * of a scoped policy; otherwise when an entry matches the executable or any ancestor
     * ({@code openshell-l7-semantics.md} section 4). This is the binary half of "the policies that match a request";
     * the other half is {@link NetworkEndpoint#admits(String, int)}.
     *
     * @param caller who opened the connection
     */
    public boolean admitsCaller(Caller caller) {
        if (binaries.isEmpty()) {
            return true;
        }
        return switch (caller) {
            case Caller.Unscoped u -> true;
            case Caller.Unidentified u -> false;
            case Caller.Identified i -> admitsProcess(i.process());
        };
    }

    private boolean admitsProcess(OriginatingProcess p) {
        return binaries.anySatisfy(b -> b.matches(p.binary()) || p.ancestors().stream().anyMatch(b::matches));
    }

    /**
     * {@return the first entry that admits a binary path on its own (for {@code explain --binary}), if any}
     *
     * @param binary an executable's path
     */
    public java.util.Optional<BinaryPattern> entryFor(String binary) {
        return binaries.detectOptional(b -> b.matches(binary));
    }
}
