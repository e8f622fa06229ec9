package dev.openshell.benchmarks;

import dev.openshell.supervisor.audit.OcsfEvents;
import dev.openshell.supervisor.audit.RequestFacts;
import dev.openshell.supervisor.audit.StageOutcome;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * The audit events of one request through {@code openshell/regex} that found a secret (issue 14, item 6: the audit
 * JSON writer, hand-written against Parsson's streaming {@code JsonGenerator}): one HTTP Activity (class 4002) and one
 * Detection Finding (class 2004), each rendered to its JSONL record as the sink writes it. Average time per request's
 * events, in nanoseconds. The same class runs against either writer (the public API did not change), so an A/B
 * alternates runs on two class paths; see {@code docs/BENCHMARKS.md}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class AuditEventBenchmark {
    private final OcsfEvents events = new OcsfEvents("0.1.0", "bench-host", Clock.systemUTC());
    private final RequestFacts facts = new RequestFacts("7f3c2a9e-4b1d-4c8e-9a2f-0d6b5e1c3a7f", "POST", "https",
            "api.openai.com", 443, Optional.of("llm_apis"));
    private final StageOutcome outcome = new StageOutcome("secrets", "openshell/regex", StageOutcome.Result.ALLOWED,
            true, 123_456, Optional.empty(), true);

    /** {@return the records' total length, so nothing is optimised away} */
    @Benchmark
    public int requestEvents() {
        byte[] activity = (events.httpActivity(facts, outcome).toString() + "\n").getBytes(StandardCharsets.UTF_8);
        byte[] finding = (events.middlewareFinding(facts, "secrets", "openshell/regex", "secret.openai_api_key", 2)
                .toString() + "\n").getBytes(StandardCharsets.UTF_8);
        return activity.length + finding.length;
    }
}
