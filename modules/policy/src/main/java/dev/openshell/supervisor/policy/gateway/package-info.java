/**
 * The gateway configuration (TOML): external middleware registrations under
 * {@code [[openshell.supervisor.middleware]]} (RFC 0009, "Registration and delivery"), credentials, and the
 * supervisor's own settings (listen addresses, directories, network and TLS options), read by
 * {@link dev.openshell.supervisor.policy.gateway.GatewayConfigLoader} into an immutable
 * {@link dev.openshell.supervisor.policy.gateway.GatewayConfig}.
 */
package dev.openshell.supervisor.policy.gateway;
