package dev.openshell.supervisor.grpc.auth;

import java.util.Optional;

/**
 * Where the supervisor gets the bearer token it sends on every call to a middleware service registered over TLS
 * (gRPC metadata {@code authorization: Bearer <token>}; RFC 0009 appendix "Extension Authentication"). Registrations
 * with {@code allow_insecure} never get one. Implementations are thread-safe and cheap: they are asked on every call.
 */
@FunctionalInterface
public interface CallerTokens {
    /** Sends no token on any call. */
    CallerTokens NONE = audience -> Optional.empty();

    /**
     * {@return the compact JWS to send to a service verifying {@code audience}, or empty to send none}
     *
     * @param audience the registration's exact audience
     * @throws RuntimeException if a token should be sent but cannot be made (the call then fails
     *     {@code UNAUTHENTICATED} locally and is never sent)
     */
    Optional<String> token(String audience);
}
