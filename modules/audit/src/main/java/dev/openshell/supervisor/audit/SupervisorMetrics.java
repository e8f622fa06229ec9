package dev.openshell.supervisor.audit;

import dev.openshell.middleware.spi.internal.StageResult;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The supervisor's metrics, kept with the Prometheus Java client and served in the Prometheus text format.
 *
 * <p>Labels carry only supervisor-owned identifiers (admission outcomes, config keys, binding IDs, platform codes,
 * registration names), never request content. Latencies are in seconds (Prometheus convention); sizes in bytes.
 * <ul>
 *   <li>{@code supervisor_requests_total{outcome}}: requests by admission outcome ({@code admitted},
 *       {@code denied_network}, {@code denied_ssrf}, {@code unresolvable_host}); a CONNECT tunnel counts once
 *       when refused, and each request inside an admitted tunnel counts as {@code admitted}. Requests refused for
 *       their framing never reach admission and are not counted here.</li>
 *   <li>{@code supervisor_stage_invocations_total{config_key,binding_id,decision}}: stage invocations by decision
 *       ({@code allowed}, {@code denied}, {@code failed_closed}, {@code bypassed}).</li>
 *   <li>{@code supervisor_stage_skipped_total{config_key,binding_id}}: stages not invoked because the request's
 *       body was empty and their binding declares {@code skip_empty_body} ({@code openshell/regex} on a GET); such a
 *       stage writes no per-stage event.</li>
 *   <li>{@code supervisor_process_identifications_total{outcome}}: client connections tied to their process through
 *       {@code /proc} ({@code identified}, {@code unidentified}, {@code integrity_violation}); once per connection,
 *       when binary-scoped admission or a stage that may be invoked needs it.</li>
 *   <li>{@code supervisor_stage_latency_seconds{config_key,binding_id}}: stage latency histogram.</li>
 *   <li>{@code supervisor_failures_total{code}}: stage and policy failures by platform code.</li>
 *   <li>{@code supervisor_bypasses_total{config_key,binding_id}}: {@code fail_open} bypasses.</li>
 *   <li>{@code supervisor_refused_total{reason}}: connections and requests refused by a resource limit
 *       ({@code connection_limit}, {@code client_connection_limit}, {@code request_head_timeout},
 *       {@code tls_handshake_timeout},
 *       {@code body_buffer_timeout}, {@code body_min_rate}, {@code body_buffer_busy},
 *       {@code client_body_buffer_limit}, {@code process_connection_limit},
 *       {@code middleware_admission_exhausted}): alert on any rise.</li>
 *   <li>{@code supervisor_requests_shed_total}: requests shed by the middleware work bound
 *       ({@code max_concurrent_middleware_work} evaluating and {@code max_queued_middleware_work} waiting), each
 *       answered 503 with {@code Retry-After}; also in {@code supervisor_refused_total} as
 *       {@code middleware_admission_exhausted}.</li>
 *   <li>{@code supervisor_body_buffer_wait_seconds}: how long buffered bodies waited for room in the body buffer
 *       budget (histogram; 0 when there was room at once).</li>
 *   <li>{@code supervisor_stage_stuck_total{binding_id}}: stages abandoned past their timeout while still running
 *       (their thread is stuck until they return).</li>
 *   <li>{@code supervisor_stage_stuck_threads{binding_id}}: stage threads stuck now, by binding.</li>
 *   <li>{@code supervisor_binding_unavailable{binding_id}}: 1 while a binding has as many stuck threads as
 *       {@code max_stuck_stages_per_binding} (its stages fail per {@code on_error} without running), else 0.</li>
 *   <li>{@code supervisor_refusals_total{category,code}}: every request or connection the supervisor refused, by
 *       category ({@code network_policy}, {@code ssrf}, {@code framing}, {@code limit}, {@code upstream},
 *       {@code credential}, {@code method}, {@code interception}, {@code internal}) and platform code
 *       ({@link RefusalAudit}).</li>
 *   <li>{@code supervisor_audit_dropped_total{reason}}: audit events lost ({@code overflow}: the writer fell behind
 *       by {@value JsonlAuditSink#MAX_QUEUED_BYTES} bytes; {@code write_error}; {@code closed}): alert on any.</li>
 *   <li>{@code supervisor_audit_suppressed_total{code}}: refusals not written one by one because their client
 *       was over the audit rate limit (each is in an aggregate event's {@code count}).</li>
 *   <li>{@code supervisor_response_scrubs_total{credential}}: responses from which an injected credential's value
 *       was removed (the upstream echoed it), by credential name: alert on any rise.</li>
 *   <li>{@code supervisor_l7_decisions_total{policy,protocol,decision}}: L7 policy decisions by network policy key,
 *       endpoint protocol and decision ({@code allow}, {@code audit}, {@code deny}); requests and WebSocket text
 *       messages, and re-evaluations after a body replacement.</li>
 *   <li>{@code supervisor_body_bytes_buffered_total}: bytes of request bodies buffered for chains.</li>
 *   <li>{@code supervisor_external_service_up{service}}: 1 when an external middleware service is reachable.</li>
 * </ul>
 */
public final class SupervisorMetrics {
    /** The refusal reason of a request shed by the middleware work bound. */
    public static final String SHED_REASON = "middleware_admission_exhausted";
    private static final double[] LATENCY_BOUNDS = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
        0.5, 1, 2.5, 5, 10, 30};

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Counter requests;
    private final Counter stageInvocations;
    private final Counter stageSkips;
    private final Counter identifications;
    private final Histogram stageLatency;
    private final Counter failures;
    private final Counter refused;
    private final Counter shed;
    private final Counter refusals;
    private final Counter auditSuppressed;
    private final Counter auditDropped;
    private final Counter bypasses;
    private final Counter bodyBytes;
    private final Histogram bodyWait;
    private final Counter scrubs;
    private final Counter l7Decisions;
    private final Gauge serviceUp;
    private final Counter stuck;
    private final Gauge stuckThreads;
    private final Gauge unavailable;
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();

    /** Creates the metrics in a registry of their own. */
    public SupervisorMetrics() {
        requests = Counter.builder().name("supervisor_requests_total").help("Requests by admission outcome")
                .labelNames("outcome").withoutExemplars().register(registry);
        stageInvocations = Counter.builder().name("supervisor_stage_invocations_total")
                .help("Middleware stage invocations by config key, binding ID and decision")
                .labelNames("config_key", "binding_id", "decision").withoutExemplars().register(registry);
        identifications = Counter.builder().name("supervisor_process_identifications_total")
                .help("Client connections tied to their process through /proc, by outcome").labelNames("outcome")
                .withoutExemplars().register(registry);
        stageSkips = Counter.builder().name("supervisor_stage_skipped_total")
                .help("Middleware stages not invoked on an empty body (their binding declares skip_empty_body), by "
                        + "config key and binding ID")
                .labelNames("config_key", "binding_id").withoutExemplars().register(registry);
        stageLatency = Histogram.builder().name("supervisor_stage_latency_seconds")
                .help("Middleware stage latency in seconds").labelNames("config_key", "binding_id")
                .classicOnly().classicUpperBounds(LATENCY_BOUNDS).withoutExemplars().register(registry);
        refused = Counter.builder().name("supervisor_refused_total")
                .help("Connections and requests refused by a resource limit, by reason").labelNames("reason")
                .withoutExemplars().register(registry);
        shed = Counter.builder().name("supervisor_requests_shed_total")
                .help("Requests shed by the middleware work bound (answered 503 with Retry-After)")
                .withoutExemplars().register(registry);
        refusals = Counter.builder().name("supervisor_refusals_total")
                .help("Requests and connections refused by the supervisor, by category and platform code")
                .labelNames("category", "code").withoutExemplars().register(registry);
        auditSuppressed = Counter.builder().name("supervisor_audit_suppressed_total")
                .help("Refusals over the audit rate limit, summarised in aggregate events instead of one each")
                .labelNames("code").withoutExemplars().register(registry);
        auditDropped = Counter.builder().name("supervisor_audit_dropped_total")
                .help("Audit events not written, by reason (overflow, write_error, closed)").labelNames("reason")
                .withoutExemplars().register(registry);
        failures = Counter.builder().name("supervisor_failures_total").help("Failures by platform code")
                .labelNames("code").withoutExemplars().register(registry);
        bypasses = Counter.builder().name("supervisor_bypasses_total")
                .help("fail_open bypasses by config key and binding ID").labelNames("config_key", "binding_id")
                .withoutExemplars().register(registry);
        bodyWait = Histogram.builder().name("supervisor_body_buffer_wait_seconds")
                .help("Wait of buffered request bodies for room in the body buffer budget, in seconds")
                .classicOnly().classicUpperBounds(LATENCY_BOUNDS).withoutExemplars().register(registry);
        bodyBytes = Counter.builder().name("supervisor_body_bytes_buffered_total")
                .help("Request body bytes buffered for middleware chains").withoutExemplars().register(registry);
        stuck = Counter.builder().name("supervisor_stage_stuck_total")
                .help("Stages abandoned past their timeout while still running, by binding ID").labelNames("binding_id")
                .withoutExemplars().register(registry);
        stuckThreads = Gauge.builder().name("supervisor_stage_stuck_threads")
                .help("Stage threads stuck past their timeout now, by binding ID").labelNames("binding_id")
                .withoutExemplars().register(registry);
        unavailable = Gauge.builder().name("supervisor_binding_unavailable")
                .help("1 while a binding is unavailable for its stuck stages, else 0").labelNames("binding_id")
                .withoutExemplars().register(registry);
        scrubs = Counter.builder().name("supervisor_response_scrubs_total")
                .help("Responses from which an injected credential value was removed, by credential name")
                .labelNames("credential").withoutExemplars().register(registry);
        l7Decisions = Counter.builder().name("supervisor_l7_decisions_total")
                .help("L7 policy decisions by network policy, protocol and decision")
                .labelNames("policy", "protocol", "decision").withoutExemplars().register(registry);
        serviceUp = Gauge.builder().name("supervisor_external_service_up")
                .help("1 when the external middleware service answers, else 0").labelNames("service")
                .withoutExemplars().register(registry);
    }

    /** Counts one request. @param outcome the admission outcome, a short lowercase word */
    public void request(String outcome) {
        requests.labelValues(outcome).inc();
    }

    /**
     * Records one stage invocation. Its code counts in {@code supervisor_failures_total} only when the stage failed
     * ({@code failed_closed} or {@code bypassed}); the reason code of an allow or a deny does not.
     *
     * @param stage what the stage did
     */
    public void stage(StageOutcome stage) {
        String decision = stage.result().name().toLowerCase(java.util.Locale.ROOT);
        stageInvocations.labelValues(stage.configKey(), stage.bindingId(), decision).inc();
        stageLatency.labelValues(stage.configKey(), stage.bindingId()).observe(stage.latencyNanos() / 1e9);
        if (stage.result() == StageResult.BYPASSED) {
            bypasses.labelValues(stage.configKey(), stage.bindingId()).inc();
        }
        // an allow or deny may carry the stage's own reason code (privacy_redacted): that is no failure
        if (stage.result() == StageResult.FAILED_CLOSED || stage.result() == StageResult.BYPASSED) {
            stage.platformCode().ifPresent(this::failure);
        }
    }

    /**
     * Counts one stage skipped on an empty body ({@code skip_empty_body}).
     *
     * @param configKey the stage's config key
     * @param bindingId the stage's binding ID
     */
    public void stageSkipped(String configKey, String bindingId) {
        stageSkips.labelValues(configKey, bindingId).inc();
    }

    /**
     * Counts one connection's process identification (a {@code /proc} search, once per connection).
     *
     * @param outcome {@code identified}, {@code unidentified} or {@code integrity_violation}
     */
    public void identification(String outcome) {
        identifications.labelValues(outcome).inc();
    }

    /**
     * Counts one refusal by a resource limit; {@code middleware_admission_exhausted} also counts one shed request.
     *
     * @param reason the refusal reason
     */
    public void refused(String reason) {
        refused.labelValues(reason).inc();
        if (reason.equals(SHED_REASON)) {
            shed.inc();
        }
    }

    /**
     * Counts one refusal.
     *
     * @param category the refusal category ({@link RefusalFacts#category()})
     * @param code the platform code
     */
    public void refusal(String category, String code) {
        refusals.labelValues(category, code).inc();
    }

    /** Counts one refusal not written one by one (rate limit). @param code the platform code */
    public void auditSuppressed(String code) {
        auditSuppressed.labelValues(code).inc();
    }

    /**
     * Counts one audit event the sink could not write.
     *
     * @param reason {@code overflow} (the writer was behind by its queue bound), {@code write_error} or
     *     {@code closed} ({@link JsonlAuditSink})
     */
    public void auditDropped(String reason) {
        auditDropped.labelValues(reason).inc();
    }

    /** Counts one failure. @param code the platform code */
    public void failure(String code) {
        failures.labelValues(code).inc();
    }

    /**
     * Records a stage abandoned past its timeout while running.
     *
     * @param bindingId the binding ID
     * @param stuckNow the binding's stuck threads now
     */
    public void stageStuck(String bindingId, int stuckNow) {
        stuck.labelValues(bindingId).inc();
        stuckThreads.labelValues(bindingId).set(stuckNow);
    }

    /**
     * Records a stuck stage that returned.
     *
     * @param bindingId the binding ID
     * @param stuckNow the binding's stuck threads now
     */
    public void stageReleased(String bindingId, int stuckNow) {
        stuckThreads.labelValues(bindingId).set(stuckNow);
    }

    /**
     * Sets whether a binding is available.
     *
     * @param bindingId the binding ID
     * @param available whether its stages run
     */
    public void bindingAvailable(String bindingId, boolean available) {
        unavailable.labelValues(bindingId).set(available ? 0 : 1);
    }

    /** Observes a body's wait for budget room. @param nanos the wait, in nanoseconds */
    public void bodyBufferWait(long nanos) {
        bodyWait.observe(nanos / 1e9);
    }

    /** Counts one response scrubbed of a credential's value. @param credential the credential name */
    public void responseScrubbed(String credential) {
        scrubs.labelValues(credential).inc();
    }

    /**
     * Counts one L7 policy decision.
     *
     * @param policy the network policy key
     * @param protocol the endpoint protocol
     * @param decision {@code allow}, {@code audit} or {@code deny}
     */
    public void l7Decision(String policy, String protocol, String decision) {
        l7Decisions.labelValues(policy, protocol, decision).inc();
    }

    /** Adds buffered body bytes. @param bytes the number of bytes */
    public void bodyBuffered(long bytes) {
        bodyBytes.inc(bytes);
    }

    /** Sets an external service's availability. @param service the registration name @param up whether it answers */
    public void serviceUp(String service, boolean up) {
        serviceUp.labelValues(service).set(up ? 1 : 0);
    }

    /** {@return the Prometheus text exposition content type} */
    public String contentType() {
        return writer.getContentType();
    }

    /**
     * Writes every metric in the Prometheus text format.
     *
     * @param out the stream
     * @throws IOException if writing fails
     */
    public void writeTo(OutputStream out) throws IOException {
        writer.write(out, registry.scrape());
    }

    /** {@return every metric in the Prometheus text format} */
    public String scrape() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            writeTo(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
