package dev.openshell.supervisor.identity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link KeptProcesses} and {@link ProcTree#sameProcess} on the kernel's {@code /proc}: a kept file answers for the
 * process it was opened for, and fails once that process has exited and was reaped, so that the per-request check
 * never takes another process that got the PID for the identified one.
 */
class KeptProcessesTest {
    private static final Path PROC = Path.of("/proc");

    @BeforeEach
    void linux() {
        assumeTrue(Files.isReadable(PROC.resolve("self").resolve("comm")), "needs the kernel's /proc");
    }

    private static KeptProcesses kept(ProcTree tree) {
        return new KeptProcesses(pid -> tree.dir(pid).resolve("comm"), tree::startTime);
    }

    @Test
    void aKeptProcessAnswersAsTheStartTimeByPathDoes() {
        ProcTree tree = new ProcTree(PROC);
        long self = ProcessHandle.current().pid();
        long started = tree.startTime(self);
        assertTrue(started > 0);
        assertTrue(tree.sameProcess(self, started), "first: keeps the file, after comparing the start time");
        assertTrue(tree.sameProcess(self, started), "then: one read of the kept file");
        assertFalse(tree.sameProcess(self, started + 1), "another start time under a live PID: another process");
        assertFalse(tree.sameProcess(self, started - 1));
    }

    @Test
    void aKeptFileOfAProcessThatExitedFailsAndIsDropped() throws IOException, InterruptedException {
        ProcTree tree = new ProcTree(PROC);
        KeptProcesses kept = kept(tree);
        Process child = new ProcessBuilder("sleep", "60").start();
        long started;
        try {
            started = tree.startTime(child.pid());
            assertEquals(KeptProcesses.SAME, kept.same(child.pid(), started));
            assertEquals(1, kept.size());
        } finally {
            child.destroyForcibly();
            assertTrue(child.waitFor(30, TimeUnit.SECONDS), "the child is reaped");
        }
        // the kept file is tied to the exited process, whatever now has its PID: never SAME again
        int after = kept.same(child.pid(), started);
        assertTrue(after != KeptProcesses.SAME, "answered " + after);
        assertTrue(kept.size() <= 1, "the dead process's file was dropped (a new holder of the PID may be kept)");
    }

    @Test
    void theIdentifiedProcessGoneTheCheckFails() throws IOException, InterruptedException {
        ProcTree tree = new ProcTree(PROC);
        Process child = new ProcessBuilder("sleep", "60").start();
        long started;
        try {
            started = tree.startTime(child.pid());
            assertTrue(tree.sameProcess(child.pid(), started));
        } finally {
            child.destroyForcibly();
            assertTrue(child.waitFor(30, TimeUnit.SECONDS), "the child is reaped");
        }
        assertFalse(tree.sameProcess(child.pid(), started));
    }

    @Test
    void atMostMaxKeptFilesAreKept() {
        ProcTree tree = new ProcTree(PROC);
        long self = ProcessHandle.current().pid();
        long started = tree.startTime(self);
        // the same process under many keys: what many identified processes would keep open
        KeptProcesses kept = new KeptProcesses(pid -> tree.dir(self).resolve("comm"), pid -> started);
        for (int i = 0; i < KeptProcesses.MAX_KEPT + 10; i++) {
            assertEquals(KeptProcesses.SAME, kept.same(i, started));
            assertTrue(kept.size() <= KeptProcesses.MAX_KEPT);
        }
    }

    @Test
    void nothingToKeepIsUnknown() {
        ProcTree tree = new ProcTree(PROC);
        KeptProcesses kept = new KeptProcesses(pid -> tree.dir(pid).resolve("comm"), pid -> -1);
        assertEquals(KeptProcesses.UNKNOWN, kept.same(ProcessHandle.current().pid(), 5),
                "a start time that cannot be read is compared by path");
        assertEquals(KeptProcesses.UNKNOWN, kept.same(Long.MAX_VALUE, 5), "no such process: nothing kept");
        assertEquals(0, kept.size());
    }

    @Test
    void aFakeTreeIsReadByPath(@TempDir Path dir) throws IOException {
        Files.createDirectories(dir.resolve("7"));
        Files.writeString(dir.resolve("7").resolve("comm"), "x\n");
        Files.writeString(dir.resolve("7").resolve("stat"), stat(4242));
        ProcTree tree = new ProcTree(dir);
        assertTrue(tree.sameProcess(7, 4242));
        Files.writeString(dir.resolve("7").resolve("stat"), stat(4343));
        assertFalse(tree.sameProcess(7, 4242), "no kept file: a fake tree has no kernel guarantee");
        assertTrue(tree.sameProcess(7, 4343));
    }

    private static String stat(long start) {
        StringBuilder s = new StringBuilder("7 (x) S");
        for (int field = 4; field <= 21; field++) {
            s.append(" 0");
        }
        return s.append(' ').append(start).append(" 0 0\n").toString();
    }
}
