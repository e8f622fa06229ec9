package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.grpc.auth.ExtensionTokenIssuer;
import dev.openshell.supervisor.grpc.auth.SigningKeys;
import dev.openshell.supervisor.policy.gateway.ExtensionAuthSettings;
import dev.openshell.supervisor.policy.gateway.GatewayConfig;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Locale;

/**
 * The supervisor as the issuer of extension tokens (OpenShell RFC 0009 appendix "Extension Authentication"): there
 * is no separate gateway, so the supervisor signs the tokens it sends to middleware services registered over TLS
 * with its own Ed25519 keys under {@code <state dir>/extension-keys}, and publishes the public keys as a JWKS at
 * {@value #JWKS_PATH} with OIDC-shaped discovery at {@value #DISCOVERY_PATH} on the admin listener, or through
 * {@code supervisor keys export}.
 */
public final class ExtensionAuth {
    /** Where the JWKS is served on the admin listener. */
    public static final String JWKS_PATH = "/.well-known/jwks.json";
    /** Where the discovery document is served on the admin listener. */
    public static final String DISCOVERY_PATH = "/.well-known/openid-configuration";

    private ExtensionAuth() {
    }

    /**
     * Opens the signing keys (creating the first on first use) and the issuer configured by
     * {@code [openshell.supervisor.extension_auth]}.
     *
     * @param gateway the gateway configuration
     * @param stateDir the state directory
     * @return the issuer
     * @throws IOException naming the file when a key cannot be read or written
     */
    public static ExtensionTokenIssuer open(GatewayConfig gateway, Path stateDir) throws IOException {
        ExtensionAuthSettings s = gateway.supervisor().extensionAuth();
        Duration lifetime = Duration.ofSeconds(s.tokenLifetimeSeconds());
        SigningKeys keys = SigningKeys.open(stateDir, Clock.systemUTC(), Duration.ofDays(s.keyLifetimeDays()),
                ExtensionTokenIssuer.MAX_LIFETIME.compareTo(lifetime) > 0 ? lifetime : ExtensionTokenIssuer.MAX_LIFETIME);
        return new ExtensionTokenIssuer(keys, new ExtensionTokenIssuer.Identity(s.effectiveIssuer(),
                s.sandboxId().orElseGet(ExtensionAuth::hostSandboxId), lifetime), Clock.systemUTC());
    }

    /**
     * {@return the discovery document with {@code jwks_uri} on {@code base}}
     *
     * @param issuer the issuer
     * @param base the absolute base URL the JWKS is reachable at, e.g. {@code http://127.0.0.1:9464}
     */
    public static String discovery(ExtensionTokenIssuer issuer, URI base) {
        String b = base.toString();
        return issuer.discovery(URI.create((b.endsWith("/") ? b.substring(0, b.length() - 1) : b) + JWKS_PATH));
    }

    /** The host name cut to the sandbox id grammar, or {@code sandbox}. */
    static String hostSandboxId() {
        String h;
        try {
            h = InetAddress.getLocalHost().getHostName();
        } catch (IOException | RuntimeException e) {
            h = "";
        }
        String id = h.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9._-]", "-");
        if (id.length() > 128) {
            id = id.substring(0, 128);
        }
        return id.isEmpty() ? "sandbox" : id;
    }
}
