/**
 * The sandbox policy (RFC 0009, "Policy integration"): {@link dev.openshell.supervisor.policy.SandboxPolicyLoader}
 * reads an OpenShell policy file into an immutable {@link dev.openshell.supervisor.policy.SandboxPolicy}, and
 * {@link dev.openshell.supervisor.policy.HostPattern} and {@link dev.openshell.supervisor.policy.HostSelector} match
 * admitted hosts for network endpoints, middleware selectors and credentials.
 *
 * <p>Loading never stops at the first mistake: every problem of a file is collected as a
 * {@link dev.openshell.supervisor.policy.ConfigProblem} with file, line, column and config key, and a rejected file
 * throws one {@link dev.openshell.supervisor.policy.PolicyException} carrying all of them. Facts that only the plugin
 * host knows come in through {@link dev.openshell.supervisor.policy.BindingCatalog}.
 */
package dev.openshell.supervisor.policy;
