package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.engine.PluginPins;
import java.io.IOException;
import java.nio.file.Path;

/** Gateway TOML pinning plugins-directory entries, so that tests of other behaviour can load their plugins. */
final class TestPins {
    private TestPins() {
    }

    /** {@return {@code [[openshell.supervisor.plugin_pins]]} tables for the entries, by file name} */
    static String toml(Path... entries) throws IOException {
        StringBuilder b = new StringBuilder();
        for (Path e : entries) {
            b.append("\n[[openshell.supervisor.plugin_pins]]\nentry = \"").append(e.getFileName())
                    .append("\"\nsha256 = \"").append(PluginPins.digest(e)).append("\"\n");
        }
        return b.toString();
    }
}
