package dev.openshell.supervisor.proxy.internal;

/**
 * The destination fixed by a CONNECT: every request inside the tunnel goes there.
 *
 * @param scheme {@code https} inside intercepted TLS, {@code http} for plain HTTP sent through the tunnel
 * @param admitted the destination as admitted at CONNECT time
 */
record Tunnel(String scheme, ProxyCore.Admitted admitted) {
}
