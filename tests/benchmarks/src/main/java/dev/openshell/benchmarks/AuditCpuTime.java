package dev.openshell.benchmarks;

import dev.openshell.middleware.spi.internal.StageResult;
import dev.openshell.supervisor.audit.OcsfEvents;
import dev.openshell.supervisor.audit.ProcessFacts;
import dev.openshell.supervisor.audit.RequestFacts;
import dev.openshell.supervisor.audit.StageOutcome;
import jakarta.json.JsonObject;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Clock;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The thread CPU time of {@link AuditEventBenchmark#renderEvents}'s work (the two events of a request whose
 * {@code openshell/regex} stage found a secret, rendered to their JSONL records) and of two L7 decision events (the
 * HTTP Activity events of an L7 request: the decision and the re-check), without and with the process behind the
 * connection. The minimum over 150 batches of 2,000 calls is printed: CPU time is what other load on a shared machine
 * disturbs least. Run it with either build's audit JAR first on the class path ({@code docs/BENCHMARKS.md}).
 */
public final class AuditCpuTime {
    private AuditCpuTime() {
    }

    /**
     * Prints one line per case.
     *
     * @param args none
     */
    public static void main(String[] args) {
        OcsfEvents events = new OcsfEvents("0.1.0", "bench-host", Clock.systemUTC());
        StageOutcome outcome = new StageOutcome("secrets", "openshell/regex", StageResult.ALLOWED, true, 123_456,
                Optional.empty(), true);
        OcsfEvents.L7Outcome l7 = new OcsfEvents.L7Outcome("allow", false, 200, "rest", "l7", "rest",
                Optional.of("POST /v1/**"), "rule matched", "/v1/chat/completions", Optional.empty(),
                Optional.empty());
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long sink = 0;
        for (String kind : new String[] {"stage + finding", "two L7 decisions"}) {
            for (boolean identified : new boolean[] {false, true}) {
                Optional<ProcessFacts> p = identified ? Optional.of(new ProcessFacts(48213, "/usr/local/bin/node",
                        "9f".repeat(32), List.of("/usr/bin/bash", "/usr/bin/tini"), 48200)) : Optional.empty();
                RequestFacts facts = new RequestFacts("7f3c2a9e-4b1d-4c8e-9a2f-0d6b5e1c3a7f", "POST", "https",
                        "api.openai.com", 443, Optional.of("llm_apis"), p);
                boolean stage = kind.startsWith("stage");
                long best = Long.MAX_VALUE;
                for (int r = 0; r < 150; r++) {
                    long start = threads.getCurrentThreadCpuTime();
                    for (int k = 0; k < 2000; k++) {
                        JsonObject a = stage ? events.httpActivity(facts, outcome) : events.l7Decision(facts, l7);
                        JsonObject b = stage ? events.middlewareFinding(facts, "secrets", "openshell/regex",
                                "secret.openai_api_key", 2) : events.l7Decision(facts, l7);
                        sink += System.identityHashCode(a) ^ System.identityHashCode(b);
                    }
                    best = Math.min(best, threads.getCurrentThreadCpuTime() - start);
                }
                System.out.printf(Locale.ROOT, "%s, %s: %.3f us CPU per request's two events (minimum of 150 "
                        + "batches of 2000)%n", kind, identified ? "identified" : "no process", best / 1e3 / 2000);
            }
        }
        if (sink == 42) {
            System.out.println();
        }
    }
}
