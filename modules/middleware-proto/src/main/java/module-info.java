/**
 * The {@code openshell.middleware.v1} wire contract (OpenShell RFC 0009, "The middleware contract"): message classes
 * and grpc-java stubs generated from {@code proto/openshell/middleware/v1/middleware.proto}. Used by the gRPC adapter
 * (client side) and by example middleware services (server side); never by the SPI.
 */
module dev.openshell.middleware.proto {
    requires transitive com.google.protobuf;
    requires transitive com.google.common;
    requires transitive io.grpc;
    requires transitive io.grpc.stub;
    requires transitive io.grpc.protobuf;

    exports dev.openshell.middleware.proto.v1;
}
