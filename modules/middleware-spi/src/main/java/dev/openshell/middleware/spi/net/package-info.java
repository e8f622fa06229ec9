/**
 * Network value types that more than one supervisor module needs: {@link dev.openshell.middleware.spi.net.IpRange}
 * (CIDR ranges of {@code allowed_ips}, read by the policy loader and matched by the proxy's SSRF guard). Not part
 * of the middleware contract: exported by qualified export to {@code dev.openshell.supervisor.policy},
 * {@code dev.openshell.supervisor.proxy} and {@code dev.openshell.supervisor.runtime} only, so stages cannot read
 * it.
 */
package dev.openshell.middleware.spi.net;
