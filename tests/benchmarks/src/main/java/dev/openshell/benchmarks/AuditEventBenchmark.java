package dev.openshell.benchmarks;

import dev.openshell.middleware.spi.internal.StageResult;
import dev.openshell.supervisor.audit.OcsfEvents;
import dev.openshell.supervisor.audit.ProcessFacts;
import dev.openshell.supervisor.audit.RequestFacts;
import dev.openshell.supervisor.audit.StageOutcome;
import dev.openshell.supervisor.audit.JsonlAuditSink;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The audit events of one request through {@code openshell/regex} that found a secret (issue 14, item 6: the audit
 * JSON writer, hand-written against Parsson's streaming {@code JsonGenerator}): one HTTP Activity (class 4002) and one
 * Detection Finding (class 2004), each rendered to its JSONL record as the sink writes it. Average time per request's
 * events, in nanoseconds. The same class runs against either writer (the public API did not change), so an A/B
 * alternates runs on two class paths; see {@code docs/BENCHMARKS.md}. {@link #requestEvents} reads each event as text
 * (its {@code toString}) and encodes that again; {@link #renderEvents} makes the two events as the sink receives them
 * (rendered to their JSONL record, not read back); {@link #emitEvents} also queues both on a {@link JsonlAuditSink}
 * whose writer thread writes to a discarding stream.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class AuditEventBenchmark {
    private final OcsfEvents events = new OcsfEvents("0.1.0", "bench-host", Clock.systemUTC());
    /**
     * {@code none}: no process known (identity off); {@code identified}: the process behind the connection, with its
     * lineage, as every request carries it under {@code process_identity: enforce}.
     */
    @Param({"none", "identified"})
    public String process;
    private RequestFacts facts;
    private JsonlAuditSink sink;

    @Setup
    public void setUp() {
        sink = JsonlAuditSink.toStream(OutputStream.nullOutputStream());
        Optional<ProcessFacts> p = process.equals("none") ? Optional.empty()
                : Optional.of(new ProcessFacts(48213, "/usr/local/bin/node", "9f".repeat(32),
                        List.of("/usr/bin/bash", "/usr/bin/tini"), 48200));
        facts = new RequestFacts("7f3c2a9e-4b1d-4c8e-9a2f-0d6b5e1c3a7f", "POST", "https", "api.openai.com", 443,
                Optional.of("llm_apis"), p);
    }
    private final StageOutcome outcome = new StageOutcome("secrets", "openshell/regex", StageResult.ALLOWED,
            true, 123_456, Optional.empty(), true);

    /** {@return the records' total length, so nothing is optimised away} */
    @Benchmark
    public int requestEvents() {
        byte[] activity = (events.httpActivity(facts, outcome).toString() + "\n").getBytes(StandardCharsets.UTF_8);
        byte[] finding = (events.middlewareFinding(facts, "secrets", "openshell/regex", "secret.openai_api_key", 2)
                .toString() + "\n").getBytes(StandardCharsets.UTF_8);
        return activity.length + finding.length;
    }

    /** Closes the sink. */
    @TearDown
    public void tearDown() {
        sink.close();
    }

    /** The two events as the sink receives them: rendered to their records, never read back as text. */
    @Benchmark
    public void renderEvents(Blackhole bh) {
        bh.consume(events.httpActivity(facts, outcome));
        bh.consume(events.middlewareFinding(facts, "secrets", "openshell/regex", "secret.openai_api_key", 2));
    }

    /** {@return the second event's sequence number} The two events rendered and queued on the sink. */
    @Benchmark
    public long emitEvents() {
        sink.emit(events.httpActivity(facts, outcome));
        return sink.emit(events.middlewareFinding(facts, "secrets", "openshell/regex", "secret.openai_api_key", 2));
    }
}
