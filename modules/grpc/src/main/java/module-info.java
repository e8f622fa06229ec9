/**
 * External middleware stages over gRPC (OpenShell RFC 0009, "Registration and delivery" and "The middleware
 * contract"): a {@link dev.openshell.middleware.spi.MiddlewareProvider} backed by a grpc-java channel to an
 * operator-run service speaking {@code openshell.middleware.v1}, and the registry that connects to every registered
 * service at start-up, validates its manifest and produces binding claims for the engine's provider registry.
 *
 * <p>The transport is grpc-java's Netty client ({@code grpc-netty-shaded}): it enforces per-call deadlines and moves
 * multi-MiB messages quickly. No grpc, Netty or protobuf type appears in this module's API.
 */
module dev.openshell.supervisor.grpc {
    requires transitive dev.openshell.supervisor.engine;
    requires dev.openshell.middleware.proto;
    requires io.grpc.netty.shaded;
    requires com.nimbusds.jose.jwt;

    exports dev.openshell.supervisor.grpc;
    exports dev.openshell.supervisor.grpc.auth;
    exports dev.openshell.supervisor.grpc.tck;
}
