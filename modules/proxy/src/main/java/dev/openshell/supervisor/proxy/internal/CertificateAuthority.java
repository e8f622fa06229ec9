package dev.openshell.supervisor.proxy.internal;

import java.io.IOException;
import java.io.Reader;
import java.io.StringWriter;
import java.io.Writer;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECPrivateKey;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.HexFormat;
import java.util.Optional;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.util.io.pem.PemObject;
import org.bouncycastle.util.io.pem.PemWriter;

/**
 * The supervisor CA that signs the per-host leaf certificates used for TLS interception (BouncyCastle PKIX).
 *
 * <p>Generated CA: EC P-256 key, {@code CN=OpenShell supervisor CA <random>}, basic constraints {@code CA:true,
 * pathlen:0} (critical), key usage {@code keyCertSign, cRLSign} (critical), valid 10 years. Leaf certificates: the
 * shared leaf EC P-256 key, one DNS or IP subject alternative name, {@code serverAuth}, valid 7 days (never past the
 * CA), random 127-bit serial.
 */
public final class CertificateAuthority {
    /** File name of the CA certificate inside {@code <state dir>/ca}. */
    public static final String CERT_FILE = "supervisor-ca.pem";
    /** File name of the CA private key inside {@code <state dir>/ca}, mode 0600 where POSIX permissions exist. */
    public static final String KEY_FILE = "supervisor-ca-key.pem";
    private static final Duration CA_VALIDITY = Duration.ofDays(3650);
    private static final Duration LEAF_VALIDITY = Duration.ofDays(7);
    private static final Duration BACKDATE = Duration.ofHours(1);

    private final X509Certificate certificate;
    private final PrivateKey privateKey;
    private final SecureRandom random = new SecureRandom();
    /** The key of every leaf this CA issues, made on the first {@link #issue} (not at start-up); guarded by this. */
    private KeyPair leafKey;
    /** Whether a leaf this CA signed has verified with the CA certificate's public key. */
    private volatile boolean signerVerified;

    private CertificateAuthority(X509Certificate certificate, PrivateKey privateKey) {
        this.certificate = certificate;
        this.privateKey = privateKey;
    }

    /** {@return the CA certificate} */
    public X509Certificate certificate() {
        return certificate;
    }

    /** {@return the CA certificate as PEM text} */
    public String certificatePem() {
        return pem(certificate);
    }

    /**
     * Loads the CA from {@code <stateDir>/ca}, or generates and stores one when neither file exists.
     *
     * @param stateDir the state directory; created if missing
     * @return the CA
     * @throws IOException when only one of the two files exists, a file cannot be read or written, or it does not
     *     hold a usable CA (the message names the file)
     */
    public static CertificateAuthority loadOrCreate(Path stateDir) throws IOException {
        Path dir = stateDir.resolve("ca");
        Path cert = dir.resolve(CERT_FILE);
        Path key = dir.resolve(KEY_FILE);
        boolean hasCert = Files.exists(cert);
        boolean hasKey = Files.exists(key);
        if (hasCert && hasKey) {
            return load(cert, key);
        }
        if (hasCert || hasKey) {
            throw new IOException("CA state is incomplete: found %s but not %s".formatted(
                    hasCert ? cert : key, hasCert ? key : cert));
        }
        try {
            CertificateAuthority ca = generate();
            Files.createDirectories(dir);
            writePrivate(key, ca.privateKeyPem());
            Files.writeString(cert, ca.certificatePem(), StandardCharsets.US_ASCII, StandardOpenOption.CREATE_NEW);
            System.getLogger(CertificateAuthority.class.getPackageName()).log(System.Logger.Level.INFO,
                    "created the supervisor CA {0} (SHA-256 fingerprint {1}); sandboxes must trust it: "
                            + "supervisor ca export", cert.toAbsolutePath(), fingerprint(ca.certificate()));
            return ca;
        } catch (FileAlreadyExistsException e) {
            // another process created it first: use theirs
            return load(cert, key);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IOException("cannot generate the supervisor CA: " + e.getMessage(), e);
        }
    }

    /**
     * {@return the SHA-256 fingerprint of a certificate's DER encoding, as colon-separated upper-case hex pairs (the
     * form {@code openssl x509 -fingerprint -sha256} prints)}
     *
     * @param certificate the certificate
     */
    public static String fingerprint(java.security.cert.X509Certificate certificate) {
        try {
            byte[] d = java.security.MessageDigest.getInstance("SHA-256").digest(certificate.getEncoded());
            return java.util.HexFormat.ofDelimiter(":").withUpperCase().formatHex(d);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 of the CA certificate", e);
        }
    }

    /**
     * Replaces the CA in {@code <stateDir>/ca} with a newly generated one. The current files, when present, are first
     * copied to {@code <stateDir>/ca/previous/<stamp>/} (the key keeps mode 0600); then the new key and certificate
     * are written beside them under temporary names and moved over the old ones, key first. There is no moment
     * without a CA on disk; a supervisor starting during the two moves sees a key that does not match and refuses to
     * start rather than silently generating another CA.
     *
     * @param stateDir the state directory; created if missing
     * @param stamp the name of the backup directory, for example {@code 20261129T213702Z}; {@code [A-Za-z0-9_-]+}
     * @return the new CA, and where the previous files were copied, if there were any
     * @throws IOException when a file cannot be read, copied or written, or the backup directory already exists
     * @throws IllegalArgumentException if {@code stamp} is not a plain file name
     */
    public static Rotated rotate(Path stateDir, String stamp) throws IOException {
        if (!stamp.matches("[A-Za-z0-9_-]{1,64}")) {
            throw new IllegalArgumentException("backup stamp must be 1 to 64 of [A-Za-z0-9_-]");
        }
        Path dir = stateDir.resolve("ca");
        Path cert = dir.resolve(CERT_FILE);
        Path key = dir.resolve(KEY_FILE);
        Files.createDirectories(dir);
        CertificateAuthority ca;
        try {
            ca = generate();
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IOException("cannot generate the supervisor CA: " + e.getMessage(), e);
        }
        Optional<Path> backup = Optional.empty();
        if (Files.exists(cert) || Files.exists(key)) {
            Path previous = dir.resolve("previous").resolve(stamp);
            Files.createDirectories(previous.getParent());
            Files.createDirectory(previous);
            if (Files.exists(key)) {
                writePrivate(previous.resolve(KEY_FILE), Files.readString(key, StandardCharsets.US_ASCII));
            }
            if (Files.exists(cert)) {
                Files.copy(cert, previous.resolve(CERT_FILE));
            }
            backup = Optional.of(previous);
        }
        Path newKey = dir.resolve("." + KEY_FILE + ".new");
        Path newCert = dir.resolve("." + CERT_FILE + ".new");
        Files.deleteIfExists(newKey);
        Files.deleteIfExists(newCert);
        writePrivate(newKey, ca.privateKeyPem());
        Files.writeString(newCert, ca.certificatePem(), StandardCharsets.US_ASCII, StandardOpenOption.CREATE_NEW);
        move(newKey, key);
        move(newCert, cert);
        return new Rotated(ca, cert, backup);
    }

    /**
     * The outcome of {@link #rotate}.
     *
     * @param authority the new CA
     * @param certificateFile where its certificate now is
     * @param previous the directory holding a copy of the replaced files; empty when there were none
     */
    public record Rotated(CertificateAuthority authority, Path certificateFile, Optional<Path> previous) {
    }

    private static void move(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /**
     * Loads an operator-supplied CA from PEM files.
     *
     * @param certPem a PEM file whose first certificate is the CA (basic constraints CA:true)
     * @param keyPem a PEM file with its private key (PKCS#8 {@code PRIVATE KEY}, or traditional {@code EC}/{@code
     *     RSA PRIVATE KEY}), unencrypted; EC, RSA or Ed25519
     * @return the CA
     * @throws IOException naming the file when unreadable, not a CA, expired, or when the key does not match (see
     *     {@link #matches})
     */
    public static CertificateAuthority load(Path certPem, Path keyPem) throws IOException {
        X509Certificate cert = readCertificate(certPem);
        PrivateKeyInfo info = CaKeyFile.read(keyPem);
        PrivateKey key = CaKeyFile.privateKey(keyPem, info);
        if (cert.getBasicConstraints() < 0) {
            throw new IOException(certPem + ": the certificate is not a CA (basic constraints CA:false)");
        }
        try {
            cert.checkValidity();
        } catch (CertificateException e) {
            throw new IOException(certPem + ": the CA certificate is expired or not yet valid");
        }
        if (!CaKeyFile.matches(info, key, cert.getPublicKey())) {
            throw new IOException(keyPem + ": the private key does not match the certificate in " + certPem);
        }
        return new CertificateAuthority(cert, key);
    }

    /** {@return a new in-memory CA} @throws GeneralSecurityException if EC P-256 is unavailable */
    public static CertificateAuthority generate() throws GeneralSecurityException, OperatorCreationException,
            CertIOException {
        KeyPair kp = newEcKey();
        Instant now = Instant.now();
        String suffix = HexFormat.of().formatHex(new SecureRandom().generateSeed(4));
        X500Name name = new X500NameBuilder(BCStyle.INSTANCE)
                .addRDN(BCStyle.O, "OpenShell")
                .addRDN(BCStyle.CN, "OpenShell supervisor CA " + suffix)
                .build();
        X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(name, serial(new SecureRandom()),
                Date.from(now.minus(BACKDATE)), Date.from(now.plus(CA_VALIDITY)), name, kp.getPublic());
        JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
        b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        b.addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(kp.getPublic()));
        X509Certificate cert = new JcaX509CertificateConverter()
                .getCertificate(b.build(signer(kp.getPrivate())));
        return new CertificateAuthority(cert, kp.getPrivate());
    }

    /**
     * Issues a leaf certificate for one host.
     *
     * @param authority the normalised host (DNS name or IP literal) the client asked to CONNECT to
     * @return the leaf key and the chain {@code [leaf, ca]}
     * @throws GeneralSecurityException when signing fails, or when the first leaf this CA signs does not verify with
     *     the CA certificate's public key (a key file whose private part does not belong to the public key it
     *     carries; see {@link #matches})
     */
    public LeafCertificate issue(Authority authority) throws GeneralSecurityException {
        KeyPair key = leafKey();
        try {
            Instant now = Instant.now();
            Instant notAfter = now.plus(LEAF_VALIDITY);
            Instant caEnd = certificate.getNotAfter().toInstant();
            if (notAfter.isAfter(caEnd)) {
                notAfter = caEnd;
            }
            X500Name subject = new X500NameBuilder(BCStyle.INSTANCE)
                    .addRDN(BCStyle.CN, authority.host())
                    .build();
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(certificate, serial(random),
                    Date.from(now.minus(BACKDATE)), Date.from(notAfter), subject, key.getPublic());
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            Optional<InetAddress> ip = authority.literal();
            GeneralName san = ip.isPresent()
                    ? new GeneralName(GeneralName.iPAddress, ip.get().getHostAddress())
                    : new GeneralName(GeneralName.dNSName, authority.host());
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
            b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
            b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(san));
            b.addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(key.getPublic()));
            b.addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(certificate));
            X509Certificate leaf = new JcaX509CertificateConverter().getCertificate(b.build(signer(privateKey)));
            if (!signerVerified) {
                try {
                    leaf.verify(certificate.getPublicKey());
                } catch (GeneralSecurityException e) {
                    throw new GeneralSecurityException("the CA private key does not match the CA certificate: "
                            + "a leaf certificate it signed does not verify", e);
                }
                signerVerified = true;
            }
            return new LeafCertificate(key.getPrivate(), new X509Certificate[] {leaf, certificate});
        } catch (CertIOException | OperatorCreationException e) {
            throw new GeneralSecurityException("cannot issue a leaf certificate", e);
        }
    }

    private synchronized KeyPair leafKey() throws GeneralSecurityException {
        if (leafKey == null) {
            leafKey = newEcKey();
        }
        return leafKey;
    }

    /**
     * A leaf key and its chain.
     *
     * @param key the private key
     * @param chain {@code [leaf, ca]}
     */
    public record LeafCertificate(PrivateKey key, X509Certificate[] chain) {
    }

    /**
     * {@return the private key as PKCS#8 PEM} An EC key carries its public key (the RFC 5915 {@code publicKey}
     * field, as OpenSSL writes it), so that {@link #load} can check it against the certificate without EC arithmetic.
     */
    private String privateKeyPem() throws IOException {
        byte[] der = privateKey.getEncoded();
        if (privateKey instanceof ECPrivateKey ec) {
            PrivateKeyInfo info = PrivateKeyInfo.getInstance(der);
            der = new PrivateKeyInfo(info.getPrivateKeyAlgorithm(), new org.bouncycastle.asn1.sec.ECPrivateKey(
                    ec.getParams().getOrder().bitLength(), ec.getS(),
                    SubjectPublicKeyInfo.getInstance(certificate.getPublicKey().getEncoded()).getPublicKeyData(),
                    null)).getEncoded();
        }
        StringWriter sw = new StringWriter();
        try (PemWriter w = new PemWriter(sw)) {
            w.writeObject(new PemObject("PRIVATE KEY", der));
        }
        return sw.toString();
    }

    /** {@return a certificate as PEM} @param cert the certificate */
    public static String pem(X509Certificate cert) {
        StringWriter sw = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(sw)) {
            w.writeObject(cert);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return sw.toString();
    }

    private static void writePrivate(Path key, String pem) throws IOException {
        try {
            Files.createFile(key, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException e) {
            Files.createFile(key);
        }
        try (Writer w = Files.newBufferedWriter(key, StandardCharsets.US_ASCII, StandardOpenOption.WRITE)) {
            w.write(pem);
        }
    }

    /**
     * Reads the first certificate of a PEM file.
     *
     * @param file the file
     * @return the certificate
     * @throws IOException naming the file when it holds no certificate
     */
    public static X509Certificate readCertificate(Path file) throws IOException {
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.US_ASCII); PEMParser p = new PEMParser(r)) {
            Object o;
            while ((o = p.readObject()) != null) {
                if (o instanceof X509CertificateHolder h) {
                    return new JcaX509CertificateConverter().getCertificate(h);
                }
            }
        } catch (FileSystemException e) {
            throw e; // missing or unreadable: the JDK's message names the file
        } catch (IOException | CertificateException | RuntimeException e) {
            throw new IOException(file + ": not a readable PEM certificate", e);
        }
        throw new IOException(file + ": no PEM certificate found");
    }

    private static ContentSigner signer(PrivateKey key) throws OperatorCreationException {
        return new JcaContentSignerBuilder(CaKeyFile.signatureAlgorithm(key)).build(key);
    }

    private static KeyPair newEcKey() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        return g.generateKeyPair();
    }

    private static BigInteger serial(SecureRandom random) {
        return new BigInteger(127, random).setBit(126);
    }
}
