import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Start-up time of {@code bin/supervisor run} (not a test): from launching the process to reading its line
 * {@code supervisor listening on HOST:PORT}, for one or more images or JVM options, launches interleaved so that a
 * change in the machine's load hits every configuration alike. Prints the median, minimum and maximum wall time and
 * the median CPU time of the supervisor process (user and system, at the moment the line is read; the JIT and GC
 * threads run beside the main one on a multi-core machine).
 *
 * <p>Each configuration has its own state directory; one untimed launch creates its CA first, as every start but the
 * first loads an existing CA ({@code --fresh-ca} deletes the state directory before every launch instead). The
 * policy is a default-like one (every host on ports 80 and 443, {@code openshell/regex} redacting on every host), the
 * admin listener is on a free port. On Linux each timed launch waits until the machine is idle (at least 90 % over
 * 1 s, at most 300 s) and is repeated (at most 20 times) when other processes used more than 0.15 s of CPU while it
 * ran.
 *
 * <p>Usage: {@code java tests/bench/StartupTime.java [--runs N] [--fresh-ca] LABEL=IMAGE[|JAVA_OPTIONS]...}, for
 * example {@code java tests/bench/StartupTime.java --runs 7 now=jlink/target/image "off=jlink/target/image|-XX:AOTMode=off"}.
 * N is 1..50 (default 5); JAVA_OPTIONS go to the launcher as {@code SUPERVISOR_JAVA_OPTS}.
 */
public final class StartupTime {
    private static final String POLICY = """
            version: 1
            network_policies:
              all:
                name: every host on 80 and 443
                endpoints:
                  - host: "**"
                    ports: [80, 443]
            network_middlewares:
              secrets:
                name: Redact known secret formats
                middleware: openshell/regex
                order: 10
                config: { mode: redact }
                on_error: fail_closed
                endpoints:
                  include: ["**"]
            """;
    private static final Duration LISTEN_LIMIT = Duration.ofSeconds(60);
    private static final Path PROC_STAT = Path.of("/proc/stat");

    private record Config(String label, Path image, String javaOptions) {
    }

    private record Sample(double wallSeconds, double cpuSeconds, double otherCpuSeconds) {
    }

    public static void main(String[] args) throws Exception {
        int runs = 5;
        boolean freshCa = false;
        List<Config> configs = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--runs" -> runs = Integer.parseInt(args[++i]);
                case "--fresh-ca" -> freshCa = true;
                default -> {
                    String[] lv = args[i].split("=", 2);
                    if (lv.length != 2) {
                        usage();
                    }
                    String[] io = lv[1].split("\\|", 2);
                    configs.add(new Config(lv[0], Path.of(io[0]).toAbsolutePath(), io.length > 1 ? io[1] : ""));
                }
            }
        }
        if (configs.isEmpty() || runs < 1 || runs > 50) {
            usage();
        }
        Path work = Files.createTempDirectory("startup-time");
        try {
            Path policy = Files.writeString(work.resolve("policy.yaml"), POLICY);
            Path gateway = Files.writeString(work.resolve("gateway.toml"), "[openshell.supervisor.network]\n");
            Map<String, List<Sample>> samples = new LinkedHashMap<>();
            for (Config c : configs) {
                samples.put(c.label(), new ArrayList<>());
                if (!freshCa) {
                    launch(c, work, policy, gateway); // creates this configuration's CA: not timed
                }
            }
            for (int r = 0; r < runs; r++) {
                for (Config c : configs) {
                    Sample s = null;
                    for (int attempt = 0; attempt < 20; attempt++) {
                        awaitIdle();
                        if (freshCa) {
                            delete(work.resolve(c.label()));
                        }
                        s = launch(c, work, policy, gateway);
                        if (s.otherCpuSeconds() <= 0.15) {
                            break;
                        }
                        System.err.printf("  (discarded %s %.3f s: other processes used %.2f s of CPU meanwhile)%n",
                                c.label(), s.wallSeconds(), s.otherCpuSeconds());
                    }
                    samples.get(c.label()).add(s);
                }
            }
            System.out.printf("%d launches each, %d CPUs, %s%n", runs, Runtime.getRuntime().availableProcessors(),
                    freshCa ? "a new state directory (CA generated) every launch" : "the CA loaded from its files");
            for (Config c : configs) {
                List<Sample> l = samples.get(c.label());
                List<Double> wall = l.stream().map(Sample::wallSeconds).toList();
                System.out.printf("%-12s wall median %.3f s (min %.3f, max %.3f: %s)  CPU median %.2f s  [%s] %s%n",
                        c.label(), median(wall), wall.stream().min(Double::compare).orElseThrow(),
                        wall.stream().max(Double::compare).orElseThrow(),
                        wall.stream().map(w -> String.format("%.2f", w)).collect(Collectors.joining(" ")),
                        median(l.stream().map(Sample::cpuSeconds).toList()), c.javaOptions(), c.image());
            }
        } finally {
            delete(work);
        }
    }

    private static Sample launch(Config c, Path work, Path policy, Path gateway) throws Exception {
        Path state = work.resolve(c.label());
        ProcessBuilder pb = new ProcessBuilder(c.image().resolve("bin/supervisor").toString(), "run",
                "--policy", policy.toString(), "--gateway-config", gateway.toString(), "--listen", "127.0.0.1:0",
                "--admin-listen", "127.0.0.1:0", "--state-dir", state.toString(),
                "--audit-log", work.resolve(c.label() + "-audit.jsonl").toString());
        pb.environment().put("SUPERVISOR_JAVA_OPTS", c.javaOptions());
        pb.redirectError(work.resolve(c.label() + ".err").toFile());
        long busy = busyTicks();
        long t0 = System.nanoTime();
        Process p = pb.start();
        Thread.ofVirtual().start(() -> { // a supervisor that never prints its line is stopped: the read below ends
            try {
                if (!p.waitFor(LISTEN_LIMIT.toSeconds(), TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
            }
        });
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String line;
            do {
                line = out.readLine();
            } while (line != null && !line.startsWith("supervisor listening on "));
            double wall = (System.nanoTime() - t0) / 1e9;
            if (line == null) {
                throw new IOException(c.label() + ": no listening line; standard error: "
                        + Files.readString(work.resolve(c.label() + ".err")));
            }
            double cpu = p.toHandle().info().totalCpuDuration().map(d -> d.toNanos() / 1e9).orElse(Double.NaN);
            double other = busy < 0 ? 0 : (busyTicks() - busy) / 100.0 - cpu;
            return new Sample(wall, cpu, other);
        } finally {
            p.destroy();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
    }

    /** {@return the machine's busy time in clock ticks (USER_HZ, 1/100 s) from /proc/stat, or -1 off Linux} */
    private static long busyTicks() throws IOException {
        if (!Files.isReadable(PROC_STAT)) {
            return -1;
        }
        String[] f = Files.readAllLines(PROC_STAT).get(0).trim().split("\\s+");
        long busy = 0;
        for (int i = 1; i <= 7; i++) {
            busy += i == 4 || i == 5 ? 0 : Long.parseLong(f[i]); // idle and iowait are not busy
        }
        return busy;
    }

    private static void awaitIdle() throws Exception {
        if (!Files.isReadable(PROC_STAT)) {
            return;
        }
        int cpus = Runtime.getRuntime().availableProcessors();
        for (int i = 0; i < 300; i++) {
            long before = busyTicks();
            Thread.sleep(1000);
            if (busyTicks() - before <= 10L * cpus) { // at most 10 % of 1 s on every CPU
                return;
            }
        }
    }

    private static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    private static void delete(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private static void usage() {
        System.err.println("usage: java tests/bench/StartupTime.java [--runs N] [--fresh-ca] LABEL=IMAGE[|JAVA_OPTIONS]...");
        System.exit(2);
    }
}
