package dev.openshell.supervisor.engine.chain;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Chain assembly for one runtime generation (RFC 0009, "Policy integration" and "Middleware ordering"): holds the
 * generation's stage specs sorted by ascending {@code order} and selects, per request, those whose selector matches
 * the admitted host. Selection depends only on the host, never on which network rule admitted the request.
 *
 * <p>Built once per generation, off the request path: the sort and the configs' encoded sizes are computed here.
 * {@link #select} is one pass over the sorted specs; a request that matches nothing gets {@link Chain#empty()} and
 * allocates nothing. Immutable and thread-safe (as long as the selectors are).
 */
public final class ChainSelector {
    private final Chain.Prepared[] sorted;

    private ChainSelector(Chain.Prepared[] sorted) {
        this.sorted = sorted;
    }

    /**
     * Sorts and prepares a generation's stage specs.
     *
     * @param specs the resolved middleware configs, any number, in any order
     * @return the selector
     * @throws IllegalArgumentException if two specs share a config key or an {@code order} (policy validation
     *     rejects both; the engine refuses them again so that ordering and metadata namespaces stay unambiguous)
     * @throws NullPointerException if {@code specs} or an element is {@code null}
     */
    public static ChainSelector of(Collection<StageSpec> specs) {
        Set<String> keys = new HashSet<>();
        Set<Long> orders = new HashSet<>();
        List<Chain.Prepared> list = new ArrayList<>(specs.size());
        for (StageSpec s : specs) {
            if (!keys.add(s.configKey())) {
                throw new IllegalArgumentException("config key '%s' appears twice".formatted(s.configKey()));
            }
            if (!orders.add(s.order())) {
                throw new IllegalArgumentException("order %d is used by more than one config (second: '%s')"
                        .formatted(s.order(), s.configKey()));
            }
            list.add(Chain.Prepared.of(s));
        }
        list.sort(Comparator.comparingLong(p -> p.spec().order()));
        return new ChainSelector(list.toArray(Chain.Prepared[]::new));
    }

    /**
     * Selects the chain for an admitted host.
     *
     * @param host the admitted host, lowercase, without a trailing dot (as in
     *     {@link dev.openshell.middleware.spi.HttpRequestTarget#host()})
     * @return the matching stages in order; {@link Chain#empty()} when none match; a {@linkplain Chain#refused()
     *     refused} chain when more than 10 match
     */
    public Chain select(String host) {
        List<Chain.Prepared> matched = null;
        for (Chain.Prepared p : sorted) {
            if (p.spec().selector().test(host)) {
                if (matched == null) {
                    matched = new ArrayList<>(4);
                }
                matched.add(p);
            }
        }
        return matched == null ? Chain.empty() : Chain.of(matched);
    }

    /** {@return every spec of the generation, in order} */
    public List<StageSpec> specs() {
        List<StageSpec> out = new ArrayList<>(sorted.length);
        for (Chain.Prepared p : sorted) {
            out.add(p.spec());
        }
        return List.copyOf(out);
    }
}
