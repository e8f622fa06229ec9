package dev.openshell.middleware.spi.net;

import static org.apiguardian.api.API.Status.INTERNAL;

import dev.openshell.middleware.spi.internal.Syntax;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Objects;
import org.apiguardian.api.API;

/**
 * An IPv4 or IPv6 address range in CIDR notation, as used by {@code allowed_ips}. A bare address is a range of one
 * ({@code /32} or {@code /128}). Host bits below the prefix are cleared ({@code 10.1.2.3/8} is {@code 10.0.0.0/8}).
 *
 * <p>Parsing never consults DNS: IPv4 must be four decimal octets without leading zeros, IPv6 any RFC 4291 text form
 * without a zone ID.
 *
 * @param network the first address of the range, host bits cleared
 * @param prefixLength the prefix length: 0..32 for IPv4, 0..128 for IPv6
 */
@API(status = INTERNAL, since = "0.1")
public record IpRange(InetAddress network, int prefixLength) {
    /**
     * Checks the prefix and clears host bits.
     *
     * @throws IllegalArgumentException if the prefix is out of range for the address family
     */
    public IpRange {
        Objects.requireNonNull(network, "network");
        int bits = network.getAddress().length * 8;
        if (prefixLength < 0 || prefixLength > bits) {
            throw new IllegalArgumentException("prefix length " + prefixLength + " is outside 0.." + bits);
        }
        network = mask(network, prefixLength);
    }

    /**
     * Parses {@code address} or {@code address/prefix}.
     *
     * @param text the range as written
     * @return the range
     * @throws IllegalArgumentException with the message {@code invalid address range '<text>': <reason>}
     */
    public static IpRange parse(String text) {
        Objects.requireNonNull(text, "address range");
        int slash = text.indexOf('/');
        String addressText = slash < 0 ? text : text.substring(0, slash);
        InetAddress address = parseAddress(addressText);
        if (address == null) {
            throw invalid(text, "it is not an IPv4 or IPv6 address");
        }
        int bits = address.getAddress().length * 8;
        int prefix = bits;
        if (slash >= 0) {
            String p = text.substring(slash + 1);
            if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(c -> c >= '0' && c <= '9')) {
                throw invalid(text, "the prefix length must be a number from 0 to " + bits);
            }
            prefix = Integer.parseInt(p);
            if (prefix > bits) {
                throw invalid(text, "the prefix length must be a number from 0 to " + bits);
            }
        }
        return new IpRange(address, prefix);
    }

    private static IllegalArgumentException invalid(String text, String reason) {
        return new IllegalArgumentException("invalid address range " + Syntax.quote(text) + ": " + reason);
    }

    /**
     * Parses an IP address literal without DNS.
     *
     * @param text the literal: dotted-quad IPv4, or IPv6 text without brackets and without a zone
     * @return the address, or {@code null} when {@code text} is not a literal
     */
    public static InetAddress parseAddress(String text) {
        if (text.isEmpty() || text.length() > 45) {
            return null;
        }
        if (text.indexOf(':') < 0) {
            String[] parts = text.split("\\.", -1);
            if (parts.length != 4) {
                return null;
            }
            byte[] bytes = new byte[4];
            for (int i = 0; i < 4; i++) {
                String part = parts[i];
                if (part.isEmpty() || part.length() > 3 || (part.length() > 1 && part.charAt(0) == '0')
                        || !part.chars().allMatch(c -> c >= '0' && c <= '9')) {
                    return null;
                }
                int v = Integer.parseInt(part);
                if (v > 255) {
                    return null;
                }
                bytes[i] = (byte) v;
            }
            return byAddress(bytes);
        }
        if (text.charAt(0) == '.') {
            return null; // the JDK parses a literal only when it starts with a hex digit or ':'
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':'
                    || c == '.';
            if (!ok) {
                return null;
            }
        }
        try {
            // a string with ':' and only hex digits, ':' and '.' is parsed as an IPv6 literal, never looked up
            InetAddress address = InetAddress.getByName(text);
            if (address instanceof Inet6Address) {
                return address;
            }
            // an IPv4-mapped IPv6 literal comes back as IPv4; keep it in the IPv6 family
            byte[] v4 = address.getAddress();
            byte[] v6 = new byte[16];
            v6[10] = (byte) 0xff;
            v6[11] = (byte) 0xff;
            System.arraycopy(v4, 0, v6, 12, 4);
            return Inet6Address.getByAddress(null, v6, null);
        } catch (UnknownHostException e) {
            return null;
        }
    }

    private static InetAddress byAddress(byte[] bytes) {
        try {
            return InetAddress.getByAddress(bytes);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("an address of " + bytes.length + " bytes", e);
        }
    }

    private static InetAddress mask(InetAddress address, int prefix) {
        byte[] bytes = address.getAddress();
        for (int i = 0; i < bytes.length; i++) {
            int keep = Math.max(0, Math.min(8, prefix - i * 8));
            bytes[i] &= (byte) (0xff << (8 - keep));
        }
        if (address instanceof Inet6Address) {
            try {
                return Inet6Address.getByAddress(null, bytes, null);
            } catch (UnknownHostException e) {
                throw new IllegalStateException(e);
            }
        }
        return byAddress(bytes);
    }

    /** {@return whether this is an IPv4 range} */
    public boolean isIpv4() {
        return network instanceof Inet4Address;
    }

    /**
     * {@return whether {@code address} lies in this range} Addresses of the other family never do.
     *
     * @param address an address
     */
    public boolean contains(InetAddress address) {
        byte[] a = address.getAddress();
        byte[] n = network.getAddress();
        if (a.length != n.length) {
            return false;
        }
        for (int i = 0; i < a.length; i++) {
            int keep = Math.max(0, Math.min(8, prefixLength - i * 8));
            int m = (0xff << (8 - keep)) & 0xff;
            if ((a[i] & m) != (n[i] & m)) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@return whether the two ranges share an address}
     *
     * @param other another range
     */
    public boolean overlaps(IpRange other) {
        if (isIpv4() != other.isIpv4()) {
            return false;
        }
        return prefixLength <= other.prefixLength ? contains(other.network) : other.contains(network);
    }

    /** {@return the range in CIDR notation, for example {@code 10.0.0.0/8} or {@code fd00:0:0:0:0:0:0:0/8}} */
    @Override
    public String toString() {
        return network.getHostAddress() + "/" + prefixLength;
    }
}
