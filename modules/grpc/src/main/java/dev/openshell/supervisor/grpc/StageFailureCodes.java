package dev.openshell.supervisor.grpc;

/**
 * The stable codes of {@link dev.openshell.middleware.spi.MiddlewareException}s thrown by
 * {@link GrpcMiddlewareProvider}. Every failure of an external stage carries exactly one of them; the chain engine
 * then applies the stage's {@code on_error} (RFC 0009, "Terminology": Failure policy; "The middleware contract").
 *
 * <p>Codes match {@code [a-z][a-z0-9_]*} and are safe to log and to put in audit events. Messages that accompany them
 * name the registration, the binding ID and the gRPC status code, never text the service sent (status descriptions,
 * reasons) and never request content.
 */
public final class StageFailureCodes {
    /**
     * The service cannot be reached: gRPC {@code UNAVAILABLE} (connection refused, reset, TLS handshake failed), or
     * the service was marked unavailable by an earlier call and has not recovered yet (calls then fail at once,
     * without a network round trip, while the background probe retries).
     */
    public static final String SERVICE_UNAVAILABLE = "service_unavailable";
    /** The call did not finish within its deadline (gRPC {@code DEADLINE_EXCEEDED}). */
    public static final String SERVICE_TIMEOUT = "service_timeout";
    /**
     * Any other non-OK gRPC status, from the service or from the client (for example {@code RESOURCE_EXHAUSTED}
     * when a reply exceeds the client's message limit of {@code EnvelopeLimits.MIN_GRPC_MESSAGE_BYTES}, or
     * {@code INTERNAL} when a reply does not parse). The message names the status code, never the service's status
     * description.
     */
    public static final String SERVICE_ERROR = "service_error";
    /** The result's decision is {@code DECISION_UNSPECIFIED} (0) or a number this supervisor does not know. */
    public static final String INVALID_DECISION = "invalid_decision";
    /** A header mutation sets neither {@code write} nor {@code remove}. */
    public static final String INVALID_HEADER_MUTATION = "invalid_header_mutation";
    /**
     * The replacement body is larger than the binding's limit (the registration's {@code max_body_bytes}) or the
     * 4 MiB platform maximum.
     */
    public static final String RESULT_BODY_TOO_LARGE = "result_body_too_large";
    /** The evaluation names a binding ID that this service does not own. */
    public static final String UNKNOWN_BINDING = "unknown_binding";
    /**
     * A value of the evaluation cannot be put on the wire: a config number that is not finite, a process ID above
     * 2^32 - 1, or an input over an envelope limit (RFC 0009, "The middleware contract").
     */
    public static final String INPUT_NOT_REPRESENTABLE = "input_not_representable";
    /**
     * After an outage, the service came back with a manifest that no longer matches what start-up accepted (a
     * binding vanished or changed operation, phase, capability or timeout); its stages keep failing until the
     * supervisor restarts and registers it again.
     */
    public static final String SERVICE_MANIFEST_CHANGED = "service_manifest_changed";
    /** The provider was closed (the runtime generation that owned it was retired). */
    public static final String PROVIDER_CLOSED = "provider_closed";
    /** Anything else that went wrong inside the adapter; never expected, always a stage failure. */
    public static final String ADAPTER_FAILURE = "adapter_failure";

    private StageFailureCodes() {
    }
}
