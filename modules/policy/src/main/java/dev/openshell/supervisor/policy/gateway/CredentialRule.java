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
 * @param headers key {@code headers}: the lowercase request header names a placeholder may be replaced in; empty
 *     means any request header except {@code Cookie}, {@code Proxy-*}, hop-by-hop and Connection-nominated fields
 *     (which are never allowed)
 * @param queryParams key {@code query_params}: the query parameter names (as written, before percent-decoding) whose
 *     value a placeholder may be replaced in; empty means none (the query is opt-in)
 * @param basic key {@code basic}: which parts of {@code Authorization: Basic} credentials a placeholder may be
 *     replaced in, a subset of {@code user} and {@code password}; empty means none
 * @param allowPlaintext key {@code allow_plaintext}: whether the secret may be sent over plain {@code http};
 *     {@code false} (the default) means only to requests forwarded over TLS
 * @param ports key {@code ports}: the destination ports the secret may be sent to; empty means any admitted port
 * @param allowUnscannedResponses key {@code allow_unscanned_responses}: whether the response to a request carrying
 *     the secret may be relayed unscanned when its body is in a content coding the supervisor cannot decode;
 *     {@code false} (the default) answers such a response 502 {@code response_uninspectable}
 */
public record CredentialRule(String name, CredentialSource source, ImmutableList<HostPattern> hosts,
                             ImmutableList<String> headers, ImmutableList<String> queryParams,
                             ImmutableList<String> basic, boolean allowPlaintext, ImmutableList<Integer> ports,
                             boolean allowUnscannedResponses) {
    /**
     * Checks the components.
     *
     * @throws IllegalArgumentException if {@code hosts} is empty
     */
    public CredentialRule {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(hosts, "hosts");
        Objects.requireNonNull(headers, "headers");
        Objects.requireNonNull(queryParams, "queryParams");
        Objects.requireNonNull(basic, "basic");
        Objects.requireNonNull(ports, "ports");
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException("a credential needs at least one host");
        }
    }

    /**
     * A rule whose unscannable responses are refused (no {@code allow_unscanned_responses}).
     *
     * @param name the name
     * @param source the source
     * @param hosts the hosts
     * @param headers the header names
     * @param queryParams the query parameter names
     * @param basic the Basic parts
     * @param allowPlaintext whether plain http is allowed
     * @param ports the ports
     */
    public CredentialRule(String name, CredentialSource source, ImmutableList<HostPattern> hosts,
                          ImmutableList<String> headers, ImmutableList<String> queryParams,
                          ImmutableList<String> basic, boolean allowPlaintext, ImmutableList<Integer> ports) {
        this(name, source, hosts, headers, queryParams, basic, allowPlaintext, ports, false);
    }

    /**
     * A rule with the default placements: any ordinary request header, https only, any port.
     *
     * @param name the name
     * @param source the source
     * @param hosts the hosts
     */
    public CredentialRule(String name, CredentialSource source, ImmutableList<HostPattern> hosts) {
        this(name, source, hosts, org.eclipse.collections.api.factory.Lists.immutable.empty(),
                org.eclipse.collections.api.factory.Lists.immutable.empty(),
                org.eclipse.collections.api.factory.Lists.immutable.empty(), false,
                org.eclipse.collections.api.factory.Lists.immutable.empty());
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
