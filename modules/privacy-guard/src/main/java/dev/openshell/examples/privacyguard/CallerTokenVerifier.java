package dev.openshell.examples.privacyguard;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Verifies OpenShell extension tokens as OpenShell's guidance says a middleware service must (docs
 * "Authenticate OpenShell Callers"; RFC 0009 appendix "Extension Authentication"): {@code typ} exactly
 * {@value #TYPE}; {@code alg} pinned to {@code EdDSA} (never chosen from the token); a {@code kid} found in the
 * configured JWKS; the Ed25519 signature (checked with the JDK); {@code iss} when an expected issuer is configured;
 * exactly one {@code aud}, equal to the configured audience; {@code exp} in the future and {@code iat} not after it;
 * {@code caller_kind} {@code supervisor} (with a {@code sandbox_id}) or {@code gateway}. {@code jti} is not tracked:
 * OpenShell reuses a token until it rotates.
 *
 * <h2>Keys</h2>
 * From a JWKS file (read once) or an {@code http(s)} URL (fetched at start and again, at most every
 * {@value #REFETCH_SECONDS} s, when a token names a {@code kid} not yet known: key rotation). Only {@code OKP}
 * keys on {@code Ed25519} are used. Thread-safe.
 *
 * <p>Failures say which check failed, never the token or its claims' values.
 */
public final class CallerTokenVerifier {
    /** The JOSE {@code typ} of extension tokens. */
    public static final String TYPE = "openshell-ext+jwt";
    /** Least time between two JWKS fetches from a URL, seconds. */
    public static final int REFETCH_SECONDS = 10;

    private static final byte[] SPKI_PREFIX = HexFormat.of().parseHex("302a300506032b6570032100");
    private static final Set<String> CALLER_KINDS = Set.of("supervisor", "gateway");

    /** Why a token was refused. @param check the failed check, safe to log */
    public record Refusal(String check) {
    }

    private final String audience;
    private final Optional<String> issuer;
    private final Optional<URI> jwksUrl;
    private final Clock clock;
    private final HttpClient http;
    private final Map<String, PublicKey> keys = new ConcurrentHashMap<>();
    private volatile Instant lastFetch = Instant.MIN;

    private CallerTokenVerifier(String audience, Optional<String> issuer, Optional<URI> jwksUrl, Clock clock) {
        this.audience = Objects.requireNonNull(audience, "audience");
        this.issuer = Objects.requireNonNull(issuer, "issuer");
        this.jwksUrl = jwksUrl;
        this.clock = Objects.requireNonNull(clock, "clock");
        this.http = jwksUrl.isPresent() ? HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build() : null;
    }

    /**
     * A verifier with keys from a JWKS file or URL.
     *
     * @param jwks a file path, or an {@code http://} / {@code https://} URL
     * @param audience the exact audience this service verifies
     * @param issuer the expected {@code iss}, or empty to accept any issuer whose key is in the JWKS
     * @param clock the time source
     * @return the verifier, with the keys loaded
     * @throws IOException if the JWKS cannot be read or holds no Ed25519 key
     */
    public static CallerTokenVerifier open(String jwks, String audience, Optional<String> issuer, Clock clock)
            throws IOException {
        boolean url = jwks.startsWith("http://") || jwks.startsWith("https://");
        CallerTokenVerifier v = new CallerTokenVerifier(audience, issuer,
                url ? Optional.of(URI.create(jwks)) : Optional.empty(), clock);
        if (url) {
            v.fetch();
        } else {
            v.load(Files.readString(Path.of(jwks), StandardCharsets.UTF_8), jwks);
        }
        if (v.keys.isEmpty()) {
            throw new IOException(jwks + ": no Ed25519 key in the JWKS");
        }
        return v;
    }

    /** {@return the audience this verifier accepts} */
    public String audience() {
        return audience;
    }

    /**
     * Checks one {@code authorization} value.
     *
     * @param authorization the metadata value, {@code Bearer <JWS>}, or {@code null} when absent
     * @return empty when the token is valid, else the failed check
     */
    public Optional<Refusal> check(String authorization) {
        if (authorization == null) {
            return refuse("no authorization metadata");
        }
        if (!authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return refuse("authorization is not a Bearer token");
        }
        SignedJWT jwt;
        try {
            jwt = SignedJWT.parse(authorization.substring(7).trim());
        } catch (ParseException e) {
            return refuse("not a compact JWS");
        }
        JWSHeader h = jwt.getHeader();
        if (!JWSAlgorithm.EdDSA.equals(h.getAlgorithm())) {
            return refuse("alg is not EdDSA");
        }
        if (!new JOSEObjectType(TYPE).equals(h.getType())) {
            return refuse("typ is not " + TYPE);
        }
        if (h.getKeyID() == null) {
            return refuse("no kid");
        }
        PublicKey key = key(h.getKeyID());
        if (key == null) {
            return refuse("unknown kid");
        }
        if (!verify(key, jwt.getSigningInput(), jwt.getSignature().decode())) {
            return refuse("bad signature");
        }
        try {
            return claims(jwt.getJWTClaimsSet());
        } catch (ParseException e) {
            return refuse("claims are not a JSON object");
        }
    }

    private Optional<Refusal> claims(JWTClaimsSet c) throws ParseException {
        if (issuer.isPresent() && !issuer.get().equals(c.getIssuer())) {
            return refuse("wrong issuer");
        }
        List<String> aud = c.getAudience();
        if (aud.size() != 1 || !audience.equals(aud.get(0))) {
            return refuse("wrong audience");
        }
        Instant now = clock.instant();
        if (c.getExpirationTime() == null || !now.isBefore(c.getExpirationTime().toInstant())) {
            return refuse("expired");
        }
        if (c.getIssueTime() != null && c.getIssueTime().toInstant().isAfter(c.getExpirationTime().toInstant())) {
            return refuse("issued after it expires");
        }
        String kind = c.getStringClaim("caller_kind");
        if (kind == null || !CALLER_KINDS.contains(kind)) {
            return refuse("caller_kind is not supervisor or gateway");
        }
        if (kind.equals("supervisor") && (c.getStringClaim("sandbox_id") == null
                || !("spiffe://openshell/sandbox/" + c.getStringClaim("sandbox_id")).equals(c.getSubject()))) {
            return refuse("a supervisor token without a matching sandbox_id and sub");
        }
        return Optional.empty();
    }

    private PublicKey key(String kid) {
        PublicKey k = keys.get(kid);
        if (k == null && jwksUrl.isPresent()
                && !clock.instant().isBefore(lastFetch.plusSeconds(REFETCH_SECONDS))) {
            try {
                fetch();
            } catch (IOException e) {
                return null;
            }
            k = keys.get(kid);
        }
        return k;
    }

    private synchronized void fetch() throws IOException {
        lastFetch = clock.instant();
        HttpRequest req = HttpRequest.newBuilder(jwksUrl.orElseThrow()).timeout(Duration.ofSeconds(5)).GET().build();
        HttpResponse<String> res;
        try {
            res = http.send(req, HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while fetching the JWKS");
        }
        if (res.statusCode() != 200) {
            throw new IOException(jwksUrl.get() + ": HTTP " + res.statusCode());
        }
        load(res.body(), jwksUrl.get().toString());
    }

    private void load(String json, String source) throws IOException {
        JWKSet set;
        try {
            set = JWKSet.parse(json);
        } catch (ParseException e) {
            throw new IOException(source + ": not a JWKS");
        }
        for (JWK jwk : set.getKeys()) {
            if (jwk instanceof OctetKeyPair okp && Curve.Ed25519.equals(okp.getCurve()) && okp.getKeyID() != null) {
                PublicKey k = publicKey(okp.getX().decode());
                if (k != null) {
                    keys.put(okp.getKeyID(), k);
                }
            }
        }
    }

    private static PublicKey publicKey(byte[] raw) {
        if (raw.length != 32) {
            return null;
        }
        byte[] der = Arrays.copyOf(SPKI_PREFIX, SPKI_PREFIX.length + 32);
        System.arraycopy(raw, 0, der, SPKI_PREFIX.length, 32);
        try {
            return KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(der));
        } catch (GeneralSecurityException e) {
            return null;
        }
    }

    private static boolean verify(PublicKey key, byte[] input, byte[] signature) {
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initVerify(key);
            s.update(input);
            return s.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    private static Optional<Refusal> refuse(String check) {
        return Optional.of(new Refusal(check));
    }

    @Override
    public String toString() {
        return "CallerTokenVerifier[" + audience + ", " + keys.size() + " keys]";
    }
}
