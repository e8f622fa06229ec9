package dev.openshell.supervisor.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.supervisor.audit.AuditSink;
import dev.openshell.supervisor.audit.OcsfEvents;
import dev.openshell.supervisor.audit.RefusalAudit;
import dev.openshell.supervisor.audit.SupervisorMetrics;
import dev.openshell.supervisor.proxy.ClientConnection;
import dev.openshell.supervisor.proxy.ExchangeRecord;
import dev.openshell.supervisor.proxy.ProxyRefusal;
import jakarta.json.JsonObject;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * What the runtime makes of a request shed by the proxy's middleware work bound (issue 41, item 3): each shed request
 * counts once in {@code supervisor_requests_shed_total} and in {@code supervisor_refused_total}, and is written as an
 * OCSF refusal event (HTTP Activity, Denied, code {@code middleware_admission_exhausted}, status 503) through the
 * refusal audit. The proxy's side (503 with {@code Retry-After}, one report per shed request) is
 * {@code LoadSheddingTest}.
 */
class ShedAuditTest {
    /** A sink that keeps every event. */
    private static final class Recorder implements AuditSink {
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

    @Test
    void eachShedRequestIsAnEventAndAMetricIncrement() {
        Recorder sink = new Recorder();
        SupervisorMetrics metrics = new SupervisorMetrics();
        OcsfEvents events = new OcsfEvents("0.1.0", "host", Clock.systemUTC());
        AuditStep step = new AuditStep(new ExchangeAudit(events, sink, metrics,
                new RefusalAudit(events, sink, metrics, Clock.systemUTC())));
        ClientConnection client = new ClientConnection(Optional.of(new InetSocketAddress("127.0.0.1", 40000)),
                Optional.of(new InetSocketAddress("127.0.0.1", 3128)));
        for (int i = 1; i <= 3; i++) {
            step.record(Optional.empty(), new ExchangeRecord.Refused(new ProxyRefusal(ProxyRefusal.Kind.LIMIT, 503,
                    "middleware_admission_exhausted", Optional.empty(), "the proxy is evaluating as many requests as"
                    + " it may and its queue is full; retry shortly", client, Optional.of("POST"),
                    Optional.of(new ProxyRefusal.Destination("http", "api.example.test", 80)),
                    Optional.of("r-" + i))));
            String text = metrics.scrape();
            assertTrue(text.contains("supervisor_requests_shed_total " + i + ".0"), text);
            assertTrue(text.contains("supervisor_refused_total{reason=\"middleware_admission_exhausted\"} " + i
                    + ".0"), text);
            assertEquals(i, sink.events.size(), "one event per shed request");
            JsonObject e = sink.events.get(i - 1);
            assertEquals(4002, e.getInt("class_uid"));
            assertEquals("Denied", e.getString("action"));
            assertEquals(503, e.getJsonObject("http_response").getInt("code"));
            JsonObject os = e.getJsonObject("unmapped").getJsonObject("openshell");
            assertEquals("middleware_admission_exhausted", os.getString("code"));
            assertEquals("limit", os.getString("category"));
        }
    }
}
