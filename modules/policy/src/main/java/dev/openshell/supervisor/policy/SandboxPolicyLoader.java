package dev.openshell.supervisor.policy;

import dev.openshell.supervisor.policy.internal.KeyPath;
import dev.openshell.supervisor.policy.internal.Problems;
import dev.openshell.supervisor.policy.internal.Sources;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

import org.snakeyaml.engine.v2.nodes.Node;

/**
 * Loads a sandbox policy (YAML) into a validated {@link SandboxPolicy} (RFC 0009, "Policy integration"). OpenShell
 * policy files load unchanged: sections this supervisor does not enforce ({@code filesystem_policy},
 * {@code landlock}, {@code process}, per-policy {@code binaries}) produce warnings, never errors.
 *
 * <p>Every problem in the file is collected before anything is thrown, so one run reports them all, each with file,
 * line, column and config key ({@link ConfigProblem}). The rules, with their exact messages, are listed in
 * {@code docs/policy-reference.md}. In short:
 * <ul>
 *   <li>{@code version: 1}; known keys only everywhere except inside {@code config}, {@code rules} and
 *       {@code deny_rules} (unknown keys in a middleware entry are errors: a typo must not silently disable
 *       protection);</li>
 *   <li>at most 10 middleware configs; {@code order} unique across the policy; {@code endpoints.include} required and
 *       non-empty; at most 32 include plus exclude patterns; valid host patterns ({@link HostPattern}); binding IDs in
 *       the RFC grammar ({@link dev.openshell.middleware.spi.BindingId}); {@code on_error} {@code fail_closed} (the
 *       default) or {@code fail_open}; {@code config} a mapping of at most 64 KiB as JSON;</li>
 *   <li>no middleware selector may select a host that an endpoint with {@code tls: skip} (or {@code protocol: tcp})
 *       can reach, since that traffic is never inspected (decided exactly, exclusions included);</li>
 *   <li>with a {@link BindingCatalog}: the binding exists, only built-ins use {@code openshell/}, and the binding's
 *       {@code ValidateConfig} accepts the config.</li>
 * </ul>
 *
 * <p>Limits on the input: at most 4 MiB of UTF-8, one YAML document, at most 50
 * aliases, and opaque values nested at most 64 deep.
 */
public final class SandboxPolicyLoader {
    private SandboxPolicyLoader() {
    }

    /**
     * Loads and validates a policy file, structure only.
     *
     * @param file the policy file
     * @return the policy with its warnings
     * @throws PolicyException with every problem found, including a file that cannot be read
     */
    public static Loaded<SandboxPolicy> load(Path file) {
        return load(file, Optional.empty());
    }

    /**
     * Loads and validates a policy file, including the binding rules.
     *
     * @param file the policy file
     * @param catalog the bindings the supervisor can run
     * @return the policy with its warnings
     * @throws PolicyException with every problem found, including a file that cannot be read
     */
    public static Loaded<SandboxPolicy> load(Path file, BindingCatalog catalog) {
        return load(file, Optional.of(catalog));
    }

    private static Loaded<SandboxPolicy> load(Path file, Optional<BindingCatalog> catalog) {
        String name = file.toString();
        Problems problems = new Problems(name);
        String text = Sources.read(file, problems);
        problems.throwIfErrors();
        return parse(name, text, catalog);
    }

    /**
     * Parses and validates policy text, structure only.
     *
     * @param sourceName the name problems give as the file
     * @param text the YAML
     * @return the policy with its warnings
     * @throws PolicyException with every problem found
     */
    public static Loaded<SandboxPolicy> parse(String sourceName, String text) {
        return parse(sourceName, text, Optional.empty());
    }

    /**
     * Parses and validates policy text, including the binding rules.
     *
     * @param sourceName the name problems give as the file
     * @param text the YAML
     * @param catalog the bindings the supervisor can run
     * @return the policy with its warnings
     * @throws PolicyException with every problem found
     */
    public static Loaded<SandboxPolicy> parse(String sourceName, String text, BindingCatalog catalog) {
        return parse(sourceName, text, Optional.of(catalog));
    }

    private static Loaded<SandboxPolicy> parse(String sourceName, String text, Optional<BindingCatalog> catalog) {
        Objects.requireNonNull(sourceName, "sourceName");
        Objects.requireNonNull(text, "text");
        Objects.requireNonNull(catalog, "catalog");
        Problems problems = new Problems(sourceName);
        Sources.checkLength(text, problems);
        problems.throwIfErrors();
        YamlTree yaml = new YamlTree(problems);
        Optional<Node> root = yaml.compose(Sources.stripBom(text));
        problems.throwIfErrors();
        if (root.isEmpty()) {
            problems.error(problems.nowhere(), KeyPath.root(),
                    "the policy is empty; it must at least declare version: " + SandboxPolicy.VERSION);
            problems.throwIfErrors();
        }
        SandboxPolicy policy = new PolicyReader(yaml, catalog).read(root.orElseThrow());
        return problems.finish(policy);
    }
}
