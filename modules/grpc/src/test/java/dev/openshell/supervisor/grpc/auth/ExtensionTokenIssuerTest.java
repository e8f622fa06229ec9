package dev.openshell.supervisor.grpc.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.util.JSONObjectUtils;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Extension tokens: OpenShell's claim shape, caching and rotation, key storage and rotation with overlap. */
class ExtensionTokenIssuerTest {
    private static final String AUD = "urn:openshell:extension:middleware:guard";
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    @TempDir
    Path state;

    private static ExtensionTokenIssuer issuer(SigningKeys keys, Duration lifetime, Clock clock) {
        return new ExtensionTokenIssuer(keys, new ExtensionTokenIssuer.Identity("openshell-gateway:gw-1", "sb-7",
                lifetime), clock);
    }

    /** Verifies as a service would: the JWKS as published, the JDK's Ed25519. */
    static boolean verifies(String token, String jwks) throws Exception {
        SignedJWT jwt = SignedJWT.parse(token);
        JWK key = JWKSet.parse(jwks).getKeyByKeyId(jwt.getHeader().getKeyID());
        if (!(key instanceof OctetKeyPair okp)) {
            return false;
        }
        return Ed25519Keys.verify(Ed25519Keys.fromRaw(okp.getX().decode()), jwt.getSigningInput(),
                jwt.getSignature().decode());
    }

    private static Set<String> kids(String jwks) throws Exception {
        return JWKSet.parse(jwks).getKeys().stream().map(JWK::getKeyID).collect(Collectors.toSet());
    }

    @Test
    void tokensHaveOpenShellsHeaderAndClaims() throws Exception {
        MutableClock clock = new MutableClock(T0);
        SigningKeys keys = SigningKeys.open(state, clock, Duration.ofDays(30), Duration.ofMinutes(15));
        String token = issuer(keys, Duration.ofMinutes(15), clock).token(AUD).orElseThrow();
        SignedJWT jwt = SignedJWT.parse(token);
        assertEquals(JWSAlgorithm.EdDSA, jwt.getHeader().getAlgorithm());
        assertEquals("openshell-ext+jwt", jwt.getHeader().getType().getType());
        String jwks = keys.jwks();
        assertEquals(Set.of(jwt.getHeader().getKeyID()), kids(jwks));
        JWTClaimsSet c = jwt.getJWTClaimsSet();
        assertEquals("openshell-gateway:gw-1", c.getIssuer());
        assertEquals("spiffe://openshell/sandbox/sb-7", c.getSubject());
        assertEquals("supervisor", c.getStringClaim("caller_kind"));
        assertEquals("sb-7", c.getStringClaim("sandbox_id"));
        assertEquals(T0, c.getIssueTime().toInstant());
        assertEquals(T0.plusSeconds(900), c.getExpirationTime().toInstant());
        assertFalse(c.getJWTID().isEmpty());
        // aud is one string, never a list, on the wire
        Map<String, Object> raw = JSONObjectUtils.parse(jwt.getPayload().toString());
        assertEquals(AUD, raw.get("aud"));
        assertEquals(Set.of("iss", "sub", "aud", "caller_kind", "sandbox_id", "iat", "exp", "jti"), raw.keySet());
        assertTrue(verifies(token, jwks));
        OctetKeyPair published = (OctetKeyPair) JWKSet.parse(jwks).getKeys().get(0);
        assertEquals("Ed25519", published.getCurve().getName());
        assertEquals(published.computeThumbprint().toString(), published.getKeyID(), "kid is the RFC 7638 thumbprint");
        assertFalse(jwks.contains("\"d\""), "the JWKS never carries the private key");
    }

    @Test
    void aTokenIsReusedAndReplacedAfterFourFifthsOfItsLifetime() throws Exception {
        MutableClock clock = new MutableClock(T0);
        SigningKeys keys = SigningKeys.open(state, clock, Duration.ofDays(1), Duration.ofSeconds(10));
        ExtensionTokenIssuer issuer = issuer(keys, Duration.ofSeconds(10), clock);
        String first = issuer.token(AUD).orElseThrow();
        clock.advance(Duration.ofMillis(7999));
        assertEquals(first, issuer.token(AUD).orElseThrow(), "cached until 4/5 of the lifetime");
        assertNotEquals(issuer.token("urn:other").orElseThrow(), first, "one token per audience");
        clock.advance(Duration.ofMillis(1));
        String second = issuer.token(AUD).orElseThrow();
        assertNotEquals(first, second);
        // no call ever gets a token that expires within the call: every token handed out has >= 1/5 left
        for (int i = 0; i < 200; i++) {
            clock.advance(Duration.ofMillis(137));
            Instant exp = SignedJWT.parse(issuer.token(AUD).orElseThrow()).getJWTClaimsSet().getExpirationTime()
                    .toInstant();
            assertTrue(!exp.isBefore(clock.instant().plusSeconds(2)), "token handed out with < 2 s left");
        }
    }

    @Test
    void keysAreStoredOwnerOnlyAndReloaded() throws Exception {
        MutableClock clock = new MutableClock(T0);
        SigningKeys keys = SigningKeys.open(state, clock, Duration.ofDays(30), Duration.ofMinutes(15));
        Path dir = state.resolve("extension-keys");
        List<Path> files;
        try (var s = Files.list(dir)) {
            files = s.toList();
        }
        assertEquals(1, files.size());
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(files.get(0))));
        String text = Files.readString(files.get(0));
        assertTrue(text.startsWith("-----BEGIN PRIVATE KEY-----") && text.contains("-----BEGIN PUBLIC KEY-----"));
        SigningKeys again = SigningKeys.open(state, clock, Duration.ofDays(30), Duration.ofMinutes(15));
        assertEquals(keys.jwks(), again.jwks(), "the same key after a restart");
    }

    @Test
    void aKeyThatDoesNotMatchItsPublicHalfIsRefused() throws Exception {
        MutableClock clock = new MutableClock(T0);
        SigningKeys.open(state, clock, Duration.ofDays(30), Duration.ofMinutes(15));
        Path file;
        try (var s = Files.list(state.resolve("extension-keys"))) {
            file = s.findFirst().orElseThrow();
        }
        String text = Files.readString(file);
        String otherPublic = SigningKeys.ephemeral(clock).currentKey().pair().getPublic().getEncoded().length > 0
                ? java.util.Base64.getMimeEncoder().encodeToString(
                        SigningKeys.ephemeral(clock).currentKey().pair().getPublic().getEncoded()) : "";
        int b = text.indexOf("-----BEGIN PUBLIC KEY-----");
        Files.writeString(file, text.substring(0, b) + "-----BEGIN PUBLIC KEY-----\n" + otherPublic
                + "\n-----END PUBLIC KEY-----\n", StandardCharsets.US_ASCII);
        IOException e = assertThrows(IOException.class,
                () -> SigningKeys.open(state, clock, Duration.ofDays(30), Duration.ofMinutes(15)));
        assertTrue(e.getMessage().contains(file.toString()) && e.getMessage().contains("does not match"),
                e.getMessage());
    }

    @Test
    void keyRotationKeepsTheOldKeyPublishedUntilEveryTokenItSignedHasExpired() throws Exception {
        MutableClock clock = new MutableClock(T0);
        Duration lifetime = Duration.ofMinutes(15);
        SigningKeys keys = SigningKeys.open(state, clock, Duration.ofHours(1), lifetime);
        ExtensionTokenIssuer issuer = issuer(keys, lifetime, clock);
        clock.advance(Duration.ofMinutes(59));
        String old = issuer.mint(AUD, clock.instant(), lifetime); // the last token of the first key
        String oldKid = SignedJWT.parse(old).getHeader().getKeyID();
        clock.advance(Duration.ofMinutes(1)); // the first key's hour is over
        String fresh = issuer.mint(AUD, clock.instant(), lifetime);
        String newKid = SignedJWT.parse(fresh).getHeader().getKeyID();
        assertNotEquals(oldKid, newKid, "rotated");
        assertEquals(Set.of(oldKid, newKid), kids(keys.jwks()), "the old key stays published");
        assertTrue(verifies(old, keys.jwks()) && verifies(fresh, keys.jwks()));
        clock.advance(lifetime.minusSeconds(1));
        assertTrue(verifies(old, keys.jwks()), "still published while a token it signed may be valid");
        clock.advance(Duration.ofSeconds(1));
        assertEquals(Set.of(newKid), kids(keys.jwks()), "dropped once every token it signed has expired");
        try (var s = Files.list(state.resolve("extension-keys"))) {
            assertEquals(1, s.count(), "and its file deleted");
        }
    }

    @Test
    void discoveryNamesTheIssuerAndAnAbsoluteJwksUri() throws Exception {
        ExtensionTokenIssuer issuer = issuer(SigningKeys.ephemeral(Clock.systemUTC()), Duration.ofMinutes(15),
                Clock.systemUTC());
        Map<String, Object> d = JSONObjectUtils.parse(issuer.discovery(
                URI.create("http://127.0.0.1:9464/.well-known/jwks.json")));
        assertEquals("openshell-gateway:gw-1", d.get("issuer"));
        assertEquals("http://127.0.0.1:9464/.well-known/jwks.json", d.get("jwks_uri"));
        assertEquals(List.of("EdDSA"), d.get("id_token_signing_alg_values_supported"));
        assertThrows(IllegalArgumentException.class, () -> issuer.discovery(URI.create("/.well-known/jwks.json")));
    }

    @Test
    void identityRulesAreChecked() {
        assertThrows(IllegalArgumentException.class, () -> new ExtensionTokenIssuer.Identity("iss", "sb",
                Duration.ofSeconds(3601)));
        assertThrows(IllegalArgumentException.class, () -> new ExtensionTokenIssuer.Identity("iss", "a b",
                Duration.ofSeconds(60)));
        assertThrows(IllegalArgumentException.class, () -> new ExtensionTokenIssuer.Identity("", "sb",
                Duration.ofSeconds(60)));
    }
}
