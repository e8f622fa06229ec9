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
import java.security.KeyFactory;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Date;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Optional;
import org.bouncycastle.asn1.ASN1BitString;
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
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.asn1.pkcs.PKCSObjectIdentifiers;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x9.X9ObjectIdentifiers;
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
    /** RFC 8410 {@code id-Ed25519}. */
    private static final String ID_ED25519 = "1.3.101.112";

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
        PrivateKeyInfo info = readPrivateKey(keyPem);
        PrivateKey key = privateKey(keyPem, info);
        if (cert.getBasicConstraints() < 0) {
            throw new IOException(certPem + ": the certificate is not a CA (basic constraints CA:false)");
        }
        try {
            cert.checkValidity();
        } catch (CertificateException e) {
            throw new IOException(certPem + ": the CA certificate is expired or not yet valid");
        }
        if (!matches(info, key, cert.getPublicKey())) {
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

    /**
     * Reads the first unencrypted private key of a PEM file: PKCS#8 {@code PRIVATE KEY}, or a traditional
     * {@code EC PRIVATE KEY} (RFC 5915) or {@code RSA PRIVATE KEY} (RFC 8017); encrypted keys are skipped.
     */
    private static PrivateKeyInfo readPrivateKey(Path file) throws IOException {
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
    private static PrivateKey privateKey(Path file, PrivateKeyInfo info) throws IOException {
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
    private static boolean matches(PrivateKeyInfo info, PrivateKey key, PublicKey pub) {
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

    private static String signatureAlgorithm(PrivateKey key) {
        return switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC", "ECDSA" -> "SHA256withECDSA";
            case "Ed25519", "EdDSA" -> "Ed25519";
            default -> throw new IllegalArgumentException("unsupported CA key algorithm " + key.getAlgorithm());
        };
    }

    private static ContentSigner signer(PrivateKey key) throws OperatorCreationException {
        return new JcaContentSignerBuilder(signatureAlgorithm(key)).build(key);
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
