package dev.openshell.supervisor.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

/** Runs the command line in-process, as {@code bin/supervisor} would, and keeps what it printed. */
final class Cli {
    /** One run: exit code, standard output, standard error. */
    record Run(int exit, String out, String err) {
        JsonObject json() {
            return Json.createReader(new StringReader(out)).readObject();
        }

        @Override
        public String toString() {
            return "exit " + exit + "\n--- out\n" + out + "--- err\n" + err;
        }
    }

    private Cli() {
    }

    static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Main.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Run(exit, out.toString(), err.toString());
    }

    /** {@return a plugins directory holding the example tagger, as a third party would drop it} */
    static Path pluginsWithTagger(Path dir) throws IOException {
        Path plugins = Files.createDirectories(dir.resolve("plugins"));
        Path jar = Path.of(System.getProperty("test.plugins", "target/test-plugins"), "example-tagger.jar");
        assertTrue(Files.isRegularFile(jar), "missing " + jar.toAbsolutePath());
        Files.copy(jar, plugins.resolve("example-tagger.jar"));
        Files.writeString(pins(dir), "[[openshell.supervisor.plugin_pins]]\nentry = \"example-tagger.jar\"\nsha256 = \""
                + dev.openshell.supervisor.engine.PluginPins.digest(plugins.resolve("example-tagger.jar")) + "\"\n");
        return plugins;
    }

    /** {@return the gateway file {@link #pluginsWithTagger} writes, pinning the tagger} @param dir its directory */
    static Path pins(Path dir) {
        return dir.resolve("pins.toml");
    }

    static final String POLICY = """
            version: 1
            network_policies:
              api:
                name: API
                endpoints:
                  - { host: api.example.com, port: 443, upgrades: allow_uninspected } # opted in: other warnings
                  - { host: other.test, port: 443, upgrades: allow_uninspected } # the "other" config selects it
            network_middlewares:
              tag:
                middleware: examples/tagger
                order: 10
                config: { tag: ok }
                endpoints:
                  include: ["*.example.com"]
                  exclude: ["internal.example.com"]
              other:
                middleware: examples/tagger
                order: 20
                on_error: fail_open
                config: { tag: other }
                endpoints:
                  include: ["other.test"]
            """;
}
