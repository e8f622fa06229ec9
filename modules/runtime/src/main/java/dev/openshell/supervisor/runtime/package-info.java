/**
 * The running supervisor (RFC 0009, "Registration and delivery": "Policy and middleware registry swap as one
 * generation only after the complete candidate is ready"). {@link dev.openshell.supervisor.runtime.Generation} is one
 * complete, immutable runtime; {@link dev.openshell.supervisor.runtime.Supervisor} owns the proxy, the current
 * generation, live reload of the policy ({@link dev.openshell.supervisor.runtime.ReloadOutcome}) and the admin
 * listener. {@link dev.openshell.supervisor.runtime.ConnectedRegistry} installs built-ins, plugins and external
 * services as start-up does, for {@link dev.openshell.supervisor.runtime.Validation} ({@code supervisor validate}) and
 * {@link dev.openshell.supervisor.runtime.Explanation} ({@code supervisor explain}) too.
 */
package dev.openshell.supervisor.runtime;
