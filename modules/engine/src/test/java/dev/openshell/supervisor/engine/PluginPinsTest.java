package dev.openshell.supervisor.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import jakarta.json.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Only plugins the operator pinned load, and what loads is the bytes that were checked (issue 22). */
class PluginPinsTest {
    private static final Path JARS = Paths.get(System.getProperty("test.plugins", "target/test-plugins"));

    @TempDir
    Path plugins;

    private Path drop(String jar) throws IOException {
        return Files.copy(JARS.resolve(jar + ".jar"), plugins.resolve(jar + ".jar"));
    }

    private PluginHost load(PluginPins pins) {
        return PluginHost.builder().pluginsDirectory(plugins).pins(pins).loadBuiltIns(false).load();
    }

    private static List<String> messages(PluginHost host) {
        return host.failures().collect(f -> f.source() + ": " + f.message()).castToList();
    }

    @Test
    void byDefaultNoPluginLoads() throws IOException {
        Path jar = drop("example-tagger");
        PluginHost host = PluginHost.builder().pluginsDirectory(plugins).loadBuiltIns(false).load();
        assertTrue(host.registry().bindings().isEmpty());
        assertTrue(host.pluginLayers().isEmpty(), "no layer is defined for an unpinned plugin");
        assertEquals(List.of(jar + ": not pinned: only plugins the operator pinned load; if you trust it, add the"
                + " entry that `supervisor plugins --pin` prints to [[openshell.supervisor.plugin_pins]] in the"
                + " gateway configuration"), messages(host));
    }

    @Test
    void aPinnedPluginLoadsAndAnUnpinnedOneBesideItDoesNot() throws IOException {
        Path tagger = drop("example-tagger");
        drop("fixture-duplicate");
        PluginHost host = load(PluginPins.of(Map.of("example-tagger.jar", PluginPins.digest(tagger))));
        assertTrue(host.registry().lookup(new BindingId("examples/tagger")).isPresent());
        assertEquals(1, host.failures().size());
        assertTrue(host.failures().get(0).source().endsWith("fixture-duplicate.jar"));
        assertTrue(host.failures().get(0).message().startsWith("not pinned"));
    }

    @Test
    void aChangedPluginIsRefusedNamingBothDigests() throws IOException {
        Path tagger = drop("example-tagger");
        String pinned = PluginPins.digest(tagger);
        Files.write(tagger, new byte[] {0}, StandardOpenOption.APPEND);
        String now = PluginPins.digest(tagger);
        assertNotEquals(pinned, now);
        PluginHost host = load(PluginPins.of(Map.of("example-tagger.jar", pinned)));
        assertTrue(host.registry().bindings().isEmpty());
        assertEquals(List.of(tagger + ": changed since it was pinned: its sha256 is " + now + ", the pin says "
                + pinned), messages(host));

        // another plugin's bytes under the pinned name are refused the same way
        Files.copy(JARS.resolve("fixture-duplicate.jar"), tagger, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        assertTrue(load(PluginPins.of(Map.of("example-tagger.jar", pinned))).registry().bindings().isEmpty());
    }

    @Test
    void theCheckedBytesAreWhatLoads() throws IOException {
        Path tagger = drop("example-tagger");
        PluginHost host = load(PluginPins.of(Map.of("example-tagger.jar", PluginPins.digest(tagger))));
        Files.delete(tagger); // swapped or removed after the check: the staged copy is what runs
        RegisteredBinding b = host.registry().lookup(new BindingId("examples/tagger")).orElseThrow();
        HttpRequestResult r = b.provider().evaluate(new HttpRequestEvaluation(b.id(), Phase.PRE_CREDENTIALS,
                RequestContext.of("r1"), Json.createObjectBuilder().add("tag", "blue").build(),
                new HttpRequestTarget("https", "api.example.com", 443, "POST", "/v1", ""), List.of(),
                Body.ofUtf8("{}")));
        assertEquals(1, r.headerMutations().size());
        String location = b.provider().getClass().getModule().getLayer().configuration()
                .findModule("com.example.tagger").orElseThrow().reference().location().orElseThrow().getPath();
        assertTrue(!location.startsWith(plugins.toString()), "loaded from the staging copy, not " + location);
    }

    @Test
    void aDirectoryDigestCoversEveryFileAndItsName() throws IOException {
        Path dir = Files.createDirectory(plugins.resolve("tagger"));
        Files.copy(JARS.resolve("example-tagger.jar"), dir.resolve("example-tagger.jar"));
        String d0 = PluginPins.digest(dir);
        PluginHost host = load(PluginPins.of(Map.of("tagger", d0)));
        assertTrue(host.registry().lookup(new BindingId("examples/tagger")).isPresent(), messages(host).toString());

        Files.writeString(dir.resolve("extra.txt"), "x");
        String d1 = PluginPins.digest(dir);
        assertNotEquals(d0, d1, "an added file changes the digest");
        Files.move(dir.resolve("extra.txt"), dir.resolve("other.txt"));
        assertNotEquals(d1, PluginPins.digest(dir), "a renamed file changes the digest");
        Files.delete(dir.resolve("other.txt"));
        assertEquals(d0, PluginPins.digest(dir), "the digest depends on the contents only");
        assertTrue(load(PluginPins.of(Map.of("tagger", d0))).failures().isEmpty());

        Files.createSymbolicLink(dir.resolve("link.jar"), JARS.resolve("fixture-duplicate.jar").toAbsolutePath());
        assertThrows(IOException.class, () -> PluginPins.digest(dir));
        PluginHost linked = load(PluginPins.of(Map.of("tagger", d0)));
        assertTrue(linked.registry().bindings().isEmpty());
        assertTrue(linked.failures().get(0).message().startsWith("cannot read the plugin to check its pin"),
                messages(linked).toString());
    }

    @Test
    void theStagedCopiesAreDeletedWithTheirDirectory() throws IOException {
        Path tagger = drop("example-tagger");
        Path dir = plugins.resolve("a-directory-plugin");
        Files.createDirectories(dir.resolve("META-INF/nested"));
        Files.writeString(dir.resolve("META-INF/nested/x.txt"), "x");
        PluginPins pins = PluginPins.of(Map.of("example-tagger.jar", PluginPins.digest(tagger),
                "a-directory-plugin", PluginPins.digest(dir)));
        assertTrue(pins.stage(tagger).staged().isPresent());
        assertTrue(pins.stage(dir).staged().isPresent());
        Path staging = pins.stagingDirectory().orElseThrow();
        assertTrue(Files.exists(staging.resolve("a-directory-plugin/META-INF/nested/x.txt")));
        PluginPins.deleteTree(staging);
        assertTrue(Files.notExists(staging), "the staging directory and every copy in it are gone: " + staging);
        PluginPins.deleteTree(staging);
    }
}
