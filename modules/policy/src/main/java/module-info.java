/**
 * Sandbox policy and gateway configuration for the supervisor (OpenShell RFC 0009, "Policy integration" and
 * "Registration and delivery").
 *
 * <p>{@code dev.openshell.supervisor.policy} reads the sandbox policy (YAML) into an immutable
 * {@link dev.openshell.supervisor.policy.SandboxPolicy}, validates it against every rule of the RFC, and holds the
 * host patterns and selectors ({@link dev.openshell.supervisor.policy.HostPattern},
 * {@link dev.openshell.supervisor.policy.HostSelector}) that the chain engine and the proxy match requests with.
 * {@code dev.openshell.supervisor.policy.gateway} reads the gateway configuration (TOML): middleware registrations,
 * credentials and the supervisor's own settings. Every problem found in a file is reported at once, each with file,
 * line, column and config key.
 *
 * <p>Nothing here performs I/O beyond reading the file it is asked to load; facts that only the plugin host knows
 * (which bindings exist, their body limits, their {@code ValidateConfig} answers) come in through
 * {@link dev.openshell.supervisor.policy.BindingCatalog}.
 */
module dev.openshell.supervisor.policy {
    requires transitive dev.openshell.middleware.spi;
    requires transitive org.eclipse.collections.api;
    requires org.eclipse.collections.impl;
    requires org.snakeyaml.engine;
    requires org.tomlj;

    exports dev.openshell.supervisor.policy;
    exports dev.openshell.supervisor.policy.gateway;
}
