package dev.openshell.supervisor.proxy;

/**
 * The L4 network policy check, the first admission step (RFC 0009, "Operation phases and placement": "Network / L4
 * policy" before SSRF checks and L7 policy). The policy module implements it over {@code network_policies}.
 *
 * <p>The proxy calls it once per plain request and once per CONNECT, with the destination taken from the
 * request-target or the CONNECT authority (never from a {@code Host} header), already normalised: lowercase, no
 * trailing dot, numeric IPv4 spellings written as dotted decimal, IPv6 in RFC 5952 form without brackets. It runs on
 * a virtual thread and must be thread-safe; it must not block for long.
 */
@FunctionalInterface
public interface NetworkAdmission {
    /**
     * Checks whether network policy allows a destination.
     *
     * @param host the normalised destination host
     * @param port the destination port, 1 to 65535
     * @return the verdict; never {@code null}. An exception is treated as a denial (fail closed) and logged.
     */
    AdmissionDecision admit(String host, int port);

    /**
     * Checks whether network policy allows a destination for the process behind a client connection (binary-scoped
     * policies). The proxy calls this one; the default ignores the connection.
     *
     * @param host the normalised destination host
     * @param port the destination port, 1 to 65535
     * @param client the client connection (inside a tunnel: the tunnel's connection)
     * @return the verdict; never {@code null}. An exception is treated as a denial (fail closed) and logged.
     */
    default AdmissionDecision admit(String host, int port, ClientConnection client) {
        return admit(host, port);
    }
}
