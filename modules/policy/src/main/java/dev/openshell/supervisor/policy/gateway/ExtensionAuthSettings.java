package dev.openshell.supervisor.policy.gateway;

import java.util.Objects;
import java.util.Optional;

/**
 * {@code [openshell.supervisor.extension_auth]}: who the supervisor says it is in the extension tokens it sends to
 * middleware services registered over TLS (OpenShell RFC 0009 appendix "Extension Authentication", "Claim
 * contract").
 *
 * @param gatewayId {@code gateway_id}: the gateway identity services are configured with; the default issuer is
 *     {@code openshell-gateway:<gateway_id>}. 1 to 128 characters of {@code A-Z a-z 0-9 . _ -}; default
 *     {@value #DEFAULT_GATEWAY_ID}
 * @param issuer {@code issuer}: the exact {@code iss} claim, replacing the default; 1 to 256 printable ASCII
 *     characters
 * @param sandboxId {@code sandbox_id}: the {@code sandbox_id} claim and the {@code sub}
 *     {@code spiffe://openshell/sandbox/<sandbox_id>}; same grammar as {@code gateway_id}; default the host name
 *     (cut to that grammar)
 * @param tokenLifetimeSeconds {@code token_lifetime_seconds}: each token's lifetime, 60 to 3600; default 900
 *     (OpenShell's 15 minutes); tokens are replaced after four fifths of it
 * @param keyLifetimeDays {@code key_lifetime_days}: how long one signing key signs before the next replaces it, 1 to
 *     365; default 30
 */
public record ExtensionAuthSettings(String gatewayId, Optional<String> issuer, Optional<String> sandboxId,
                                    long tokenLifetimeSeconds, long keyLifetimeDays) {
    /** The gateway id when none is written. */
    public static final String DEFAULT_GATEWAY_ID = "openshell";
    /** The token lifetime when none is written, seconds. */
    public static final long DEFAULT_TOKEN_LIFETIME_SECONDS = 900;
    /** The key lifetime when none is written, days. */
    public static final long DEFAULT_KEY_LIFETIME_DAYS = 30;
    /** Grammar of {@code gateway_id} and {@code sandbox_id}. */
    public static final String ID_PATTERN = "[A-Za-z0-9._-]{1,128}";

    /** @throws IllegalArgumentException naming the broken rule */
    public ExtensionAuthSettings {
        Objects.requireNonNull(gatewayId, "gatewayId");
        Objects.requireNonNull(issuer, "issuer");
        Objects.requireNonNull(sandboxId, "sandboxId");
        if (!gatewayId.matches(ID_PATTERN)) {
            throw new IllegalArgumentException("gateway_id must be 1 to 128 characters of A-Z a-z 0-9 . _ -");
        }
        if (sandboxId.isPresent() && !sandboxId.get().matches(ID_PATTERN)) {
            throw new IllegalArgumentException("sandbox_id must be 1 to 128 characters of A-Z a-z 0-9 . _ -");
        }
        if (issuer.isPresent() && (issuer.get().isEmpty() || issuer.get().length() > 256
                || !issuer.get().chars().allMatch(c -> c > 0x20 && c < 0x7f))) {
            throw new IllegalArgumentException("issuer must be 1 to 256 printable ASCII characters");
        }
        if (tokenLifetimeSeconds < 60 || tokenLifetimeSeconds > 3600) {
            throw new IllegalArgumentException("token_lifetime_seconds must be 60 to 3600");
        }
        if (keyLifetimeDays < 1 || keyLifetimeDays > 365) {
            throw new IllegalArgumentException("key_lifetime_days must be 1 to 365");
        }
    }

    /** {@return the settings of an empty table} */
    public static ExtensionAuthSettings defaults() {
        return new ExtensionAuthSettings(DEFAULT_GATEWAY_ID, Optional.empty(), Optional.empty(),
                DEFAULT_TOKEN_LIFETIME_SECONDS, DEFAULT_KEY_LIFETIME_DAYS);
    }

    /** {@return the {@code iss} tokens carry: {@code issuer}, else {@code openshell-gateway:<gateway_id>}} */
    public String effectiveIssuer() {
        return issuer.orElse("openshell-gateway:" + gatewayId);
    }
}
