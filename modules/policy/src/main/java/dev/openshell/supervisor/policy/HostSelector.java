package dev.openshell.supervisor.policy;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import org.eclipse.collections.api.factory.Lists;
import org.eclipse.collections.api.list.ImmutableList;

/**
 * A middleware config's destination selector: {@code endpoints.include} and {@code endpoints.exclude} (RFC 0009,
 * "Policy integration"). A host is selected when some include pattern matches it and no exclude pattern does:
 * exclusion always wins.
 *
 * <p>Hosts are matched as {@link HostPattern#matches(String)} does: case-insensitively, and never a host with an
 * empty label. The policy loader limits a selector to
 * {@link dev.openshell.middleware.spi.EnvelopeLimits#MAX_SELECTOR_PATTERNS} patterns; this type accepts any count so
 * that it can also serve other callers (credential host lists).
 *
 * @param include the include patterns; never empty
 * @param exclude the exclude patterns; possibly empty
 */
public record HostSelector(ImmutableList<HostPattern> include, ImmutableList<HostPattern> exclude) {
    /**
     * Checks the components.
     *
     * @throws IllegalArgumentException if {@code include} is empty
     * @throws NullPointerException if a list or a pattern is {@code null}
     */
    public HostSelector {
        Objects.requireNonNull(include, "include");
        Objects.requireNonNull(exclude, "exclude");
        include.forEach(p -> Objects.requireNonNull(p, "include pattern"));
        exclude.forEach(p -> Objects.requireNonNull(p, "exclude pattern"));
        if (include.isEmpty()) {
            throw new IllegalArgumentException("a host selector needs at least one include pattern");
        }
    }

    /**
     * Parses a selector from pattern strings.
     *
     * @param include include patterns, at least one
     * @param exclude exclude patterns
     * @return the selector
     * @throws IllegalArgumentException if {@code include} is empty or a pattern is invalid
     *     ({@link HostPattern#parse(String)}'s message)
     */
    public static HostSelector of(Collection<String> include, Collection<String> exclude) {
        return new HostSelector(parseAll(include), parseAll(exclude));
    }

    private static ImmutableList<HostPattern> parseAll(Collection<String> patterns) {
        List<HostPattern> out = new ArrayList<>(patterns.size());
        for (String p : patterns) {
            out.add(HostPattern.parse(p));
        }
        return Lists.immutable.withAll(out);
    }

    /**
     * {@return whether the selector selects {@code host}: some include matches and no exclude matches}
     *
     * @param host the admitted host, canonicalised by the caller ({@link HostPattern#canonicalHost(String)})
     */
    public boolean matches(String host) {
        return include.anySatisfy(p -> p.matches(host)) && exclude.noneSatisfy(p -> p.matches(host));
    }

    /**
     * Finds a host that this selector selects and {@code candidate} matches. Exact, exclusions included: empty means
     * that no host matched by {@code candidate} can ever be selected.
     *
     * @param candidate a pattern, for example a {@code tls: skip} endpoint's host
     * @return such a host with the fewest labels, or empty
     * @throws IllegalStateException if the patterns are too complex to compare within a fixed work budget
     */
    public Optional<String> sharedHost(HostPattern candidate) {
        Objects.requireNonNull(candidate, "candidate");
        List<HostPattern> none = exclude.castToList();
        Optional<String> best = Optional.empty();
        for (HostPattern in : include) {
            Optional<String> host = HostLanguage.witness(List.of(candidate, in), none);
            if (host.isPresent() && (best.isEmpty() || labels(host.get()) < labels(best.get()))) {
                best = host;
            }
        }
        return best;
    }

    private static int labels(String host) {
        return host.split("\\.", -1).length;
    }

    /** {@return the selector in policy syntax} */
    @Override
    public String toString() {
        return "include=" + include.makeString(",") + ";exclude=" + exclude.makeString(",");
    }
}
