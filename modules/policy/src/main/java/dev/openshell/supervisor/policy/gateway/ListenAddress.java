package dev.openshell.supervisor.policy.gateway;

import dev.openshell.middleware.spi.net.IpRange;
import dev.openshell.supervisor.policy.internal.Texts;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.Objects;

/**
 * An address a supervisor server listens on: an IP literal (or {@code localhost}) and a port, written
 * {@code 127.0.0.1:3128}, {@code [::1]:3128} or {@code localhost:0}. Port 0 asks for any free port.
 *
 * @param host the IP literal as written (IPv6 without brackets), or {@code localhost}
 * @param port 0 to 65535
 */
public record ListenAddress(String host, int port) {
    /**
     * Checks the components.
     *
     * @throws IllegalArgumentException if the host is not an IP literal or {@code localhost}, or the port is out of
     *     range
     */
    public ListenAddress {
        Objects.requireNonNull(host, "host");
        if (!host.equals("localhost") && IpRange.parseAddress(host) == null) {
            throw new IllegalArgumentException("listen host " + Texts.quote(host) + " is not an IP address");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is outside 0..65535");
        }
    }

    /**
     * Parses {@code host:port}.
     *
     * @param text the address as written
     * @return the address
     * @throws IllegalArgumentException with the message {@code invalid listen address '<text>': <reason>}
     */
    public static ListenAddress parse(String text) {
        Objects.requireNonNull(text, "listen address");
        String host;
        String port;
        if (text.startsWith("[")) {
            int close = text.indexOf(']');
            if (close < 0 || close + 1 >= text.length() || text.charAt(close + 1) != ':') {
                throw invalid(text, "write it as host:port, with an IPv6 host in brackets ([::1]:3128)");
            }
            host = text.substring(1, close);
            port = text.substring(close + 2);
            if (!(IpRange.parseAddress(host) instanceof Inet6Address)) {
                throw invalid(text, "the part in brackets is not an IPv6 address");
            }
        } else {
            int colon = text.lastIndexOf(':');
            if (colon < 0 || text.indexOf(':') != colon) {
                throw invalid(text, "write it as host:port, with an IPv6 host in brackets ([::1]:3128)");
            }
            host = text.substring(0, colon);
            port = text.substring(colon + 1);
            if (!host.equals("localhost") && IpRange.parseAddress(host) == null) {
                throw invalid(text, "the host must be an IP address or localhost");
            }
        }
        if (port.isEmpty() || port.length() > 5 || !port.chars().allMatch(c -> c >= '0' && c <= '9')
                || Integer.parseInt(port) > 65535) {
            throw invalid(text, "the port must be a number from 0 to 65535");
        }
        return new ListenAddress(host, Integer.parseInt(port));
    }

    private static IllegalArgumentException invalid(String text, String reason) {
        return new IllegalArgumentException("invalid listen address " + Texts.quote(text) + ": " + reason);
    }

    /** {@return the host as an address; {@code localhost} is the IPv4 loopback address} */
    public InetAddress address() {
        return host.equals("localhost") ? InetAddress.getLoopbackAddress() : IpRange.parseAddress(host);
    }

    /** {@return {@code host:port}, with an IPv6 host in brackets} */
    @Override
    public String toString() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
