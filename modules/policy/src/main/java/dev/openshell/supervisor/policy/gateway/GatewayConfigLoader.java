package dev.openshell.supervisor.policy.gateway;

import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareManifest;
import dev.openshell.supervisor.policy.ConfigProblem;
import dev.openshell.supervisor.policy.Loaded;
import dev.openshell.supervisor.policy.PolicyException;
import dev.openshell.supervisor.policy.internal.Problems;
import dev.openshell.supervisor.policy.internal.Sources;
import dev.openshell.supervisor.policy.internal.Texts;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.eclipse.collections.api.factory.Lists;
import org.eclipse.collections.api.list.ImmutableList;
import org.tomlj.TomlParseResult;

/**
 * Loads the gateway configuration (TOML 1.0) into a validated {@link GatewayConfig} (RFC 0009, "Registration and
 * delivery").
 *
 * <h2>What it reads</h2>
 * <ul>
 *   <li>{@code [[openshell.supervisor.middleware]]}: {@code name}, {@code grpc_endpoint}, {@code max_body_bytes},
 *       {@code timeout}, {@code allow_insecure}, {@code tls_ca_bundle}, {@code tls_client_cert},
 *       {@code tls_client_key}, {@code audience}. The published OpenShell spellings {@code max_payload_bytes},
 *       {@code allow_insecure_transport} and {@code tls_ca_cert_path} are accepted as aliases; one entry giving both
 *       spellings of a key is an error.</li>
 *   <li>{@code [openshell.supervisor]} {@code listen}, {@code plugins_dir}, {@code state_dir}, {@code audit_log};
 *       {@code [openshell.supervisor.network]} {@code allow_loopback_upstreams} and {@code static_hosts};
 *       {@code [openshell.supervisor.admin]} {@code listen}; {@code [openshell.supervisor.tls]}
 *       {@code upstream_ca_bundle}, {@code ca_cert}, {@code ca_key}; {@code [[openshell.supervisor.credentials]]}
 *       {@code name}, {@code source}, {@code hosts}.</li>
 * </ul>
 * Relative paths resolve against the directory of the file (or the base directory given to {@link #parse}). Files
 * named are not opened here; whoever uses them reports a missing or unreadable one.
 *
 * <h2>Rules</h2>
 * Unknown keys under {@code openshell.supervisor} and unknown top-level tables are errors; the other tables of an
 * OpenShell gateway file ({@code openshell.gateway}, {@code openshell.drivers}, {@code openshell.credential_drivers})
 * are left to their components. {@code max_body_bytes} is required and at most 4 MiB, rejected rather than clamped;
 * timeouts follow {@link dev.openshell.middleware.spi.internal.RpcTimeout}; a plaintext {@code http://} endpoint needs
 * {@code allow_insecure = true} and then loads with a prominent warning, and
 * {@link MiddlewareRegistration#insecure()} tells the caller to audit it. Every message is listed in
 * {@code docs/policy-reference.md}.
 */
public final class GatewayConfigLoader {
    private GatewayConfigLoader() {
    }

    /**
     * Loads and validates a gateway configuration file.
     *
     * @param file the TOML file
     * @return the configuration with its warnings
     * @throws PolicyException with every problem found, including a file that cannot be read
     */
    public static Loaded<GatewayConfig> load(Path file) {
        String name = file.toString();
        Problems problems = new Problems(name);
        String text = Sources.read(file, problems);
        problems.throwIfErrors();
        Path base = file.toAbsolutePath().getParent();
        return parse(name, text, base == null ? Path.of("").toAbsolutePath() : base);
    }

    /**
     * Parses and validates gateway configuration text.
     *
     * @param sourceName the name problems give as the file
     * @param text the TOML
     * @param baseDirectory the directory relative paths resolve against
     * @return the configuration with its warnings
     * @throws PolicyException with every problem found
     */
    public static Loaded<GatewayConfig> parse(String sourceName, String text, Path baseDirectory) {
        Objects.requireNonNull(sourceName, "sourceName");
        Objects.requireNonNull(text, "text");
        Objects.requireNonNull(baseDirectory, "baseDirectory");
        Problems problems = new Problems(sourceName);
        Sources.checkLength(text, problems);
        problems.throwIfErrors();
        GatewayReader reader = new GatewayReader(problems, baseDirectory);
        TomlParseResult toml = reader.parse(Sources.stripBom(text));
        problems.throwIfErrors();
        GatewayConfig config = reader.read(toml);
        return problems.finish(config);
    }

    /**
     * Checks a registration against the manifest its service returned from {@code Describe} (RFC 0009,
     * "Registration and delivery": "the operator's max_body_bytes must not exceed the binding capability returned
     * by Describe ... The gateway rejects an invalid registration rather than silently clamping it").
     *
     * @param loaded the loaded configuration, for the positions of its keys
     * @param registration one of its registrations
     * @param manifest the service's manifest
     * @return the errors, each pointing at the registration's {@code max_body_bytes}; empty when the registration
     *     fits every binding
     * @throws IllegalArgumentException if {@code registration} is not part of {@code loaded}
     */
    public static ImmutableList<ConfigProblem> checkManifest(Loaded<GatewayConfig> loaded,
                                                             MiddlewareRegistration registration,
                                                             MiddlewareManifest manifest) {
        int index = loaded.value().middleware().indexOf(registration);
        if (index < 0) {
            throw new IllegalArgumentException("registration '" + registration.name() + "' is not in "
                    + loaded.file());
        }
        String keyPath = "openshell.supervisor.middleware[" + index + "].max_body_bytes";
        List<ConfigProblem> out = new ArrayList<>();
        for (MiddlewareBinding b : manifest.bindings()) {
            if (registration.maxBodyBytes() > b.maxBodyBytes()) {
                out.add(ConfigProblem.error(loaded.locationOf(keyPath), keyPath, "max_body_bytes "
                        + registration.maxBodyBytes() + " exceeds the " + b.maxBodyBytes() + " bytes that binding "
                        + Texts.quote(b.id().value()) + " of " + Texts.quote(registration.name())
                        + " accepts; it is rejected, not clamped: set at most " + b.maxBodyBytes()));
            }
        }
        return Lists.immutable.withAll(out);
    }
}
