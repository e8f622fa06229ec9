/**
 * Audit: OCSF 1.x events for middleware decisions and configuration (RFC 0009, "Audit and logging"), written as
 * JSON lines, and the supervisor's Prometheus metrics. Events carry safe summaries only: config keys, binding IDs, decisions, latency, platform codes and
 * counts; never request content, matched values, header values, query strings or secrets.
 */
module dev.openshell.supervisor.audit {
    requires transitive jakarta.json;
    requires dev.openshell.middleware.spi;
    requires com.github.benmanes.caffeine;
    requires io.prometheus.metrics.core;
    requires io.prometheus.metrics.model;
    requires io.prometheus.writer.text;

    exports dev.openshell.supervisor.audit;
}
