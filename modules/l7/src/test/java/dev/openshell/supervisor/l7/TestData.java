package dev.openshell.supervisor.l7;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

/** Test data of the repository ({@code tests/data}, Maven property {@code supervisor.testdata}). */
final class TestData {
    private TestData() {
    }

    static Path require(String relative) {
        String dir = System.getProperty("supervisor.testdata", "../../tests/data");
        Path file = Path.of(dir).resolve(relative);
        assertTrue(Files.isRegularFile(file), () -> "test data " + file.toAbsolutePath() + " is missing");
        return file;
    }
}
