package dev.openshell.benchmarks;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.MiddlewareProvider;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import jakarta.json.JsonObject;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * {@link RegexCpuTime} for two or more builds of {@code openshell/regex} in one JVM, interleaved: each build's JAR is
 * loaded by its own class loader, and every round times one batch of each build in turn, so load from other
 * processes on a shared machine falls on all builds alike. Prints, per body, the minimum thread CPU time per
 * {@code RegexProvider.evaluate} call (default config) over the rounds (30 rounds; batches of about 10 MiB of body, at
 * most 1,000 calls: 1,000 at 2 KiB, 10 at 1 MiB), after 5 untimed rounds over every body and build. Sizes: 2 KiB and
 * 1 MiB, or those the system property {@code sizes} lists ({@code -Dsizes=1024,65536,4194304}). Bodies:
 * {@link RegexScanBenchmark#prose} and {@link RegexScanBenchmark#text} ({@code text/plain}) and
 * {@link RegexChainBenchmark}'s chat completion ({@code application/json}); every JIT profile holds all three, as a
 * proxy's does. With the system property {@code bodies} (comma-separated files, such as the load harnesses' bodies
 * from {@code tests/data/bench-peers/conf/make_bodies.py}), those files instead, each as {@code application/json}.
 * Arguments: the regex JARs, then the re2j JAR last:
 * <pre>
 * cp=$(tr ':' '\n' &lt; tests/benchmarks/target/benchmark.classpath | grep -v '/regex-\|re2j' | paste -sd:)
 * java -cp "$cp:tests/benchmarks/target/benchmarks-0.1.0-SNAPSHOT.jar" dev.openshell.benchmarks.RegexCpuTimeAB \
 *     base/regex.jar plugins/regex/target/regex-0.1.0-SNAPSHOT.jar \
 *     ~/.m2/repository/com/google/re2j/re2j/1.8/re2j-1.8.jar
 * </pre>
 * The regex and re2j JARs must not also be on the class path. A regex JAR may also hold the classes of
 * {@code dev.openshell.middleware.spi.internal} its build was compiled with (the one home of the dropped sequences the
 * stage reads text without, for one): each build then runs with its own, else with the class path's.
 */
public final class RegexCpuTimeAB {
    private static final String PROVIDER = "dev.openshell.builtin.regex.RegexProvider";
    /**
     * The SPI's internal helpers the regex stage reads text with ({@code DroppedSequences}, ...): loaded from a regex
     * JAR that holds them too, so each build runs with its own.
     */
    private static final String SPI_INTERNAL = "dev.openshell.middleware.spi.internal.";
    /** Rounds over every body and build before any is timed, so every JIT profile holds all three bodies. */
    private static final int WARM_UP_ROUNDS = 5;

    private RegexCpuTimeAB() {
    }

    /**
     * Prints one line per body and size.
     *
     * @param args the regex JARs to compare, then the re2j JAR
     * @throws Exception if a JAR cannot be loaded
     */
    public static void main(String[] args) throws Exception {
        URL re2j = Path.of(args[args.length - 1]).toUri().toURL();
        List<MiddlewareProvider> builds = new ArrayList<>();
        for (int a = 0; a < args.length - 1; a++) {
            builds.add(load(Path.of(args[a]).toUri().toURL(), re2j));
        }
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        List<String> names = new ArrayList<>();
        List<HttpRequestEvaluation> bodies = new ArrayList<>();
        String files = System.getProperty("bodies");
        if (files != null) {
            for (String file : files.split(",")) {
                names.add(Path.of(file).getFileName() + ":");
                bodies.add(evaluation(java.nio.file.Files.readAllBytes(Path.of(file))));
            }
        } else {
            for (String kind : new String[] {"prose", "code", "chat"}) {
                for (int size : sizes()) {
                    names.add(kind + ", " + size + " bytes:");
                    bodies.add(evaluation(kind, size));
                }
            }
        }
        for (int round = 0; round < WARM_UP_ROUNDS; round++) {
            for (HttpRequestEvaluation e : bodies) {
                for (MiddlewareProvider build : builds) {
                    run(build, e, batch(e));
                }
            }
        }
        for (int k = 0; k < bodies.size(); k++) {
            HttpRequestEvaluation e = bodies.get(k);
            int batch = batch(e);
            long[] best = new long[builds.size()];
            Arrays.fill(best, Long.MAX_VALUE);
            for (int round = 0; round < 30; round++) {
                for (int b = 0; b < builds.size(); b++) {
                    long start = threads.getCurrentThreadCpuTime();
                    run(builds.get(b), e, batch);
                    best[b] = Math.min(best[b], threads.getCurrentThreadCpuTime() - start);
                }
            }
            StringBuilder line = new StringBuilder(names.get(k));
            for (int b = 0; b < builds.size(); b++) {
                line.append(String.format(Locale.ROOT, " %s %.2f us", Path.of(args[b]).getFileName(),
                        best[b] / 1e3 / batch));
            }
            System.out.println(line);
        }
    }

    /** {@return a request with the bytes of a file as its {@code application/json} body} */
    private static HttpRequestEvaluation evaluation(byte[] json) {
        HttpRequestTarget target = new HttpRequestTarget("https", "api.example.com", 443, "POST", "/v1", "");
        return new HttpRequestEvaluation(new BindingId("openshell/regex"), Phase.PRE_CREDENTIALS,
                RequestContext.of("cpu"), JsonObject.EMPTY_JSON_OBJECT, target,
                List.of(new HttpHeader("content-type", "application/json")), Body.ofOwned(json));
    }

    /** {@return a request of one body kind and size, as {@code RegexCpuTime} sends it} */
    private static HttpRequestEvaluation evaluation(String kind, int size) {
        String text = switch (kind) {
            case "prose" -> RegexScanBenchmark.prose(size);
            case "code" -> RegexScanBenchmark.text(size);
            default -> RegexChainBenchmark.body(size, false);
        };
        String type = kind.equals("chat") ? "application/json" : "text/plain; charset=utf-8";
        HttpRequestTarget target = new HttpRequestTarget("https", "api.example.com", 443, "POST", "/v1", "");
        return new HttpRequestEvaluation(new BindingId("openshell/regex"), Phase.PRE_CREDENTIALS,
                RequestContext.of("cpu"), JsonObject.EMPTY_JSON_OBJECT, target,
                List.of(new HttpHeader("content-type", type)), Body.ofUtf8(text));
    }

    /**
     * {@return the body sizes in bytes: the system property {@code sizes} (comma-separated, such as
     * {@code -Dsizes=1024,65536,4194304}), 2 KiB and 1 MiB without it}
     */
    private static int[] sizes() {
        return Arrays.stream(System.getProperty("sizes", "2048,1048576").split(","))
                .mapToInt(v -> Integer.parseInt(v.strip())).toArray();
    }

    /** {@return the calls per timed batch: about 10 MiB of body, at most 1,000 calls (1,000 at 2 KiB, 10 at 1 MiB)} */
    private static int batch(HttpRequestEvaluation e) {
        return (int) Math.max(1, Math.min(1000, (10L << 20) / Math.max(1, e.body().size())));
    }

    /**
     * Evaluates one request {@code calls} times; throws if the stage denied it (the default config redacts, so a
     * body file with a key, as the load harnesses send, is allowed with its key redacted).
     */
    private static void run(MiddlewareProvider build, HttpRequestEvaluation e, int calls) {
        for (int k = 0; k < calls; k++) {
            if (build.evaluate(e).decision() != Decision.ALLOW) {
                throw new IllegalStateException("the stage denied the benchmark body");
            }
        }
    }

    /** {@return the provider of one regex JAR, its classes and re2j's loaded by a loader of their own} */
    static MiddlewareProvider load(URL jar, URL re2j) throws ReflectiveOperationException {
        ClassLoader parent = RegexCpuTimeAB.class.getClassLoader();
        URLClassLoader loader = new URLClassLoader(new URL[] {jar, re2j}, parent) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                boolean internal = name.startsWith(SPI_INTERNAL);
                if (!name.startsWith("dev.openshell.builtin.regex.") && !name.startsWith("com.google.re2j.")
                        && !internal) {
                    return super.loadClass(name, resolve);
                }
                synchronized (getClassLoadingLock(name)) {
                    Class<?> c = findLoadedClass(name);
                    if (c != null) {
                        return c;
                    }
                    try {
                        return findClass(name);
                    } catch (ClassNotFoundException e) {
                        if (internal) { // a regex JAR without the SPI's internal helpers: the class path's
                            return super.loadClass(name, resolve);
                        }
                        throw e;
                    }
                }
            }
        };
        return (MiddlewareProvider) loader.loadClass(PROVIDER).getConstructor().newInstance();
    }
}
