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

/**
 * The two expensive reads of identification, each shared by every lookup waiting when it starts
 * ({@link SingleFlight}): the namespace's TCP tables (the kernel walks its whole socket hash for
 * {@code /proc/net/tcp}, milliseconds even when almost empty), and the descriptors of every process (the full owner
 * search, proportional to the number of processes). No lookup takes a value read before it started.
 */
final class SharedScan {
    private static final String SOCKET = "socket:[";

    private final ProcTree tree;
    private final Set<Long> excluded;
    private final SingleFlight<Map<String, Long>> tables;
    private final SingleFlight<Map<Long, List<Long>>> owners;

    SharedScan(ProcTree tree, Path netDir, Set<Long> excluded) {
        this.tree = tree;
        this.excluded = excluded;
        this.tables = new SingleFlight<>(() -> SocketTables.all(netDir));
        this.owners = new SingleFlight<>(this::readOwners);
    }

    /**
     * {@return the socket inodes by connection key ({@link SocketTables#key}), read at or after {@code since}}
     *
     * @param since when the lookup started
     * @throws IOException if neither table can be read
     */
    Map<String, Long> sockets(long since) throws IOException {
        return tables.after(since);
    }

    /**
     * {@return the owner PIDs of every socket inode, over every process but the excluded, read at or after
     * {@code since}}
     *
     * @param since when the lookup started
     * @throws IOException if the process list cannot be read
     */
    Map<Long, List<Long>> owners(long since) throws IOException {
        return owners.after(since);
    }

    /** {@return how many full owner searches ran (for tests and the benchmark)} */
    long ownerSearches() {
        return owners.runs();
    }

    /** {@return how many table reads ran} */
    long tableReads() {
        return tables.runs();
    }

    private Map<Long, List<Long>> readOwners() throws IOException {
        Map<Long, List<Long>> out = new HashMap<>();
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
                            List<Long> list = out.computeIfAbsent(inode, k -> new ArrayList<>(1));
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
        return out;
    }

    private static long inode(String link) {
        try {
            return Long.parseLong(link, SOCKET.length(), link.length() - 1, 10);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
