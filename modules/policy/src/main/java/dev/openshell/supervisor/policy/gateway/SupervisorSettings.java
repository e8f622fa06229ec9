package dev.openshell.supervisor.policy.gateway;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * {@code [openshell.supervisor]}: the supervisor's own settings.
 *
 * @param listen where the egress proxy listens; {@link #DEFAULT_LISTEN} when not written
 * @param pluginsDir the directory of third-party plugin JARs; none when not written
 * @param stateDir the directory for state the supervisor keeps (its generated CA); none when not written
 * @param auditLog the OCSF JSONL audit file; none when not written (the caller decides where events go)
 * @param network upstream network settings
 * @param adminListen where the metrics and health server listens; none when not written (no admin server)
 * @param tls trust and CA settings
 * @param bodyBufferBudgetBytes {@code body_buffer_budget_bytes}: how many bytes of request bodies the proxy may hold
 *     for middleware at once, 4194304 (one largest body) to 2147483647; none when not written (the proxy then
 *     derives it from its heap)
 * @param identity process identity for binary-scoped network policies
 * @param limits {@code [openshell.supervisor.limits]}: connection caps and the request head deadline
 * @param extensionAuth {@code [openshell.supervisor.extension_auth]}: the identity in extension tokens
 */
public record SupervisorSettings(ListenAddress listen, Optional<Path> pluginsDir, Optional<Path> stateDir,
                                 Optional<Path> auditLog, NetworkSettings network, Optional<ListenAddress> adminListen,
                                 TlsSettings tls, OptionalLong bodyBufferBudgetBytes,
                                 IdentitySettings identity, LimitsSettings limits,
                                 ExtensionAuthSettings extensionAuth) {
    /** The proxy's address when none is configured: {@code 127.0.0.1:3128}. */
    public static final ListenAddress DEFAULT_LISTEN = new ListenAddress("127.0.0.1", 3128);

    /**
     * Checks the components.
     *
     * @throws NullPointerException if any component is {@code null}
     */
    public SupervisorSettings {
        Objects.requireNonNull(listen, "listen");
        Objects.requireNonNull(pluginsDir, "pluginsDir");
        Objects.requireNonNull(stateDir, "stateDir");
        Objects.requireNonNull(auditLog, "auditLog");
        Objects.requireNonNull(network, "network");
        Objects.requireNonNull(adminListen, "adminListen");
        Objects.requireNonNull(tls, "tls");
        Objects.requireNonNull(bodyBufferBudgetBytes, "bodyBufferBudgetBytes");
        Objects.requireNonNull(identity, "identity");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(extensionAuth, "extensionAuth");
    }

    /**
     * Settings with the default {@link ExtensionAuthSettings}.
     *
     * @throws NullPointerException if any component is {@code null}
     */
    public SupervisorSettings(ListenAddress listen, Optional<Path> pluginsDir, Optional<Path> stateDir,
                              Optional<Path> auditLog, NetworkSettings network, Optional<ListenAddress> adminListen,
                              TlsSettings tls, OptionalLong bodyBufferBudgetBytes, IdentitySettings identity,
                              LimitsSettings limits) {
        this(listen, pluginsDir, stateDir, auditLog, network, adminListen, tls, bodyBufferBudgetBytes, identity,
                limits, ExtensionAuthSettings.defaults());
    }

    /** {@return the settings of an empty file} */
    public static SupervisorSettings defaults() {
        return new SupervisorSettings(DEFAULT_LISTEN, Optional.empty(), Optional.empty(), Optional.empty(),
                NetworkSettings.defaults(), Optional.empty(), TlsSettings.defaults(), OptionalLong.empty(),
                IdentitySettings.defaults(), LimitsSettings.defaults());
    }
}
