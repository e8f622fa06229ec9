package dev.openshell.benchmarks;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.MiddlewareProvider;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import jakarta.json.JsonObject;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.List;
import java.util.Locale;

/**
 * The thread CPU time of one {@code openshell/regex} evaluation (default config) on clean bodies of 2 KiB and 1 MiB:
 * {@link RegexChainBenchmark}'s chat completion ({@code application/json}) and {@link RegexScanBenchmark}'s prose and
 * code ({@code text/plain}). The minimum over 150 batches (2,000 calls at 2 KiB, 20 at 1 MiB) is printed: CPU time
 * is what other load on a shared machine disturbs least, where JMH's wall-clock scores vary too much to compare two
 * builds. Run it with either build's regex JAR on the class path (issue 37, {@code docs/BENCHMARKS.md}):
 * <pre>
 * java -cp "$(cat tests/benchmarks/target/benchmark.classpath):tests/benchmarks/target/benchmarks-*.jar" \
 *     dev.openshell.benchmarks.RegexCpuTime
 * </pre>
 */
public final class RegexCpuTime {
    private RegexCpuTime() {
    }

    /**
     * Prints one line per body.
     *
     * @param args none
     * @throws ReflectiveOperationException if the built-in cannot be loaded
     */
    public static void main(String[] args) throws ReflectiveOperationException {
        MiddlewareProvider regex = RegexChainBenchmark.loadRegex();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        HttpRequestTarget target = new HttpRequestTarget("https", "api.example.com", 443, "POST", "/v1", "");
        for (String kind : new String[] {"chat JSON", "code text"}) {
            for (int size : new int[] {2048, 1 << 20}) {
                boolean json = kind.equals("chat JSON");
                String text = json ? RegexChainBenchmark.body(size, false) : RegexScanBenchmark.text(size);
                HttpRequestEvaluation e = new HttpRequestEvaluation(new BindingId("openshell/regex"),
                        Phase.PRE_CREDENTIALS, RequestContext.of("cpu"), JsonObject.EMPTY_JSON_OBJECT, target,
                        List.of(new HttpHeader("content-type", json ? "application/json" : "text/plain; charset=utf-8")),
                        Body.ofUtf8(text));
                int batch = size > 4096 ? 20 : 2000;
                long best = Long.MAX_VALUE;
                for (int r = 0; r < 150; r++) {
                    long start = threads.getCurrentThreadCpuTime();
                    for (int k = 0; k < batch; k++) {
                        regex.evaluate(e);
                    }
                    best = Math.min(best, threads.getCurrentThreadCpuTime() - start);
                }
                System.out.printf(Locale.ROOT, "%s, %d bytes: %.2f us CPU per call (minimum of 150 batches of %d)%n",
                        kind, size, best / 1e3 / batch, batch);
            }
        }
    }
}
