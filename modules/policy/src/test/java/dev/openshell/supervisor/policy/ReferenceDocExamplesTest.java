package dev.openshell.supervisor.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.openshell.supervisor.policy.gateway.GatewayConfig;
import dev.openshell.supervisor.policy.gateway.GatewayConfigLoader;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** The examples in {@code docs/policy-reference.md} load as documented, so the reference cannot drift. */
class ReferenceDocExamplesTest {
    private static List<String> blocks(String language) throws IOException {
        String root = System.getProperty("supervisor.root");
        Path doc = Path.of(root != null && !root.isBlank() ? root : "../..").resolve("docs/policy-reference.md");
        if (!Files.isRegularFile(doc)) {
            fail("docs/policy-reference.md not found at " + doc.toAbsolutePath());
        }
        List<String> out = new ArrayList<>();
        StringBuilder current = null;
        for (String line : Files.readAllLines(doc, StandardCharsets.UTF_8)) {
            if (current == null && line.equals("```" + language)) {
                current = new StringBuilder();
            } else if (current != null && line.equals("```")) {
                out.add(current.toString());
                current = null;
            } else if (current != null) {
                current.append(line).append('\n');
            }
        }
        return out;
    }

    @Test
    void thePolicyExampleLoadsAndSelectsAsDescribed() throws IOException {
        String yaml = blocks("yaml").get(0);
        SandboxPolicy policy = SandboxPolicyLoader.parse("example.yaml", yaml).value();
        assertEquals(List.of("regex-redactor", "anonymize"),
                policy.middlewaresFor("api.example.com").collect(NetworkMiddlewareConfig::key).castToList());
        assertTrue(policy.middlewaresFor("trusted.example.com").isEmpty());
        assertTrue(policy.middlewaresFor("img.cdn.example.com").isEmpty());
    }

    @Test
    void theGatewayExampleLoadsWithOnlyThePlaintextWarning() throws IOException {
        String toml = blocks("toml").get(0);
        var loaded = GatewayConfigLoader.parse("example.toml", toml, Path.of("/etc/supervisor"));
        GatewayConfig config = loaded.value();
        assertEquals(2, config.middleware().size());
        assertEquals(List.of("local-research"),
                config.insecureRegistrations().collect(r -> r.name()).castToList());
        assertEquals(List.of("openshell.supervisor.middleware[1].grpc_endpoint"),
                loaded.warnings().collect(ConfigProblem::keyPath).castToList());
        assertTrue(config.middleware().get(0).mutualTls());
        assertEquals("GITHUB_TOKEN", config.credentials().getOnly().name());
    }
}
