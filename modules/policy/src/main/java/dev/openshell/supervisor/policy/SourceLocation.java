package dev.openshell.supervisor.policy;

import java.util.Objects;

/**
 * Where in a configuration file something was written.
 *
 * @param file the file name as given to the loader (a path, or a label such as {@code <inline>})
 * @param line the 1-based line, or 0 when unknown
 * @param column the 1-based column, or 0 when unknown
 */
public record SourceLocation(String file, int line, int column) {
    /**
     * Checks the components.
     *
     * @throws IllegalArgumentException if {@code line} or {@code column} is negative
     * @throws NullPointerException if {@code file} is {@code null}
     */
    public SourceLocation {
        Objects.requireNonNull(file, "file");
        if (line < 0 || column < 0) {
            throw new IllegalArgumentException("line and column must not be negative");
        }
    }

    /**
     * {@return a location naming only the file}
     *
     * @param file the file name
     */
    public static SourceLocation of(String file) {
        return new SourceLocation(file, 0, 0);
    }

    /** {@return whether the line is known} */
    public boolean hasLine() {
        return line > 0;
    }

    /** {@return {@code file:line:column}, leaving out the parts that are unknown} */
    @Override
    public String toString() {
        if (line == 0) {
            return file;
        }
        return column == 0 ? file + ":" + line : file + ":" + line + ":" + column;
    }
}
