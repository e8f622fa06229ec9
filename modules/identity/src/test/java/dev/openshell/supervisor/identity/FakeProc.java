package dev.openshell.supervisor.identity;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A fake {@code /proc} tree on disk, laid out as the kernel lays it out, for {@link ProcessIdentifier} tests. */
final class FakeProc {
    static final String HEADER = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid"
            + "  timeout inode";

    final Path root;
    final Path bin;
    private final List<String> tcp = new ArrayList<>();
    private final List<String> tcp6 = new ArrayList<>();
    private final Map<Long, List<Long>> children = new LinkedHashMap<>();
    /** Whether {@code task/<tid>/children} files are written (kernels without CONFIG_PROC_CHILDREN have none). */
    boolean childrenFiles = true;
    /** The start time the next process gets: each process started later than the one before. */
    private long nextStart = 1000;

    FakeProc(Path dir) throws IOException {
        this.root = Files.createDirectories(dir.resolve("proc"));
        this.bin = Files.createDirectories(dir.resolve("bin"));
        writeTables();
    }

    /** {@return a binary file with the given content under the fake bin directory} */
    Path binary(String name, String content) {
        try {
            Path p = bin.resolve(name);
            Files.createDirectories(p.getParent());
            Files.writeString(p, content);
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Adds a process running {@code exe}, child of {@code ppid}, holding the given socket inodes. */
    FakeProc process(long pid, long ppid, Path exe, long... sockets) {
        try {
            Path d = Files.createDirectories(root.resolve(Long.toString(pid)));
            Files.createDirectories(d.resolve("fd"));
            Files.createSymbolicLink(d.resolve("exe"), exe);
            Files.writeString(d.resolve("status"), "Name:\tx\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t" + pid
                    + "\nNgid:\t0\nPid:\t" + pid + "\nPPid:\t" + ppid + "\nTracerPid:\t0\n");
            // stat: "pid (comm) state ppid ..." with the start time as field 22; a comm may hold ") ("
            Files.writeString(d.resolve("stat"), pid + " (a) (b) S " + ppid + " 0 0 0 -1 4194560 0 0 0 0 0 0 0 0 20 0"
                    + " 1 0 " + nextStart++ + " 0 0\n");
            int fd = 0;
            Files.createSymbolicLink(d.resolve("fd").resolve(Integer.toString(fd++)), Path.of("pipe:[1]"));
            for (long s : sockets) {
                Files.createSymbolicLink(d.resolve("fd").resolve(Integer.toString(fd++)),
                        Path.of("socket:[" + s + "]"));
            }
            Files.createDirectories(d.resolve("task").resolve(Long.toString(pid)));
            children.computeIfAbsent(pid, k -> new ArrayList<>());
            children.computeIfAbsent(ppid, k -> new ArrayList<>()).add(pid);
            writeChildren();
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Gives a running process one more descriptor, {@code fd}, on a socket (it copied or received it). */
    FakeProc hold(long pid, int fd, long socket) {
        try {
            Files.createSymbolicLink(root.resolve(Long.toString(pid)).resolve("fd").resolve(Integer.toString(fd)),
                    Path.of("socket:[" + socket + "]"));
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Closes descriptor {@code fd} of a running process. */
    FakeProc close(long pid, int fd) {
        try {
            Files.delete(root.resolve(Long.toString(pid)).resolve("fd").resolve(Integer.toString(fd)));
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Removes a process (it exited). */
    FakeProc exit(long pid) {
        try {
            Path d = root.resolve(Long.toString(pid));
            try (var walk = Files.walk(d)) {
                for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Adds a TCP row: local is the client, remote the proxy. */
    FakeProc socket(InetSocketAddress client, InetSocketAddress proxy, long inode, boolean six) {
        List<String> rows = six ? tcp6 : tcp;
        rows.add(String.format("%4d: %s %s 01 00000000:00000000 00:00000000 00000000     0        0 %d 1"
                        + " 0000000000000000 20 4 30 10 -1", rows.size(),
                SocketTables.field(client.getAddress(), client.getPort(), six),
                SocketTables.field(proxy.getAddress(), proxy.getPort(), six), inode));
        writeTables();
        return this;
    }

    /** Adds a row that only looks alike: the same client port but another address, TIME_WAIT and inode 0. */
    FakeProc noise(InetSocketAddress client, InetSocketAddress proxy) {
        tcp.add(String.format("%4d: %s %s 06 00000000:00000000 03:00000000 00000000     0        0 0 1",
                tcp.size(), SocketTables.field(client.getAddress(), client.getPort(), false),
                SocketTables.field(proxy.getAddress(), proxy.getPort(), false)));
        writeTables();
        return this;
    }

    /** Gives the namespace of {@code pid} its own tables (a sandbox's {@code /proc/<pid>/net}). */
    FakeProc ownNamespace(long pid) {
        try {
            Path net = Files.createDirectories(root.resolve(Long.toString(pid)).resolve("net"));
            Files.write(net.resolve("tcp"), lines(tcp));
            Files.write(net.resolve("tcp6"), lines(tcp6));
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void writeTables() {
        try {
            Path net = Files.createDirectories(root.resolve("net"));
            Files.write(net.resolve("tcp"), lines(tcp));
            Files.write(net.resolve("tcp6"), lines(tcp6));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void writeChildren() throws IOException {
        for (Map.Entry<Long, List<Long>> e : children.entrySet()) {
            Path task = root.resolve(Long.toString(e.getKey())).resolve("task").resolve(Long.toString(e.getKey()));
            if (childrenFiles && Files.isDirectory(task)) {
                StringBuilder sb = new StringBuilder();
                e.getValue().forEach(c -> sb.append(c).append(' '));
                Files.writeString(task.resolve("children"), sb.toString(), StandardCharsets.US_ASCII);
            }
        }
    }

    private static List<String> lines(List<String> rows) {
        List<String> out = new ArrayList<>();
        out.add(HEADER);
        out.addAll(rows);
        return out;
    }

    static InetSocketAddress addr(String ip, int port) {
        try {
            return new InetSocketAddress(InetAddress.getByName(ip), port);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
