/**
 * The egress supervisor proxy (OpenShell RFC 0009): {@link dev.openshell.supervisor.proxy.SupervisorProxy}, and the
 * contract between the proxy and the policy that the runtime binds once per generation:
 * {@link dev.openshell.supervisor.proxy.PolicySteps} (admission, plan, L7, request chain, credentials, audit), the
 * values they take and return, and the {@link dev.openshell.supervisor.proxy.AuditBarrier} every connection carries.
 * The proxy's pipeline ({@code docs/proxy.md}, "The exchange pipeline") is their only caller.
 *
 * <p>Sizes are in bytes and durations are {@link java.time.Duration}s. No accessor returns {@code null}. Nothing in
 * this package logs request content, header values or query strings.
 */
package dev.openshell.supervisor.proxy;
