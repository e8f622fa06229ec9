package dev.openshell.supervisor.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Refusal auditing (issue 19, item 1): one OCSF HTTP Activity event per refusal, valid against the schema, carrying
 * nothing of the request but its destination; rate-limited per client and code, with every refusal over the limit
 * counted in a metric and in an aggregate event, so a flood neither floods the log nor disappears.
 */
class RefusalAuditTest {
    private static final OcsfSchema SCHEMA = new OcsfSchema();

    /** An audit sink that keeps every event. */
    static final class Recorder implements AuditSink {
        final List<JsonObject> events = new CopyOnWriteArrayList<>();

        @Override
        public long emit(JsonObject event) {
            events.add(event);
            return events.size();
        }

        @Override
        public void close() {
        }
    }

    private final JsonlAuditSinkTest.ManualClock clock = new JsonlAuditSinkTest.ManualClock();
    private final Recorder sink = new Recorder();
    private final SupervisorMetrics metrics = new SupervisorMetrics();
    private final OcsfEvents events = new OcsfEvents("0.1.0", "host", clock);

    private static RefusalFacts refusal(String client, String code) {
        return new RefusalFacts(code.equals("policy_denied") ? "network_policy" : "framing", code, Optional.empty(),
                code.equals("policy_denied") ? 403 : 400, "a supervisor-owned reason", Optional.of(client),
                Optional.empty());
    }

    static List<RefusalFacts> everyKind() {
        RequestFacts get = new RequestFacts("r-1", "GET", "https", "api.example.com", 443, Optional.empty());
        RequestFacts connect = new RequestFacts("-", "CONNECT", "http", "169.254.169.254", 80, Optional.empty());
        return List.of(
                new RefusalFacts("network_policy", "policy_denied", Optional.empty(), 403,
                        "no network policy allows this host and port", Optional.of("127.0.0.1"), Optional.of(get)),
                new RefusalFacts("ssrf", "ssrf_blocked", Optional.empty(), 403,
                        "the destination resolves to a link-local address", Optional.of("::1"), Optional.of(connect)),
                new RefusalFacts("framing", "invalid_header", Optional.empty(), 400, "a malformed header field",
                        Optional.of("127.0.0.1"), Optional.empty()),
                new RefusalFacts("limit", "client_connection_limit", Optional.empty(), 0,
                        "closed unserved", Optional.of("127.0.0.1"), Optional.empty()),
                new RefusalFacts("limit", "request_head_timeout", Optional.empty(), 408,
                        "the request head was not complete in time", Optional.empty(), Optional.empty()),
                new RefusalFacts("upstream", "upstream_tls_failed", Optional.of("hostname_mismatch"), 502,
                        "TLS with the upstream failed: its certificate does not name the requested host",
                        Optional.of("127.0.0.1"), Optional.of(get)),
                new RefusalFacts("credential", "credential_host_not_allowed", Optional.empty(), 403,
                        "credential OPENAI_KEY is for *.openai.com", Optional.of("127.0.0.1"), Optional.of(get)),
                new RefusalFacts("method", "method_not_allowed", Optional.empty(), 405, "TRACE answered 405",
                        Optional.of("127.0.0.1"), Optional.of(new RequestFacts("r-2", "PROPFIND", "http", "h", 80,
                        Optional.empty()))));
    }

    @ParameterizedTest
    @MethodSource("everyKind")
    void everyRefusalIsOneSchemaValidDeniedEvent(RefusalFacts r) {
        RefusalAudit audit = new RefusalAudit(events, sink, metrics, clock);
        audit.refused(r);
        assertEquals(1, sink.events.size());
        JsonObject e = sink.events.get(0);
        SCHEMA.validate("http_activity", e);
        assertEquals(4002, e.getInt("class_uid"));
        assertEquals("Denied", e.getString("action"));
        JsonObject os = e.getJsonObject("unmapped").getJsonObject("openshell");
        assertEquals(r.code(), os.getString("code"));
        assertEquals(r.category(), os.getString("category"));
        assertEquals("deny", os.getString("decision"));
        assertEquals(r.cause().orElse(null), os.containsKey("cause") ? os.getString("cause") : null);
        assertEquals(r.status() == 0, !e.containsKey("http_response"), "no response for an unanswered close");
        if (r.request().isEmpty()) {
            assertEquals(0, e.getInt("activity_id"), "Unknown activity before the method was read");
            assertFalse(e.containsKey("dst_endpoint") || e.containsKey("http_request")
                    && !e.getJsonObject("http_request").isEmpty(), e.toString());
        }
        assertFalse(e.containsKey("count"), "a single refusal is not an aggregate");
        assertTrue(metrics.scrape().contains("supervisor_refusals_total{category=\"" + r.category() + "\",code=\""
                + r.code() + "\"} 1.0"), metrics.scrape());
    }

    @Test
    void anUnknownMethodIsNotNamed() {
        RefusalFacts r = everyKind().get(7);
        JsonObject e = events.refusal(r, 1, 0, false);
        assertEquals(99, e.getInt("activity_id"));
        assertFalse(e.getJsonObject("http_request").containsKey("http_method"), e.toString());
    }

    @Test
    void aFloodIsWrittenUpToTheBurstThenSummarisedWhenTheWindowEnds() {
        RefusalAudit audit = new RefusalAudit(events, sink, metrics, clock, 3, Duration.ofSeconds(60));
        for (int i = 0; i < 1000; i++) {
            audit.refused(refusal("10.0.0.7", "invalid_header"));
        }
        assertEquals(3, sink.events.size(), "the burst only");
        assertTrue(metrics.scrape().contains("supervisor_audit_suppressed_total{code=\"invalid_header\"} 997.0"),
                metrics.scrape());
        // another client, and another code of the same client, have limits of their own
        audit.refused(refusal("10.0.0.8", "invalid_header"));
        audit.refused(refusal("10.0.0.7", "policy_denied"));
        assertEquals(5, sink.events.size());

        audit.flush();
        assertEquals(5, sink.events.size(), "the window has not ended");
        clock.now = clock.now.plusMillis(60_000);
        audit.flush();
        assertEquals(6, sink.events.size(), "one aggregate event for the suppressed refusals");
        JsonObject aggregate = sink.events.get(5);
        SCHEMA.validate("http_activity", aggregate);
        assertEquals(997, aggregate.getInt("count"));
        assertTrue(aggregate.getJsonObject("unmapped").getJsonObject("openshell").getBoolean("aggregated"));
        assertEquals("10.0.0.7", aggregate.getJsonObject("src_endpoint").getString("ip"));
        assertTrue(aggregate.getJsonNumber("start_time").longValue() < aggregate.getJsonNumber("end_time")
                .longValue());

        // the next window starts afresh
        audit.refused(refusal("10.0.0.7", "invalid_header"));
        assertEquals(7, sink.events.size());
    }

    @Test
    void theNextRefusalAfterTheWindowWritesThePendingAggregateFirst() {
        RefusalAudit audit = new RefusalAudit(events, sink, metrics, clock, 1, Duration.ofSeconds(10));
        audit.refused(refusal("10.0.0.7", "invalid_header"));
        audit.refused(refusal("10.0.0.7", "invalid_header"));
        clock.now = clock.now.plusMillis(10_000);
        audit.refused(refusal("10.0.0.7", "invalid_header"));
        assertEquals(3, sink.events.size());
        assertEquals(1, sink.events.get(1).getInt("count"));
        assertFalse(sink.events.get(2).containsKey("count"));
    }

    @Test
    void closeWritesEveryPendingAggregate() {
        RefusalAudit audit = new RefusalAudit(events, sink, metrics, clock, 1, Duration.ofSeconds(60));
        audit.refused(refusal("10.0.0.7", "invalid_header"));
        audit.refused(refusal("10.0.0.7", "invalid_header"));
        audit.close();
        assertEquals(2, sink.events.size());
        assertEquals(1, sink.events.get(1).getInt("count"));
    }

    @Test
    void manyClientAddressesShareOneKeyPastTheCap() {
        RefusalAudit audit = new RefusalAudit(events, sink, metrics, clock, 1, Duration.ofSeconds(60));
        for (int i = 0; i < RefusalAudit.MAX_KEYS + 500; i++) {
            audit.refused(refusal("10.1." + (i / 256) + "." + (i % 256), "invalid_header"));
        }
        assertEquals(RefusalAudit.MAX_KEYS + 1, sink.events.size(), "one per tracked client, one for the rest");
        audit.close();
        assertEquals(499, sink.events.get(sink.events.size() - 1).getInt("count"));
    }

    /** Whatever the interleaving of clients, every refusal is written or counted in an aggregate, exactly once. */
    @Property(tries = 50)
    void nothingIsLostOrCountedTwice(@ForAll @IntRange(min = 1, max = 400) int n,
                                     @ForAll @IntRange(min = 1, max = 5) int clients,
                                     @ForAll @IntRange(min = 1, max = 4) int burst,
                                     @ForAll @IntRange(min = 0, max = 3) int windows) {
        Recorder out = new Recorder();
        RefusalAudit audit = new RefusalAudit(events, out, new SupervisorMetrics(), clock, burst,
                Duration.ofSeconds(1));
        for (int i = 0; i < n; i++) {
            audit.refused(refusal("10.0.0." + (i % clients), "invalid_header"));
            if (windows > 0 && i % (n / windows + 1) == 0) {
                clock.now = clock.now.plusMillis(1000);
            }
        }
        audit.close();
        long total = out.events.stream().mapToLong(e -> e.containsKey("count") ? e.getInt("count") : 1).sum();
        assertEquals(n, total);
    }
}
