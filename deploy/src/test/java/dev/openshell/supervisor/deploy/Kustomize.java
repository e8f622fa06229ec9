package dev.openshell.supervisor.deploy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * Renders a Kustomize directory with {@code kubectl kustomize} (the kubectl on the {@code PATH}; .ci/run provides
 * one when the machine has none) and parses the result.
 */
final class Kustomize {
    /** The repository's deploy/kubernetes directory. */
    static final Path ROOT = Path.of(System.getProperty("supervisor.root", "..")).resolve("deploy/kubernetes");

    private Kustomize() {
    }

    /** {@return the base and every overlay, as paths relative to {@link #ROOT}} @throws IOException on listing */
    static List<String> directories() throws IOException {
        List<String> dirs = new ArrayList<>();
        dirs.add("base");
        try (var overlays = Files.list(ROOT.resolve("overlays"))) {
            overlays.filter(Files::isDirectory).map(p -> "overlays/" + p.getFileName()).sorted().forEach(dirs::add);
        }
        return dirs;
    }

    /**
     * Renders one directory.
     *
     * @param dir a path relative to {@link #ROOT}
     * @return the rendered documents, in kustomize's order
     * @throws IOException when kubectl fails (its standard error in the message) or takes more than 120 s
     * @throws InterruptedException when interrupted while waiting for kubectl
     */
    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> render(String dir) throws IOException, InterruptedException {
        Path err = Files.createTempFile("kustomize", ".err");
        try {
            Process p = new ProcessBuilder("kubectl", "kustomize", ROOT.resolve(dir).toString())
                    .redirectError(err.toFile())
                    .start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException("kubectl kustomize " + dir + " took more than 120 s");
            }
            if (p.exitValue() != 0) {
                throw new IOException("kubectl kustomize " + dir + " failed (exit " + p.exitValue() + "): "
                        + Files.readString(err));
            }
            List<Map<String, Object>> docs = new ArrayList<>();
            for (Object doc : new Load(LoadSettings.builder().build())
                    .loadAllFromString(new String(out, StandardCharsets.UTF_8))) {
                if (doc != null) {
                    docs.add((Map<String, Object>) doc);
                }
            }
            return docs;
        } finally {
            Files.deleteIfExists(err);
        }
    }
}
