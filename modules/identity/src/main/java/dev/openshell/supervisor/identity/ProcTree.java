package dev.openshell.supervisor.identity;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

/**
 * The process side of {@code /proc} under a root: process IDs, open descriptors, children, parents, executables.
 * Processes come and go while it reads: a process that vanished is simply not there (never an exception), and a
 * directory it may not read is skipped.
 */
final class ProcTree {
    /** Most processes visited in one descendant walk: bounds the walk on a hostile tree. */
    static final int MAX_DESCENDANTS = 65_536;
    private static final String DELETED = " (deleted)";

    private final Path root;
    /** Identified processes with a kept file each; null for a tree that is not the kernel's {@code /proc}. */
    private final KeptProcesses kept;

    ProcTree(Path root) {
        this.root = root;
        this.kept = root.equals(Path.of("/proc"))
                ? new KeptProcesses(pid -> dir(pid).resolve("comm"), this::startTime) : null;
    }

    Path root() {
        return root;
    }

    /** {@return the directory of a process} */
    Path dir(long pid) {
        return root.resolve(Long.toString(pid));
    }

    /** {@return whether a process exists} */
    boolean exists(long pid) {
        return Files.isDirectory(dir(pid));
    }

    /** {@return every process ID under the root, in directory order} */
    List<Long> pids() throws IOException {
        List<Long> out = new ArrayList<>();
        try (DirectoryStream<Path> s = Files.newDirectoryStream(root)) {
            for (Path p : s) {
                long pid = pid(p.getFileName().toString());
                if (pid > 0) {
                    out.add(pid);
                }
            }
        }
        return out;
    }

    private static long pid(String name) {
        if (name.isEmpty() || name.length() > 10) {
            return -1;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
        }
        return Long.parseLong(name);
    }

    /**
     * {@return whether one of the process's descriptors is the socket} An unreadable or vanished process holds
     * nothing.
     *
     * @param target the link text, {@code socket:[<inode>]}
     */
    boolean holds(long pid, String target) {
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir(pid).resolve("fd"))) {
            for (Path fd : s) {
                try {
                    if (Files.readSymbolicLink(fd).toString().equals(target)) {
                        return true;
                    }
                } catch (IOException | UnsupportedOperationException e) {
                    // closed while we read, or not a link
                }
            }
        } catch (IOException e) {
            return false;
        }
        return false;
    }

    /**
     * {@return the number of a descriptor of the process that is the socket, or -1} An unreadable or vanished
     * process holds nothing.
     *
     * @param target the link text, {@code socket:[<inode>]}
     */
    int fdOf(long pid, String target) {
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir(pid).resolve("fd"))) {
            for (Path fd : s) {
                try {
                    if (Files.readSymbolicLink(fd).toString().equals(target)) {
                        return Integer.parseInt(fd.getFileName().toString());
                    }
                } catch (IOException | UnsupportedOperationException | NumberFormatException e) {
                    // closed while we read, or not a link
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return -1;
    }

    /** {@return whether descriptor {@code fd} of the process is the socket: one {@code readlink}} */
    boolean holdsAt(long pid, int fd, String target) {
        try {
            return Files.readSymbolicLink(dir(pid).resolve("fd").resolve(Integer.toString(fd))).toString()
                    .equals(target);
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    /**
     * {@return the process's start time, clock ticks after boot ({@code stat} field 22), or -1 when unreadable}
     * The fields after the command name (in parentheses, which may itself hold spaces and parentheses) are read
     * from the last {@code ')'}. Read at every request on an identified connection ({@code stillHolds}): one small
     * read, parsed in place (no text, no regular expression).
     */
    long startTime(long pid) {
        return startTime(dir(pid).resolve("stat"), STAT_READ);
    }

    /**
     * {@return whether the process under {@code pid} is the one that started at {@code startTime}} The check made at
     * every request on an identified connection: through a kept file of the process, one {@code pread} instead of
     * opening, reading and parsing {@code stat}; equally correct ({@link KeptProcesses}). A fake tree, a start time
     * that could not be read, a file that could not be kept: the start time read by path and compared.
     *
     * @param startTime the start time it had when identified ({@code stat} field 22), -1 when unreadable then
     */
    boolean sameProcess(long pid, long startTime) {
        if (kept != null && startTime >= 0) {
            int same = kept.same(pid, startTime);
            if (same != KeptProcesses.UNKNOWN) {
                return same == KeptProcesses.SAME;
            }
        }
        return startTime(pid) == startTime;
    }

    /** The first read of {@code stat}: the line is about 300 bytes, field 22 within its first 600. */
    private static final int STAT_READ = 1024;
    /** At most a page. */
    private static final int STAT_MAX = 4096;

    private static long startTime(Path stat, int bytes) {
        byte[] b = new byte[bytes];
        int n;
        try (var in = stat.getFileSystem() == java.nio.file.FileSystems.getDefault()
                ? new java.io.FileInputStream(stat.toFile()) : Files.newInputStream(stat)) {
            n = in.readNBytes(b, 0, b.length);
        } catch (IOException e) {
            return -1;
        }
        long t = startTime(b, n);
        // a field cut off by a full buffer: read the whole page (never for a real command name, 64 bytes at most)
        return t == TRUNCATED ? (bytes < STAT_MAX ? startTime(stat, STAT_MAX) : -1) : t;
    }

    private static final long TRUNCATED = -2;

    /** {@return field 22 of the {@code stat} text {@code b[0..n)}, -1 when malformed, TRUNCATED when cut off} */
    static long startTime(byte[] b, int n) {
        int i = n - 1;
        while (i >= 0 && b[i] != ')') {
            i--;
        }
        if (i < 0) {
            return n == b.length ? TRUNCATED : -1;
        }
        i++;
        for (int field = 3; ; field++) {
            while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n')) {
                i++;
            }
            int start = i;
            while (i < n && b[i] != ' ' && b[i] != '\t' && b[i] != '\n') {
                i++;
            }
            if (i == n && n == b.length) {
                return TRUNCATED;
            }
            if (start == i) {
                return -1; // fewer than 22 fields
            }
            if (field == 22) {
                return digits(b, start, i);
            }
        }
    }

    private static long digits(byte[] b, int from, int to) {
        if (to - from > 18) {
            return -1;
        }
        long v = 0;
        for (int i = from; i < to; i++) {
            if (b[i] < '0' || b[i] > '9') {
                return -1;
            }
            v = v * 10 + (b[i] - '0');
        }
        return v;
    }

    /**
     * {@return the process and its descendants, breadth first, the process first} Read from
     * {@code task/<tid>/children} of every thread where the kernel has them ({@code CONFIG_PROC_CHILDREN}), else
     * from the {@code PPid} of every process. At most {@link #MAX_DESCENDANTS}.
     */
    List<Long> descendants(long pid) throws IOException {
        java.util.function.LongFunction<List<Long>> children;
        if (hasChildrenFiles(pid)) {
            children = this::children;
        } else {
            Map<Long, List<Long>> byParent = new HashMap<>();
            for (long p : pids()) {
                OptionalLong parent = parent(p);
                if (parent.isPresent()) {
                    byParent.computeIfAbsent(parent.getAsLong(), k -> new ArrayList<>()).add(p);
                }
            }
            children = p -> byParent.getOrDefault(p, List.of());
        }
        List<Long> out = new ArrayList<>();
        Set<Long> seen = new HashSet<>();
        Deque<Long> queue = new ArrayDeque<>();
        queue.add(pid);
        seen.add(pid);
        while (!queue.isEmpty() && out.size() < MAX_DESCENDANTS) {
            long p = queue.removeFirst();
            out.add(p);
            for (long child : children.apply(p)) {
                if (seen.add(child)) {
                    queue.addLast(child);
                }
            }
        }
        return out;
    }

    private boolean hasChildrenFiles(long pid) {
        return Files.isRegularFile(dir(pid).resolve("task").resolve(Long.toString(pid)).resolve("children"));
    }

    private List<Long> children(long pid) {
        List<Long> out = new ArrayList<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(dir(pid).resolve("task"))) {
            for (Path task : tasks) {
                String text;
                try {
                    text = Files.readString(task.resolve("children"), StandardCharsets.US_ASCII);
                } catch (IOException e) {
                    continue;
                }
                for (String s : text.trim().split("\\s+")) {
                    long c = pid(s);
                    if (c > 0) {
                        out.add(c);
                    }
                }
            }
        } catch (IOException e) {
            return out;
        }
        return out;
    }

    /** {@return the parent process ID from {@code status} ({@code PPid:}), empty when unreadable or none} */
    OptionalLong parent(long pid) {
        try (BufferedReader r = Files.newBufferedReader(dir(pid).resolve("status"), StandardCharsets.UTF_8)) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (line.startsWith("PPid:")) {
                    long ppid = pid(line.substring(5).trim());
                    return ppid > 0 ? OptionalLong.of(ppid) : OptionalLong.empty();
                }
            }
        } catch (IOException e) {
            return OptionalLong.empty();
        }
        return OptionalLong.empty();
    }

    /** {@return the link to the process's running executable ({@code exe}), readable even after a delete} */
    Path exeLink(long pid) {
        return dir(pid).resolve("exe");
    }

    /**
     * {@return the executable's path} A trailing {@code " (deleted)"} is removed only when no file of the full name
     * exists, looked up through the process's own {@code root} when it can be read.
     *
     * @throws IOException if the process vanished or its {@code exe} cannot be read (a kernel thread has none)
     */
    String exe(long pid) throws IOException {
        String target = Files.readSymbolicLink(exeLink(pid)).toString();
        if (target.endsWith(DELETED) && !visible(pid, target)) {
            target = target.substring(0, target.length() - DELETED.length());
        }
        return target;
    }

    private boolean visible(long pid, String path) {
        Path inRoot = dir(pid).resolve("root");
        Path p = Files.isDirectory(inRoot) && path.startsWith("/") ? inRoot.resolve(path.substring(1)) : Path.of(path);
        return Files.exists(p, LinkOption.NOFOLLOW_LINKS);
    }
}
