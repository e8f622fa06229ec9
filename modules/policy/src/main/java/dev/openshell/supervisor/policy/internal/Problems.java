package dev.openshell.supervisor.policy.internal;

import dev.openshell.supervisor.policy.ConfigProblem;
import dev.openshell.supervisor.policy.Loaded;
import dev.openshell.supervisor.policy.PolicyException;
import dev.openshell.supervisor.policy.SourceLocation;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.eclipse.collections.api.factory.Lists;
import org.eclipse.collections.api.factory.Maps;
import org.eclipse.collections.api.list.ImmutableList;

/**
 * Collects the problems of one file, and the location of every key read, while a loader walks it. Loaders keep
 * going after an error so that one run reports everything.
 */
public final class Problems {
    private static final Comparator<ConfigProblem> FILE_ORDER = Comparator
            .comparingInt((ConfigProblem p) -> p.location().line())
            .thenComparingInt(p -> p.location().column());

    private final String file;
    private final List<ConfigProblem> problems = new ArrayList<>();
    private final Map<String, SourceLocation> locations = new LinkedHashMap<>();

    /** @param file the file name as given to the loader */
    public Problems(String file) {
        this.file = file;
    }

    /** {@return the file name} */
    public String file() {
        return file;
    }

    /**
     * {@return a location in this file}
     *
     * @param line 1-based line, 0 unknown
     * @param column 1-based column, 0 unknown
     */
    public SourceLocation at(int line, int column) {
        return new SourceLocation(file, line, column);
    }

    /** {@return a location naming only this file} */
    public SourceLocation nowhere() {
        return SourceLocation.of(file);
    }

    /**
     * Records an error.
     *
     * @param at where
     * @param path the config key
     * @param message what is wrong
     */
    public void error(SourceLocation at, KeyPath path, String message) {
        problems.add(ConfigProblem.error(at, path.toString(), message));
    }

    /**
     * Records an error with text from outside the supervisor.
     *
     * @param at where
     * @param path the config key
     * @param message the platform message
     * @param untrustedDetail the outside text; sanitised here ({@link Texts#untrusted})
     */
    public void error(SourceLocation at, KeyPath path, String message, String untrustedDetail) {
        String detail = Texts.untrusted(untrustedDetail);
        problems.add(new ConfigProblem(ConfigProblem.Severity.ERROR, at, path.toString(), message,
                detail.isEmpty() ? Optional.empty() : Optional.of(detail)));
    }

    /**
     * Records a warning.
     *
     * @param at where
     * @param path the config key
     * @param message what the operator should know
     */
    public void warning(SourceLocation at, KeyPath path, String message) {
        problems.add(ConfigProblem.warning(at, path.toString(), message));
    }

    /**
     * Remembers where a key was written.
     *
     * @param path the key
     * @param at where
     */
    public void locate(KeyPath path, SourceLocation at) {
        locations.putIfAbsent(path.toString(), at);
    }

    /** {@return whether an error has been recorded} */
    public boolean hasErrors() {
        return problems.stream().anyMatch(ConfigProblem::isError);
    }

    /** {@return the number of errors recorded so far} */
    public int errorCount() {
        return (int) problems.stream().filter(ConfigProblem::isError).count();
    }

    /** {@return every problem in file order (stable for problems at one place)} */
    public ImmutableList<ConfigProblem> sorted() {
        List<ConfigProblem> copy = new ArrayList<>(problems);
        copy.sort(FILE_ORDER);
        return Lists.immutable.withAll(copy);
    }

    /**
     * {@return the loaded value with its warnings and key locations}
     *
     * @param value the model
     * @param <T> the model type
     * @throws PolicyException with every problem if any error was recorded
     */
    public <T> Loaded<T> finish(T value) {
        throwIfErrors();
        return new Loaded<>(file, value, sorted(), Maps.immutable.withAll(locations));
    }

    /** @throws PolicyException with every problem if any error was recorded */
    public void throwIfErrors() {
        if (hasErrors()) {
            throw new PolicyException(file, sorted());
        }
    }
}
