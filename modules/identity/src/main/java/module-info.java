/**
 * Process identity (OpenShell's {@code binaries:} scoping; RFC 0009, "The middleware contract": {@code Process}): on
 * Linux, finds the sandbox process that holds the client end of a connection accepted by the proxy, through
 * {@code /proc}: the socket's inode in the network namespace's TCP tables, the process holding
 * {@code socket:[inode]}, its executable and its ancestors, each with a trust-on-first-use SHA-256. Reads
 * {@code /proc} only; never writes, never signals, never reads command lines or environments.
 */
module dev.openshell.supervisor.identity {
    requires transitive dev.openshell.middleware.spi;

    exports dev.openshell.supervisor.identity;
}
