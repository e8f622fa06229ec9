package dev.openshell.supervisor.policy.gateway;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * {@code [openshell.supervisor.tls]}: trust for upstream connections and the CA that signs the certificates the
 * proxy presents to the sandbox when it terminates TLS.
 *
 * @param upstreamCaBundle extra PEM trust roots for upstream servers, added to the system's
 * @param caCert the operator's PEM CA certificate for TLS termination; given with {@code caKey}, or the supervisor
 *     generates its own CA
 * @param caKey the PEM private key of {@code caCert}
 */
public record TlsSettings(Optional<Path> upstreamCaBundle, Optional<Path> caCert, Optional<Path> caKey) {
    /**
     * Checks the components.
     *
     * @throws IllegalArgumentException if only one of {@code caCert} and {@code caKey} is given
     */
    public TlsSettings {
        Objects.requireNonNull(upstreamCaBundle, "upstreamCaBundle");
        Objects.requireNonNull(caCert, "caCert");
        Objects.requireNonNull(caKey, "caKey");
        if (caCert.isPresent() != caKey.isPresent()) {
            throw new IllegalArgumentException("the CA certificate and key go together");
        }
    }

    /** {@return no extra trust roots, a generated CA} */
    public static TlsSettings defaults() {
        return new TlsSettings(Optional.empty(), Optional.empty(), Optional.empty());
    }
}
