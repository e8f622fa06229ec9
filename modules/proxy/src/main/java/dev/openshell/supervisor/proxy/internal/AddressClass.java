package dev.openshell.supervisor.proxy.internal;

import dev.openshell.supervisor.proxy.CidrBlock;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

/**
 * The SSRF class of a destination address, and the table that assigns it. See {@link SsrfGuard} for which classes
 * are blocked and what can unblock them.
 */
public enum AddressClass {
    /** A global unicast address. */
    PUBLIC(Blocking.NEVER, "a public address"),
    /** {@code 127.0.0.0/8}, {@code ::1} (RFC 1122, RFC 4291). */
    LOOPBACK(Blocking.UNLESS_LOOPBACK_ALLOWED, "a loopback address"),
    /** {@code 0.0.0.0/8}, {@code ::} (RFC 1122, RFC 4291). */
    UNSPECIFIED(Blocking.ALWAYS, "an unspecified address"),
    /** {@code 169.254.0.0/16}, {@code fe80::/10} (RFC 3927, RFC 4291). */
    LINK_LOCAL(Blocking.ALWAYS, "a link-local address"),
    /** Cloud instance metadata services, blocked even inside ranges {@code allowed_ips} lists. */
    METADATA(Blocking.ALWAYS, "a cloud metadata address"),
    /** {@code 224.0.0.0/4}, {@code ff00::/8}. */
    MULTICAST(Blocking.ALWAYS, "a multicast address"),
    /** {@code 240.0.0.0/4} and the limited broadcast address. */
    RESERVED(Blocking.ALWAYS, "a reserved address"),
    /** RFC 1918: {@code 10.0.0.0/8}, {@code 172.16.0.0/12}, {@code 192.168.0.0/16}. */
    PRIVATE(Blocking.UNLESS_ALLOWED_IPS, "a private address"),
    /** RFC 6598 carrier-grade NAT: {@code 100.64.0.0/10}. */
    CGNAT(Blocking.UNLESS_ALLOWED_IPS, "a carrier-grade NAT address"),
    /** RFC 4193 unique local: {@code fc00::/7}; and the deprecated site-local {@code fec0::/10}. */
    UNIQUE_LOCAL(Blocking.UNLESS_ALLOWED_IPS, "a unique local address"),
    /**
     * Other special-purpose ranges (RFC 6890): IETF protocol assignments, documentation, benchmarking, discard-only,
     * Teredo and ORCHID.
     */
    SPECIAL(Blocking.UNLESS_ALLOWED_IPS, "a special-purpose address");

    /** What can unblock a class. */
    public enum Blocking {
        /** Never blocked. */
        NEVER,
        /** Blocked unless {@code allow_loopback_upstreams}. */
        UNLESS_LOOPBACK_ALLOWED,
        /** Blocked unless the endpoint's {@code allowed_ips} contains the address. */
        UNLESS_ALLOWED_IPS,
        /** Always blocked. */
        ALWAYS
    }

    private final Blocking blocking;
    private final String description;

    AddressClass(Blocking blocking, String description) {
        this.blocking = blocking;
        this.description = description;
    }

    /** {@return what can unblock this class} */
    public Blocking blocking() {
        return blocking;
    }

    /** {@return a short description for client-visible errors, such as "a loopback address"} */
    public String description() {
        return description;
    }

    private record Row(CidrBlock block, AddressClass cls) {
    }

    /** Checked in order: the first matching row wins; metadata rows come before the ranges that contain them. */
    private static final List<Row> TABLE = List.of(
            row("169.254.169.254/32", METADATA),   // AWS, GCP, Azure, OpenStack, Oracle IMDS
            row("169.254.170.2/32", METADATA),     // AWS ECS task metadata
            row("100.100.100.200/32", METADATA),   // Alibaba Cloud metadata (inside CGNAT)
            row("168.63.129.16/32", METADATA),     // Azure WireServer (a public address)
            row("fd00:ec2::254/128", METADATA),    // AWS IMDS over IPv6 (inside ULA)
            row("0.0.0.0/8", UNSPECIFIED),
            row("127.0.0.0/8", LOOPBACK),
            row("169.254.0.0/16", LINK_LOCAL),
            row("10.0.0.0/8", PRIVATE),
            row("172.16.0.0/12", PRIVATE),
            row("192.168.0.0/16", PRIVATE),
            row("100.64.0.0/10", CGNAT),
            row("192.0.0.0/24", SPECIAL),
            row("192.0.2.0/24", SPECIAL),
            row("198.18.0.0/15", SPECIAL),
            row("198.51.100.0/24", SPECIAL),
            row("203.0.113.0/24", SPECIAL),
            row("224.0.0.0/4", MULTICAST),
            row("240.0.0.0/4", RESERVED),
            row("::/128", UNSPECIFIED),
            row("::1/128", LOOPBACK),
            row("fe80::/10", LINK_LOCAL),
            row("fec0::/10", UNIQUE_LOCAL),
            row("fc00::/7", UNIQUE_LOCAL),
            row("ff00::/8", MULTICAST),
            row("100::/64", SPECIAL),
            row("2001::/32", SPECIAL),
            row("2001:10::/28", SPECIAL),
            row("2001:20::/28", SPECIAL),
            row("2001:db8::/32", SPECIAL),
            row("3fff::/20", SPECIAL));

    private static Row row(String cidr, AddressClass cls) {
        return new Row(CidrBlock.parse(cidr), cls);
    }

    /**
     * An address's class and the IPv4 (or IPv6) address that class was decided on: the one {@code allowed_ips}
     * must contain when the class is blocked {@link Blocking#UNLESS_ALLOWED_IPS}.
     *
     * @param cls the class
     * @param decidedOn the address the class belongs to (an embedded IPv4 address, or the address itself)
     */
    public record Classified(AddressClass cls, InetAddress decidedOn) {
    }

    /**
     * Classifies an address. IPv6 addresses that embed an IPv4 address are classified by the embedded address:
     * IPv4-mapped {@code ::ffff:0:0/96} (RFC 4291), IPv4-translated {@code ::ffff:0:0:0/96} (SIIT, RFC 2765),
     * IPv4-compatible {@code ::/96}, the NAT64 well-known prefix {@code 64:ff9b::/96} (RFC 6052 section 2.1, only
     * the /96 layout) and the local-use prefix {@code 64:ff9b:1::/48} (RFC 8215), and 6to4 {@code 2002::/16}.
     *
     * <p>A network-specific NAT64 prefix carved out of {@code 64:ff9b:1::/48} may use any RFC 6052 section 2.2
     * layout (/48, /56, /64 or /96, with the octet at bits 64-71 skipped), and a translator decodes the layout it was
     * configured with, which the supervisor cannot know. Such an address is therefore classified by the most
     * restrictive of the IPv4 addresses its four layouts embed: an attacker cannot hide a loopback or metadata
     * address in one layout behind a public one in another. As the layouts overlap, a zero-filled reading usually
     * falls in {@code 0.0.0.0/8}, so in practice the local-use prefix (not globally reachable, RFC 8215) is blocked.
     *
     * @param address the address
     * @return its class
     */
    public static AddressClass classify(InetAddress address) {
        return classified(address).cls();
    }

    /**
     * {@return the class of {@code address} and the address it was decided on} See {@link #classify}.
     *
     * @param address the address
     */
    public static Classified classified(InetAddress address) {
        List<InetAddress> candidates = embedded(address);
        if (candidates.isEmpty()) {
            return new Classified(lookup(address), address);
        }
        Classified worst = null;
        for (InetAddress c : candidates) {
            AddressClass cls = lookup(c);
            if (worst == null || cls.blocking().compareTo(worst.cls().blocking()) > 0) {
                worst = new Classified(cls, c);
            }
        }
        return worst;
    }

    private static AddressClass lookup(InetAddress a) {
        for (Row r : TABLE) {
            if (r.block.contains(a)) {
                return r.cls;
            }
        }
        return PUBLIC;
    }

    /** The IPv4 addresses an IPv6 address may stand for after translation; empty when it embeds none. */
    private static List<InetAddress> embedded(InetAddress address) {
        if (!(address instanceof Inet6Address)) {
            return List.of();
        }
        byte[] b = address.getAddress();
        boolean first8Zero = allZero(b, 0, 8);
        boolean first10Zero = first8Zero && b[8] == 0 && b[9] == 0;
        boolean mapped = first10Zero && b[10] == (byte) 0xff && b[11] == (byte) 0xff;
        boolean translated = first8Zero && b[8] == (byte) 0xff && b[9] == (byte) 0xff && b[10] == 0 && b[11] == 0;
        boolean compatible = first10Zero && b[10] == 0 && b[11] == 0 && !(b[12] == 0 && b[13] == 0 && b[14] == 0
                && (b[15] == 0 || b[15] == 1));
        boolean wellKnown = b[0] == 0 && b[1] == 0x64 && b[2] == (byte) 0xff && b[3] == (byte) 0x9b;
        boolean nat64 = wellKnown && allZero(b, 4, 12);
        boolean nat64Local = wellKnown && b[4] == 0 && b[5] == 1;
        if (mapped || translated || compatible || nat64) {
            return List.of(v4(b[12], b[13], b[14], b[15]));
        }
        if (nat64Local) {
            // RFC 6052 section 2.2: bits 64-71 (b[8]) are never part of the embedded address.
            return List.of(v4(b[6], b[7], b[9], b[10]), // /48
                    v4(b[7], b[9], b[10], b[11]),          // /56
                    v4(b[9], b[10], b[11], b[12]),         // /64
                    v4(b[12], b[13], b[14], b[15]));       // /96
        }
        if (b[0] == 0x20 && b[1] == 0x02) {
            return List.of(v4(b[2], b[3], b[4], b[5]));
        }
        return List.of();
    }

    private static boolean allZero(byte[] b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return true;
    }

    private static InetAddress v4(byte a, byte b, byte c, byte d) {
        try {
            return InetAddress.getByAddress(new byte[] {a, b, c, d});
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
