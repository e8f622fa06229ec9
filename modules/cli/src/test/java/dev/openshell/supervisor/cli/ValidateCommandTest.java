package dev.openshell.supervisor.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code supervisor validate}: output formats and exit codes. */
class ValidateCommandTest {
    private static final Pattern PROBLEM = Pattern.compile("[^:]+:\\d+:\\d+: (error|warning): [^:]+: .+");

    @TempDir
    Path dir;

    private Path plugins;

    @BeforeEach
    void setUp() throws IOException {
        plugins = Cli.pluginsWithTagger(dir);
    }

    private Path write(String name, String text) throws IOException {
        Path p = dir.resolve(name);
        Files.writeString(p, text);
        return p;
    }

    private static String broken() {
        return Cli.POLICY.replace("order: 20", "order: 10").replace("tag: other", "tag: \"has spaces\"");
    }

    @Test
    void aValidPolicyExitsZeroWithASummary() throws IOException {
        Path policy = write("policy.yaml", Cli.POLICY);
        Cli.Run r = Cli.run("validate", "--policy", policy.toString(), "--plugins", plugins.toString(),
                "--gateway-config", Cli.pins(dir).toString());
        assertEquals(0, r.exit(), r.toString());
        assertEquals(List.of(policy + " with " + Cli.pins(dir) + ": valid (0 error(s), 0 warning(s))"), r.out().lines().toList());
        assertEquals("", r.err(), "nothing but the report");
    }

    @Test
    void everyProblemIsOneLineWithFileLineColumnAndKeyAndTheExitCodeIsOne() throws IOException {
        Path policy = write("policy.yaml", broken());
        Cli.Run r = Cli.run("validate", "--policy", policy.toString(), "--plugins", plugins.toString(),
                "--gateway-config", Cli.pins(dir).toString());
        assertEquals(1, r.exit(), r.toString());
        List<String> problems = r.out().lines().filter(l -> l.startsWith(policy.toString())).toList();
        assertTrue(problems.size() >= 2, r.toString());
        for (String line : problems.subList(0, problems.size() - 1)) {
            assertTrue(PROBLEM.matcher(line).matches(), line);
        }
        assertTrue(r.out().contains("network_middlewares.other.order"), r.out());
        assertTrue(r.out().contains("network_middlewares.other.config"), r.out());
        assertTrue(r.out().contains("    its provider's own words (untrusted text): 'tag' must be"), r.out());
        assertTrue(r.out().lines().toList().getLast().contains("INVALID (2 error(s)"), r.out());
    }

    @Test
    void jsonReportsTheSameProblemsForCiPipelines() throws IOException {
        Path policy = write("policy.yaml", broken());
        Cli.Run r = Cli.run("validate", "--policy", policy.toString(), "--plugins", plugins.toString(),
                "--gateway-config", Cli.pins(dir).toString(),
                "--format", "json");
        assertEquals(1, r.exit());
        JsonObject o = r.json();
        assertFalse(o.getBoolean("valid"));
        assertEquals(2, o.getInt("errors"));
        assertEquals(0, o.getInt("warnings"));
        JsonObject first = o.getJsonArray("problems").getJsonObject(0);
        assertEquals("error", first.getString("severity"));
        assertEquals(policy.toString(), first.getString("file"));
        assertTrue(first.getInt("line") > 0 && first.getInt("column") > 0, first.toString());
        assertTrue(first.getString("key").startsWith("network_middlewares.other"), first.toString());
        assertTrue(o.getJsonArray("problems").getValuesAs(JsonObject.class).stream()
                .anyMatch(p -> p.containsKey("detail")), "ValidateConfig's reason is kept as detail");

        Cli.Run ok = Cli.run("validate", "--policy", write("ok.yaml", Cli.POLICY).toString(), "--plugins",
                plugins.toString(), "--gateway-config", Cli.pins(dir).toString(), "--format", "json");
        assertEquals(0, ok.exit());
        assertTrue(ok.json().getBoolean("valid"));
        assertEquals(0, ok.json().getJsonArray("problems").size());
    }

    @Test
    void aPolicyNamingAPluginThatIsNotInstalledIsInvalid() throws IOException {
        Path policy = write("policy.yaml", Cli.POLICY);
        Path empty = Files.createDirectories(dir.resolve("no-plugins"));
        Cli.Run r = Cli.run("validate", "--policy", policy.toString(), "--plugins", empty.toString());
        assertEquals(1, r.exit());
        assertTrue(r.out().contains("examples/tagger"), r.out());
    }

    @Test
    void aMissingFileIsAnErrorNotACrash() {
        Cli.Run r = Cli.run("validate", "--policy", dir.resolve("nope.yaml").toString());
        assertEquals(1, r.exit(), r.toString());
        assertTrue(r.out().startsWith(dir.resolve("nope.yaml").toString()), r.out());
    }

    @Test
    void usageErrorsExitTwo() {
        assertEquals(2, Cli.run("validate").exit(), "--policy is required");
        assertEquals(2, Cli.run("validate", "--policy", "p.yaml", "--format", "xml").exit());
    }
}
