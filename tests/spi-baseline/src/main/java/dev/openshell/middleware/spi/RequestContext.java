package dev.openshell.middleware.spi;

import java.util.Objects;
import java.util.Optional;

/**
 * Audit context for one evaluation (RFC 0009, "The middleware contract": {@code RequestContext}); at most
 * {@link EnvelopeLimits#MAX_CONTEXT_BYTES} (4 KiB) encoded. Middleware treats it as context, never as identity.
 *
 * @param requestId the supervisor's ID for this request, unique per process
 * @param sandboxId the sandbox ID, possibly empty
 * @param sandboxName the sandbox's display name, possibly empty
 * @param workspace the workspace, possibly empty
 * @param originatingProcess the process that opened the connection, when known
 */
public record RequestContext(String requestId, String sandboxId, String sandboxName, String workspace,
                             Optional<OriginatingProcess> originatingProcess) {
    /** @throws NullPointerException if any part is {@code null} */
    public RequestContext {
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(sandboxId, "sandboxId");
        Objects.requireNonNull(sandboxName, "sandboxName");
        Objects.requireNonNull(workspace, "workspace");
        Objects.requireNonNull(originatingProcess, "originatingProcess");
    }

    /** {@return a context with only a request ID} @param requestId the request ID */
    public static RequestContext of(String requestId) {
        return new RequestContext(requestId, "", "", "", Optional.empty());
    }
}
