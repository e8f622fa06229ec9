package dev.openshell.supervisor.policy;

import dev.openshell.middleware.spi.net.IpRange;
import java.util.Objects;
import java.util.Optional;

import jakarta.json.JsonObject;

import org.eclipse.collections.api.list.ImmutableList;
import org.eclipse.collections.api.list.primitive.ImmutableIntList;

/**
 * One endpoint of a network policy (OpenShell policy {@code network_policies.<key>.endpoints[i]}): the hosts and ports
 * it admits at L4, and what the L7 policy engine needs to know about it.
 *
 * @param host the host pattern; empty for a hostless endpoint whose destination is given by {@code allowedIps} only
 *     (it may then reach any host name, so for selector checks it counts as {@code **})
 * @param ports the admitted TCP ports, 1..65535, ascending and distinct, at least one
 * @param protocol the declared protocol, if any
 * @param tls whether TLS is terminated; {@link TlsMode#SKIP} traffic is never inspected
 * @param allowedIps address ranges exempted from the private-range SSRF block for this endpoint; never loopback,
 *     link-local or unspecified
 * @param l7 the endpoint's L7 policy, present when {@code protocol} is an L7 protocol (not {@code tcp})
 * @param options other OpenShell endpoint settings this supervisor keeps but does not interpret (the credential
 *     rewriting and signing keys), by their policy key; and this supervisor's own {@value #UPGRADES} setting
 *     ({@link #upgradesAllowed()}) and {@value #TRACE} setting ({@link #traceAllowed()})
 */
public record NetworkEndpoint(Optional<HostPattern> host, ImmutableIntList ports, Optional<EndpointProtocol> protocol,
                              TlsMode tls, ImmutableList<IpRange> allowedIps, Optional<L7Endpoint> l7,
                              JsonObject options) {
    /** The endpoint key that lets protocol upgrades through a {@code fail_closed} chain uninspected. */
    public static final String UPGRADES = "upgrades";
    /** The one value of {@value #UPGRADES}. */
    public static final String ALLOW_UNINSPECTED = "allow_uninspected";
    /**
     * The endpoint key that lets WebSocket binary messages and control-frame payloads, which no middleware stage
     * reads, through a session inspected under a {@code fail_closed} config.
     */
    public static final String BINARY_MESSAGES = "binary_messages";
    /** The endpoint key that lets {@code TRACE} requests be forwarded to it (never with a credential). */
    public static final String TRACE = "trace";
    /** The one value of {@value #TRACE}. */
    public static final String ALLOW = "allow";

    /**
     * Checks the components.
     *
     * @throws IllegalArgumentException if there is neither a host nor an allowed IP, no port, or a port out of range
     * @throws NullPointerException if any component is {@code null}
     */
    public NetworkEndpoint {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(ports, "ports");
        Objects.requireNonNull(protocol, "protocol");
        Objects.requireNonNull(tls, "tls");
        Objects.requireNonNull(allowedIps, "allowedIps");
        Objects.requireNonNull(l7, "l7");
        Objects.requireNonNull(options, "options");
        if (host.isEmpty() && allowedIps.isEmpty()) {
            throw new IllegalArgumentException("an endpoint needs a host or allowed_ips");
        }
        if (ports.isEmpty() || ports.anySatisfy(p -> p < 1 || p > 65535)) {
            throw new IllegalArgumentException("an endpoint needs ports in 1..65535");
        }
        ports = ports.distinct().toSortedList().toImmutable();
    }

    /** {@return how L7 violations are handled: the L7 policy's enforcement, {@code enforce} without one} */
    public Enforcement enforcement() {
        return l7.map(L7Endpoint::enforcement).orElse(Enforcement.ENFORCE);
    }

    /**
     * {@return whether the supervisor parses this endpoint's traffic, so that middleware can inspect it} It does not
     * for {@code tls: skip} and for {@code protocol: tcp} (RFC 0009, "Operation phases and placement").
     */
    public boolean inspectable() {
        return tls != TlsMode.SKIP && protocol.filter(p -> p == EndpointProtocol.TCP).isEmpty();
    }

    /**
     * {@return whether an {@code Upgrade} request to this endpoint may proceed under a chain with a
     * {@code fail_closed} stage} The bytes after an upgrade are not inspected by middleware, so RFC 0009's chain-level
     * rule ("Operation phases and placement": traffic that becomes uninspectable under a matching chain with any
     * {@code fail_closed} stage is denied) refuses them, unless the endpoint is {@code protocol: websocket} (whose
     * messages the L7 engine inspects) or the operator opted it in with {@code upgrades: allow_uninspected}.
     */
    public boolean upgradesAllowed() {
        return protocol.filter(p -> p == EndpointProtocol.WEBSOCKET).isPresent() || upgradesOptedIn();
    }

    /** {@return whether the endpoint says {@code upgrades: allow_uninspected}} */
    public boolean upgradesOptedIn() {
        return options.get(UPGRADES) instanceof jakarta.json.JsonString s && s.getString().equals(ALLOW_UNINSPECTED);
    }

    /** {@return whether the endpoint says {@code binary_messages: allow_uninspected}} */
    public boolean binaryMessagesAllowed() {
        return options.get(BINARY_MESSAGES) instanceof jakarta.json.JsonString s
                && s.getString().equals(ALLOW_UNINSPECTED);
    }

    /**
     * {@return whether {@code TRACE} requests to this endpoint are forwarded} Only when the endpoint says
     * {@code trace: allow}; otherwise the supervisor answers them 405 (a TRACE-enabled origin reflects the request it
     * received, RFC 9110 section 9.3.8). A TRACE that would carry a credential is refused either way.
     */
    public boolean traceAllowed() {
        return options.get(TRACE) instanceof jakarta.json.JsonString s && s.getString().equals(ALLOW);
    }

    /** {@return the hosts this endpoint may reach: its pattern, or {@code **} when it is hostless} */
    public HostPattern reachableHosts() {
        return host.orElseGet(() -> HostPattern.parse("**"));
    }

    /**
     * {@return whether this endpoint admits {@code host} on {@code port} at L4} A hostless endpoint admits any host
     * here; its address check happens after resolution, outside this model.
     *
     * @param host the canonical host ({@link HostPattern#canonicalHost(String)})
     * @param port the port
     */
    public boolean admits(String host, int port) {
        return ports.contains(port) && this.host.map(p -> p.matches(host)).orElse(true);
    }
}
