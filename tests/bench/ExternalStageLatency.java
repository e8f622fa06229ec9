/*
 * Added latency of one external middleware stage: GrpcMiddlewareProvider.evaluate() against Privacy Guard running
 * as a separate process on loopback. Not a test: a bounded measurement loop, run by external-stage-latency.sh.
 *
 * Usage: java --module-path jlink/target/modules --add-modules dev.openshell.supervisor.grpc,org.eclipse.parsson \
 *        tests/bench/ExternalStageLatency.java PORT [CASE_PREFIX [MAX_CALLS]]
 * CASE_PREFIX (optional): run only the cases whose name starts with it, e.g. "2 KiB" (a shorter run); "" for all.
 * MAX_CALLS (optional): measure at most this many calls per case (default: each case's own count).
 */

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.MiddlewareProvider;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.supervisor.grpc.ExternalServices;
import dev.openshell.supervisor.grpc.RegistryListener;
import dev.openshell.supervisor.grpc.RetryPolicy;
import dev.openshell.supervisor.grpc.ServiceRegistration;
import jakarta.json.JsonObject;
import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

public class ExternalStageLatency {
    record Case(String name, Body body, int warmup, int count) {
    }

    public static void main(String[] args) {
        int port = Integer.parseInt(args[0]);
        String only = args.length > 1 ? args[1] : "";
        int maxCalls = args.length > 2 ? Integer.parseInt(args[2]) : Integer.MAX_VALUE;
        if (maxCalls < 1) {
            throw new IllegalArgumentException("MAX_CALLS must be at least 1");
        }
        long timeBudgetNanos = Duration.ofSeconds(30).toNanos();
        ServiceRegistration reg = ServiceRegistration.builder("privacy-guard", URI.create("http://127.0.0.1:" + port),
                4L << 20).allowInsecure(true).timeout(Duration.ofSeconds(5)).build();
        try (ExternalServices services = ExternalServices.connect(List.of(reg), RegistryListener.NONE,
                RetryPolicy.DEFAULT)) {
            if (!services.failures().isEmpty()) {
                throw new IllegalStateException(services.failures().toString());
            }
            MiddlewareProvider p = services.claims()
                    .detect(c -> c.binding().operation() == dev.openshell.middleware.spi.Operation.HTTP_REQUEST).provider();
            List<Case> cases = List.of(
                    new Case("2 KiB chat JSON, nothing to redact", chat(2 * 1024, false), 2000, 3000),
                    new Case("2 KiB chat JSON, e-mails redacted", chat(2 * 1024, true), 2000, 3000),
                    new Case("1 MiB chat JSON, nothing to redact", chat(1024 * 1024, false), 30, 300),
                    new Case("1 MiB chat JSON, e-mails redacted", chat(1024 * 1024, true), 30, 300),
                    new Case("4 MiB chat JSON, e-mails redacted", chat(4 * 1024 * 1024 - 16, true), 10, 100),
                    new Case("2 KiB non-JSON (transport floor)", Body.ofUtf8("x".repeat(2 * 1024)), 2000, 3000),
                    new Case("1 MiB non-JSON (transport floor)", Body.ofUtf8("x".repeat(1024 * 1024)), 30, 300))
                    .stream().filter(c -> c.name().startsWith(only)).toList();
            if (cases.isEmpty()) {
                throw new IllegalArgumentException("no case name starts with '" + only + "'");
            }
            System.out.printf("%-40s %8s %10s %10s %10s%n", "case (one stage, loopback)", "n", "p50 ms", "p99 ms",
                    "mean ms");
            List<HttpRequestEvaluation> evaluations = cases.stream().map(c -> new HttpRequestEvaluation(
                    new BindingId("examples/privacy-guard"), Phase.PRE_CREDENTIALS, RequestContext.of("bench"),
                    JsonObject.EMPTY_JSON_OBJECT,
                    new HttpRequestTarget("https", "api.openai.com", 443, "POST", "/v1/chat/completions", ""),
                    List.of(new HttpHeader("content-type", "application/json")), c.body())).toList();
            // warm both JVMs (JIT) on every case first, so the order of the cases does not matter
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < cases.size(); i++) {
                    for (int j = 0; j < cases.get(i).warmup(); j++) {
                        p.evaluate(evaluations.get(i));
                    }
                }
            }
            for (int i = 0; i < cases.size(); i++) {
                Case c = cases.get(i);
                HttpRequestEvaluation e = evaluations.get(i);
                int count = Math.min(c.count(), maxCalls);
                long[] samples = new long[count];
                int n = 0;
                long start = System.nanoTime();
                while (n < count && System.nanoTime() - start < timeBudgetNanos) {
                    long t0 = System.nanoTime();
                    p.evaluate(e);
                    samples[n++] = System.nanoTime() - t0;
                }
                long[] s = Arrays.copyOf(samples, n);
                Arrays.sort(s);
                double mean = Arrays.stream(s).average().orElse(0);
                System.out.printf("%-40s %8d %10.2f %10.2f %10.2f%n", c.name(), n, ms(pct(s, 0.50)), ms(pct(s, 0.99)),
                        mean / 1e6);
            }
        }
    }

    static Body chat(int size, boolean withAddresses) {
        String head = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"";
        String tail = "\"}]}";
        String unit = withAddresses ? "Please summarise the quarterly report and send it to finance@corp.example. "
                : "Please summarise the quarterly report and send it to the finance team today. ";
        StringBuilder b = new StringBuilder(size).append(head);
        while (b.length() + tail.length() < size) {
            b.append(unit, 0, Math.min(unit.length(), size - tail.length() - b.length()));
        }
        return Body.ofUtf8(b.append(tail).toString());
    }

    static long pct(long[] sorted, double q) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(q * sorted.length) - 1)];
    }

    static double ms(long nanos) {
        return nanos / 1e6;
    }
}
