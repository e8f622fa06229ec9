package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.net.IpRange;
import dev.openshell.supervisor.proxy.EndpointFacts;
import dev.openshell.supervisor.proxy.NetworkSettings;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Objects;

/**
 * The SSRF check, the second admission step (RFC 0009, "Operation phases and placement"). It resolves a destination
 * once, checks every resolved address, and returns the checked addresses: the proxy connects only to those, so a DNS
 * answer cannot change between check and use.
 *
 * <table>
 *   <caption>Which address classes are blocked</caption>
 *   <tr><th>class</th><th>blocked</th></tr>
 *   <tr><td>unspecified, link-local, cloud metadata, multicast, reserved</td><td>always</td></tr>
 *   <tr><td>loopback</td><td>unless {@code allow_loopback_upstreams}</td></tr>
 *   <tr><td>RFC 1918 private, CGNAT, unique local, other special-purpose</td><td>unless the endpoint's
 *       {@code allowed_ips} contains the address</td></tr>
 *   <tr><td>public</td><td>never</td></tr>
 * </table>
 * A destination is admitted only when every resolved address passes. Hosts are normalised first
 * ({@link Authority}), so numeric spellings and IPv4-mapped IPv6 are checked as the IPv4 address they denote.
 */
public final class SsrfGuard {
    /** Resolves a host name to its addresses; {@link InetAddress#getAllByName} in production. */
    @FunctionalInterface
    public interface Resolver {
        /**
         * @param host a normalised DNS name (never an IP literal)
         * @return the addresses, possibly empty
         * @throws IOException when the name cannot be resolved
         */
        InetAddress[] resolve(String host) throws IOException;
    }

    /** The outcome of a check. */
    public sealed interface Verdict {
        /** @param addresses the checked addresses, in resolver order; connect only to these */
        record Admitted(List<InetAddress> addresses) implements Verdict {
        }

        /**
         * @param error a short code: {@code ssrf_blocked} or {@code unresolvable_host}
         * @param detail a safe explanation naming the address class, never the address
         */
        record Refused(String error, String detail) implements Verdict {
        }
    }

    private final NetworkSettings settings;
    private final Resolver resolver;

    /**
     * @param settings the loopback and static-host settings
     * @param resolver the DNS resolver
     */
    public SsrfGuard(NetworkSettings settings, Resolver resolver) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.resolver = Objects.requireNonNull(resolver, "resolver");
    }

    /** {@return a guard over the system resolver} @param settings the settings */
    public static SsrfGuard system(NetworkSettings settings) {
        return new SsrfGuard(settings, InetAddress::getAllByName);
    }

    /**
     * Resolves and checks a destination.
     *
     * @param authority the normalised destination
     * @param endpoint the admitting endpoint (for {@code allowed_ips})
     * @return the verdict
     */
    public Verdict check(Authority authority, EndpointFacts endpoint) {
        List<InetAddress> addresses;
        if (authority.literal().isPresent()) {
            addresses = List.of(authority.literal().get());
        } else if (settings.staticHosts().containsKey(authority.host())) {
            addresses = List.of(settings.staticHosts().get(authority.host()));
        } else {
            try {
                addresses = List.of(resolver.resolve(authority.host()));
            } catch (UnknownHostException e) {
                return new Verdict.Refused("unresolvable_host", "the destination host name does not resolve");
            } catch (IOException | RuntimeException e) {
                return new Verdict.Refused("unresolvable_host", "the destination host name could not be resolved");
            }
        }
        if (addresses.isEmpty()) {
            return new Verdict.Refused("unresolvable_host", "the destination host name has no addresses");
        }
        for (InetAddress a : addresses) {
            String why = blockedReason(a, endpoint);
            if (why != null) {
                return new Verdict.Refused("ssrf_blocked", "the destination resolves to " + why
                        + hint(AddressClass.classify(a).blocking()));
            }
        }
        return new Verdict.Admitted(addresses);
    }

    /**
     * {@return why {@code address} is blocked, or {@code null} when it may be used}
     *
     * @param address a resolved address
     * @param endpoint the admitting endpoint
     */
    public String blockedReason(InetAddress address, EndpointFacts endpoint) {
        AddressClass.Classified classified = AddressClass.classified(address);
        AddressClass cls = classified.cls();
        return switch (cls.blocking()) {
            case NEVER -> null;
            case ALWAYS -> cls.description();
            case UNLESS_LOOPBACK_ALLOWED -> settings.allowLoopbackUpstreams() ? null : cls.description();
            case UNLESS_ALLOWED_IPS -> allowed(classified.decidedOn(), endpoint) ? null : cls.description();
        };
    }

    /**
     * {@return what would admit an address of this blocking kind, as a suffix of the detail}: loopback needs the
     * gateway's {@code allow_loopback_upstreams} (local testing; {@code docs/operators.md#try-it-locally}),
     * private ranges the endpoint's {@code allowed_ips}; the other classes are never admitted.
     */
    static String hint(AddressClass.Blocking blocking) {
        return switch (blocking) {
            case UNLESS_LOOPBACK_ALLOWED -> "; a local upstream needs allow_loopback_upstreams = true in the "
                    + "gateway's [openshell.supervisor.network] (see docs/operators.md#try-it-locally)";
            case UNLESS_ALLOWED_IPS -> "; the admitting endpoint's allowed_ips can admit it";
            case ALWAYS, NEVER -> "";
        };
    }

    private static boolean allowed(InetAddress address, EndpointFacts endpoint) {
        for (IpRange b : endpoint.allowedIps()) {
            if (b.contains(address)) {
                return true;
            }
        }
        return false;
    }
}
