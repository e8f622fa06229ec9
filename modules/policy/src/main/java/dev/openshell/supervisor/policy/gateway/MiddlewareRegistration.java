package dev.openshell.supervisor.policy.gateway;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * One {@code [[openshell.supervisor.middleware]]} entry: an external middleware service (RFC 0009, "Registration
 * and delivery"). The name is diagnostic only; policies select the binding IDs the service reports through
 * {@code Describe}.
 *
 * @param name the diagnostic name, unique in the file
 * @param endpoint the service's address
 * @param maxBodyBytes the largest body, in bytes, sent to any binding of this service: 0 to 4 MiB, and no more than
 *     any binding advertises ({@link GatewayConfigLoader#checkManifest})
 * @param timeout the RPC timeout for {@code Describe}, and for the other calls unless the binding advertises its own;
 *     10 ms to 30 s, 500 ms when not written
 * @param allowInsecure whether plaintext {@code http://} was explicitly allowed ({@code allow_insecure = true})
 * @param tlsCaBundle PEM trust roots for the service's certificate, instead of the system's
 * @param tlsClientCert PEM client certificate chain for mutual TLS (given together with the key)
 * @param tlsClientKey PEM private key for mutual TLS
 * @param audience the exact audience of the extension token sent on every call over TLS; empty for OpenShell's
 *     default {@code urn:openshell:extension:middleware:<name>}; unused for plaintext registrations
 */
public record MiddlewareRegistration(String name, GrpcEndpoint endpoint, long maxBodyBytes, Duration timeout,
                                     boolean allowInsecure, Optional<Path> tlsCaBundle, Optional<Path> tlsClientCert,
                                     Optional<Path> tlsClientKey, Optional<String> audience) {
    /**
     * Checks the components.
     *
     * @throws IllegalArgumentException if a plaintext endpoint is not explicitly allowed, TLS files are given for a
     *     plaintext endpoint, or only one of client certificate and key is given
     * @throws NullPointerException if any component is {@code null}
     */
    public MiddlewareRegistration {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(tlsCaBundle, "tlsCaBundle");
        Objects.requireNonNull(tlsClientCert, "tlsClientCert");
        Objects.requireNonNull(tlsClientKey, "tlsClientKey");
        Objects.requireNonNull(audience, "audience");
        if (endpoint.plaintext() && !allowInsecure) {
            throw new IllegalArgumentException("a plaintext endpoint needs allow_insecure");
        }
        if (endpoint.plaintext() && (tlsCaBundle.isPresent() || tlsClientCert.isPresent())) {
            throw new IllegalArgumentException("TLS settings need an https endpoint");
        }
        if (tlsClientCert.isPresent() != tlsClientKey.isPresent()) {
            throw new IllegalArgumentException("client certificate and key go together");
        }
    }

    /**
     * {@return whether the service is reached in plaintext} Such a registration is a phase 1 research-preview
     * exception: the supervisor must warn prominently and record an audit event (RFC 0009, "Registration and
     * delivery").
     */
    public boolean insecure() {
        return endpoint.plaintext();
    }

    /** {@return whether the supervisor presents a client certificate (mutual TLS)} */
    public boolean mutualTls() {
        return tlsClientCert.isPresent();
    }
}
