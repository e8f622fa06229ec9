/*
 * The per-connection cost of process identification (ProcessIdentifier.identify) on a host with many processes.
 * Not a test: a bounded measurement, run by identity-lookup-cost.sh.
 *
 * It starts PROCESSES extra sleeping processes (reparented away from this JVM, as unrelated host processes are; each
 * ends by itself after 600 s and is killed at the end), holds one loopback connection from a curl child, and times
 * identify() on it: cold (first call, hashes computed), then warm (hashes cached), searching every process (no
 * entrypoint) and searching the entrypoint's descendants first (this JVM as the entrypoint). Then the per-request
 * check of an identified connection (ProcessIdentifier.stillHolds: one readlink and one stat read of the identified
 * process), after a warm-up, in 5 rounds whose spread is the noise. Last, 32 fresh connections of one python3
 * client identified by a new identifier, one after another and then all at once: the full owner searches they cost.
 * Bounded: at most ITERATIONS calls and 20 s per case (the check: 20 x ITERATIONS calls per round).
 *
 * Usage: java --module-path modules/identity/target/classes:modules/middleware-spi/target/classes:JAKARTA_JSON_JAR \
 *        --add-modules dev.openshell.supervisor.identity tests/bench/IdentityLookupCost.java [PROCESSES [ITERATIONS]]
 */

import dev.openshell.supervisor.identity.Identification;
import dev.openshell.supervisor.identity.IdentityOptions;
import dev.openshell.supervisor.identity.ProcessIdentifier;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

public class IdentityLookupCost {
    public static void main(String[] args) throws Exception {
        int processes = args.length > 0 ? Integer.parseInt(args[0]) : 3000;
        int iterations = args.length > 1 ? Integer.parseInt(args[1]) : 200;
        if (processes < 0 || processes > 20_000 || iterations < 1 || iterations > 10_000) {
            throw new IllegalArgumentException("PROCESSES 0..20000, ITERATIONS 1..10000");
        }
        List<Long> sleepers = new ArrayList<>();
        Process curl = null;
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            server.setSoTimeout(20_000);
            long t0 = System.nanoTime();
            spawn(processes, sleepers);
            System.out.printf("started %d sleeping processes in %.1f s; %d processes and %d descriptors in /proc;"
                            + " %d CPU(s); load %s%n",
                    sleepers.size(), (System.nanoTime() - t0) / 1e9, countProcesses(), countDescriptors(),
                    Runtime.getRuntime().availableProcessors(),
                    Files.readString(Path.of("/proc/loadavg")).trim());
            curl = new ProcessBuilder("curl", "-s", "-o", "/dev/null", "-m", "120",
                    "http://127.0.0.1:" + server.getLocalPort() + "/")
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            try (Socket accepted = server.accept()) {
                InetSocketAddress client = (InetSocketAddress) accepted.getRemoteSocketAddress();
                InetSocketAddress local = (InetSocketAddress) accepted.getLocalSocketAddress();
                long self = ProcessHandle.current().pid();
                measure("every process searched (no entrypoint)",
                        ProcessIdentifier.create(IdentityOptions.defaults()), client, local, iterations);
                measure("every process searched, this JVM excluded (as the supervisor excludes itself)",
                        ProcessIdentifier.create(IdentityOptions.defaults().withExcluded(java.util.Set.of(self))),
                        client, local, iterations);
                measure("entrypoint's descendants first (entrypoint = this JVM)",
                        ProcessIdentifier.create(IdentityOptions.defaults().withEntrypoint(self)), client, local,
                        iterations);
                burst(ProcessIdentifier.create(IdentityOptions.defaults().withExcluded(java.util.Set.of(self))),
                        client, local, 32);
                stillHolds(ProcessIdentifier.create(IdentityOptions.defaults().withExcluded(java.util.Set.of(self))),
                        client, local, iterations * 20);
                freshConnections(server, 32, false);
                freshConnections(server, 32, true);
            }
        } finally {
            if (curl != null) {
                curl.destroyForcibly();
                curl.waitFor(10, TimeUnit.SECONDS);
            }
            for (long pid : sleepers) {
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            }
            System.out.println("killed " + sleepers.size() + " sleep processes");
        }
    }

    /**
     * Starts the sleepers from a python3 parent that forks them and exits, so they are reparented away from this JVM
     * (forking without exec is the cheapest way to make thousands of processes). Each ends by itself after 600 s.
     */
    private static void spawn(int n, List<Long> pids) throws Exception {
        if (n == 0) {
            return;
        }
        String script = "import os, sys, time\n"
                + "for i in range(int(sys.argv[1])):\n"
                + "    pid = os.fork()\n"
                + "    if pid == 0:\n"
                + "        os.setsid(); os.closerange(0, 256); time.sleep(600); os._exit(0)\n"
                + "    print(pid, flush=True)\n";
        Process py = new ProcessBuilder("python3", "-c", script, Integer.toString(n))
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(py.getInputStream(),
                StandardCharsets.US_ASCII))) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                pids.add(Long.parseLong(line.trim()));
            }
        }
        py.waitFor(60, TimeUnit.SECONDS);
    }

    private static long countDescriptors() throws Exception {
        long n = 0;
        try (var s = Files.list(Path.of("/proc"))) {
            for (Path p : s.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).toList()) {
                try (var fds = Files.list(p.resolve("fd"))) {
                    n += fds.count();
                } catch (java.io.IOException e) {
                    // gone
                }
            }
        }
        return n;
    }

    private static long countProcesses() throws Exception {
        try (var s = Files.list(Path.of("/proc"))) {
            return s.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).count();
        }
    }

    /** {@code n} lookups at once, as a burst of new connections would ask: they share snapshots. */
    private static void burst(ProcessIdentifier identifier, InetSocketAddress client, InetSocketAddress local, int n)
            throws Exception {
        identifier.identify(client, local); // hashes
        long before = identifier.fullSearches();
        long tablesBefore = identifier.tableReads();
        long s = System.nanoTime();
        try (var pool = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            List<java.util.concurrent.Future<Identification>> all = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                all.add(pool.submit(() -> identifier.identify(client, local)));
            }
            for (var f : all) {
                if (f.get().identity().isEmpty()) {
                    throw new IllegalStateException("not identified");
                }
            }
        }
        System.out.printf("burst of %d concurrent lookups: %.2f ms in all, %d table reads, %d full owner searches%n",
                n, (System.nanoTime() - s) / 1e6, identifier.tableReads() - tablesBefore,
                identifier.fullSearches() - before);
    }

    /**
     * {@code n} fresh connections from one {@code python3} client, each identified by a new identifier's lookups as
     * the proxy identifies a burst of new connections: one after another (each lookup starts after the previous one
     * ended), or all at once on virtual threads. The identifier is new, so its first lookup is cold (hashes).
     */
    private static void freshConnections(ServerSocket server, int n, boolean concurrent) throws Exception {
        String script = "import socket, sys\n"
                + "s = [socket.create_connection(('127.0.0.1', int(sys.argv[1]))) for i in range(int(sys.argv[2]))]\n"
                + "print('connected', flush=True)\n"
                + "sys.stdin.read()\n";
        Process py = new ProcessBuilder("python3", "-c", script, Integer.toString(server.getLocalPort()),
                Integer.toString(n)).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        List<Socket> accepted = new ArrayList<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(py.getInputStream(),
                StandardCharsets.US_ASCII))) {
            for (int i = 0; i < n; i++) {
                accepted.add(server.accept());
            }
            if (!"connected".equals(out.readLine())) {
                throw new IllegalStateException("the client did not connect");
            }
            ProcessIdentifier identifier = ProcessIdentifier.create(IdentityOptions.defaults()
                    .withExcluded(java.util.Set.of(ProcessHandle.current().pid())));
            long[] t = new long[n];
            long s = System.nanoTime();
            if (concurrent) {
                try (var pool = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
                    List<java.util.concurrent.Future<?>> all = new ArrayList<>();
                    for (int i = 0; i < n; i++) {
                        int k = i;
                        all.add(pool.submit(() -> t[k] = timed(identifier, accepted.get(k), py.pid())));
                    }
                    for (var f : all) {
                        f.get();
                    }
                }
            } else {
                for (int i = 0; i < n; i++) {
                    t[i] = timed(identifier, accepted.get(i), py.pid());
                }
            }
            long total = System.nanoTime() - s;
            long[] d = t.clone();
            Arrays.sort(d);
            System.out.printf("%d fresh connections of one client, %s: %.1f ms in all; per lookup p50 %.2f ms,"
                            + " p90 %.2f ms, max %.2f ms (first %.2f ms); %d full owner searches, %d table reads%n",
                    n, concurrent ? "all at once" : "one after another", total / 1e6, d[n / 2] / 1e6,
                    d[(int) (n * 0.9)] / 1e6, d[n - 1] / 1e6, t[0] / 1e6, identifier.fullSearches(),
                    identifier.tableReads());
        } finally {
            for (Socket a : accepted) {
                a.close();
            }
            py.destroyForcibly();
            py.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static long timed(ProcessIdentifier identifier, Socket accepted, long expected) {
        long s = System.nanoTime();
        Identification id = identifier.identify((InetSocketAddress) accepted.getRemoteSocketAddress(),
                (InetSocketAddress) accepted.getLocalSocketAddress());
        long t = System.nanoTime() - s;
        if (id.identity().isEmpty() || id.identity().get().pid() != expected) {
            throw new IllegalStateException("not identified as the client: " + id.reason());
        }
        return t;
    }

    /** The per-request check: warm-up, then 5 rounds of {@code n} calls; p50 and p90 per round, wall and CPU. */
    private static void stillHolds(ProcessIdentifier identifier, InetSocketAddress client, InetSocketAddress local,
                                   int n) {
        Identification id = identifier.identify(client, local);
        if (!(id instanceof Identification.Identified i) || i.hold().isEmpty()) {
            throw new IllegalStateException("not identified: " + id.reason());
        }
        var hold = i.hold().get();
        for (int w = 0; w < n; w++) {
            if (!identifier.stillHolds(hold)) {
                throw new IllegalStateException("the identified process no longer holds the socket");
            }
        }
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        for (int round = 1; round <= 5; round++) {
            long[] t = new long[n];
            long c0 = mx.getCurrentThreadCpuTime();
            long deadline = System.nanoTime() + 20_000_000_000L;
            int k = 0;
            for (; k < n && System.nanoTime() < deadline; k++) {
                long s = System.nanoTime();
                boolean held = identifier.stillHolds(hold);
                t[k] = System.nanoTime() - s;
                if (!held) {
                    throw new IllegalStateException("the identified process no longer holds the socket");
                }
            }
            long cpu = mx.getCurrentThreadCpuTime() - c0;
            long[] d = Arrays.copyOf(t, k);
            Arrays.sort(d);
            System.out.printf("per-request check (stillHolds), round %d of %d calls: p50 %.1f us, p90 %.1f us,"
                            + " max %.1f us wall; %.1f us CPU per call%n", round, k, d[k / 2] / 1e3,
                    d[(int) (k * 0.9)] / 1e3, d[k - 1] / 1e3, cpu / 1e3 / k);
        }
    }

    private static void measure(String name, ProcessIdentifier identifier, InetSocketAddress client,
                                InetSocketAddress local, int iterations) {
        long c0 = System.nanoTime();
        Identification first = identifier.identify(client, local);
        long cold = System.nanoTime() - c0;
        if (first.identity().isEmpty()) {
            throw new IllegalStateException("not identified: " + first.reason());
        }
        long deadline = System.nanoTime() + 20_000_000_000L;
        long[] t = new long[iterations];
        long[] cpu = new long[iterations];
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        int n = 0;
        for (; n < iterations && System.nanoTime() < deadline; n++) {
            long c = mx.getCurrentThreadCpuTime();
            long s = System.nanoTime();
            Identification id = identifier.identify(client, local);
            t[n] = System.nanoTime() - s;
            cpu[n] = mx.getCurrentThreadCpuTime() - c;
            if (id.identity().isEmpty()) {
                throw new IllegalStateException("not identified: " + id.reason());
            }
        }
        long[] d = Arrays.copyOf(t, n);
        Arrays.sort(d);
        long[] dc = Arrays.copyOf(cpu, n);
        Arrays.sort(dc);
        System.out.printf("%s: cold %.2f ms (%d hashes); warm over %d calls: p50 %.2f ms, p90 %.2f ms, max %.2f ms"
                        + " (CPU of the calling thread, user + system: p50 %.2f ms); identified %s with %d"
                        + " ancestors%n", name, cold / 1e6, identifier.hashesComputed(), n,
                d[n / 2] / 1e6, d[(int) (n * 0.9)] / 1e6, d[n - 1] / 1e6, dc[n / 2] / 1e6,
                first.identity().get().binary(), first.identity().get().ancestors().size());
    }
}
