/**
 * The running supervisor (RFC 0009, "Registration and delivery": "Policy and middleware registry swap as one
 * generation only after the complete candidate is ready"). {@link dev.openshell.supervisor.runtime.Generation} is one
 * complete, immutable runtime; {@link dev.openshell.supervisor.runtime.Supervisor} owns the proxy, the current
 * generation and the admin listener.
 */
package dev.openshell.supervisor.runtime;
