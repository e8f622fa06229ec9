package dev.openshell.examples.privacyguard;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.time.Clock;
import java.time.Instant;
import java.util.Arrays;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Privacy Guard's token checks, one refusal per rule of OpenShell's guidance. Tokens are made here with the JDK. */
class CallerTokenVerifierTest {
    private static final String AUD = "urn:openshell:extension:middleware:privacy-guard";
    private static final String ISS = "openshell-gateway:gw";

    @TempDir
    Path tmp;

    private KeyPair key;
    private KeyPair stranger;
    private CallerTokenVerifier verifier;

    private static KeyPair ed25519() throws Exception {
        return KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
    }

    private static String kid(KeyPair k) {
        return "k-" + Integer.toHexString(Arrays.hashCode(k.getPublic().getEncoded()));
    }

    @BeforeEach
    void setUp() throws Exception {
        key = ed25519();
        stranger = ed25519();
        byte[] der = key.getPublic().getEncoded();
        OctetKeyPair jwk = new OctetKeyPair.Builder(Curve.Ed25519,
                Base64URL.encode(Arrays.copyOfRange(der, der.length - 32, der.length))).keyID(kid(key)).build();
        Path jwks = Files.writeString(tmp.resolve("jwks.json"), new JWKSet(jwk).toString());
        verifier = CallerTokenVerifier.open(jwks.toString(), AUD, Optional.of(ISS), Clock.systemUTC());
    }

    private static JWTClaimsSet.Builder claims() {
        Instant now = Instant.now();
        return new JWTClaimsSet.Builder().issuer(ISS).subject("spiffe://openshell/sandbox/sb").audience(AUD)
                .claim("caller_kind", "supervisor").claim("sandbox_id", "sb").issueTime(Date.from(now))
                .expirationTime(Date.from(now.plusSeconds(900))).jwtID("j");
    }

    private String token(KeyPair signer, JWSAlgorithm alg, String typ, UnaryOperator<JWTClaimsSet.Builder> edit)
            throws Exception {
        JWSHeader.Builder h = new JWSHeader.Builder(alg).keyID(kid(key));
        if (typ != null) {
            h.type(new JOSEObjectType(typ));
        }
        SignedJWT jwt = new SignedJWT(h.build(), edit.apply(claims()).build());
        Signature s = Signature.getInstance("Ed25519");
        s.initSign(signer.getPrivate());
        s.update(jwt.getSigningInput());
        return new SignedJWT(jwt.getHeader().toBase64URL(), jwt.getPayload().toBase64URL(),
                Base64URL.encode(s.sign())).serialize();
    }

    private Optional<String> check(String token) {
        return verifier.check(token == null ? null : "Bearer " + token).map(CallerTokenVerifier.Refusal::check);
    }

    @Test
    void aGoodTokenPassesAndEveryBrokenRuleIsRefused() throws Exception {
        String typ = CallerTokenVerifier.TYPE;
        assertEquals(Optional.empty(), check(token(key, JWSAlgorithm.EdDSA, typ, b -> b)));
        assertEquals(Optional.of("no authorization metadata"), check(null));
        assertEquals(Optional.of("alg is not EdDSA"), check(token(key, JWSAlgorithm.ES256, typ, b -> b)));
        assertEquals(Optional.of("typ is not openshell-ext+jwt"), check(token(key, JWSAlgorithm.EdDSA, "JWT",
                b -> b)));
        assertEquals(Optional.of("typ is not openshell-ext+jwt"), check(token(key, JWSAlgorithm.EdDSA, null,
                b -> b)));
        assertEquals(Optional.of("bad signature"), check(token(stranger, JWSAlgorithm.EdDSA, typ, b -> b)));
        assertEquals(Optional.of("wrong audience"), check(token(key, JWSAlgorithm.EdDSA, typ,
                b -> b.audience("urn:other"))));
        assertEquals(Optional.of("wrong audience"), check(token(key, JWSAlgorithm.EdDSA, typ,
                b -> b.audience(List.of(AUD, "urn:other")))));
        assertEquals(Optional.of("wrong issuer"), check(token(key, JWSAlgorithm.EdDSA, typ,
                b -> b.issuer("openshell-gateway:other"))));
        assertEquals(Optional.of("expired"), check(token(key, JWSAlgorithm.EdDSA, typ,
                b -> b.issueTime(Date.from(Instant.now().minusSeconds(7200)))
                        .expirationTime(Date.from(Instant.now().minusSeconds(3600))))));
        assertEquals(Optional.of("caller_kind is not supervisor or gateway"), check(token(key, JWSAlgorithm.EdDSA,
                typ, b -> b.claim("caller_kind", "sandbox"))));
        assertEquals(Optional.of("a supervisor token without a matching sandbox_id and sub"), check(token(key,
                JWSAlgorithm.EdDSA, typ, b -> b.subject("spiffe://openshell/sandbox/other"))));
        assertEquals(Optional.of("not a compact JWS"), check("not.a.token"));
    }
}
