package dev.openshell.supervisor.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import jakarta.json.Json;
import java.io.IOException;
import java.lang.module.Configuration;
import java.lang.module.ModuleFinder;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Discovery and refusal rules of the plugin host, with real plugin JARs in real plugin directories. */
class PluginHostTest {
    private static final Path JARS = Paths.get(System.getProperty("test.plugins", "target/test-plugins"));

    @TempDir
    Path plugins;

    private void drop(String... jars) throws IOException {
        for (String jar : jars) {
            Path source = JARS.resolve(jar + ".jar");
            assertTrue(Files.isRegularFile(source), "fixture JAR missing: " + source);
            Files.copy(source, plugins.resolve(jar + ".jar"));
        }
    }

    private PluginHost load() {
        return PluginHost.builder().pluginsDirectory(plugins).pins(PluginPins.unchecked()).loadBuiltIns(false).load();
    }

    private static List<String> messages(PluginHost host) {
        return host.failures().collect(PluginFailure::message).castToList();
    }

    @Test
    void discoversAPluginInItsOwnChildLayerAndCallsIt() throws IOException {
        drop("example-tagger");
        PluginHost host = load();

        assertEquals(List.of(), messages(host));
        RegisteredBinding b = host.registry().lookup(new BindingId("examples/tagger")).orElseThrow();
        assertEquals(ProviderOrigin.plugin("com.example.tagger", "example-tagger.jar"), b.origin());
        assertEquals("example-tagger", b.serviceName());
        Module module = b.provider().getClass().getModule();
        assertEquals("com.example.tagger", module.getName());
        assertEquals(1, host.pluginLayers().size());
        assertSame(host.pluginLayers().get(0), module.getLayer());
        assertEquals(List.of(ModuleLayer.boot()), module.getLayer().parents());

        HttpRequestResult result = b.provider().evaluate(new HttpRequestEvaluation(b.id(), Phase.PRE_CREDENTIALS,
                RequestContext.of("r1"), Json.createObjectBuilder().add("tag", "blue").build(),
                new HttpRequestTarget("https", "api.example.com", 443, "POST", "/v1", ""), List.of(),
                Body.ofUtf8("{}")));
        assertEquals(List.of(HeaderMutation.write("x-openshell-middleware-tag", "blue",
                dev.openshell.middleware.spi.ExistingHeaderAction.APPEND)), result.headerMutations());
    }

    @Test
    void providersOfTheHostLayerAreBuiltInsAndWinADuplicate() throws IOException {
        ModuleLayer hostLayer = layerOf(JARS.resolve("example-tagger.jar"));
        drop("fixture-duplicate");
        PluginHost host = PluginHost.builder().hostLayer(hostLayer).pluginsDirectory(plugins)
                .pins(PluginPins.unchecked()).load();

        RegisteredBinding tagger = host.registry().lookup(new BindingId("examples/tagger")).orElseThrow();
        assertEquals(ProviderOrigin.builtIn("com.example.tagger"), tagger.origin());
        assertTrue(host.registry().lookup(new BindingId("examples/unique")).isPresent(),
                "the plugin's other binding is kept");
        assertEquals(List.of("duplicate binding ID 'examples/tagger': already provided by module com.example.tagger "
                + "(built-in); refused from module com.example.fixture.duplicate (plugin fixture-duplicate.jar)"),
                messages(host));
    }

    @Test
    void twoPluginsClaimingOneIdAreBothRefusedWithBothOwnersNamed() throws IOException {
        drop("example-tagger", "fixture-duplicate");
        PluginHost host = load();

        assertTrue(host.registry().lookup(new BindingId("examples/tagger")).isEmpty());
        assertTrue(host.registry().lookup(new BindingId("examples/unique")).isPresent());
        String expected = "duplicate binding ID 'examples/tagger' claimed by module com.example.tagger (plugin "
                + "example-tagger.jar), module com.example.fixture.duplicate (plugin fixture-duplicate.jar); "
                + "all claims refused";
        assertEquals(List.of(expected, expected), messages(host));
    }

    @Test
    void aPluginCannotClaimTheReservedNamespace() throws IOException {
        drop("fixture-reserved");
        PluginHost host = load();

        assertTrue(host.registry().bindings().isEmpty());
        assertEquals(List.of("binding ID 'openshell/regex' is in the reserved 'openshell/' namespace, which belongs "
                + "to built-ins that ship with the supervisor; provider refused"), messages(host));
        assertEquals("module com.example.fixture.reserved (plugin fixture-reserved.jar)",
                host.failures().get(0).source());
    }

    @Test
    void aBindingIdOutsideTheGrammarRefusesTheProvider() throws IOException {
        drop("fixture-bad-id");
        PluginHost host = load();

        assertTrue(host.registry().bindings().isEmpty());
        assertEquals(List.of("provider com.example.fixture.badid.BadIdProvider failed: IllegalArgumentException: "
                + "invalid binding ID 'acme//pii': path segments must not be empty"), messages(host));
    }

    @Test
    void aThrowingProviderIsReportedAndTheOthersStillLoad() throws IOException {
        drop("fixture-throwing", "example-tagger");
        PluginHost host = load();

        assertTrue(host.registry().lookup(new BindingId("examples/tagger")).isPresent());
        assertEquals(List.of("provider com.example.fixture.throwing.ThrowingProvider failed: "
                + "IllegalStateException: fixture failure while describing"), messages(host));
    }

    @Test
    void aPluginCannotBindThePostCredentialsPhase() throws IOException {
        drop("fixture-post-credentials");
        PluginHost host = load();

        assertTrue(host.registry().bindings().isEmpty());
        assertEquals(List.of("binding 'examples/signer' asks for the POST_CREDENTIALS phase, which only restricted "
                + "built-ins may bind; provider refused"), messages(host));
    }

    /**
     * A plugin under an ordinary name, compiled with {@code --add-exports} so that it implements
     * {@code RestrictedMiddlewareProvider} (to be handed the host capabilities) while binding only the public phase:
     * its provider class cannot even be defined in a plugin layer, so it is refused and nothing is bound.
     */
    @Test
    void aPluginCannotImplementTheRestrictedProviderToBeHandedTheCapabilities() throws Exception {
        drop("fixture-thief");
        PluginHost host = load();

        assertTrue(host.registry().bindings().isEmpty());
        List<String> messages = messages(host);
        assertEquals(1, messages.size(), messages.toString());
        assertEquals("cannot load a provider: ServiceConfigurationError: dev.openshell.middleware.spi."
                + "MiddlewareProvider: Unable to load com.example.fixture.thief.ThiefProvider", messages.get(0));

        ModuleLayer layer = layerOf(JARS.resolve("fixture-thief.jar"));
        Module thief = layer.findModule("com.example.fixture.thief").orElseThrow();
        Module spi = ModuleLayer.boot().findModule("dev.openshell.middleware.spi").orElseThrow();
        assertFalse(spi.isExported("dev.openshell.middleware.spi.host", thief));
        ClassLoader loader = layer.findLoader("com.example.fixture.thief");
        IllegalAccessError e = assertThrows(IllegalAccessError.class,
                () -> Class.forName("com.example.fixture.thief.ThiefProvider", true, loader));
        assertTrue(e.getMessage().contains("RestrictedMiddlewareProvider"), e.getMessage());
    }

    @Test
    void aPluginTakingAFirstPartyModuleNameIsRefusedBeforeItsCodeRuns() throws IOException {
        drop("fixture-impostor");
        PluginHost host = load();

        assertTrue(host.registry().bindings().isEmpty());
        assertTrue(host.pluginLayers().isEmpty());
        assertEquals(List.of("module name [dev.openshell.builtin.sigv4] is reserved for modules that ship with the "
                + "supervisor (prefix 'dev.openshell.'); plugin refused"), messages(host));
    }

    /** A plugin that requires a supervisor module other than the SPI is refused; the other plugins still load. */
    @Test
    void aPluginRequiringASupervisorModuleOtherThanTheSpiIsRefusedBeforeItsCodeRuns() throws IOException {
        drop("fixture-overreach", "example-tagger");
        PluginHost host = load();

        assertTrue(host.registry().lookup(new BindingId("examples/tagger")).isPresent());
        assertEquals(1, host.registry().bindings().size());
        assertEquals(1, host.pluginLayers().size(), "only the tagger got a layer");
        assertEquals(List.of("module com.example.fixture.overreach requires dev.openshell.supervisor.policy: a plugin "
                + "may require only dev.openshell.middleware.spi of the supervisor's modules; plugin refused"),
                messages(host));
        assertTrue(host.failures().get(0).source().endsWith("fixture-overreach.jar"), host.failures().toString());
    }

    /**
     * Even with the host's name check out of the way, the JVM keeps {@code spi.host} closed to a plugin-layer module
     * that takes the restricted built-in's name: the qualified export binds to the boot-layer module only.
     */
    @Test
    void theRestrictedPackageStaysClosedToAPluginLayerModuleWhateverItsName() throws Exception {
        assertTrue(ModuleLayer.boot().findModule("dev.openshell.middleware.spi").isPresent(),
                "the SPI must be a named module in the boot layer for this test to mean anything");
        ModuleLayer layer = layerOf(JARS.resolve("fixture-impostor.jar"));
        Module impostor = layer.findModule("dev.openshell.builtin.sigv4").orElseThrow();
        assertSame(layer, impostor.getLayer());
        Module spi = ModuleLayer.boot().findModule("dev.openshell.middleware.spi").orElseThrow();
        assertFalse(spi.isExported("dev.openshell.middleware.spi.host", impostor));

        Class<?> type = Class.forName("dev.openshell.builtin.sigv4.impostor.ImpostorProvider", true,
                layer.findLoader("dev.openshell.builtin.sigv4"));
        Method steal = type.getMethod("stealCapabilities");
        InvocationTargetException e = assertThrows(InvocationTargetException.class, () -> steal.invoke(null));
        assertInstanceOf(IllegalAccessError.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("dev.openshell.middleware.spi.host"), e.getCause().getMessage());
    }

    @Test
    void aCorruptJarIsReportedAndTheOthersStillLoad() throws IOException {
        Files.write(plugins.resolve("broken.jar"), new byte[] {'P', 'K', 3, 4, 0, 0, 1, 2, 3});
        drop("example-tagger");
        PluginHost host = load();

        assertTrue(host.registry().lookup(new BindingId("examples/tagger")).isPresent());
        assertEquals(1, host.failures().size());
        assertEquals(plugins.resolve("broken.jar").toString(), host.failures().get(0).source());
        assertTrue(host.failures().get(0).message().startsWith("cannot load the plugin: FindException"),
                host.failures().get(0).message());
    }

    @Test
    void otherFilesAreSkippedAndAMissingDirectoryIsAFailure() throws IOException {
        Files.writeString(plugins.resolve("README.txt"), "not a plugin");
        Files.writeString(plugins.resolve(".hidden.jar"), "skipped");
        assertTrue(load().failures().isEmpty());
        assertTrue(load().registry().bindings().isEmpty());

        Path absent = plugins.resolve("absent");
        PluginHost none = PluginHost.builder().pluginsDirectory(absent).loadBuiltIns(false).load();
        assertEquals(List.of("the plugins directory " + absent + " does not exist"), messages(none),
                "a mistyped --plugins or plugins_dir is not silently an empty directory");
        assertEquals(java.util.Optional.of("the plugins directory " + absent + " does not exist"),
                PluginHost.directoryProblem(absent));
        assertEquals(java.util.Optional.empty(), PluginHost.directoryProblem(plugins));
    }

    @Test
    void aPluginsPathThatIsAFileIsAFailure() throws IOException {
        Path file = Files.writeString(plugins.resolve("file"), "x");
        PluginHost host = PluginHost.builder().pluginsDirectory(file).loadBuiltIns(false).load();
        assertEquals(List.of("the plugins path " + file + " is not a directory"), messages(host));
    }

    @Test
    void aDirectoryEntryIsOnePluginWithItsOwnJars() throws IOException {
        Path dir = Files.createDirectories(plugins.resolve("tagger-bundle"));
        Files.copy(JARS.resolve("example-tagger.jar"), dir.resolve("example-tagger.jar"));
        PluginHost host = load();
        RegisteredBinding b = host.registry().lookup(new BindingId("examples/tagger")).orElseThrow();
        assertEquals(ProviderOrigin.plugin("com.example.tagger", "tagger-bundle"), b.origin());
    }

    private static ModuleLayer layerOf(Path jar) {
        ModuleFinder finder = ModuleFinder.of(jar);
        Set<String> roots = Set.of(finder.findAll().iterator().next().descriptor().name());
        Configuration cf = ModuleLayer.boot().configuration().resolveAndBind(finder, ModuleFinder.of(), roots);
        ModuleLayer layer = ModuleLayer.boot().defineModulesWithOneLoader(cf, ClassLoader.getSystemClassLoader());
        assertNotNull(layer);
        return layer;
    }
}
