package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code bin/supervisor plugins} against the real image: boot-layer built-ins, plugin layers, refusals. */
class ImagePluginsIT {
    @TempDir
    Path tmp;

    private static JsonObject json(Image.Run r) {
        return Json.createReader(new StringReader(r.out())).readObject();
    }

    /** binding ID -> layer */
    private static Map<String, String> layers(JsonObject o) {
        Map<String, String> m = new TreeMap<>();
        o.getJsonArray("bindings").getValuesAs(JsonObject.class)
                .forEach(b -> m.put(b.getString("binding_id"), b.getString("layer")));
        return m;
    }

    @Test
    void imageRunsWithoutAJdkAndListsItsBuiltIns() throws Exception {
        Path empty = Files.createDirectories(tmp.resolve("plugins"));
        Image.Run r = Image.run(Image.HOME, "plugins", "--plugins", empty.toString(), "--format", "json");
        assertEquals(0, r.exit(), r.err());
        JsonObject o = json(r);
        assertEquals(List.of(), o.getJsonArray("refused"));
        layers(o).forEach((id, layer) -> assertEquals("built-in", layer, id));
        o.getJsonArray("bindings").getValuesAs(JsonObject.class).forEach(b -> {
            assertTrue(b.getString("binding_id").startsWith("openshell/"), b.toString());
            assertTrue(b.getString("module").startsWith("dev.openshell."), b.toString());
        });
        JsonObject sigv4 = o.getJsonArray("bindings").getValuesAs(JsonObject.class).stream()
                .filter(b -> b.getString("binding_id").equals("openshell/sigv4")).findFirst().orElseThrow();
        assertEquals("dev.openshell.builtin.sigv4", sigv4.getString("module"));
        assertEquals("POST_CREDENTIALS", sigv4.getString("phase"), "the restricted built-in is in the image");
    }

    @Test
    void aThirdPartyPluginDroppedIntoADirectoryIsListedFromItsOwnLayer() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("plugins"));
        Path jar = Files.copy(Image.plugin("example-tagger"), dir.resolve("example-tagger.jar"));
        Path gateway = Files.writeString(tmp.resolve("gateway.toml"), Image.pins(jar));
        Image.Run r = Image.run(Image.HOME, "plugins", "--plugins", dir.toString(), "--gateway-config",
                gateway.toString(), "--format", "json");
        assertEquals(0, r.exit(), r.err());
        JsonObject tagger = json(r).getJsonArray("bindings").getValuesAs(JsonObject.class).stream()
                .filter(b -> b.getString("binding_id").equals("examples/tagger")).findFirst().orElseThrow();
        assertEquals("com.example.tagger", tagger.getString("module"));
        assertEquals("plugin", tagger.getString("layer"));
        assertEquals("HTTP_REQUEST", tagger.getString("operation"));
        assertEquals("PRE_CREDENTIALS", tagger.getString("phase"));
        assertEquals("example-tagger.jar", tagger.getString("source"));
    }

    @Test
    void refusedPluginsAreReportedOneLineEachAndTheExitCodeSaysSo() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("plugins"));
        List<Path> jars = new java.util.ArrayList<>();
        for (String name : List.of("example-tagger", "fixture-reserved", "fixture-throwing", "fixture-impostor")) {
            jars.add(Files.copy(Image.plugin(name), dir.resolve(name + ".jar")));
        }
        Path gateway = Files.writeString(tmp.resolve("gateway.toml"), Image.pins(jars.toArray(Path[]::new)));
        Image.Run r = Image.run(Image.HOME, "plugins", "--plugins", dir.toString(), "--gateway-config",
                gateway.toString());
        assertEquals(1, r.exit());
        assertTrue(r.out().contains("examples/tagger"), r.out());
        List<String> refused = r.err().lines().filter(l -> l.startsWith("refused: ")).toList();
        assertEquals(3, refused.size(), r.err());
        assertTrue(refused.get(0).contains("dev.openshell.builtin.sigv4] is reserved"), refused.get(0));
        assertTrue(refused.get(1).contains("reserved 'openshell/' namespace"), refused.get(1));
        assertTrue(refused.get(2).contains("fixture failure while describing"), refused.get(2));
        assertEquals(List.of(), r.err().lines().filter(l -> !l.startsWith("refused: ")).toList(),
                "nothing but the refusals on stderr");
    }

    /** The image's own plugins/ directory is the default: a JAR dropped there is loaded at start-up. */
    @Test
    void aJarDroppedIntoTheImagesPluginsDirectoryIsLoaded() throws Exception {
        Path copy = tmp.resolve("image");
        copyTree(Image.HOME, copy);
        Path jar = Files.copy(Image.plugin("example-tagger"), copy.resolve("plugins/example-tagger.jar"));
        Path gateway = Files.writeString(tmp.resolve("gateway.toml"), Image.pins(jar));
        Image.Run r = Image.run(copy, "plugins", "--gateway-config", gateway.toString(), "--format", "json");
        assertEquals(0, r.exit(), r.err());
        JsonObject o = json(r);
        assertEquals("plugin", layers(o).get("examples/tagger"));
        assertEquals(copy.resolve("plugins").toRealPath().toString(),
                Path.of(o.getString("plugins_directory")).toRealPath().toString());
    }

    /** Issue 22: only plugins the operator pinned load; `--pin` prints what to paste; a changed JAR is refused. */
    @Test
    void pluginsLoadOnlyWhenPinnedAndUnchanged() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("plugins"));
        Path jar = Files.copy(Image.plugin("example-tagger"), dir.resolve("example-tagger.jar"));

        Image.Run unpinned = Image.run(Image.HOME, "plugins", "--plugins", dir.toString());
        assertEquals(1, unpinned.exit());
        assertTrue(!unpinned.out().contains("examples/tagger"), unpinned.out());
        assertTrue(unpinned.err().contains("example-tagger.jar: not pinned"), unpinned.err());

        Image.Run pin = Image.run(Image.HOME, "plugins", "--plugins", dir.toString(), "--pin");
        assertEquals(0, pin.exit(), pin.err());
        assertTrue(pin.out().contains(Image.pins(jar).strip()), "the printed entry is the file's SHA-256:\n"
                + pin.out());
        Path gateway = Files.writeString(tmp.resolve("gateway.toml"), pin.out());
        Image.Run pinned = Image.run(Image.HOME, "plugins", "--plugins", dir.toString(), "--gateway-config",
                gateway.toString());
        assertEquals(0, pinned.exit(), pinned.err());
        assertTrue(pinned.out().contains("examples/tagger"), pinned.out());

        Files.write(jar, new byte[] {0}, java.nio.file.StandardOpenOption.APPEND);
        Image.Run changed = Image.run(Image.HOME, "plugins", "--plugins", dir.toString(), "--gateway-config",
                gateway.toString());
        assertEquals(1, changed.exit());
        assertTrue(changed.err().contains("example-tagger.jar: changed since it was pinned"), changed.err());
        assertTrue(!changed.out().contains("examples/tagger"), changed.out());
    }

    /**
     * Issue 22: the image's launcher denies {@code sun.misc.Unsafe} memory access, so a (pinned) plugin cannot use
     * Unsafe to flip {@code AccessibleObject.override} and open the restricted host package to itself.
     */
    @Test
    void theUnsafeRouteOutOfTheModuleSystemIsDenied() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("plugins"));
        Path jar = Files.copy(Image.plugin("fixture-unsafe-probe"), dir.resolve("fixture-unsafe-probe.jar"));
        Path gateway = Files.writeString(tmp.resolve("gateway.toml"), Image.pins(jar));
        Image.Run r = Image.run(Image.HOME, "plugins", "--plugins", dir.toString(), "--gateway-config",
                gateway.toString(), "--format", "json");
        assertEquals(0, r.exit(), r.err());
        Map<String, String> layers = layers(json(r));
        assertEquals("plugin", layers.get("examples/unsafe-denied"), "the probe must report Unsafe denied: "
                + layers);
    }

    @Test
    void usageErrorsExitWithTwo() throws Exception {
        Image.Run r = Image.run(Image.HOME, "no-such-command");
        assertEquals(2, r.exit());
        assertTrue(r.err().startsWith("supervisor: unknown command 'no-such-command'"), r.err());
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : s.toList()) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target, java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }
}
