package dev.openshell.supervisor.engine.credentials;

import dev.openshell.middleware.spi.host.Secret;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * A credential the gateway configuration declares.
 *
 * @param name the name placeholders use ({@code openshell:resolve:env:<name>}): {@code [A-Za-z_][A-Za-z0-9_]*}
 * @param value the resolved value
 * @param hosts which admitted hosts it may be sent to (the configured host patterns)
 * @param hostsDescription the configured patterns, for messages (never the value)
 */
public record Credential(String name, Secret value, Predicate<String> hosts, String hostsDescription) {
    /**
     * @throws NullPointerException if any part is {@code null}
     * @throws IllegalArgumentException if the name breaks the grammar
     */
    public Credential {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(hosts, "hosts");
        Objects.requireNonNull(hostsDescription, "hostsDescription");
        if (!name.matches("[A-Za-z_][A-Za-z0-9_]{0,127}")) {
            throw new IllegalArgumentException("credential name '%s' must match [A-Za-z_][A-Za-z0-9_]*"
                    .formatted(name.replaceAll("[^\\x20-\\x7e]", "?")));
        }
    }

    /** {@return the name and host patterns only} */
    @Override
    public String toString() {
        return "Credential[" + name + ", hosts=" + hostsDescription + "]";
    }
}
