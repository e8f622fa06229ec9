package dev.openshell.supervisor.identity;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The expensive part of identification, shared: one snapshot reads the namespace's TCP tables (the kernel walks its
 * whole socket hash for {@code /proc/net/tcp}, milliseconds even when almost empty) and every process's descriptors,
 * and every lookup that was waiting when the snapshot started takes its answer from it. A burst of new connections
 * therefore costs one snapshot per snapshot-duration, not one per connection.
 *
 * <p>Freshness: a lookup asks for a snapshot that started at or after its own start (the client socket existed by
 * then, since the proxy accepted it before asking), so it never takes the answer of an older snapshot. Thread-safe.
 */
final class SharedScan {
    private static final String SOCKET = "socket:[";

    /**
     * One snapshot.
     *
     * @param startedNanos when it started ({@link System#nanoTime()})
     * @param sockets socket inode by connection key ({@link SocketTables#key})
     * @param owners owner PIDs by socket inode, in directory order
     */
    record Snapshot(long startedNanos, Map<String, Long> sockets, Map<Long, List<Long>> owners) {
    }

    private final ProcTree tree;
    private final Path netDir;
    private final Set<Long> excluded;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition finished = lock.newCondition();
    private Snapshot last;
    private boolean running;
    private long snapshots;

    SharedScan(ProcTree tree, Path netDir, Set<Long> excluded) {
        this.tree = tree;
        this.netDir = netDir;
        this.excluded = excluded;
    }

    /**
     * {@return a snapshot that started at or after {@code since}}
     *
     * @param since {@link System#nanoTime()} when the lookup started
     * @throws IOException if the TCP tables or the process list cannot be read
     */
    Snapshot after(long since) throws IOException {
        long start;
        lock.lock();
        try {
            while (true) {
                if (last != null && last.startedNanos() - since >= 0) {
                    return last;
                }
                if (!running) {
                    running = true;
                    start = System.nanoTime();
                    break;
                }
                finished.awaitUninterruptibly(); // the snapshot in progress, or the next one, will do
            }
        } finally {
            lock.unlock();
        }
        Snapshot s = null;
        try {
            s = new Snapshot(start, SocketTables.all(netDir), owners());
            return s;
        } finally {
            lock.lock();
            try {
                running = false;
                if (s != null) {
                    last = s;
                    snapshots++;
                }
                finished.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    /** {@return how many snapshots were taken (for tests and the benchmark)} */
    long snapshots() {
        lock.lock();
        try {
            return snapshots;
        } finally {
            lock.unlock();
        }
    }

    private Map<Long, List<Long>> owners() throws IOException {
        Map<Long, List<Long>> owners = new HashMap<>();
        for (long pid : tree.pids()) {
            if (excluded.contains(pid)) {
                continue;
            }
            try (DirectoryStream<Path> fds = Files.newDirectoryStream(tree.dir(pid).resolve("fd"))) {
                for (Path fd : fds) {
                    String link;
                    try {
                        link = Files.readSymbolicLink(fd).toString();
                    } catch (IOException | UnsupportedOperationException e) {
                        continue;
                    }
                    if (link.startsWith(SOCKET) && link.endsWith("]")) {
                        long inode = inode(link);
                        if (inode > 0) {
                            List<Long> list = owners.computeIfAbsent(inode, k -> new ArrayList<>(1));
                            if (list.isEmpty() || list.get(list.size() - 1) != pid) {
                                list.add(pid);
                            }
                        }
                    }
                }
            } catch (IOException e) {
                // vanished, or not ours to read
            }
        }
        return owners;
    }

    private static long inode(String link) {
        try {
            return Long.parseLong(link, SOCKET.length(), link.length() - 1, 10);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
