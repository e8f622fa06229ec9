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
        Files.copy(Image.plugin("example-tagger"), dir.resolve("example-tagger.jar"));
        Image.Run r = Image.run(Image.HOME, "plugins", "--plugins", dir.toString(), "--format", "json");
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
        for (String name : List.of("example-tagger", "fixture-reserved", "fixture-throwing", "fixture-impostor")) {
            Files.copy(Image.plugin(name), dir.resolve(name + ".jar"));
        }
        Image.Run r = Image.run(Image.HOME, "plugins", "--plugins", dir.toString());
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
        Files.copy(Image.plugin("example-tagger"), copy.resolve("plugins/example-tagger.jar"));
        Image.Run r = Image.run(copy, "plugins", "--format", "json");
        assertEquals(0, r.exit(), r.err());
        JsonObject o = json(r);
        assertEquals("plugin", layers(o).get("examples/tagger"));
        assertEquals(copy.resolve("plugins").toRealPath().toString(),
                Path.of(o.getString("plugins_directory")).toRealPath().toString());
    }

    @Test
    void usageErrorsExitWithTwo() throws Exception {
        Image.Run r = Image.run(Image.HOME, "no-such-command");
        assertEquals(2, r.exit());
        assertTrue(r.err().contains("Unmatched argument"), r.err());
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
