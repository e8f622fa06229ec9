package dev.openshell.supervisor.grpc;

import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.internal.RpcTimeout;
import dev.openshell.middleware.spi.internal.Syntax;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * One external middleware service the operator registered (RFC 0009, "Registration and delivery": gateway
 * configuration under {@code openshell.supervisor.middleware}). Immutable; every rule below is checked by the
 * constructor, so an instance is always a valid registration.
 *
 * <h2>Fields and rules</h2>
 * <ul>
 *   <li>{@code name}: the diagnostic name that identifies the connection in logs: OpenShell's rule,
 *       {@link Syntax#registrationNameProblem(String)} (1 to 128 bytes of {@code A-Z a-z 0-9 . _ - /}, not starting
 *       with {@code openshell/}). It is not a policy key, except for a service written for the published contract
 *       whose binding has no ID: then the name serves as that binding's ID (see {@link ExternalServices}).</li>
 *   <li>{@code endpoint}: {@code https://host[:port]} (TLS; port defaults to 443) or {@code http://host[:port]}
 *       (plaintext; port defaults to 80), with no user info, path (other than {@code /}), query or fragment.
 *       Plaintext is accepted only with {@code allowInsecure} (RFC: "OpenShell rejects plaintext without that
 *       opt-in").</li>
 *   <li>{@code maxBodyBytes}: the operator's body limit for every binding of the service, 0 to
 *       {@link EnvelopeLimits#MAX_BODY_BYTES} (4 MiB) bytes. {@link ExternalServices} also checks it against each
 *       binding's advertised capability and rejects, never clamps.</li>
 *   <li>{@code timeout}: the service RPC timeout, 10 ms to 30 s in whole milliseconds (default
 *       {@link RpcTimeout#DEFAULT}, 500 ms). It is the deadline of {@code Describe}, and of {@code ValidateConfig}
 *       and {@code EvaluateHttpRequest} for bindings that do not advertise their own.</li>
 *   <li>{@code tls}: CA bundle and client certificate for {@code https://} endpoints; must be empty for
 *       {@code http://} ones.</li>
 *   <li>{@code audience}: the exact {@code aud} of the extension token sent on every call over TLS (RFC 0009
 *       appendix "Extension Authentication"); 1 to 256 characters, no control characters; default
 *       {@code urn:openshell:extension:middleware:<name>} ({@link #defaultAudience}). Unused for {@code http://}
 *       endpoints, which get no token.</li>
 * </ul>
 *
 * @param name the diagnostic registration name
 * @param endpoint the gRPC endpoint
 * @param maxBodyBytes the body limit in bytes for every binding of the service
 * @param timeout the service RPC timeout
 * @param allowInsecure whether a plaintext {@code http://} endpoint is accepted (RFC phase 1 only)
 * @param tls transport security settings for {@code https://}
 * @param audience the extension token's exact audience
 */
public record ServiceRegistration(String name, URI endpoint, long maxBodyBytes, Duration timeout,
                                  boolean allowInsecure, Tls tls, String audience) {
    /** The default audience's prefix, followed by the registration name (OpenShell's default). */
    public static final String AUDIENCE_PREFIX = "urn:openshell:extension:middleware:";

    /**
     * Transport security for an {@code https://} endpoint. Files are PEM: certificates as
     * {@code -----BEGIN CERTIFICATE-----} blocks, the key as unencrypted PKCS#8 ({@code -----BEGIN PRIVATE KEY-----}).
     * Files are read when the registry connects, not here.
     *
     * @param caBundle CA certificates that sign the service's certificate; empty means the JDK's default trust store
     * @param clientCertificate the supervisor's certificate chain for mutual TLS; present exactly when
     *     {@code clientKey} is
     * @param clientKey the private key of {@code clientCertificate}
     */
    public record Tls(Optional<Path> caBundle, Optional<Path> clientCertificate, Optional<Path> clientKey) {
        private static final Tls NONE = new Tls(Optional.empty(), Optional.empty(), Optional.empty());

        /**
         * @throws NullPointerException if any part is {@code null}
         * @throws IllegalArgumentException if only one of the client certificate and key is given
         */
        public Tls {
            Objects.requireNonNull(caBundle, "caBundle");
            Objects.requireNonNull(clientCertificate, "clientCertificate");
            Objects.requireNonNull(clientKey, "clientKey");
            if (clientCertificate.isPresent() != clientKey.isPresent()) {
                throw new IllegalArgumentException("mutual TLS needs both a client certificate and its private key");
            }
        }

        /** {@return no CA bundle (the JDK's trust store) and no client certificate} */
        public static Tls none() {
            return NONE;
        }

        /** {@return whether nothing is configured} */
        public boolean isEmpty() {
            return caBundle.isEmpty() && clientCertificate.isEmpty();
        }

        /** {@return whether a client certificate is configured (mutual TLS)} */
        public boolean mutual() {
            return clientCertificate.isPresent();
        }
    }

    /**
     * Checks every rule.
     *
     * @throws NullPointerException if any part is {@code null}
     * @throws IllegalArgumentException naming the registration and the broken rule
     */
    public ServiceRegistration {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(audience, "audience");
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(tls, "tls");
        String nameProblem = Syntax.registrationNameProblem(name);
        if (nameProblem != null) {
            throw new IllegalArgumentException("middleware registration name " + Syntax.quote(name) + ": "
                    + nameProblem);
        }
        String who = "middleware registration '" + name + "': ";
        String endpointProblem = endpointProblem(endpoint);
        if (endpointProblem != null) {
            throw new IllegalArgumentException(who + "grpc_endpoint " + endpointProblem);
        }
        boolean plaintext = endpoint.getScheme().equalsIgnoreCase("http");
        if (plaintext && !allowInsecure) {
            throw new IllegalArgumentException(who + "plaintext endpoint " + endpoint + " needs allow_insecure = true"
                    + " (RFC 0009 phase 1 only; use https:// otherwise)");
        }
        if (plaintext && !tls.isEmpty()) {
            throw new IllegalArgumentException(who + "TLS settings are given for a plaintext http:// endpoint");
        }
        if (maxBodyBytes < 0 || maxBodyBytes > EnvelopeLimits.MAX_BODY_BYTES) {
            throw new IllegalArgumentException(who + "max_body_bytes %d is outside 0..%d"
                    .formatted(maxBodyBytes, EnvelopeLimits.MAX_BODY_BYTES));
        }
        try {
            RpcTimeout.check(timeout);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(who + e.getMessage(), e);
        }
        if (audience.isEmpty() || audience.length() > 256 || audience.chars().anyMatch(Character::isISOControl)) {
            throw new IllegalArgumentException(who + "audience must be 1 to 256 characters without control "
                    + "characters");
        }
    }

    /**
     * A registration with the default audience ({@link #defaultAudience}).
     *
     * @throws IllegalArgumentException naming the registration and the broken rule
     */
    public ServiceRegistration(String name, URI endpoint, long maxBodyBytes, Duration timeout, boolean allowInsecure,
                               Tls tls) {
        this(name, endpoint, maxBodyBytes, timeout, allowInsecure, tls, defaultAudience(name));
    }

    /** {@return {@code urn:openshell:extension:middleware:<name>}, OpenShell's default audience} @param name the
     * registration name */
    public static String defaultAudience(String name) {
        return AUDIENCE_PREFIX + name;
    }

    /** {@return this registration with another {@code max_body_bytes}} @param bytes the body limit */
    public ServiceRegistration withMaxBodyBytes(long bytes) {
        return new ServiceRegistration(name, endpoint, bytes, timeout, allowInsecure, tls, audience);
    }

    /** {@return a builder with the defaults: timeout 500 ms, no insecure opt-in, no TLS settings}
     * @param name the registration name @param endpoint the endpoint @param maxBodyBytes the body limit in bytes */
    public static Builder builder(String name, URI endpoint, long maxBodyBytes) {
        return new Builder(name, endpoint, maxBodyBytes);
    }

    /** {@return whether the endpoint is plaintext {@code http://}} */
    public boolean plaintext() {
        return endpoint.getScheme().equalsIgnoreCase("http");
    }

    /** {@return the endpoint's host, without brackets for an IPv6 literal} */
    public String host() {
        String h = endpoint.getHost();
        return h.startsWith("[") && h.endsWith("]") ? h.substring(1, h.length() - 1) : h;
    }

    /** {@return the endpoint's port, or the scheme's default (443 for https, 80 for http)} */
    public int port() {
        return endpoint.getPort() != -1 ? endpoint.getPort() : plaintext() ? 80 : 443;
    }

    /** {@return a summary: name, endpoint, limits; never file contents} */
    @Override
    public String toString() {
        return "ServiceRegistration[" + name + ", " + endpoint + ", " + maxBodyBytes + " bytes, "
                + RpcTimeout.format(timeout) + (allowInsecure ? ", allow_insecure" : "")
                + (tls.mutual() ? ", mTLS" : "") + ", audience " + audience + "]";
    }

    private static String endpointProblem(URI endpoint) {
        String scheme = endpoint.getScheme();
        if (scheme == null || !(scheme.toLowerCase(Locale.ROOT).equals("https")
                || scheme.toLowerCase(Locale.ROOT).equals("http"))) {
            return endpoint + " must start with https:// (or http:// with allow_insecure)";
        }
        if (endpoint.isOpaque() || endpoint.getHost() == null || endpoint.getHost().isEmpty()) {
            return endpoint + " has no host";
        }
        if (endpoint.getRawUserInfo() != null) {
            return "must not carry user info";
        }
        String path = endpoint.getRawPath();
        if (path != null && !path.isEmpty() && !path.equals("/")) {
            return endpoint + " must not have a path";
        }
        if (endpoint.getRawQuery() != null || endpoint.getRawFragment() != null) {
            return endpoint + " must not have a query or fragment";
        }
        if (endpoint.getPort() == 0) {
            return endpoint + " has port 0";
        }
        return null;
    }

    /** Assembles a registration; not thread-safe. */
    public static final class Builder {
        private final String name;
        private final URI endpoint;
        private final long maxBodyBytes;
        private Duration timeout = RpcTimeout.DEFAULT;
        private boolean allowInsecure;
        private Optional<Path> caBundle = Optional.empty();
        private Optional<Path> clientCertificate = Optional.empty();
        private Optional<Path> clientKey = Optional.empty();
        private String audience;

        private Builder(String name, URI endpoint, long maxBodyBytes) {
            this.name = name;
            this.endpoint = endpoint;
            this.maxBodyBytes = maxBodyBytes;
        }

        /** {@return this} @param timeout the service RPC timeout, 10 ms to 30 s */
        public Builder timeout(Duration timeout) {
            this.timeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /** {@return this} @param allow whether plaintext {@code http://} is accepted */
        public Builder allowInsecure(boolean allow) {
            this.allowInsecure = allow;
            return this;
        }

        /** {@return this} @param audience the extension token's exact audience (default: OpenShell's) */
        public Builder audience(String audience) {
            this.audience = Objects.requireNonNull(audience, "audience");
            return this;
        }

        /** {@return this} @param file PEM CA bundle that signs the service's certificate */
        public Builder caBundle(Path file) {
            this.caBundle = Optional.of(file);
            return this;
        }

        /** {@return this} @param certificate PEM certificate chain @param key PEM PKCS#8 private key */
        public Builder clientCertificate(Path certificate, Path key) {
            this.clientCertificate = Optional.of(certificate);
            this.clientKey = Optional.of(key);
            return this;
        }

        /**
         * {@return the registration}
         *
         * @throws IllegalArgumentException if a rule is broken
         */
        public ServiceRegistration build() {
            return new ServiceRegistration(name, endpoint, maxBodyBytes, timeout, allowInsecure,
                    new Tls(caBundle, clientCertificate, clientKey), audience == null ? defaultAudience(name) : audience);
        }
    }
}
