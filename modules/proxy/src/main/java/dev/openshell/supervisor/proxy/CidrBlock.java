package dev.openshell.supervisor.proxy;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Objects;

/**
 * An IP address range in CIDR notation, as written in an endpoint's {@code allowed_ips} (for example
 * {@code 10.0.0.0/8}, {@code 192.168.1.7} or {@code fd00::/8}).
 *
 * <p>An IPv4 block matches IPv4 addresses only and an IPv6 block IPv6 addresses only; the proxy turns an IPv4-mapped
 * IPv6 address into its IPv4 address before matching.
 *
 * @param network the network address (host bits are cleared)
 * @param prefixLength the prefix length in bits: 0 to 32 for IPv4, 0 to 128 for IPv6
 */
public record CidrBlock(InetAddress network, int prefixLength) {
    /**
     * Clears host bits.
     *
     * @throws IllegalArgumentException if the prefix length is out of range for the address family
     * @throws NullPointerException if {@code network} is {@code null}
     */
    public CidrBlock {
        Objects.requireNonNull(network, "network");
        int bits = network.getAddress().length * 8;
        if (prefixLength < 0 || prefixLength > bits) {
            throw new IllegalArgumentException("prefix length " + prefixLength + " is outside 0.." + bits);
        }
        network = mask(network, prefixLength);
    }

    /**
     * Parses {@code address[/prefix]}; a bare address is a single-address block. Only numeric literals are accepted:
     * no DNS lookup happens.
     *
     * @param text the CIDR text
     * @return the block
     * @throws IllegalArgumentException with a message naming the problem when malformed
     */
    public static CidrBlock parse(String text) {
        Objects.requireNonNull(text, "text");
        int slash = text.indexOf('/');
        String addr = slash < 0 ? text : text.substring(0, slash);
        if (addr.isEmpty() || !addr.chars().allMatch(c -> c == '.' || c == ':' || Character.digit(c, 16) >= 0)) {
            throw new IllegalArgumentException("'" + safe(text) + "' is not an IP address or CIDR block");
        }
        if (addr.indexOf(':') < 0 && (addr.chars().filter(c -> c == '.').count() != 3
                || !addr.chars().allMatch(c -> c == '.' || (c >= '0' && c <= '9')))) {
            throw new IllegalArgumentException("'" + safe(text) + "' is not a dotted-quad IPv4 address");
        }
        InetAddress ip;
        try {
            ip = InetAddress.getByName(addr);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("'" + safe(text) + "' is not an IP address or CIDR block");
        }
        int bits = ip.getAddress().length * 8;
        int prefix = bits;
        if (slash >= 0) {
            String p = text.substring(slash + 1);
            if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(Character::isDigit)) {
                throw new IllegalArgumentException("'" + safe(text) + "' has an invalid prefix length");
            }
            prefix = Integer.parseInt(p);
        }
        return new CidrBlock(ip, prefix);
    }

    /**
     * {@return whether {@code address} is inside this block}
     *
     * @param address an address; never {@code null}
     */
    public boolean contains(InetAddress address) {
        byte[] a = address.getAddress();
        byte[] n = network.getAddress();
        if (a.length != n.length) {
            return false;
        }
        return mask(address, prefixLength).equals(network);
    }

    private static InetAddress mask(InetAddress address, int prefix) {
        byte[] b = address.getAddress();
        for (int i = 0; i < b.length; i++) {
            int keep = Math.max(0, Math.min(8, prefix - 8 * i));
            b[i] = (byte) (b[i] & (0xff << (8 - keep)));
        }
        try {
            return InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String safe(String s) {
        return s.length() > 64 ? s.substring(0, 64) + "..." : s.replaceAll("[^\\x20-\\x7e]", "?");
    }

    @Override
    public String toString() {
        return network.getHostAddress() + "/" + prefixLength;
    }
}
