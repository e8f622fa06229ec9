package dev.openshell.supervisor.engine;

import java.util.Objects;

/**
 * A plugin, provider or binding the host refused. The host keeps running without it (see {@link PluginHost}).
 *
 * @param source what failed: a JAR or directory path, or a module name
 * @param message a safe, complete explanation, naming every party involved
 */
public record PluginFailure(String source, String message) {
    /** @throws NullPointerException if any part is {@code null} */
    public PluginFailure {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(message, "message");
    }

    @Override
    public String toString() {
        return source + ": " + message;
    }
}
