package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The proxy's tests leave nothing in the system temporary directory: a test takes JUnit's {@code @TempDir}, or (a jqwik
 * container) {@link TestDirs}, which deletes what it made; a temporary file is deleted by the test that made it.
 */
class TestDirsTest {
    private static final Pattern TEMP_DIRECTORY = Pattern.compile("Files\\.createTempDirectory\\(");

    @Test
    void deleteRemovesTheDirectoryAndAllItHolds() throws IOException {
        Path dir = TestDirs.create("test-dirs");
        Files.createDirectories(dir.resolve("a/b"));
        Files.writeString(dir.resolve("a/b/c.pem"), "x");
        Files.writeString(dir.resolve("d"), "y");
        TestDirs.delete(dir);
        assertFalse(Files.exists(dir));
        TestDirs.delete(dir); // gone: nothing to do
    }

    /** A directory made with {@code Files.createTempDirectory} outside {@link TestDirs} is not deleted by JUnit. */
    @Test
    void noTestMakesATemporaryDirectoryItDoesNotDelete() throws IOException {
        Path tests = Path.of("src/test/java").toAbsolutePath();
        assertTrue(Files.isDirectory(tests), tests.toString());
        List<String> leaks = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(tests)) {
            for (Path p : walk.filter(f -> f.toString().endsWith(".java")).toList()) {
                String name = p.getFileName().toString();
                if (!name.equals("TestDirs.java") && !name.equals("TestDirsTest.java")
                        && TEMP_DIRECTORY.matcher(Files.readString(p)).find()) {
                    leaks.add(tests.relativize(p).toString());
                }
            }
        }
        assertEquals(List.of(), leaks, "make temporary directories with @TempDir or TestDirs (deleted after)");
    }
}
