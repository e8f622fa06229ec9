package dev.openshell.supervisor.engine.credentials;

import dev.openshell.middleware.spi.host.Secret;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A credential the gateway configuration declares, with where it may be placed.
 *
 * @param name the name placeholders use ({@code openshell:resolve:env:<name>}): {@code [A-Za-z_][A-Za-z0-9_]*}
 * @param value the resolved value
 * @param hosts which admitted hosts it may be sent to (the configured host patterns)
 * @param hostsDescription the configured patterns, for operator-facing messages (never the value, never the client)
 * @param placement where in a request a placeholder for it may be replaced
 * @param allowUnscannedResponses whether the response to a request carrying it may be relayed unscanned when its
 *     body's content coding cannot be decoded (gateway key {@code allow_unscanned_responses})
 */
public record Credential(String name, Secret value, Predicate<String> hosts, String hostsDescription,
                         Placement placement, boolean allowUnscannedResponses) {
    /**
     * @throws NullPointerException if any part is {@code null}
     * @throws IllegalArgumentException if the name breaks the grammar
     */
    public Credential {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(hosts, "hosts");
        Objects.requireNonNull(hostsDescription, "hostsDescription");
        Objects.requireNonNull(placement, "placement");
        if (!name.matches("[A-Za-z_][A-Za-z0-9_]{0,127}")) {
            throw new IllegalArgumentException("credential name '%s' must match [A-Za-z_][A-Za-z0-9_]*"
                    .formatted(name.replaceAll("[^\\x20-\\x7e]", "?")));
        }
    }

    /**
     * A credential whose unscannable responses are refused.
     *
     * @param name the name
     * @param value the value
     * @param hosts the host test
     * @param hostsDescription the host patterns, for messages
     * @param placement the placements
     */
    public Credential(String name, Secret value, Predicate<String> hosts, String hostsDescription,
                      Placement placement) {
        this(name, value, hosts, hostsDescription, placement, false);
    }

    /**
     * A credential with {@link Placement#DEFAULT} placements.
     *
     * @param name the name
     * @param value the value
     * @param hosts the host test
     * @param hostsDescription the host patterns, for messages
     */
    public Credential(String name, Secret value, Predicate<String> hosts, String hostsDescription) {
        this(name, value, hosts, hostsDescription, Placement.DEFAULT);
    }

    /** {@return the name and host patterns only} */
    @Override
    public String toString() {
        return "Credential[" + name + ", hosts=" + hostsDescription + "]";
    }

    /**
     * Where a placeholder may be replaced (gateway keys {@code headers}, {@code query_params}, {@code basic},
     * {@code allow_plaintext}, {@code ports}).
     *
     * @param headers lowercase header names; empty means any request header except {@code cookie}. {@code Proxy-*},
     *     hop-by-hop (RFC 9110 section 7.6.1) and Connection-nominated fields are never allowed
     * @param queryParams query parameter names, as written; empty means none
     * @param basicUser whether the user part of {@code Authorization: Basic} may hold it
     * @param basicPassword whether the password part may
     * @param allowPlaintext whether it may be sent over plain {@code http}
     * @param ports the allowed destination ports; empty means any
     */
    public record Placement(Set<String> headers, Set<String> queryParams, boolean basicUser, boolean basicPassword,
                            boolean allowPlaintext, Set<Integer> ports) {
        /** Any ordinary request header, no query, no Basic, https only, any port. */
        public static final Placement DEFAULT = new Placement(Set.of(), Set.of(), false, false, false, Set.of());

        /** Copies the sets. */
        public Placement {
            headers = Set.copyOf(headers);
            queryParams = Set.copyOf(queryParams);
            ports = Set.copyOf(ports);
        }
    }
}
