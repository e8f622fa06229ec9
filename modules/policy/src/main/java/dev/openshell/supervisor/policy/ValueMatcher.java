package dev.openshell.supervisor.policy;

import java.util.Objects;

import org.eclipse.collections.api.list.ImmutableList;

/**
 * A matcher for one value (a query parameter value, an MCP tool name): a glob written as a string or as
 * {@code {glob: ...}}, or {@code {any: [...]}} where the value must match at least one of the globs (OpenShell policy
 * {@code query}, {@code tool}, {@code params.name}).
 *
 * @param anyOf the value globs ({@link Glob#value(String)}), at least one; one for the string and {@code glob} forms
 */
public record ValueMatcher(ImmutableList<Glob> anyOf) {
    /**
     * Checks the component.
     *
     * @throws IllegalArgumentException if {@code anyOf} is empty
     */
    public ValueMatcher {
        Objects.requireNonNull(anyOf, "anyOf");
        if (anyOf.isEmpty()) {
            throw new IllegalArgumentException("a value matcher needs at least one glob");
        }
    }

    /** {@return whether {@code value} matches one of the globs} @param value the decoded value */
    public boolean matches(String value) {
        return anyOf.anySatisfy(g -> g.matches(value));
    }

    @Override
    public String toString() {
        return anyOf.size() == 1 ? anyOf.getOnly().source() : anyOf.makeString("{any: [", ", ", "]}");
    }
}
