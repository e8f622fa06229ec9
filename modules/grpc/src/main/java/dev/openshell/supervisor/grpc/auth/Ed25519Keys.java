package dev.openshell.supervisor.grpc.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.jca.JCAContext;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.util.Base64URL;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Set;

/**
 * Ed25519 with the JDK's own provider ({@code SunEC}), and the JOSE shapes nimbus-jose-jwt gives it: the signer of
 * {@code alg: EdDSA} JWS objects (nimbus' own Ed25519 signer needs Google Tink, which the image does not carry), and
 * the public JWK (RFC 8037: {@code kty: OKP}, {@code crv: Ed25519}, {@code x}).
 */
final class Ed25519Keys {
    /** The DER prefix of an X.509 {@code SubjectPublicKeyInfo} for Ed25519 (RFC 8410), before the 32 key bytes. */
    private static final byte[] SPKI_PREFIX = HexFormat.of().parseHex("302a300506032b6570032100");
    /** Raw public key length, bytes. */
    static final int PUBLIC_KEY_BYTES = 32;

    private Ed25519Keys() {
    }

    /** {@return the 32 raw public key bytes of an Ed25519 public key} @param key a JDK Ed25519 public key */
    static byte[] raw(PublicKey key) {
        byte[] der = key.getEncoded();
        if (der.length != SPKI_PREFIX.length + PUBLIC_KEY_BYTES
                || !Arrays.equals(der, 0, SPKI_PREFIX.length, SPKI_PREFIX, 0, SPKI_PREFIX.length)) {
            throw new IllegalArgumentException("not an Ed25519 public key");
        }
        return Arrays.copyOfRange(der, SPKI_PREFIX.length, der.length);
    }

    /**
     * {@return a JDK public key from 32 raw bytes}
     *
     * @throws IllegalArgumentException if {@code raw} is not 32 bytes or the JDK refuses it
     */
    static PublicKey fromRaw(byte[] raw) {
        if (raw.length != PUBLIC_KEY_BYTES) {
            throw new IllegalArgumentException("an Ed25519 public key has 32 bytes, not " + raw.length);
        }
        byte[] der = Arrays.copyOf(SPKI_PREFIX, SPKI_PREFIX.length + PUBLIC_KEY_BYTES);
        System.arraycopy(raw, 0, der, SPKI_PREFIX.length, PUBLIC_KEY_BYTES);
        try {
            return KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(der));
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("not a valid Ed25519 public key");
        }
    }

    /** {@return the public JWK with {@code kid} = its RFC 7638 thumbprint, {@code use: sig}, {@code alg: EdDSA}} */
    static OctetKeyPair jwk(PublicKey key) {
        OctetKeyPair bare = new OctetKeyPair.Builder(Curve.Ed25519, Base64URL.encode(raw(key))).build();
        try {
            return new OctetKeyPair.Builder(bare).keyID(bare.computeThumbprint().toString())
                    .keyUse(KeyUse.SIGNATURE).algorithm(JWSAlgorithm.EdDSA).build();
        } catch (JOSEException e) {
            throw new IllegalStateException("cannot compute the JWK thumbprint", e);
        }
    }

    /** {@return a signature over {@code input}} @throws IllegalStateException if the JDK cannot sign */
    static byte[] sign(PrivateKey key, byte[] input) {
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initSign(key);
            s.update(input);
            return s.sign();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 signing failed: " + e.getClass().getSimpleName());
        }
    }

    /** {@return whether {@code signature} is a valid Ed25519 signature of {@code input} by {@code key}} */
    static boolean verify(PublicKey key, byte[] input, byte[] signature) {
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initVerify(key);
            s.update(input);
            return s.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    /** A nimbus {@link JWSSigner} for {@code alg: EdDSA} backed by the JDK. */
    static final class Signer implements JWSSigner {
        private final PrivateKey key;
        private final JCAContext context = new JCAContext();

        Signer(PrivateKey key) {
            this.key = key;
        }

        @Override
        public Base64URL sign(JWSHeader header, byte[] signingInput) throws JOSEException {
            if (!JWSAlgorithm.EdDSA.equals(header.getAlgorithm())) {
                throw new JOSEException("only EdDSA is supported");
            }
            try {
                return Base64URL.encode(Ed25519Keys.sign(key, signingInput));
            } catch (IllegalStateException e) {
                throw new JOSEException(e.getMessage());
            }
        }

        @Override
        public Set<JWSAlgorithm> supportedJWSAlgorithms() {
            return Set.of(JWSAlgorithm.EdDSA);
        }

        @Override
        public JCAContext getJCAContext() {
            return context;
        }
    }
}
