package dev.openshell.supervisor.grpc;

import dev.openshell.supervisor.grpc.auth.CallerTokens;
import io.grpc.CallCredentials;
import io.grpc.Metadata;
import io.grpc.SecurityLevel;
import io.grpc.Status;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;

/**
 * The extension token on every call of a TLS channel (RFC 0009 appendix "Extension Authentication"): gRPC metadata
 * {@code authorization: Bearer <JWS>} for the registration's audience. Installed as the channel's call credentials,
 * so every RPC the channel carries gets it (unary and streaming alike, including methods added later). A token is
 * never attached to a connection that is not both private and integrity-protected: such a call fails
 * {@code UNAUTHENTICATED} locally. Nothing here logs the token.
 */
final class BearerCredentials extends CallCredentials {
    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization",
            Metadata.ASCII_STRING_MARSHALLER);

    private final CallerTokens tokens;
    private final String audience;

    BearerCredentials(CallerTokens tokens, String audience) {
        this.tokens = Objects.requireNonNull(tokens, "tokens");
        this.audience = Objects.requireNonNull(audience, "audience");
    }

    @Override
    public void applyRequestMetadata(RequestInfo info, Executor appExecutor, MetadataApplier applier) {
        if (info.getSecurityLevel() != SecurityLevel.PRIVACY_AND_INTEGRITY) {
            applier.fail(Status.UNAUTHENTICATED.withDescription("no extension token over a connection without TLS"));
            return;
        }
        Optional<String> token;
        try {
            token = tokens.token(audience);
        } catch (RuntimeException e) {
            applier.fail(Status.UNAUTHENTICATED.withDescription("cannot mint the extension token: "
                    + Transport.oneLine(e)));
            return;
        }
        Metadata headers = new Metadata();
        token.ifPresent(t -> headers.put(AUTHORIZATION, "Bearer " + t));
        applier.apply(headers);
    }

    @Override
    public String toString() {
        return "BearerCredentials[" + audience + "]";
    }
}
