package dev.openshell.supervisor.identity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link StatHandles} and {@link ProcTree#heldStartTime} on the kernel's {@code /proc}: a kept {@code stat} file
 * reads the process it was opened for, and fails once that process has exited and was reaped, so that the
 * per-request check never reads another process that took the PID.
 */
class StatHandlesTest {
    private static final Path PROC = Path.of("/proc");
    private static final LongFunction<Path> STAT = pid -> PROC.resolve(Long.toString(pid)).resolve("stat");

    @BeforeEach
    void linux() {
        assumeTrue(Files.isReadable(PROC.resolve("self").resolve("stat")), "needs the kernel's /proc");
    }

    @Test
    void aKeptFileGivesTheStartTimeAReadByPathGives() {
        ProcTree tree = new ProcTree(PROC);
        long self = ProcessHandle.current().pid();
        long byPath = tree.startTime(self);
        assertTrue(byPath > 0);
        assertEquals(byPath, tree.heldStartTime(self), "first: opens and keeps the file");
        assertEquals(byPath, tree.heldStartTime(self), "then: reads the kept file again at offset 0");
    }

    @Test
    void aKeptFileOfAProcessThatExitedFailsAndIsDropped() throws IOException, InterruptedException {
        StatHandles stats = new StatHandles();
        Process child = new ProcessBuilder("sleep", "60").start();
        try {
            byte[] b = new byte[1024];
            assertTrue(stats.read(child.pid(), STAT, b) > 0);
            assertEquals(1, stats.size());
        } finally {
            child.destroyForcibly();
            assertTrue(child.waitFor(30, TimeUnit.SECONDS), "the child is reaped");
        }
        assertEquals(-1, stats.read(child.pid(), STAT, new byte[1024]),
                "the kept file is tied to the exited process, whatever now has its PID");
        assertEquals(0, stats.size());
    }

    @Test
    void theIdentifiedProcessGoneTheHeldStartTimeIsNoLongerItsOwn() throws IOException, InterruptedException {
        ProcTree tree = new ProcTree(PROC);
        Process child = new ProcessBuilder("sleep", "60").start();
        long started;
        try {
            started = tree.heldStartTime(child.pid());
            assertEquals(tree.startTime(child.pid()), started);
        } finally {
            child.destroyForcibly();
            assertTrue(child.waitFor(30, TimeUnit.SECONDS), "the child is reaped");
        }
        long after = tree.heldStartTime(child.pid());
        assertTrue(after != started, "another process with the PID starts later; none gives -1");
    }

    @Test
    void atMostMaxOpenFilesAreKept() {
        StatHandles stats = new StatHandles();
        byte[] b = new byte[1024];
        long self = ProcessHandle.current().pid();
        for (int i = 0; i < StatHandles.MAX_OPEN + 10; i++) {
            // the same file under many keys: what many identified processes would keep open
            long key = i;
            assertTrue(stats.read(key, k -> STAT.apply(self), b) > 0);
            assertTrue(stats.size() <= StatHandles.MAX_OPEN);
        }
    }

    @Test
    void aFakeTreeIsReadByPath(@org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
        Files.createDirectories(dir.resolve("7"));
        Files.writeString(dir.resolve("7").resolve("stat"), stat(4242));
        ProcTree tree = new ProcTree(dir);
        assertEquals(4242, tree.heldStartTime(7));
        Files.writeString(dir.resolve("7").resolve("stat"), stat(4343));
        assertEquals(4343, tree.heldStartTime(7), "no kept file: a fake tree has no kernel guarantee");
    }

    private static String stat(long start) {
        StringBuilder s = new StringBuilder("7 (x) S");
        for (int field = 4; field <= 21; field++) {
            s.append(" 0");
        }
        return s.append(' ').append(start).append(" 0 0\n").toString();
    }
}
