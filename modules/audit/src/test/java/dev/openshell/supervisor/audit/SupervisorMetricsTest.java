package dev.openshell.supervisor.audit;

import dev.openshell.middleware.spi.internal.StageResult;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class SupervisorMetricsTest {
    @Test
    void countsAndHistogramsAppearInTheTextFormat() {
        SupervisorMetrics m = new SupervisorMetrics();
        m.request("admitted");
        m.request("admitted");
        m.request("denied_network");
        m.stage(new StageOutcome("secrets", "openshell/regex", StageResult.ALLOWED, true, 2_000_000,
                Optional.empty(), true));
        m.stage(new StageOutcome("trace", "acme/trace", StageResult.BYPASSED, false, 600_000_000,
                Optional.of("middleware_timeout"), false));
        m.stage(new StageOutcome("privacy", "examples/privacy-guard", StageResult.ALLOWED, true, 1_000_000,
                Optional.of("privacy_redacted"), true));
        m.stage(new StageOutcome("strict", "openshell/regex", StageResult.DENIED, false, 1_000_000,
                Optional.of("secret_detected"), true));
        m.bodyBuffered(2048);
        m.refused("client_connection_limit");
        m.refused("client_connection_limit");
        m.refused("request_head_timeout");
        m.serviceUp("anonymizer", false);
        m.stageStuck("acme/spin", 1);
        m.stageStuck("acme/spin", 2);
        m.bindingAvailable("acme/spin", false);
        m.stageReleased("acme/spin", 1);
        m.bodyBufferWait(3_000_000);
        m.l7Decision("github_api", "rest", "deny");
        String text = m.scrape();
        assertTrue(text.contains("supervisor_l7_decisions_total{decision=\"deny\",policy=\"github_api\",protocol="
                + "\"rest\"} 1.0"), text);
        assertTrue(text.contains("supervisor_requests_total{outcome=\"admitted\"} 2.0"), text);
        assertTrue(text.contains("supervisor_requests_total{outcome=\"denied_network\"} 1.0"), text);
        assertTrue(text.contains("supervisor_stage_invocations_total{binding_id=\"openshell/regex\",config_key="
                + "\"secrets\",decision=\"allowed\"} 1.0"), text);
        assertTrue(text.contains("supervisor_stage_latency_seconds_bucket{binding_id=\"openshell/regex\","
                + "config_key=\"secrets\",le=\"0.0025\"} 1"), text);
        assertTrue(text.contains("supervisor_stage_latency_seconds_bucket{binding_id=\"acme/trace\","
                + "config_key=\"trace\",le=\"0.5\"} 0"), text);
        assertTrue(text.contains("supervisor_bypasses_total{binding_id=\"acme/trace\",config_key=\"trace\"} 1.0"),
                text);
        assertTrue(text.contains("supervisor_failures_total{code=\"middleware_timeout\"} 1.0"), text);
        assertFalse(text.contains("privacy_redacted") || text.contains("secret_detected"),
                "a reason code of an allow or a deny is no failure: " + text);
        assertTrue(text.contains("supervisor_body_bytes_buffered_total 2048.0"), text);
        assertTrue(text.contains("supervisor_refused_total{reason=\"client_connection_limit\"} 2.0"), text);
        assertTrue(text.contains("supervisor_refused_total{reason=\"request_head_timeout\"} 1.0"), text);
        assertTrue(text.contains("supervisor_external_service_up{service=\"anonymizer\"} 0.0"), text);
        assertTrue(text.contains("supervisor_stage_stuck_total{binding_id=\"acme/spin\"} 2.0"), text);
        assertTrue(text.contains("supervisor_stage_stuck_threads{binding_id=\"acme/spin\"} 1.0"), text);
        assertTrue(text.contains("supervisor_binding_unavailable{binding_id=\"acme/spin\"} 1.0"), text);
        assertTrue(text.contains("supervisor_body_buffer_wait_seconds_bucket{le=\"0.005\"} 1"), text);
        assertTrue(text.contains("supervisor_body_buffer_wait_seconds_bucket{le=\"0.0025\"} 0"), text);
    }
}
