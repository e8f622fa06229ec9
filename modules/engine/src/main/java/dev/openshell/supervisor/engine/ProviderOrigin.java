package dev.openshell.supervisor.engine;

import java.util.Objects;
import java.util.Optional;

/**
 * Where a provider comes from.
 *
 * @param kind built-in (boot layer), plugin (child layer) or external service (gRPC)
 * @param name the provider's module name, or for an external service its registration name
 * @param source the plugin JAR or directory file name, or the external endpoint; empty for built-ins
 */
public record ProviderOrigin(Kind kind, String name, Optional<String> source) {
    /** The kind of owner a binding has. */
    public enum Kind {
        /** A module in the boot layer: ships with the supervisor image. */
        BUILT_IN,
        /** A module in a child layer made from the plugins directory. */
        PLUGIN,
        /** An operator-run service reached over gRPC. */
        EXTERNAL;

        /** {@return the lowercase word used in listings: built-in, plugin, external} */
        public String word() {
            return this == BUILT_IN ? "built-in" : name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** @throws NullPointerException if any part is {@code null} */
    public ProviderOrigin {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(source, "source");
    }

    /** {@return a built-in origin} @param moduleName the module name */
    public static ProviderOrigin builtIn(String moduleName) {
        return new ProviderOrigin(Kind.BUILT_IN, moduleName, Optional.empty());
    }

    /** {@return a plugin origin} @param moduleName the module name @param fileName the JAR or directory name */
    public static ProviderOrigin plugin(String moduleName, String fileName) {
        return new ProviderOrigin(Kind.PLUGIN, moduleName, Optional.of(fileName));
    }

    /** {@return a description for messages, e.g. {@code module com.example.tagger (plugin tagger.jar)}} */
    public String describe() {
        return switch (kind) {
            case BUILT_IN -> "module " + name + " (built-in)";
            case PLUGIN -> "module " + name + " (plugin " + source.orElse("?") + ")";
            case EXTERNAL -> "service " + name + " (external " + source.orElse("?") + ")";
        };
    }
}
