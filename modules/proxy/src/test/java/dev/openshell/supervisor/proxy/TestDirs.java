package dev.openshell.supervisor.proxy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Temporary directories of tests that cannot take JUnit's {@code @TempDir} (jqwik containers: a property test's
 * {@code @BeforeContainer} fixture): made under the system temporary directory and deleted with all they hold.
 */
final class TestDirs {
    private TestDirs() {
    }

    /** {@return a new empty directory} @param prefix its name's prefix @throws IOException if it cannot be made */
    static Path create(String prefix) throws IOException {
        return Files.createTempDirectory(prefix);
    }

    /**
     * Deletes {@code dir} and everything in it (symbolic links themselves, never their targets); nothing when it is
     * {@code null} or gone.
     *
     * @param dir the directory
     * @throws IOException if an entry cannot be deleted
     */
    static void delete(Path dir) throws IOException {
        if (dir == null || !Files.exists(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        List<Path> all;
        try (Stream<Path> walk = Files.walk(dir)) {
            all = walk.sorted(Comparator.reverseOrder()).toList();
        }
        for (Path p : all) {
            Files.deleteIfExists(p);
        }
    }
}
