/**
 * External middleware over gRPC.
 *
 * <ul>
 *   <li>{@link dev.openshell.supervisor.grpc.ServiceRegistration}: one operator registration (RFC 0009,
 *       "Registration and delivery": name, gRPC endpoint, max body bytes, timeout, transport settings).</li>
 *   <li>{@link dev.openshell.supervisor.grpc.ExternalServices}: connects to every registration, calls
 *       {@code Describe}, validates, and yields {@link dev.openshell.supervisor.engine.RegisteredBinding} claims of
 *       kind {@link dev.openshell.supervisor.engine.ProviderOrigin.Kind#EXTERNAL}; re-probes services that become
 *       unavailable.</li>
 *   <li>{@link dev.openshell.supervisor.grpc.GrpcMiddlewareProvider}: the stage itself; every failure is a
 *       {@link dev.openshell.middleware.spi.MiddlewareException} whose code is one of
 *       {@link dev.openshell.supervisor.grpc.StageFailureCodes}.</li>
 * </ul>
 */
package dev.openshell.supervisor.grpc;
