package dev.openshell.supervisor.policy;

import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;

/** Finds test data kept in the repository under {@code tests/data} (conformance vectors, reference policies). */
public final class SharedFiles {
    private SharedFiles() {
    }

    /**
     * {@return the path of {@code relative} under the shared directory, failing the test clearly when it is missing}
     *
     * @param relative a path such as {@code conformance/host_patterns.tsv}
     */
    public static Path require(String relative) {
        String configured = System.getProperty("supervisor.testdata");
        Path base = configured != null && !configured.isBlank()
                ? Path.of(configured)
                : Path.of("../../tests/data"); // from a module directory to the repository's tests/data
        Path file = base.resolve(relative).normalize();
        if (!Files.isRegularFile(file)) {
            fail("shared file " + relative + " not found at " + file.toAbsolutePath()
                    + " (the repository keeps it under tests/data; -Dsupervisor.testdata=<dir> points elsewhere)");
        }
        return file;
    }
}
