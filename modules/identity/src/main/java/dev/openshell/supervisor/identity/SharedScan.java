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
 * The full owner search, shared: one pass over every process's descriptors maps each socket inode to the processes
 * holding it, and every lookup that was waiting when the pass started takes its answer from it. A burst of new
 * connections therefore costs one pass per pass-duration, not one per connection.
 *
 * <p>Freshness: a lookup asks for a pass that started at or after its own start (the client socket existed by then,
 * since the proxy accepted it before asking), so it never takes the answer of an older pass. Thread-safe.
 */
final class SharedScan {
    private static final String SOCKET = "socket:[";

    /** One pass: socket inode to owner PIDs, in directory order, and when the pass started. */
    record Pass(long startedNanos, Map<Long, List<Long>> owners) {
    }

    private final ProcTree tree;
    private final Set<Long> excluded;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition finished = lock.newCondition();
    private Pass last;
    private boolean running;
    private long runningSince;
    private long passes;

    SharedScan(ProcTree tree, Set<Long> excluded) {
        this.tree = tree;
        this.excluded = excluded;
    }

    /**
     * {@return the owners of a socket, from a pass that started at or after {@code since}}
     *
     * @param inode the socket inode
     * @param since {@link System#nanoTime()} when the lookup started
     * @throws IOException if the process list cannot be read
     */
    List<Long> owners(long inode, long since) throws IOException {
        long start;
        lock.lock();
        try {
            while (true) {
                if (last != null && last.startedNanos() - since >= 0) {
                    return last.owners().getOrDefault(inode, List.of());
                }
                if (!running) {
                    running = true;
                    runningSince = System.nanoTime();
                    start = runningSince;
                    break;
                }
                finished.awaitUninterruptibly(); // the pass in progress, or the next one, will do
            }
        } finally {
            lock.unlock();
        }
        Pass pass = null;
        try {
            pass = new Pass(start, scan());
            return pass.owners().getOrDefault(inode, List.of());
        } finally {
            lock.lock();
            try {
                running = false;
                if (pass != null) {
                    last = pass;
                    passes++;
                }
                finished.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    /** {@return how many passes ran (for tests and the benchmark)} */
    long passes() {
        lock.lock();
        try {
            return passes;
        } finally {
            lock.unlock();
        }
    }

    private Map<Long, List<Long>> scan() throws IOException {
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
