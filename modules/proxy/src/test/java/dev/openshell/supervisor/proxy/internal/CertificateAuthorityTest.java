package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import org.bouncycastle.asn1.ASN1BitString;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.jce.provider.BouncyCastleProvider;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Loading an operator-supplied or stored CA: the key formats and algorithms accepted, the check that the key belongs
 * to the certificate, and precise errors naming the file for everything else.
 */
class CertificateAuthorityTest {
    @TempDir
    Path dir;

    @Test
    void aGeneratedCaLoadsBackFromItsFilesAndIssuesLeavesItSigned() throws Exception {
        CertificateAuthority ca = CertificateAuthority.loadOrCreate(dir);
        Path cert = dir.resolve("ca").resolve(CertificateAuthority.CERT_FILE);
        Path key = dir.resolve("ca").resolve(CertificateAuthority.KEY_FILE);
        assertTrue(Files.readString(key).startsWith("-----BEGIN PRIVATE KEY-----"), "PKCS#8");
        CertificateAuthority again = CertificateAuthority.load(cert, key);
        assertEquals(ca.certificate(), again.certificate());

        CertificateAuthority.LeafCertificate a = again.issue(Authority.host("api.example.test", 443));
        CertificateAuthority.LeafCertificate b = again.issue(Authority.host("other.example.test", 443));
        a.chain()[0].verify(again.certificate().getPublicKey());
        b.chain()[0].verify(again.certificate().getPublicKey());
        assertEquals(again.certificate(), a.chain()[1]);
        assertArrayEquals(a.chain()[0].getPublicKey().getEncoded(), b.chain()[0].getPublicKey().getEncoded(),
                "every leaf of one CA shares its leaf key");
        assertEquals(a.key(), b.key());
    }

    @Test
    void aKeyOfAnotherEcCaIsRefusedNamingBothFiles() throws Exception {
        CertificateAuthority.loadOrCreate(dir.resolve("a"));
        CertificateAuthority.loadOrCreate(dir.resolve("b"));
        Path cert = dir.resolve("a/ca").resolve(CertificateAuthority.CERT_FILE);
        Path otherKey = dir.resolve("b/ca").resolve(CertificateAuthority.KEY_FILE);
        IOException e = assertThrows(IOException.class, () -> CertificateAuthority.load(cert, otherKey));
        assertEquals(otherKey + ": the private key does not match the certificate in " + cert, e.getMessage());
    }

    @Test
    void aGeneratedKeyFileCarriesItsPublicKeySoLoadingNeedsNoSignature() throws Exception {
        CertificateAuthority ca = CertificateAuthority.loadOrCreate(dir);
        PrivateKeyInfo info = privateKeyInfo(dir.resolve("ca").resolve(CertificateAuthority.KEY_FILE));
        ASN1BitString carried = org.bouncycastle.asn1.sec.ECPrivateKey.getInstance(info.parsePrivateKey())
                .getPublicKey();
        assertArrayEquals(SubjectPublicKeyInfo.getInstance(ca.certificate().getPublicKey().getEncoded())
                .getPublicKeyData().getOctets(), carried.getOctets());
    }

    @Test
    void ecKeyFilesWithoutTheirPublicKeyAreStillCheckedWithASignature() throws Exception {
        KeyPair kp = keyPair("EC");
        Path cert = write("ca.pem", pem(caCertificate(kp, "SHA256withECDSA")));
        Path key = write("key.pem", pkcs8(kp.getPrivate()));
        Path other = write("other-key.pem", pkcs8(keyPair("EC").getPrivate()));
        assertFalse(privateKeyInfo(key).hasPublicKey());
        assertEquals(null, org.bouncycastle.asn1.sec.ECPrivateKey.getInstance(privateKeyInfo(key).parsePrivateKey())
                .getPublicKey(), "the JDK's encoding, as this class wrote key files before");
        assertEquals(CertificateAuthority.readCertificate(cert), CertificateAuthority.load(cert, key).certificate());
        IOException e = assertThrows(IOException.class, () -> CertificateAuthority.load(cert, other));
        assertEquals(other + ": the private key does not match the certificate in " + cert, e.getMessage());
    }

    @Test
    void aKeyFileCarryingAnotherPublicKeyThanItsOwnFailsClosedAtTheFirstLeaf() throws Exception {
        KeyPair certified = keyPair("EC");
        KeyPair actual = keyPair("EC");
        X509Certificate ca = caCertificate(certified, "SHA256withECDSA");
        Path cert = write("ca.pem", pem(ca));
        // the private part of one key with the public part of the certificate's: only a damaged or crafted file
        PrivateKeyInfo jdk = PrivateKeyInfo.getInstance(actual.getPrivate().getEncoded());
        byte[] crafted = new PrivateKeyInfo(jdk.getPrivateKeyAlgorithm(), new org.bouncycastle.asn1.sec.ECPrivateKey(
                256, ((java.security.interfaces.ECPrivateKey) actual.getPrivate()).getS(),
                SubjectPublicKeyInfo.getInstance(ca.getPublicKey().getEncoded()).getPublicKeyData(), null))
                .getEncoded();
        Path key = write("crafted-key.pem", "-----BEGIN PRIVATE KEY-----\n"
                + Base64.getMimeEncoder().encodeToString(crafted) + "\n-----END PRIVATE KEY-----\n");
        CertificateAuthority loaded = CertificateAuthority.load(cert, key);
        GeneralSecurityException e = assertThrows(GeneralSecurityException.class,
                () -> loaded.issue(Authority.host("api.example.test", 443)));
        assertEquals("the CA private key does not match the CA certificate: a leaf certificate it signed does not "
                + "verify", e.getMessage());
        assertThrows(GeneralSecurityException.class, () -> loaded.issue(Authority.host("api.example.test", 443)),
                "every later leaf fails too");
    }

    @Test
    void aTraditionalEcKeyOfAnotherCaIsRefused() throws Exception {
        KeyPair kp = bouncyCastleEcKeyPair();
        Path cert = write("ca.pem", pem(caCertificate(kp, "SHA256withECDSA")));
        Path other = write("other-key.pem", pem(bouncyCastleEcKeyPair().getPrivate()));
        IOException e = assertThrows(IOException.class, () -> CertificateAuthority.load(cert, other));
        assertEquals(other + ": the private key does not match the certificate in " + cert, e.getMessage());
    }

    @Test
    void traditionalEcAndRsaKeyFilesAreAccepted() throws Exception {
        for (String algorithm : new String[] {"EC", "RSA"}) {
            // BouncyCastle's own EC keys: it writes the curve into a traditional EC key (RFC 5915), as OpenSSL does
            KeyPair kp = algorithm.equals("EC") ? bouncyCastleEcKeyPair() : keyPair(algorithm);
            Path cert = write(algorithm + "-ca.pem", pem(caCertificate(kp, signature(algorithm))));
            Path traditional = write(algorithm + "-key.pem", pem(kp.getPrivate()));
            assertTrue(Files.readString(traditional).startsWith("-----BEGIN " + algorithm + " PRIVATE KEY-----"),
                    Files.readString(traditional).lines().findFirst().orElse(""));
            X509Certificate expected = CertificateAuthority.readCertificate(cert);
            assertEquals(expected, CertificateAuthority.load(cert, traditional).certificate());
            Path pkcs8 = write(algorithm + "-pkcs8.pem", pkcs8(kp.getPrivate()));
            assertEquals(expected, CertificateAuthority.load(cert, pkcs8).certificate());
        }
    }

    @Test
    void anEd25519CaIsAccepted() throws Exception {
        KeyPair kp = keyPair("Ed25519");
        Path cert = write("ed-ca.pem", pem(caCertificate(kp, "Ed25519")));
        Path key = write("ed-key.pem", pkcs8(kp.getPrivate()));
        CertificateAuthority ca = CertificateAuthority.load(cert, key);
        ca.issue(Authority.host("api.example.test", 443)).chain()[0].verify(ca.certificate().getPublicKey());
    }

    @Test
    void anRsaKeyForAnEcCertificateAndAnotherRsaKeyAreRefused() throws Exception {
        KeyPair ec = keyPair("EC");
        KeyPair rsa = keyPair("RSA");
        Path ecCert = write("ec-ca.pem", pem(caCertificate(ec, "SHA256withECDSA")));
        Path rsaCert = write("rsa-ca.pem", pem(caCertificate(rsa, "SHA256withRSA")));
        Path rsaKey = write("rsa-key.pem", pkcs8(rsa.getPrivate()));
        Path otherRsaKey = write("other-rsa-key.pem", pkcs8(keyPair("RSA").getPrivate()));
        IOException wrongAlgorithm = assertThrows(IOException.class, () -> CertificateAuthority.load(ecCert, rsaKey));
        assertEquals(rsaKey + ": the private key does not match the certificate in " + ecCert,
                wrongAlgorithm.getMessage());
        IOException otherKey = assertThrows(IOException.class,
                () -> CertificateAuthority.load(rsaCert, otherRsaKey));
        assertEquals(otherRsaKey + ": the private key does not match the certificate in " + rsaCert,
                otherKey.getMessage());
    }

    @Test
    void aKeyOfAnotherAlgorithmIsAnErrorNamingTheFileNotACrash() throws Exception {
        KeyPair dsa = keyPair("DSA");
        Path cert = write("ca.pem", pem(caCertificate(keyPair("EC"), "SHA256withECDSA")));
        Path key = write("dsa-key.pem", pkcs8(dsa.getPrivate()));
        IOException e = assertThrows(IOException.class, () -> CertificateAuthority.load(cert, key));
        assertEquals(key + ": unsupported private key algorithm 1.2.840.10040.4.1 (a CA key must be EC, RSA or "
                + "Ed25519)", e.getMessage());
    }

    @Test
    void filesWithoutAKeyOrACertificateAreNamedInTheError() throws Exception {
        CertificateAuthority.loadOrCreate(dir);
        Path cert = dir.resolve("ca").resolve(CertificateAuthority.CERT_FILE);
        Path key = dir.resolve("ca").resolve(CertificateAuthority.KEY_FILE);
        IOException noKey = assertThrows(IOException.class, () -> CertificateAuthority.load(cert, cert));
        assertEquals(cert + ": no unencrypted PEM private key found", noKey.getMessage());
        IOException noCert = assertThrows(IOException.class, () -> CertificateAuthority.load(key, key));
        assertEquals(key + ": no PEM certificate found", noCert.getMessage());
        Path missing = dir.resolve("missing.pem");
        IOException gone = assertThrows(IOException.class, () -> CertificateAuthority.load(cert, missing));
        assertTrue(gone.getMessage().contains(missing.toString()), gone.getMessage());
    }

    @Test
    void aCertificateThatIsNotACaIsRefused() throws Exception {
        KeyPair kp = keyPair("EC");
        X509Certificate leaf = certificate(kp, "SHA256withECDSA", false);
        Path cert = write("leaf.pem", pem(leaf));
        Path key = write("leaf-key.pem", pkcs8(kp.getPrivate()));
        IOException e = assertThrows(IOException.class, () -> CertificateAuthority.load(cert, key));
        assertEquals(cert + ": the certificate is not a CA (basic constraints CA:false)", e.getMessage());
    }

    /** Whatever bytes a PEM block carries, loading fails with an IOException naming the file, never a crash. */
    @Property(tries = 300)
    void anyBytesInAPrivateKeyBlockAreAPreciseError(@ForAll @Size(max = 400) byte[] body,
            @ForAll boolean traditional) throws Exception {
        Path cert = Files.createTempFile("ca", ".pem");
        Path key = Files.createTempFile("key", ".pem");
        try {
            Files.writeString(cert, pem(caCertificate(FIXED, "SHA256withECDSA")));
            String type = traditional ? "EC PRIVATE KEY" : "PRIVATE KEY";
            Files.writeString(key, "-----BEGIN " + type + "-----\n"
                    + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(body)
                    + "\n-----END " + type + "-----\n");
            IOException e = assertThrows(IOException.class, () -> CertificateAuthority.load(cert, key));
            assertTrue(e.getMessage().startsWith(key.toString()), e.getMessage());
            assertFalse(e.getMessage().contains(Base64.getEncoder().encodeToString(body)) && body.length > 8,
                    "the error never quotes the key's bytes");
        } finally {
            Files.deleteIfExists(cert);
            Files.deleteIfExists(key);
        }
    }

    /** Whatever bytes a certificate block carries, reading it fails with an IOException naming the file. */
    @Property(tries = 300)
    void anyBytesInACertificateBlockAreAPreciseError(@ForAll @Size(max = 400) byte[] body) throws Exception {
        Path cert = Files.createTempFile("ca", ".pem");
        try {
            Files.writeString(cert, "-----BEGIN CERTIFICATE-----\n" + Base64.getMimeEncoder().encodeToString(body)
                    + "\n-----END CERTIFICATE-----\n");
            IOException e = assertThrows(IOException.class, () -> CertificateAuthority.readCertificate(cert));
            assertTrue(e.getMessage().startsWith(cert.toString()), e.getMessage());
        } finally {
            Files.deleteIfExists(cert);
        }
    }

    private static final KeyPair FIXED = keyPairUnchecked();

    private static KeyPair keyPairUnchecked() {
        try {
            return keyPair("EC");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static PrivateKeyInfo privateKeyInfo(Path file) throws IOException {
        try (PEMParser p = new PEMParser(Files.newBufferedReader(file))) {
            return (PrivateKeyInfo) p.readObject();
        }
    }

    private Path write(String name, String text) throws IOException {
        return Files.writeString(dir.resolve(name), text);
    }

    private static KeyPair keyPair(String algorithm) throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance(algorithm);
        switch (algorithm) {
            case "EC" -> g.initialize(new ECGenParameterSpec("secp256r1"));
            case "RSA", "DSA" -> g.initialize(2048);
            default -> {
            }
        }
        return g.generateKeyPair();
    }

    private static KeyPair bouncyCastleEcKeyPair() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC", new BouncyCastleProvider());
        g.initialize(new ECGenParameterSpec("secp256r1"));
        return g.generateKeyPair();
    }

    private static String signature(String keyAlgorithm) {
        return keyAlgorithm.equals("RSA") ? "SHA256withRSA" : "SHA256withECDSA";
    }

    private static X509Certificate caCertificate(KeyPair kp, String signature) throws Exception {
        return certificate(kp, signature, true);
    }

    private static X509Certificate certificate(KeyPair kp, String signature, boolean ca) throws Exception {
        X500Name name = new X500Name("CN=Test CA " + signature);
        Instant now = Instant.now();
        X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(name, BigInteger.valueOf(now.toEpochMilli()),
                Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(30))), name,
                kp.getPublic());
        b.addExtension(Extension.basicConstraints, true, ca ? new BasicConstraints(0) : new BasicConstraints(false));
        return new JcaX509CertificateConverter()
                .getCertificate(b.build(new JcaContentSignerBuilder(signature).build(kp.getPrivate())));
    }

    /** {@return the object as PEM: a certificate, or a private key in the traditional OpenSSL format} */
    private static String pem(Object o) throws IOException {
        StringWriter sw = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(sw)) {
            w.writeObject(o);
        }
        return sw.toString();
    }

    private static String pkcs8(PrivateKey key) throws IOException {
        StringWriter sw = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(sw)) {
            w.writeObject(new JcaPKCS8Generator(key, null));
        }
        return sw.toString();
    }
}
