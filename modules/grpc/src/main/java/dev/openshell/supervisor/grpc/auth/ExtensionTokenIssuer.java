package dev.openshell.supervisor.grpc.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Mints OpenShell extension tokens (RFC 0009 appendix "Extension Authentication", "Claim contract"): the supervisor
 * acts as its own gateway here, so it signs with its own {@link SigningKeys}.
 *
 * <h2>Token shape</h2>
 * JOSE header {@code alg: EdDSA}, {@code typ: openshell-ext+jwt}, {@code kid} (the key's RFC 7638 thumbprint).
 * Claims: {@code iss} (default {@code openshell-gateway:<gateway_id>}), {@code sub}
 * ({@code spiffe://openshell/sandbox/<sandbox id>}), {@code aud} (one exact string, never a list),
 * {@code caller_kind: supervisor}, {@code sandbox_id}, {@code iat} and {@code exp} (seconds; lifetime 1 s to
 * {@value #MAX_LIFETIME_SECONDS} s, default 900 s), {@code jti} (a random UUID).
 *
 * <h2>Caching and rotation</h2>
 * One token per audience is cached and reused on every call until four fifths of its lifetime have passed (as
 * OpenShell's supervisors rotate); the next call then mints a fresh one. A call never gets a token with less than a
 * fifth of its lifetime left. Tokens are secrets: this class never logs one. Thread-safe.
 */
public final class ExtensionTokenIssuer implements CallerTokens {
    /** The JOSE {@code typ} of extension tokens. */
    public static final String TYPE = "openshell-ext+jwt";
    /** The {@code caller_kind} of a supervisor. */
    public static final String CALLER_KIND = "supervisor";
    /** The longest lifetime, seconds. */
    public static final long MAX_LIFETIME_SECONDS = 3600;
    /** The longest lifetime. */
    public static final Duration MAX_LIFETIME = Duration.ofSeconds(MAX_LIFETIME_SECONDS);
    /** OpenShell's lifetime: 15 minutes. */
    public static final Duration DEFAULT_LIFETIME = Duration.ofMinutes(15);

    /**
     * Who the supervisor says it is.
     *
     * @param issuer the {@code iss} claim, e.g. {@code openshell-gateway:<gateway_id>}; 1 to 256 printable ASCII
     *     characters
     * @param sandboxId the sandbox id: {@code sandbox_id}, and {@code sub} as
     *     {@code spiffe://openshell/sandbox/<id>}; 1 to 128 characters of {@code A-Z a-z 0-9 . _ -}
     * @param lifetime each token's lifetime, 1 s to 3600 s in whole seconds
     */
    public record Identity(String issuer, String sandboxId, Duration lifetime) {
        /** @throws IllegalArgumentException naming the broken rule */
        public Identity {
            Objects.requireNonNull(issuer, "issuer");
            Objects.requireNonNull(sandboxId, "sandboxId");
            Objects.requireNonNull(lifetime, "lifetime");
            if (issuer.isEmpty() || issuer.length() > 256 || !issuer.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
                throw new IllegalArgumentException("the token issuer must be 1 to 256 printable ASCII characters");
            }
            if (!sandboxId.matches("[A-Za-z0-9._-]{1,128}")) {
                throw new IllegalArgumentException("the sandbox id must be 1 to 128 characters of A-Z a-z 0-9 . _ -");
            }
            if (lifetime.isNegative() || lifetime.getSeconds() < 1 || lifetime.getSeconds() > MAX_LIFETIME_SECONDS
                    || lifetime.getNano() != 0) {
                throw new IllegalArgumentException("the token lifetime must be 1 to 3600 whole seconds");
            }
        }

        /** {@return {@code spiffe://openshell/sandbox/<sandbox id>}} */
        public String subject() {
            return "spiffe://openshell/sandbox/" + sandboxId;
        }
    }

    private record Cached(String token, Instant rotateAt) {
    }

    private final SigningKeys keys;
    private final Identity identity;
    private final Clock clock;
    private final Map<String, Cached> cache = new ConcurrentHashMap<>();

    /**
     * @param keys the signing keys
     * @param identity issuer, sandbox, lifetime
     * @param clock the time source
     */
    public ExtensionTokenIssuer(SigningKeys keys, Identity identity, Clock clock) {
        this.keys = Objects.requireNonNull(keys, "keys");
        this.identity = Objects.requireNonNull(identity, "identity");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** {@return the identity tokens carry} */
    public Identity identity() {
        return identity;
    }

    /** {@return the signing keys} */
    public SigningKeys keys() {
        return keys;
    }

    /**
     * {@return the cached token for {@code audience}, minting a fresh one when none is cached or four fifths of the
     * cached one's lifetime have passed}
     *
     * @throws UncheckedIOException if a due key rotation cannot write the new key
     */
    @Override
    public Optional<String> token(String audience) {
        Objects.requireNonNull(audience, "audience");
        Instant now = clock.instant();
        Cached c = cache.get(audience);
        if (c == null || !now.isBefore(c.rotateAt())) {
            // iat is whole seconds: the rotation time counts from it, so a token never has less than a fifth left
            Instant iat = Instant.ofEpochSecond(now.getEpochSecond());
            c = cache.compute(audience, (a, old) -> old != null && now.isBefore(old.rotateAt()) ? old
                    : new Cached(mint(a, iat, identity.lifetime()),
                            iat.plus(identity.lifetime().multipliedBy(4).dividedBy(5))));
        }
        return Optional.of(c.token());
    }

    /**
     * Mints one token outside the cache, with any issue time and lifetime (the conformance kit's expired token).
     *
     * @param audience the exact {@code aud}
     * @param issuedAt the {@code iat}
     * @param lifetime {@code exp - iat}, any positive length
     * @return the compact JWS
     * @throws UncheckedIOException if a due key rotation cannot write the new key
     */
    public String mint(String audience, Instant issuedAt, Duration lifetime) {
        Objects.requireNonNull(audience, "audience");
        SigningKeys.Key key;
        try {
            key = keys.currentKey();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        JWSHeader header = new JWSHeader.Builder(JWSAlgorithm.EdDSA).type(new JOSEObjectType(TYPE))
                .keyID(key.kid()).build();
        long iat = issuedAt.getEpochSecond();
        JWTClaimsSet claims = new JWTClaimsSet.Builder()
                .issuer(identity.issuer())
                .subject(identity.subject())
                .audience(audience)
                .claim("caller_kind", CALLER_KIND)
                .claim("sandbox_id", identity.sandboxId())
                .issueTime(new Date(iat * 1000))
                .expirationTime(new Date((iat + Math.max(1, lifetime.getSeconds())) * 1000))
                .jwtID(UUID.randomUUID().toString())
                .build();
        SignedJWT jwt = new SignedJWT(header, claims);
        try {
            jwt.sign(new Ed25519Keys.Signer(key.pair().getPrivate()));
        } catch (JOSEException e) {
            throw new IllegalStateException("cannot sign the extension token: " + e.getMessage());
        }
        return jwt.serialize();
    }

    /**
     * {@return the OIDC-shaped discovery document ({@code /.well-known/openid-configuration}): {@code issuer} (the
     * {@code iss} tokens carry, not the URL serving it), {@code jwks_uri} (absolute), {@code EdDSA} as the only
     * signing algorithm, and OpenShell's fixed {@code response_types_supported}, {@code subject_types_supported},
     * {@code scopes_supported}}
     *
     * @param jwksUri the absolute URL of the JWKS
     * @throws IllegalArgumentException if {@code jwksUri} is not absolute
     */
    public String discovery(URI jwksUri) {
        if (!jwksUri.isAbsolute()) {
            throw new IllegalArgumentException("jwks_uri must be absolute");
        }
        var doc = new java.util.LinkedHashMap<String, Object>();
        doc.put("issuer", identity.issuer());
        doc.put("jwks_uri", jwksUri.toString());
        doc.put("id_token_signing_alg_values_supported", java.util.List.of("EdDSA"));
        doc.put("response_types_supported", java.util.List.of("id_token"));
        doc.put("subject_types_supported", java.util.List.of("public"));
        doc.put("scopes_supported", java.util.List.of("openid"));
        return com.nimbusds.jose.util.JSONObjectUtils.toJSONString(doc);
    }

    @Override
    public String toString() {
        return "ExtensionTokenIssuer[" + identity.issuer() + ", sandbox " + identity.sandboxId() + "]";
    }
}
