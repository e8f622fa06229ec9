package dev.openshell.supervisor.policy;

/**
 * Whether the supervisor terminates TLS on an endpoint (OpenShell policy {@code tls}). Only terminated, parsed
 * traffic reaches middleware; {@link #SKIP} traffic never does (RFC 0009, "Operation phases and placement").
 */
public enum TlsMode {
    /** TLS is terminated with the supervisor CA and the HTTP inside is parsed. The default (also for the
     * deprecated spellings {@code terminate} and {@code passthrough}). */
    TERMINATE,
    /** {@code tls: skip}: the connection is relayed without termination, so nothing inside it is inspected. */
    SKIP
}
