package dev.openshell.supervisor.grpc.tck;

import static dev.openshell.supervisor.grpc.tck.Tck.JSON_2K;
import static dev.openshell.supervisor.grpc.tck.Latency.millis;
import static dev.openshell.supervisor.grpc.tck.Latency.ms;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.supervisor.engine.chain.ChainRequest;
import dev.openshell.supervisor.engine.chain.ChainResult;
import dev.openshell.supervisor.engine.chain.ChainSelector;
import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.supervisor.engine.chain.Provenance;
import dev.openshell.supervisor.engine.chain.StageRecord;
import dev.openshell.supervisor.engine.chain.StageSpec;
import dev.openshell.supervisor.grpc.GrpcMiddlewareProvider;
import dev.openshell.middleware.spi.internal.RpcTimeout;
import dev.openshell.supervisor.grpc.ServiceProbe;
import dev.openshell.supervisor.grpc.StageFailureCodes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.LongAdder;

/**
 * The kit's timing checks, run after the evaluations: {@code latency.*} (samples against half the effective
 * timeout), {@code deadline.*} (cancellation and recovery) and {@code load}. They exercise the binding Describe set
 * up ({@link TckSubject}: the service, the binding, its limits), evaluate through the {@link Tck} and add their
 * checks to it.
 */
final class TimingChecks {
    private static final java.time.Duration MIN_DEADLINE = java.time.Duration.ofMillis(20);

    private final TckSubject subject;
    private final Tck tck;
    /** The fastest accepted evaluation of a body at max_body_bytes, in nanoseconds; 0 when none was accepted. */
    private long fastestMaxNanos;

    TimingChecks(TckSubject subject, Tck tck) {
        this.subject = subject;
        this.tck = tck;
    }

    /** {@code latency.*}: samples of an empty body, 2 KiB of JSON and a body at {@code max_body_bytes}. */
    void latencies() {
        latency("latency.empty_body", "empty_body", () -> Requests.plain(Body.empty(), tck.requestId()));
        int body2k = (int) Math.min(JSON_2K, subject.maxBody());
        latency("latency.json_2k", "json_2k", () -> Requests.plain(Requests.json(body2k), tck.requestId()));
        Body max = Requests.json((int) subject.maxBody());
        fastestMaxNanos = latency("latency.max_body", "max_body", () -> Requests.plain(max, tck.requestId()));
    }

    /** Runs the samples and adds the check; returns the fastest accepted latency in nanoseconds, 0 if none. */
    private long latency(String name, String kind, java.util.function.Supplier<ChainRequest> request) {
        long[] ok = new long[subject.options().samples()];
        int n = 0;
        Map<String, Integer> failures = new TreeMap<>();
        for (int i = 0; i < subject.options().samples(); i++) {
            Tck.Evaluated e = tck.evaluate(kind, request.get());
            if (e.accepted()) {
                ok[n++] = e.stage().latencyNanos();
            } else {
                failures.merge(e.code(), 1, Integer::sum);
            }
        }
        Latency l = Latency.of(Arrays.copyOf(ok, n));
        long half = subject.timeout().toNanos() / 2;
        String figure = n == 0 ? "no answer accepted" : "p50 %s, p99 %s (n=%d) of %s".formatted(ms(l.p50()),
                ms(l.p99()), n, RpcTimeout.format(subject.timeout()));
        Map<String, Number> m = new TreeMap<>();
        m.put("samples", subject.options().samples());
        m.put("failed", subject.options().samples() - n);
        m.put("timeout_ms", subject.timeout().toMillis());
        if (n > 0) {
            m.put("p50_ms", millis(l.p50()));
            m.put("p99_ms", millis(l.p99()));
        }
        if (!failures.isEmpty()) {
            tck.add(new Check(name, Check.Status.FAIL, (subject.options().samples() - n) + " of "
                    + subject.options().samples()
                    + " evaluations failed (a late answer is a failure, never a success): " + failures, figure, m));
        } else if (l.p99() > half) {
            tck.add(new Check(name, Check.Status.WARN, "p99 exceeds half of the effective timeout: under load some "
                    + "requests will fail with stage_timeout (raise the timeout, or advertise one in Describe)",
                    figure, m));
        } else {
            tck.add(new Check(name, Check.Status.PASS, "p99 within half of the effective timeout", figure, m));
        }
        return n == 0 ? 0 : Arrays.stream(ok, 0, n).min().getAsLong();
    }

    /** {@code deadline.*}: a call whose deadline passes is cancelled, and the service answers the next ones. */
    void deadline() {
        // a third of the fastest time of the largest body, so the deadline passes while the service works rather
        // than while its answer is on the way (a cancellation racing a finished answer tests the HTTP/2 stack's
        // closed-stream handling, which deadline.recovers reports); at least 20 ms so the call surely reaches the
        // service; at most half the effective timeout
        Duration d = Duration.ofNanos(Math.min(Math.max(fastestMaxNanos / 3, MIN_DEADLINE.toNanos()),
                subject.timeout().toNanos() / 2));
        HttpRequestEvaluation e = new HttpRequestEvaluation(subject.binding(), Phase.PRE_CREDENTIALS,
                dev.openshell.middleware.spi.RequestContext.of(tck.requestId()), subject.options().config(),
                new dev.openshell.middleware.spi.HttpRequestTarget("https", Requests.HOST, 443, "POST",
                        "/v1/chat/completions", ""), List.of(), Requests.json((int) subject.maxBody()));
        ServiceProbe.RawCall c = subject.probe().evaluate(e, subject.maxBody(), d, 0);
        String figure = "deadline " + ms(d.toNanos()) + ", " + c.status() + " after " + ms(c.latencyNanos());
        Map<String, Number> m = Map.of("deadline_ms", millis(d.toNanos()), "latency_ms", millis(c.latencyNanos()));
        switch (c.status()) {
            case "DEADLINE_EXCEEDED", "CANCELLED" -> tck.add(new Check("deadline.cancelled", Check.Status.PASS,
                    "a call whose deadline passed ends with " + c.status() + "; no late answer is used", figure, m));
            case "OK" -> tck.add(new Check("deadline.cancelled", Check.Status.WARN, "the service answered within the "
                    + "short deadline: cancellation was not exercised", figure, m));
            default -> tck.add(new Check("deadline.cancelled", Check.Status.WARN, "a short-deadline call ended with "
                    + "gRPC status " + c.status() + " instead of DEADLINE_EXCEEDED", figure, m));
        }
        int body2k = (int) Math.min(JSON_2K, subject.maxBody());
        Map<String, Integer> failures = new TreeMap<>();
        for (int i = 0; i < 3 && failures.isEmpty(); i++) {
            Tck.Evaluated after = tck.evaluate("after_deadline",
                    Requests.plain(Requests.json(body2k), tck.requestId()));
            if (!after.accepted()) {
                failures.merge(after.code(), 1, Integer::sum);
            }
        }
        tck.add(failures.isEmpty() ? Check.of("deadline.recovers", Check.Status.PASS, "the next evaluations after a "
                + "cancelled call are answered", "3 of 3")
                : Check.of("deadline.recovers", Check.Status.FAIL, "after a cancelled call the service fails the next "
                + "evaluation: " + failures + (failures.containsKey(StageFailureCodes.SERVICE_ERROR)
                || failures.containsKey(StageFailureCodes.SERVICE_UNAVAILABLE)
                ? " (right after a cancellation this is usually the server resetting the whole HTTP/2 connection, "
                + "e.g. with GOAWAY: every call in flight on it fails, and over TLS the supervisor marks the service "
                + "unavailable until its probe succeeds)"
                : " (stop work when the deadline passes; never hold a worker)"), ""));
    }

    /** {@code load}: {@code --load} concurrent evaluations for {@code --load-seconds}; at most 1 % may fail. */
    void load() throws InterruptedException {
        // load measures throughput, not recovery: give a service an earlier check made unavailable time to return
        for (int i = 0; i < 100 && subject.provider().state() == GrpcMiddlewareProvider.State.UNAVAILABLE; i++) {
            Thread.sleep(50);
        }
        int n = subject.options().load();
        int body2k = (int) Math.min(JSON_2K, subject.maxBody());
        Body body = Requests.json(body2k);
        StageSpec spec = new StageSpec(Tck.CONFIG_KEY, subject.binding(), subject.provider(), Provenance.THIRD_PARTY,
                10, OnError.FAIL_CLOSED, (int) subject.maxBody(), subject.timeout().toMillis(),
                subject.options().config(), h -> true);
        var chain = ChainSelector.of(List.of(spec)).select(Requests.HOST);
        LongAdder ok = new LongAdder();
        Map<String, LongAdder> errors = new ConcurrentHashMap<>();
        List<long[]> latencies = new ArrayList<>();
        long start = System.nanoTime();
        long end = start + subject.options().loadDuration().toNanos();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            // latencies kept per thread, bounded in all to about 200,000 samples; later ones are counted only
            int keep = Math.max(1000, 200_000 / n);
            for (int t = 0; t < n; t++) {
                long[] mine = new long[keep + 1];
                latencies.add(mine);
                pool.submit(() -> {
                    int i = 0;
                    while (System.nanoTime() < end) {
                        ChainResult r = subject.engine().run(chain, Requests.plain(body, tck.requestId()));
                        StageRecord s = r.stages().get(0);
                        if (s.failure().isPresent()) {
                            errors.computeIfAbsent(s.failure().get().code(), k -> new LongAdder()).increment();
                        } else {
                            if (i < keep) {
                                mine[i++] = s.latencyNanos();
                            }
                            ok.increment();
                        }
                    }
                    mine[keep] = i;
                    return null;
                });
            }
        }
        long took = System.nanoTime() - start;
        long total = ok.sum() + errors.values().stream().mapToLong(LongAdder::sum).sum();
        long failed = total - ok.sum();
        long[] all = latencies.stream().flatMapToLong(a -> Arrays.stream(a, 0, (int) a[a.length - 1])).toArray();
        Latency l = Latency.of(all);
        double perSecond = total * 1e9 / took;
        String figure = "%d concurrent: %.0f evaluations/s, %d of %d failed, p50 %s, p99 %s".formatted(n, perSecond,
                failed, total, ms(l.p50()), ms(l.p99()));
        Map<String, Number> m = new TreeMap<>(Map.of("concurrency", n, "evaluations", total, "failed", failed,
                "per_second", Math.round(perSecond), "p50_ms", millis(l.p50()), "p99_ms", millis(l.p99())));
        Map<String, Long> byCode = new TreeMap<>();
        errors.forEach((k, v) -> byCode.put(k, v.sum()));
        if (total > 0 && failed * 100 > total) {
            tck.add(new Check("load", Check.Status.FAIL, "more than 1% of evaluations failed under load: " + byCode,
                    figure, m));
        } else if (failed > 0) {
            tck.add(new Check("load", Check.Status.WARN, "some evaluations failed under load: " + byCode, figure, m));
        } else if (total == 0) {
            tck.add(new Check("load", Check.Status.FAIL, "no evaluation finished", figure, m));
        } else {
            tck.add(new Check("load", Check.Status.PASS, "no evaluation failed", figure, m));
        }
    }
}
