/**
 * The egress supervisor proxy (OpenShell RFC 0009): {@link dev.openshell.supervisor.proxy.SupervisorProxy} and the
 * narrow interfaces it needs from the rest of the supervisor: {@link dev.openshell.supervisor.proxy.NetworkAdmission}
 * (L4 policy), {@link dev.openshell.supervisor.proxy.RequestHook} (middleware chain) and
 * {@link dev.openshell.supervisor.proxy.CredentialInjection} (credential step).
 *
 * <p>Sizes are in bytes and durations are {@link java.time.Duration}s. No accessor returns {@code null}. Nothing in
 * this package logs request content, header values or query strings.
 */
package dev.openshell.supervisor.proxy;
