package dev.openshell.supervisor.grpc;

import java.io.IOException;
import java.io.Writer;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/** Test certificates (EC P-256, PEM, keys as PKCS#8), made with BouncyCastle in a temporary directory. */
final class TestPki {
    private static final AtomicLong SERIAL = new AtomicLong(System.nanoTime());

    /** A certificate with its key, written to {@code <name>.pem} and {@code <name>.key}. */
    record Issued(X509Certificate certificate, PrivateKey key, Path certFile, Path keyFile) {
    }

    private TestPki() {
    }

    static Issued ca(Path dir, String name) throws Exception {
        KeyPair kp = keyPair();
        X500Name subject = new X500Name("CN=" + name);
        X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(subject, serial(), notBefore(), notAfter(), subject, kp.getPublic())
                .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
                .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        return write(dir, name, sign(b, kp.getPrivate()), kp.getPrivate());
    }

    /** A leaf for 127.0.0.1 and localhost, usable as server and client certificate. */
    static Issued leaf(Path dir, String name, Issued ca) throws Exception {
        return leaf(dir, name, ca, "localhost");
    }

    /** A leaf for 127.0.0.1 and the given DNS names, usable as server and client certificate. */
    static Issued leaf(Path dir, String name, Issued ca, String... dnsNames) throws Exception {
        GeneralName[] names = new GeneralName[dnsNames.length + 1];
        names[0] = new GeneralName(GeneralName.iPAddress, "127.0.0.1");
        for (int i = 0; i < dnsNames.length; i++) {
            names[i + 1] = new GeneralName(GeneralName.dNSName, dnsNames[i]);
        }
        KeyPair kp = keyPair();
        X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(ca.certificate(), serial(), notBefore(), notAfter(),
                new X500Name("CN=" + name), kp.getPublic())
                .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
                .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(new KeyPurposeId[] {
                        KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}))
                .addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names));
        return write(dir, name, sign(b, ca.key()), kp.getPrivate());
    }

    private static KeyPair keyPair() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        return g.generateKeyPair();
    }

    private static X509Certificate sign(X509v3CertificateBuilder b, PrivateKey issuerKey) throws Exception {
        return new JcaX509CertificateConverter().getCertificate(
                b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey)));
    }

    private static Issued write(Path dir, String name, X509Certificate cert, PrivateKey key) throws IOException {
        Path c = dir.resolve(name + ".pem");
        Path k = dir.resolve(name + ".key");
        try (Writer w = Files.newBufferedWriter(c); JcaPEMWriter pem = new JcaPEMWriter(w)) {
            pem.writeObject(cert);
        }
        try (Writer w = Files.newBufferedWriter(k); JcaPEMWriter pem = new JcaPEMWriter(w)) {
            pem.writeObject(new JcaPKCS8Generator(key, null));
        }
        return new Issued(cert, key, c, k);
    }

    private static BigInteger serial() {
        return BigInteger.valueOf(SERIAL.incrementAndGet());
    }

    private static Date notBefore() {
        return Date.from(Instant.now().minus(Duration.ofHours(1)));
    }

    private static Date notAfter() {
        return Date.from(Instant.now().plus(Duration.ofDays(2)));
    }
}
