package dev.openshell.supervisor.identity;

import java.io.IOException;
import java.net.InetSocketAddress;
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
 * search, proportional to the number of processes). No lookup takes TCP tables read before it started.
 *
 * <p>One owner search records the holders of every socket it sees, so a lookup may take the owners of its socket
 * from a search that started before the lookup did ({@link #owners(long, long, boolean)}), when that search started at most
 * {@code maxAgeNanos} ago, saw at most {@code maxSockets} sockets, and saw this socket: the socket then existed when
 * the search read its holders, and the caller verifies that they still hold it. A socket the search did not see
 * (opened after it) takes a new search.
 */
final class SharedScan {
    private static final String SOCKET = "socket:[";

    private final ProcTree tree;
    private final Set<Long> excluded;
    private final SingleFlight<Map<String, Long>> tcp;
    private final SingleFlight<Map<String, Long>> tcp6;
    private final SingleFlight<Map<Long, List<Holder>>> owners;
    private final long maxAgeNanos;
    private final int maxSockets;

    /**
     * @param tree the processes
     * @param netDir the namespace's {@code net} directory
     * @param excluded processes never searched
     * @param maxAgeNanos how long after its start an owner search may answer later lookups; 0: never
     * @param maxSockets the most sockets an owner search may have seen and still answer later lookups
     * @param clock {@link System#nanoTime()} but in tests
     */
    SharedScan(ProcTree tree, Path netDir, Set<Long> excluded, long maxAgeNanos, int maxSockets,
               java.util.function.LongSupplier clock) {
        this.tree = tree;
        this.excluded = excluded;
        this.tcp = new SingleFlight<>(() -> SocketTables.read(netDir.resolve("tcp")), clock);
        this.tcp6 = new SingleFlight<>(() -> SocketTables.read(netDir.resolve("tcp6")), clock);
        this.owners = new SingleFlight<>(this::readOwners, clock);
        this.maxAgeNanos = maxAgeNanos;
        this.maxSockets = maxSockets;
    }

    /** {@return the scan's clock now, in nanoseconds} */
    long now() {
        return owners.now();
    }

    /**
     * A process that held a socket, and the descriptor it held it under when seen (a hint: the caller reads it again).
     *
     * @param pid the process
     * @param fd the descriptor, or -1 when not recorded
     */
    record Holder(long pid, int fd) {
    }

    /** The holders of one socket, and whether they come from an owner search that started before the lookup. */
    record Owners(List<Holder> holders, boolean earlier) {
    }

    /**
     * {@return the PIDs that held socket {@code inode}, over every process but the excluded} From a search that
     * started at or after {@code since}, or from an earlier one (at most {@code maxAgeNanos} old, at most
     * {@code maxSockets} sockets) that saw this socket: its holders then, which the caller must verify.
     *
     * @param inode the socket's inode
     * @param since when the lookup started ({@link #now()})
     * @param reuse whether an earlier search may answer; {@code false}: only one that started at or after
     *     {@code since}
     * @throws IOException if the process list cannot be read
     */
    Owners owners(long inode, long since, boolean reuse) throws IOException {
        SingleFlight.Value<Map<Long, List<Holder>>> v = owners.recent(since, reuse ? maxAgeNanos : 0,
                m -> m.size() <= maxSockets && m.containsKey(inode));
        return new Owners(v.value().getOrDefault(inode, List.of()), v.earlier());
    }

    /**
     * {@return the inode of the client's socket, from TCP tables read at or after {@code since}, or null when there
     * is none} An IPv4 client is looked up in {@code tcp} first and in {@code tcp6} (a dual-stack socket) only when
     * {@code tcp} does not hold it, so that the usual case reads one table: each read costs the kernel a walk of its
     * whole established-socket hash. An IPv6 client is looked up in {@code tcp6} only.
     *
     * @param client the client's address
     * @param proxy the proxy's address
     * @param since when the lookup started ({@link #now()})
     * @throws IOException if no table that was needed could be read
     */
    Long inode(InetSocketAddress client, InetSocketAddress proxy, long since) throws IOException {
        String key = SocketTables.key(client, proxy);
        IOException failure = null;
        boolean read = false;
        for (SingleFlight<Map<String, Long>> table : SocketTables.ipv4(client) ? List.of(tcp, tcp6) : List.of(tcp6)) {
            try {
                Long inode = table.after(since).get(key);
                if (inode != null) {
                    return inode;
                }
                read = true;
            } catch (IOException e) {
                failure = e; // tcp6 is absent on a kernel without IPv6
            }
        }
        if (!read) {
            throw failure;
        }
        return null;
    }

    /** {@return how many full owner searches ran (for tests and the benchmark)} */
    long ownerSearches() {
        return owners.runs();
    }

    /** {@return how many reads of a TCP table ran ({@code tcp} and {@code tcp6} count one each)} */
    long tableReads() {
        return tcp.runs() + tcp6.runs();
    }

    private Map<Long, List<Holder>> readOwners() throws IOException {
        Map<Long, List<Holder>> out = new HashMap<>();
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
                            List<Holder> list = out.computeIfAbsent(inode, k -> new ArrayList<>(1));
                            if (list.isEmpty() || list.get(list.size() - 1).pid() != pid) {
                                list.add(new Holder(pid, fdNumber(fd)));
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

    private static int fdNumber(Path fd) {
        try {
            return Integer.parseInt(fd.getFileName().toString());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static long inode(String link) {
        try {
            return Long.parseLong(link, SOCKET.length(), link.length() - 1, 10);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
