/**
 * The running supervisor: turns a sandbox policy and a gateway configuration into runtime generations (policy plus
 * provider registry, swapped as one), implements the proxy's admission, middleware hook and credential step over the
 * chain engine, emits audit events and metrics, and serves the admin listener ({@code /metrics},
 * {@code /health/live}, {@code /health/ready}).
 */
module dev.openshell.supervisor.runtime {
    requires transitive dev.openshell.supervisor.policy;
    requires transitive dev.openshell.supervisor.engine;
    requires transitive dev.openshell.supervisor.audit;
    requires transitive dev.openshell.supervisor.proxy;
    requires transitive dev.openshell.supervisor.l7;
    requires dev.openshell.supervisor.grpc;
    requires dev.openshell.supervisor.identity;
    requires io.helidon.webserver;
    requires io.helidon.http;
    requires io.helidon.common;
    requires java.net.http;

    exports dev.openshell.supervisor.runtime;
}
