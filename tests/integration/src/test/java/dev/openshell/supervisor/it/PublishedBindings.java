package dev.openshell.supervisor.it;

import openshell.published.v1.MiddlewareBinding;
import openshell.published.v1.SupervisorMiddlewareOperation;
import openshell.published.v1.SupervisorMiddlewarePhase;

/**
 * The manifest bindings the image tests' gRPC services advertise in {@code Describe}, built with the published proto
 * ({@code openshell.published.v1}); a test adds what else its binding needs (an ID, a timeout).
 */
final class PublishedBindings {
    private PublishedBindings() {
    }

    /** {@return an HTTP_REQUEST binding at PRE_CREDENTIALS taking bodies up to {@code maxPayloadBytes}} */
    static MiddlewareBinding.Builder request(long maxPayloadBytes) {
        return binding(SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_HTTP_REQUEST,
                SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS, maxPayloadBytes);
    }

    /** {@return an HTTP_RESPONSE binding at PRE_RETURN taking bodies up to {@code maxPayloadBytes}} */
    static MiddlewareBinding.Builder response(long maxPayloadBytes) {
        return binding(SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_HTTP_RESPONSE,
                SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_RETURN, maxPayloadBytes);
    }

    private static MiddlewareBinding.Builder binding(SupervisorMiddlewareOperation operation,
                                                     SupervisorMiddlewarePhase phase, long maxPayloadBytes) {
        return MiddlewareBinding.newBuilder().setOperation(operation).setPhase(phase)
                .setMaxPayloadBytes(maxPayloadBytes);
    }
}
