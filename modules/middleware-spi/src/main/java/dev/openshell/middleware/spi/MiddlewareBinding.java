package dev.openshell.middleware.spi;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * One hook a provider implements: a binding ID plus the operation and phase it runs at (RFC 0009, "The middleware
 * contract": {@code MiddlewareBinding}).
 *
 * @param id the stable binding ID policies select with {@code middleware:}
 * @param operation the operation hooked
 * @param phase the phase hooked; only restricted built-ins may use {@link Phase#POST_CREDENTIALS}
 * @param maxBodyBytes the largest body, in bytes, the binding accepts: 0 to {@link EnvelopeLimits#MAX_BODY_BYTES}
 * @param timeout the binding's own RPC timeout, which overrides the registration's ({@link RpcTimeout}: 10 ms to
 *     30 s in whole milliseconds); empty when the binding does not advertise one
 */
public record MiddlewareBinding(BindingId id, Operation operation, Phase phase, long maxBodyBytes,
                                Optional<Duration> timeout) {
    /**
     * Checks ranges.
     *
     * @throws IllegalArgumentException if {@code maxBodyBytes} or {@code timeout} is out of range
     * @throws NullPointerException if any argument is {@code null}
     */
    public MiddlewareBinding {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(operation, "operation");
        Objects.requireNonNull(phase, "phase");
        Objects.requireNonNull(timeout, "timeout");
        if (maxBodyBytes < 0 || maxBodyBytes > EnvelopeLimits.MAX_BODY_BYTES) {
            throw new IllegalArgumentException("binding '%s': max body bytes %d is outside 0..%d"
                    .formatted(id, maxBodyBytes, EnvelopeLimits.MAX_BODY_BYTES));
        }
        timeout.ifPresent(t -> {
            String problem = RpcTimeout.problem(t);
            if (problem != null) {
                throw new IllegalArgumentException("binding '%s': invalid timeout %s: %s".formatted(id, t, problem));
            }
        });
    }

    /**
     * {@return an {@code HTTP_REQUEST/PRE_CREDENTIALS} binding without its own timeout}
     *
     * @param id a valid binding ID
     * @param maxBodyBytes the largest body accepted, in bytes
     * @throws IllegalArgumentException if the ID or the size is invalid
     */
    public static MiddlewareBinding httpRequest(String id, long maxBodyBytes) {
        return new MiddlewareBinding(new BindingId(id), Operation.HTTP_REQUEST, Phase.PRE_CREDENTIALS, maxBodyBytes,
                Optional.empty());
    }
}
