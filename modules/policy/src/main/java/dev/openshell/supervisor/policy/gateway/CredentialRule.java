package dev.openshell.supervisor.policy.gateway;

import dev.openshell.supervisor.policy.HostPattern;

import java.util.Objects;

import org.eclipse.collections.api.list.ImmutableList;

/**
 * One {@code [[openshell.supervisor.credentials]]} entry: a secret the supervisor injects into requests to some
 * hosts, after the middleware chain (RFC 0009, "Operation phases and placement": middleware runs before credential
 * injection and never sees the secret).
 *
 * @param name the credential's name, unique in the file, {@code [A-Za-z_][A-Za-z0-9_]*}: how request placeholders
 *     ({@code openshell:resolve:env:<name>}) and audit events refer to it
 * @param source where the secret is read from
 * @param hosts the hosts the secret may be sent to; at least one
 */
public record CredentialRule(String name, CredentialSource source, ImmutableList<HostPattern> hosts) {
    /**
     * Checks the components.
     *
     * @throws IllegalArgumentException if {@code hosts} is empty
     */
    public CredentialRule {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(hosts, "hosts");
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException("a credential needs at least one host");
        }
    }

    /**
     * {@return whether the secret may be sent to {@code host}}
     *
     * @param host the canonical admitted host
     */
    public boolean appliesTo(String host) {
        return hosts.anySatisfy(p -> p.matches(host));
    }
}
