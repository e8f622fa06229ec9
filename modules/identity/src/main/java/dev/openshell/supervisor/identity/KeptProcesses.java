package dev.openshell.supervisor.identity;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;
import java.util.function.LongUnaryOperator;

/**
 * Identified processes, each with one of its {@code /proc/<pid>} files kept open ({@code comm}, the cheapest for the
 * kernel to render), so that the per-request check ({@link ProcessIdentifier#stillHolds}) proves that the process
 * is still the identified one with one {@code pread} of 16 bytes instead of opening, reading and parsing
 * {@code stat} for its start time each time.
 *
 * <p>Why that is as correct as comparing start times: the kernel ties an open {@code /proc/<pid>} file to the process
 * it was opened for ({@code struct pid}), not to the number. Once that process has exited and been reaped, every read
 * of the file fails ({@code ESRCH}), also after another process took the same PID. So a read that succeeds says that
 * the process the file was opened for is still alive, hence still has the PID. Which process that is, is settled once,
 * when the file is kept: the file is opened, then the start time is read by path, then the file is read again; that
 * second read succeeding means the process the file is tied to was alive during the start-time read, so the start
 * time read is its own. The kept entry holds that start time; a check for another start time under the same PID is
 * answered "another process" while the kept one lives.
 *
 * <p>Only for the kernel's {@code /proc} (a fake tree of plain files gives no such guarantee: it is read by path).
 * Bounded: at most {@link #MAX_KEPT} files (one descriptor each); when full, every kept file is closed and those still
 * in use are opened again. Files of processes that exited are closed at their next failed read. Thread-safe:
 * positional reads share one file without a lock; a file closed by another thread (or by an interrupt) fails the read,
 * which then settles by path.
 */
final class KeptProcesses {
    /** Most files kept open: 256 descriptors. */
    static final int MAX_KEPT = 256;

    /** The answer: the kept process is alive and has the start time asked about. */
    static final int SAME = 1;
    /** The answer: the process under the PID is alive and another one (another start time). */
    static final int OTHER = 0;
    /** The answer: nothing could be kept or read; the caller compares start times by path. */
    static final int UNKNOWN = -1;

    private record Kept(FileChannel file, long startTime) {
    }

    private final ConcurrentHashMap<Long, Kept> kept = new ConcurrentHashMap<>();
    private final LongFunction<Path> file;
    private final LongUnaryOperator startTimeByPath;

    /**
     * @param file where a process's kept file is ({@code /proc/<pid>/comm})
     * @param startTimeByPath a process's start time read by path ({@code stat} field 22), -1 when unreadable
     */
    KeptProcesses(LongFunction<Path> file, LongUnaryOperator startTimeByPath) {
        this.file = file;
        this.startTimeByPath = startTimeByPath;
    }

    /**
     * {@return whether the process under {@code pid} is the one that started at {@code startTime}: {@link #SAME},
     * {@link #OTHER} or {@link #UNKNOWN}}
     *
     * @param pid the process
     * @param startTime its start time when it was identified ({@code stat} field 22), at least 0
     */
    int same(long pid, long startTime) {
        Kept k = kept.get(pid);
        if (k != null) {
            if (alive(k.file)) {
                return k.startTime == startTime ? SAME : OTHER;
            }
            drop(pid, k);
        }
        k = keep(pid);
        if (k == null) {
            return UNKNOWN;
        }
        return k.startTime == startTime ? SAME : OTHER;
    }

    private Kept keep(long pid) {
        FileChannel ch;
        try {
            ch = FileChannel.open(file.apply(pid), StandardOpenOption.READ);
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
        long started = startTimeByPath.applyAsLong(pid);
        // read again after the start time: the process the file is tied to was alive while it was read, so it is its
        if (started < 0 || !alive(ch)) {
            close(ch);
            return null;
        }
        if (kept.size() >= MAX_KEPT) {
            for (Long p : kept.keySet()) {
                drop(p, kept.get(p));
            }
        }
        Kept k = new Kept(ch, started);
        Kept before = kept.putIfAbsent(pid, k);
        if (before != null) {
            close(ch); // another thread kept the same process, or a later one: both answer for theirs
        }
        return k;
    }

    private static boolean alive(FileChannel ch) {
        try {
            return ch.read(ByteBuffer.allocate(32), 0) > 0;
        } catch (IOException e) {
            return false; // the process exited (ESRCH), or the file was closed by another thread
        }
    }

    private void drop(long pid, Kept k) {
        if (k != null && kept.remove(pid, k)) {
            close(k.file);
        }
    }

    private static void close(FileChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            // nothing was written: nothing to lose
        }
    }

    /** {@return how many files are kept open now} */
    int size() {
        return kept.size();
    }
}
