package dev.openshell.supervisor.proxy.internal;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;
import org.bouncycastle.asn1.ASN1BitString;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.asn1.pkcs.PKCSObjectIdentifiers;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x9.X9ObjectIdentifiers;

/**
 * Reading an operator-supplied or stored CA private key file and checking it against the CA certificate, for
 * {@link CertificateAuthority#load}: PKCS#8 or traditional PEM, EC, RSA or Ed25519; a key that does not match the
 * certificate fails closed.
 */
final class CaKeyFile {
    /** RFC 8410 {@code id-Ed25519}. */
    private static final String ID_ED25519 = "1.3.101.112";

    private CaKeyFile() {
    }

    /**
     * Reads the first unencrypted private key of a PEM file: PKCS#8 {@code PRIVATE KEY}, or a traditional
     * {@code EC PRIVATE KEY} (RFC 5915) or {@code RSA PRIVATE KEY} (RFC 8017); encrypted keys are skipped.
     */
    static PrivateKeyInfo read(Path file) throws IOException {
        PrivateKeyInfo info = null;
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.US_ASCII); PEMParser p = new PEMParser(r)) {
            Object o;
            while (info == null && (o = p.readObject()) != null) {
                if (o instanceof PEMKeyPair kp) {
                    info = kp.getPrivateKeyInfo();
                } else if (o instanceof PrivateKeyInfo i) {
                    info = i;
                }
            }
        } catch (FileSystemException e) {
            throw e; // missing or unreadable: the JDK's message names the file
        } catch (IOException | RuntimeException e) {
            // neither the parser's message nor its exception is kept: they may quote the key's bytes
            throw new IOException(file + ": not a readable, unencrypted PEM private key");
        }
        if (info == null) {
            throw new IOException(file + ": no unencrypted PEM private key found");
        }
        return info;
    }

    /**
     * Makes the key with the JDK's own key factory for its algorithm (RFC 5480 {@code id-ecPublicKey}, RFC 8017
     * {@code rsaEncryption}, RFC 8410 {@code id-Ed25519}). Not BouncyCastle's {@code JcaPEMKeyConverter}: it asks
     * the JCA for an {@code ECDSA} key factory, which no JDK provider has, so the JCA tried every installed provider
     * (instantiating the BouncyCastle provider, found through the module's service binding, and the JDK's XML
     * signature and PKCS#11 ones) before falling back to {@code EC}: a quarter of the supervisor's start-up.
     */
    static PrivateKey privateKey(Path file, PrivateKeyInfo info) throws IOException {
        String oid = info.getPrivateKeyAlgorithm().getAlgorithm().getId();
        String algorithm;
        if (oid.equals(X9ObjectIdentifiers.id_ecPublicKey.getId())) {
            algorithm = "EC";
        } else if (oid.equals(PKCSObjectIdentifiers.rsaEncryption.getId())) {
            algorithm = "RSA";
        } else if (oid.equals(ID_ED25519)) {
            algorithm = "Ed25519";
        } else {
            throw new IOException(file + ": unsupported private key algorithm " + oid
                    + " (a CA key must be EC, RSA or Ed25519)");
        }
        try {
            return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(info.getEncoded()));
        } catch (GeneralSecurityException | IOException | RuntimeException e) {
            throw new IOException(file + ": not a readable, unencrypted PEM private key");
        }
    }

    /**
     * Whether a private key belongs to a certificate's public key. When the key file carries the public key, it must
     * equal the certificate's: the {@code publicKey} of a PKCS#8 v2 key (RFC 5958) or of an EC key (RFC 5915, as
     * OpenSSL and {@link #loadOrCreate} write them), or the modulus and public exponent of an RSA CRT key (RFC 8017).
     * That comparison costs nothing; it does not prove that the file's private part belongs to the public part it
     * carries (only a damaged or crafted file differs), so {@link #issue} verifies the first leaf it signs with the
     * certificate's public key and fails closed. Any other key (an EC key without its public key, as this class wrote
     * them before) is proved with a signature by the key, verified with the certificate's public key: EC arithmetic
     * that costs about a tenth of the supervisor's start-up while the JVM is cold.
     */
    static boolean matches(PrivateKeyInfo info, PrivateKey key, PublicKey pub) {
        Optional<Boolean> carried;
        try {
            carried = carriedPublicKeyMatches(info, key, pub);
        } catch (IOException | RuntimeException e) {
            carried = Optional.empty();
        }
        return carried.orElseGet(() -> signatureMatches(key, pub));
    }

    /** {@return whether the public key the key file carries is the certificate's; empty when it carries none} */
    private static Optional<Boolean> carriedPublicKeyMatches(PrivateKeyInfo info, PrivateKey key, PublicKey pub)
            throws IOException {
        if (key instanceof RSAPrivateCrtKey rsa) {
            return Optional.of(pub instanceof RSAPublicKey p && rsa.getModulus().equals(p.getModulus())
                    && rsa.getPublicExponent().equals(p.getPublicExponent()));
        }
        ASN1BitString carried = info.hasPublicKey() ? info.getPublicKeyData() : null;
        if (carried == null && key instanceof ECPrivateKey) {
            carried = org.bouncycastle.asn1.sec.ECPrivateKey.getInstance(info.parsePrivateKey()).getPublicKey();
        }
        if (carried == null) {
            return Optional.empty();
        }
        SubjectPublicKeyInfo certified = SubjectPublicKeyInfo.getInstance(pub.getEncoded());
        if (!certified.getAlgorithm().getAlgorithm().equals(info.getPrivateKeyAlgorithm().getAlgorithm())) {
            return Optional.of(false);
        }
        byte[] expected = certified.getPublicKeyData().getOctets();
        byte[] actual = carried.getOctets();
        if (!Objects.equals(certified.getAlgorithm().getParameters(), info.getPrivateKeyAlgorithm().getParameters())) {
            return Optional.empty(); // the same curve may be written as a name or as explicit parameters
        }
        if (Arrays.equals(expected, actual)) {
            return Optional.of(true);
        }
        boolean ec = info.getPrivateKeyAlgorithm().getAlgorithm().equals(X9ObjectIdentifiers.id_ecPublicKey);
        boolean bothUncompressed = expected.length == actual.length && expected.length > 0 && expected[0] == 4
                && actual[0] == 4;
        // an EC point has two encodings (SEC 1, 2.3.3): a compressed one leaves the decision to the signature
        return ec && !bothUncompressed ? Optional.empty() : Optional.of(false);
    }

    private static boolean signatureMatches(PrivateKey key, PublicKey pub) {
        try {
            String alg = signatureAlgorithm(key);
            byte[] probe = "openshell-ca-key-check".getBytes(StandardCharsets.US_ASCII);
            Signature s = Signature.getInstance(alg);
            s.initSign(key);
            s.update(probe);
            byte[] sig = s.sign();
            Signature v = Signature.getInstance(alg);
            v.initVerify(pub);
            v.update(probe);
            return v.verify(sig);
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return false;
        }
    }

    static String signatureAlgorithm(PrivateKey key) {
        return switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC", "ECDSA" -> "SHA256withECDSA";
            case "Ed25519", "EdDSA" -> "Ed25519";
            default -> throw new IllegalArgumentException("unsupported CA key algorithm " + key.getAlgorithm());
        };
    }
}
