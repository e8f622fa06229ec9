package dev.openshell.supervisor.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.supervisor.policy.ConfigProblem;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code supervisor validate}'s checks, with the example tagger as a plugin from a plugins directory. */
class ValidationTest {
    @TempDir
    Path dir;

    private Path plugins;

    @BeforeEach
    void setUp() throws IOException {
        plugins = Files.createDirectories(dir.resolve("plugins"));
        Files.copy(Path.of(System.getProperty("test.plugins", "target/test-plugins"), "example-tagger.jar"),
                plugins.resolve("example-tagger.jar"));
    }

    private Path file(String name, String text) throws IOException {
        Path p = dir.resolve(name);
        Files.writeString(p, text);
        return p;
    }

    private static final String GOOD = """
            version: 1
            network_policies:
              api:
                name: API
                endpoints:
                  - host: api.test
                    port: 443
                    upgrades: allow_uninspected
            network_middlewares:
              tag:
                middleware: examples/tagger
                order: 10
                config: { tag: ok }
                endpoints:
                  include: ["api.test"]
            """;

    private Validation.Report validate(Path policy, Path gateway, boolean services, boolean credentials,
                                       Map<String, String> env) throws IOException {
        // every test but the pinning ones loads the plugins it drops: pin each entry of the plugins directory
        Path[] entries;
        try (java.util.stream.Stream<Path> s = Files.list(plugins)) {
            entries = s.sorted().toArray(Path[]::new);
        }
        if (gateway == null) {
            gateway = dir.resolve("pins.toml");
            Files.writeString(gateway, "");
        }
        if (!Files.readString(gateway).contains("plugin_pins")) {
            Files.writeString(gateway, TestPins.toml(entries), java.nio.file.StandardOpenOption.APPEND);
        }
        return Validation.run(new Validation.Request(Optional.of(policy), Optional.ofNullable(gateway),
                Optional.of(plugins), services, credentials, env));
    }

    private static ConfigProblem only(List<ConfigProblem> problems) {
        assertEquals(1, problems.size(), problems.toString());
        return problems.get(0);
    }

    @Test
    void aPolicyThatStartsIsValid() throws IOException {
        Validation.Report r = validate(file("policy.yaml", GOOD), null, true, true, Map.of());
        assertTrue(r.valid(), r.problems().toString());
        assertEquals(List.of(), r.errors());
    }

    @Test
    void everyPolicyErrorIsReportedWithFileLineColumnAndKey() throws IOException {
        Path policy = file("policy.yaml", GOOD + """
                  dup:
                    middleware: examples/tagger
                    order: 10
                    config: { tag: "no spaces allowed" }
                    endpoints:
                      include: ["api.test"]
                  ghost:
                    middleware: acme/ghost
                    order: 30
                    endpoints:
                      include: ["api.test"]
                """);
        Validation.Report r = validate(policy, null, true, true, Map.of());
        assertFalse(r.valid());
        List<String> keys = r.errors().stream().map(ConfigProblem::keyPath).toList();
        assertTrue(keys.stream().anyMatch(k -> k.startsWith("network_middlewares.dup.order")), keys.toString());
        assertTrue(keys.stream().anyMatch(k -> k.startsWith("network_middlewares.dup.config")), keys.toString());
        assertTrue(keys.stream().anyMatch(k -> k.startsWith("network_middlewares.ghost.middleware")), keys.toString());
        for (ConfigProblem p : r.errors()) {
            assertEquals(policy.toString(), p.location().file());
            assertTrue(p.location().line() > 0 && p.location().column() > 0, p.describe());
        }
        ConfigProblem refused = r.errors().stream().filter(p -> p.keyPath().startsWith("network_middlewares.dup"
                + ".config")).findFirst().orElseThrow();
        assertTrue(refused.untrustedDetail().orElseThrow().contains("'tag' must be"),
                "the plugin's reason is kept apart, as untrusted detail: " + refused);
    }

    @Test
    void aGatewayErrorAndEveryPolicyErrorAreReportedInOneRun() throws IOException {
        Path gateway = file("gateway.toml", """
                [openshell.supervisor]
                lisen = "127.0.0.1:3128"
                """);
        Path policy = file("policy.yaml", GOOD + """
                  redact:
                    middleware: openshell/regex
                    order: 20
                    config: { mode: shout }
                    endpoints:
                      include: ["api.test"]
                  external:
                    middleware: acme/scanner
                    order: 30
                    endpoints:
                      include: ["api.test"]
                """);
        Validation.Report r = validate(policy, gateway, true, true, Map.of());
        assertFalse(r.valid());
        assertEquals(2, r.errors().size(), r.errors().toString());
        ConfigProblem e = r.errors().getFirst();
        assertEquals(gateway.toString(), e.location().file());
        assertEquals(2, e.location().line());
        assertTrue(e.keyPath().contains("lisen"), e.describe());
        ConfigProblem mode = r.errors().get(1);
        assertEquals("network_middlewares.redact.config", mode.keyPath(), mode.describe());
        assertTrue(mode.message().contains("'mode' must be"), mode.describe());
        // the registrations are unknown: acme/scanner, which no built-in or plugin provides, is not guessed to be
        // an error (the two errors above are all)
    }

    @Test
    void aBindingsOwnValidationIsReportedTogetherWithStructuralErrorsOfTheSameEntry() throws IOException {
        Path policy = file("policy.yaml", GOOD + """
                  redact:
                    middleware: openshell/regex
                    order: many
                    on_error: explode
                    config: { mode: shout }
                    endpoints:
                      include: ["api.test"]
                      exclude: "not a list"
                """);
        Validation.Report r = validate(policy, null, true, true, Map.of());
        List<String> keys = r.errors().stream().map(ConfigProblem::keyPath).toList();
        assertTrue(keys.contains("network_middlewares.redact.order"), keys.toString());
        assertTrue(keys.contains("network_middlewares.redact.on_error"), keys.toString());
        assertTrue(keys.stream().anyMatch(k -> k.startsWith("network_middlewares.redact.endpoints")), keys.toString());
        assertTrue(r.errors().stream().anyMatch(p -> p.keyPath().equals("network_middlewares.redact.config")
                && p.message().contains("'mode' must be")), r.errors().toString());
    }

    @Test
    void credentialsAreResolvedUnlessSkipped() throws IOException {
        Path gateway = file("gateway.toml", """
                [[openshell.supervisor.credentials]]
                name = "API_KEY"
                source = "env:VALIDATION_TEST_API_KEY"
                hosts = ["api.test"]
                """);
        Path policy = file("policy.yaml", GOOD);
        ConfigProblem e = only(validate(policy, gateway, true, true, Map.of()).errors());
        assertEquals("openshell.supervisor.credentials[0].source", e.keyPath());
        assertEquals(3, e.location().line());
        assertTrue(e.message().contains("VALIDATION_TEST_API_KEY is not set"), e.message());
        assertTrue(validate(policy, gateway, true, true, Map.of("VALIDATION_TEST_API_KEY", "k")).valid());
        assertTrue(validate(policy, gateway, true, false, Map.of()).valid(), "--skip-credentials");
    }

    @Test
    void anUnusableOperatorCaIsAnError() throws IOException {
        Path gateway = file("gateway.toml", """
                [openshell.supervisor.tls]
                ca_cert = "missing-cert.pem"
                ca_key = "missing-key.pem"
                """);
        ConfigProblem e = only(validate(file("policy.yaml", GOOD), gateway, true, true, Map.of()).errors());
        assertEquals("openshell.supervisor.tls.ca_cert", e.keyPath());
        assertTrue(e.message().startsWith("the operator CA cannot be used"), e.message());
    }

    @Test
    void aRefusedPluginIsAWarningAsAtStartUpAndAPolicyNeedingItFails() throws IOException {
        Files.createDirectories(plugins.resolve("empty-plugin"));
        Validation.Report r = validate(file("policy.yaml", GOOD), null, true, true, Map.of());
        assertTrue(r.valid(), r.toString());
        ConfigProblem w = only(r.warnings());
        assertTrue(w.location().file().endsWith("empty-plugin"), w.describe());
        assertTrue(w.message().startsWith("plugin refused"), w.message());
    }

    @Test
    void skippedServicesLeaveTheirBindingsUncheckedAsWarnings() throws IOException {
        Path gateway = file("gateway.toml", """
                [[openshell.supervisor.middleware]]
                name = "pii"
                grpc_endpoint = "https://127.0.0.1:1"
                max_body_bytes = 1024
                """);
        Path policy = file("policy.yaml", GOOD + """
                  pii:
                    middleware: acme/pii
                    order: 20
                    endpoints:
                      include: ["api.test"]
                """);
        Validation.Report r = validate(policy, gateway, false, true, Map.of());
        assertTrue(r.valid(), r.toString());
        assertEquals(2, r.warnings().size(), r.toString());
        assertTrue(r.warnings().get(0).message().contains("not contacted (--skip-services)"));
        ConfigProblem unchecked = r.warnings().get(1);
        assertEquals("network_middlewares.pii.middleware", unchecked.keyPath());
        assertTrue(unchecked.location().line() > 0);
        assertTrue(unchecked.message().contains("'acme/pii' not checked"), unchecked.message());
    }

    @Test
    void anUnreachableServiceIsRefusedAndAPolicyNeedingItsBindingFails() throws IOException {
        Path gateway = file("gateway.toml", """
                [[openshell.supervisor.middleware]]
                name = "pii"
                grpc_endpoint = "https://127.0.0.1:1"
                max_body_bytes = 1024
                timeout = "50ms"
                """);
        Path policy = file("policy.yaml", GOOD + """
                  pii:
                    middleware: acme/pii
                    order: 20
                    endpoints:
                      include: ["api.test"]
                """);
        Validation.Report r = validate(policy, gateway, true, true, Map.of());
        assertFalse(r.valid());
        ConfigProblem refused = only(r.warnings());
        assertEquals("openshell.supervisor.middleware[0]", refused.keyPath());
        assertEquals(gateway.toString(), refused.location().file());
        assertEquals(1, refused.location().line());
        assertTrue(refused.message().startsWith("middleware service refused"), refused.message());
        ConfigProblem missing = only(r.errors());
        assertTrue(missing.keyPath().startsWith("network_middlewares.pii.middleware"), missing.describe());
    }
}
