package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.internal.Syntax;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Locale;
import java.util.Optional;

/**
 * A normalised {@code host:port} (RFC 9110 section 4.2, RFC 3986 section 3.2.2).
 *
 * <p>Normalisation, applied before any policy or SSRF check: host names are lowercased and lose one trailing dot;
 * numeric IPv4 spellings accepted by common resolvers ({@code 2130706433}, {@code 0x7f.1}, {@code 0177.0.0.1},
 * {@code 127.1}) are parsed with the WHATWG URL IPv4 rules and written as dotted decimal; IPv6 literals are written in
 * RFC 5952 form without brackets; an IPv4-mapped IPv6 literal becomes its IPv4 address. A name whose last label is
 * numeric but is not a valid IPv4 spelling, an IPv6 zone ID, userinfo, or a non-LDH label is rejected.
 *
 * @param host the normalised host: a lowercase DNS name, a dotted-decimal IPv4 address, or an RFC 5952 IPv6 address
 * @param port the port, 1 to 65535
 * @param literal the address when {@code host} is an IP literal
 */
public record Authority(String host, int port, Optional<InetAddress> literal) {
    /** {@return {@code host:port}, with brackets around IPv6} */
    public String hostPort() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    /**
     * {@return the authority as a {@code Host} field value: the host (IPv6 in brackets), with {@code :port} unless it
     * is the scheme's default}
     *
     * @param defaultPort the scheme's default port
     */
    public String hostHeader(int defaultPort) {
        String h = host.indexOf(':') >= 0 ? "[" + host + "]" : host;
        return port == defaultPort ? h : h + ":" + port;
    }

    /**
     * Parses {@code host[:port]}.
     *
     * @param text the authority as received
     * @param defaultPort the port when none is given, or -1 when a port is required (CONNECT, RFC 9112 section
     *     3.2.3)
     * @return the normalised authority
     * @throws FramingException 400 {@code invalid_authority} when malformed
     */
    public static Authority parse(String text, int defaultPort) throws FramingException {
        if (text.isEmpty() || text.indexOf('@') >= 0) {
            throw invalid("the authority is empty or carries userinfo");
        }
        String hostPart;
        String portPart = null;
        if (text.charAt(0) == '[') {
            int close = text.indexOf(']');
            if (close < 0) {
                throw invalid("an IPv6 literal is not closed");
            }
            hostPart = text.substring(0, close + 1);
            String rest = text.substring(close + 1);
            if (!rest.isEmpty()) {
                if (rest.charAt(0) != ':') {
                    throw invalid("unexpected text after an IPv6 literal");
                }
                portPart = rest.substring(1);
            }
        } else {
            int colon = text.lastIndexOf(':');
            if (colon >= 0) {
                hostPart = text.substring(0, colon);
                portPart = text.substring(colon + 1);
            } else {
                hostPart = text;
            }
        }
        int port;
        if (portPart == null || portPart.isEmpty()) {
            if (defaultPort < 0) {
                throw invalid("the authority has no port");
            }
            port = defaultPort;
        } else {
            port = parsePort(portPart);
        }
        return host(hostPart, port);
    }

    /**
     * Normalises a host (without port) and pairs it with {@code port}.
     *
     * @param rawHost a host name, an IPv4 spelling, or a bracketed IPv6 literal
     * @param port the port
     * @return the authority
     * @throws FramingException 400 when the host is invalid
     */
    public static Authority host(String rawHost, int port) throws FramingException {
        if (rawHost.isEmpty()) {
            throw invalid("the host is empty");
        }
        if (rawHost.charAt(0) == '[') {
            if (rawHost.length() < 3 || rawHost.charAt(rawHost.length() - 1) != ']') {
                throw invalid("an IPv6 literal is malformed");
            }
            String inner = rawHost.substring(1, rawHost.length() - 1);
            for (int i = 0; i < inner.length(); i++) {
                char c = inner.charAt(i);
                if (!(c == ':' || c == '.' || Syntax.hexDigit(c) >= 0)) {
                    throw invalid("an IPv6 literal holds an invalid character (zone IDs are not accepted)");
                }
            }
            if (inner.indexOf(':') < 0) {
                throw invalid("an IPv6 literal is malformed");
            }
            InetAddress addr;
            try {
                addr = InetAddress.getByName(inner);
            } catch (UnknownHostException e) {
                throw invalid("an IPv6 literal is malformed");
            }
            return new Authority(format(addr), port, Optional.of(addr));
        }
        String h = rawHost.toLowerCase(Locale.ROOT);
        if (h.endsWith(".")) {
            h = h.substring(0, h.length() - 1);
        }
        if (h.isEmpty()) {
            throw invalid("the host is empty");
        }
        String[] labels = h.split("\\.", -1);
        if (endsInNumber(labels[labels.length - 1])) {
            Inet4Address v4 = parseIpv4(labels);
            return new Authority(v4.getHostAddress(), port, Optional.of(v4));
        }
        if (h.length() > 253) {
            throw invalid("the host name is longer than 253 characters");
        }
        for (String label : labels) {
            if (label.isEmpty() || label.length() > 63) {
                throw invalid("a host name label is empty or longer than 63 characters");
            }
            for (int i = 0; i < label.length(); i++) {
                char c = label.charAt(i);
                if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) {
                    throw invalid("a host name holds a character other than letters, digits, '-' and '_'");
                }
            }
        }
        return new Authority(h, port, Optional.empty());
    }

    /**
     * Parses a port: 1 to 5 digits, 1 to 65535.
     *
     * @param s the digits
     * @return the port
     * @throws FramingException 400 when malformed or out of range
     */
    public static int parsePort(String s) throws FramingException {
        if (s.isEmpty() || s.length() > 5) {
            throw invalid("the port is not 1 to 5 digits");
        }
        int p = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                throw invalid("the port is not numeric");
            }
            p = p * 10 + (c - '0');
        }
        if (p < 1 || p > 65535) {
            throw invalid("the port is outside 1..65535");
        }
        return p;
    }

    private static boolean endsInNumber(String last) {
        if (last.isEmpty()) {
            return false;
        }
        boolean digits = true;
        for (int i = 0; i < last.length(); i++) {
            if (last.charAt(i) < '0' || last.charAt(i) > '9') {
                digits = false;
                break;
            }
        }
        if (digits) {
            return true;
        }
        if (last.startsWith("0x")) {
            for (int i = 2; i < last.length(); i++) {
                if (Syntax.hexDigit(last.charAt(i)) < 0) {
                    return false;
                }
            }
            return true;
        }
        return false;
    }

    /** WHATWG URL Standard, "IPv4 parser": 1 to 4 parts, each decimal, 0x-hex or 0-octal. */
    private static Inet4Address parseIpv4(String[] parts) throws FramingException {
        if (parts.length > 4) {
            throw invalid("a numeric host has more than four parts");
        }
        long[] values = new long[parts.length];
        for (int i = 0; i < parts.length; i++) {
            values[i] = parseIpv4Number(parts[i]);
        }
        for (int i = 0; i < values.length - 1; i++) {
            if (values[i] > 255) {
                throw invalid("a numeric host part is larger than 255");
            }
        }
        long last = values[values.length - 1];
        if (last >= 1L << (8 * (5 - values.length))) {
            throw invalid("a numeric host is out of range");
        }
        long ipv4 = last;
        for (int i = 0; i < values.length - 1; i++) {
            ipv4 += values[i] << (8 * (3 - i));
        }
        byte[] b = {(byte) (ipv4 >>> 24), (byte) (ipv4 >>> 16), (byte) (ipv4 >>> 8), (byte) ipv4};
        try {
            return (Inet4Address) InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    private static long parseIpv4Number(String s) throws FramingException {
        if (s.isEmpty()) {
            throw invalid("a numeric host has an empty part");
        }
        int radix = 10;
        String digits = s;
        if (s.startsWith("0x") || s.startsWith("0X")) {
            radix = 16;
            digits = s.substring(2);
        } else if (s.length() > 1 && s.charAt(0) == '0') {
            radix = 8;
            digits = s.substring(1);
        }
        if (digits.isEmpty()) {
            return 0;
        }
        long v = 0;
        for (int i = 0; i < digits.length(); i++) {
            int d = Character.digit(digits.charAt(i), radix);
            if (d < 0) {
                throw invalid("a numeric host part is not a number");
            }
            v = v * radix + d;
            if (v > 0xFFFF_FFFFL) {
                throw invalid("a numeric host is out of range");
            }
        }
        return v;
    }

    /**
     * {@return an address in normal form: dotted decimal for IPv4 (also for IPv4-mapped IPv6), RFC 5952 for IPv6}
     *
     * @param addr the address
     */
    public static String format(InetAddress addr) {
        if (addr instanceof Inet4Address) {
            return addr.getHostAddress();
        }
        byte[] b = addr.getAddress();
        if (b.length == 16 && isV4Mapped(b)) {
            return (b[12] & 0xff) + "." + (b[13] & 0xff) + "." + (b[14] & 0xff) + "." + (b[15] & 0xff);
        }
        int[] words = new int[8];
        for (int i = 0; i < 8; i++) {
            words[i] = ((b[2 * i] & 0xff) << 8) | (b[2 * i + 1] & 0xff);
        }
        int bestStart = -1;
        int bestLen = 0;
        for (int i = 0; i < 8; ) {
            if (words[i] == 0) {
                int j = i;
                while (j < 8 && words[j] == 0) {
                    j++;
                }
                if (j - i > bestLen && j - i >= 2) {
                    bestStart = i;
                    bestLen = j - i;
                }
                i = j;
            } else {
                i++;
            }
        }
        StringBuilder sb = new StringBuilder(39);
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
                sb.append(':');
            }
            sb.append(Integer.toHexString(words[i]));
        }
        return sb.toString();
    }

    static boolean isV4Mapped(byte[] b) {
        for (int i = 0; i < 10; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return b[10] == (byte) 0xff && b[11] == (byte) 0xff;
    }

    /** {@return whether {@code addr} is an IPv6 address} @param addr an address */
    static boolean isV6(InetAddress addr) {
        return addr instanceof Inet6Address;
    }

    private static FramingException invalid(String why) {
        return FramingException.badRequest("invalid_authority", why + " (RFC 9110 section 4.2)");
    }
}
