package dev.openshell.supervisor.grpc.tck;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.supervisor.engine.chain.ChainEngine;
import dev.openshell.supervisor.grpc.GrpcMiddlewareProvider;
import dev.openshell.supervisor.grpc.ServiceProbe;
import java.time.Duration;

/**
 * The binding under test once Describe and ValidateConfig have set it up: what the timing checks exercise.
 *
 * @param options what to check (samples, load, config)
 * @param probe the raw calls to the service
 * @param provider the adapter the supervisor would use
 * @param engine the chain engine that runs the binding as one stage
 * @param binding the binding checked
 * @param maxBody the largest body sent, bytes ({@code max_payload_bytes}, at most 4 MiB)
 * @param timeout the effective stage timeout
 */
record TckSubject(TckOptions options, ServiceProbe probe, GrpcMiddlewareProvider provider, ChainEngine engine,
                  BindingId binding, long maxBody, Duration timeout) {
}
