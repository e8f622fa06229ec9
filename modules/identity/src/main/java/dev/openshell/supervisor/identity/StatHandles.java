package dev.openshell.supervisor.identity;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;

/**
 * The {@code /proc/<pid>/stat} files of identified processes, kept open and read again from offset 0 (one
 * {@code pread}) at each per-request check ({@link ProcessIdentifier#stillHolds}) instead of an open, a read and a
 * close each time.
 *
 * <p>Why a kept file is as correct as one opened by path: the kernel ties an open {@code /proc/<pid>} file to the
 * process it was opened for ({@code struct pid}), not to the number. Once that process has exited and been reaped,
 * every read of the file fails ({@code ESRCH}), also after another process took the same PID. So a read through a kept
 * file gives that process's own {@code stat} or fails, never another process's. A failed read closes and drops the
 * file, and the caller reads by path as before (which then finds the new process, whose start time differs, or none).
 *
 * <p>Only for the kernel's {@code /proc} (a fake tree of plain files gives no such guarantee: it is read by path).
 * Bounded: at most {@link #MAX_OPEN} files (one descriptor each); beyond that, a process's {@code stat} is read by
 * path. Files of processes that exited are closed at their next failed read, or when {@link #MAX_OPEN} is reached
 * (then every kept file is closed, and those still in use are opened again). Thread-safe: positional reads share one
 * file without a lock; a file closed by another thread (or by an interrupt) fails the read, which then goes by path.
 */
final class StatHandles {
    /** Most {@code stat} files kept open: 256 descriptors. */
    static final int MAX_OPEN = 256;

    private final ConcurrentHashMap<Long, FileChannel> open = new ConcurrentHashMap<>();

    /**
     * Reads the start of a process's {@code stat} through its kept file (one {@code pread} at offset 0), opening and
     * keeping it first if needed.
     *
     * @param pid the process
     * @param stat where a process's {@code stat} file is, {@code /proc/<pid>/stat} (used to open it)
     * @param b where the bytes go (from offset 0)
     * @return how many bytes were read (1 to {@code b.length}), or -1 when no kept file could be read: the caller
     *     reads by path
     */
    int read(long pid, LongFunction<Path> stat, byte[] b) {
        FileChannel ch = open.get(pid);
        if (ch == null) {
            ch = keep(pid, stat.apply(pid));
            if (ch == null) {
                return -1;
            }
        }
        try {
            // one read: the kernel renders the whole line (about 300 bytes) at offset 0; a line cut off by a full
            // buffer is read again whole by the caller
            int r = ch.read(ByteBuffer.wrap(b), 0);
            if (r > 0) {
                return r;
            }
            drop(pid, ch); // an empty stat: as the path read would see it
            return -1;
        } catch (IOException e) {
            // the process exited (ESRCH), or the file was closed by another thread: drop it, read by path
            drop(pid, ch);
            return -1;
        }
    }

    private FileChannel keep(long pid, Path stat) {
        if (open.size() >= MAX_OPEN) {
            for (Long p : open.keySet()) {
                drop(p, open.get(p));
            }
        }
        FileChannel ch;
        try {
            ch = FileChannel.open(stat, StandardOpenOption.READ);
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
        FileChannel before = open.putIfAbsent(pid, ch);
        if (before != null) {
            close(ch);
            return before;
        }
        return ch;
    }

    private void drop(long pid, FileChannel ch) {
        if (ch != null && open.remove(pid, ch)) {
            close(ch);
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
        return open.size();
    }
}
