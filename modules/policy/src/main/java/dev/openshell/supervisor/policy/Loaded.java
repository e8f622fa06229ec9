package dev.openshell.supervisor.policy;

import java.util.Objects;

import org.eclipse.collections.api.list.ImmutableList;
import org.eclipse.collections.api.map.ImmutableMap;

/**
 * A configuration that loaded without errors, with what the loader learned on the way.
 *
 * <p>Compare {@link #value()}s, not {@code Loaded}s, to detect a change: the value is free of source positions, so
 * moving a key or editing a comment does not change it.
 *
 * @param <T> the model type
 * @param file the file name as given to the loader
 * @param value the immutable model
 * @param warnings the warnings, in file order
 * @param locations where each config key was written, by key path (as in {@link ConfigProblem#keyPath()}), for
 *     checks that run later and must still point at a line
 */
public record Loaded<T>(String file, T value, ImmutableList<ConfigProblem> warnings,
                        ImmutableMap<String, SourceLocation> locations) {
    /**
     * Checks the components.
     *
     * @throws NullPointerException if any component is {@code null}
     */
    public Loaded {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(warnings, "warnings");
        Objects.requireNonNull(locations, "locations");
    }

    /**
     * {@return where {@code keyPath} was written, or the file alone when it was not}
     *
     * @param keyPath a key path such as {@code openshell.supervisor.middleware[0].max_body_bytes}
     */
    public SourceLocation locationOf(String keyPath) {
        SourceLocation at = locations.get(keyPath);
        return at != null ? at : SourceLocation.of(file);
    }
}
