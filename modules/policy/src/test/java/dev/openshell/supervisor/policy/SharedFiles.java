package dev.openshell.supervisor.policy;

import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;

/** Finds files in the project's shared directory (conformance vectors, reference policies) without copying them. */
public final class SharedFiles {
    private SharedFiles() {
    }

    /**
     * {@return the path of {@code relative} under the shared directory, failing the test clearly when it is missing}
     *
     * @param relative a path such as {@code conformance/host_patterns.tsv}
     */
    public static Path require(String relative) {
        String configured = System.getProperty("supervisor.shared");
        Path base = configured != null && !configured.isBlank()
                ? Path.of(configured)
                : Path.of("../../../shared"); // module directory -> worktree -> workspace -> shared
        Path file = base.resolve(relative).normalize();
        if (!Files.isRegularFile(file)) {
            fail("shared file " + relative + " not found at " + file.toAbsolutePath()
                    + " (set -Dsupervisor.shared=<dir> to the directory holding conformance/ and reference/)");
        }
        return file;
    }
}
