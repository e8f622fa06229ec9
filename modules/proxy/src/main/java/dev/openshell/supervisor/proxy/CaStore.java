package dev.openshell.supervisor.proxy;

import dev.openshell.supervisor.proxy.internal.CertificateAuthority;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Objects;
import java.util.Optional;

/**
 * The supervisor CA as files, for tools that run beside the proxy ({@code supervisor ca export}, {@code supervisor ca
 * rotate}, {@code supervisor validate}). The proxy itself uses the same files: {@link SupervisorProxy#start()} loads
 * {@code <state dir>/ca/supervisor-ca.pem} and {@code supervisor-ca-key.pem}, or generates both on first start, or
 * uses an operator-supplied CA instead.
 *
 * <p>Generated CA: EC P-256, {@code CN=OpenShell supervisor CA <random>}, {@code CA:true, pathlen:0}, key usage
 * {@code keyCertSign, cRLSign}, valid 10 years. The key file has mode 0600 where POSIX permissions exist. Nothing here
 * returns or prints a private key.
 */
public final class CaStore {
    /** The directory inside the state directory that holds the CA. */
    public static final String DIRECTORY = "ca";
    /** File name of the CA certificate (PEM) inside {@value #DIRECTORY}. */
    public static final String CERT_FILE = CertificateAuthority.CERT_FILE;
    /** File name of the CA private key (PEM, PKCS#8) inside {@value #DIRECTORY}. */
    public static final String KEY_FILE = CertificateAuthority.KEY_FILE;
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")
            .withZone(ZoneOffset.UTC);

    private CaStore() {
    }

    /**
     * A CA certificate and where it is.
     *
     * @param certificate the CA certificate
     * @param certificateFile the PEM file it was read from or written to
     * @param created whether this call generated the CA (no CA existed in the state directory)
     */
    public record CaCertificate(X509Certificate certificate, Path certificateFile, boolean created) {
        /** @throws NullPointerException if a part is {@code null} */
        public CaCertificate {
            Objects.requireNonNull(certificate, "certificate");
            Objects.requireNonNull(certificateFile, "certificateFile");
        }

        /** {@return the certificate as PEM text ({@code -----BEGIN CERTIFICATE-----}), ending with a newline} */
        public String pem() {
            return CaStore.pem(certificate);
        }
    }

    /**
     * A rotation.
     *
     * @param certificate the new CA certificate, now in {@code <state dir>/ca/supervisor-ca.pem}
     * @param previous the directory {@code <state dir>/ca/previous/<UTC time>} holding a copy of the replaced files;
     *     empty when there was no CA before
     */
    public record Rotation(CaCertificate certificate, Optional<Path> previous) {
        /** @throws NullPointerException if a part is {@code null} */
        public Rotation {
            Objects.requireNonNull(certificate, "certificate");
            Objects.requireNonNull(previous, "previous");
        }
    }

    /**
     * {@return the CA directory of a state directory: {@code <stateDir>/ca}}
     *
     * @param stateDir the state directory
     */
    public static Path directory(Path stateDir) {
        return stateDir.resolve(DIRECTORY);
    }

    /**
     * Loads the generated CA of a state directory, generating it when neither file exists, exactly as the proxy does
     * at start-up.
     *
     * @param stateDir the state directory; created if missing
     * @return the CA certificate
     * @throws IOException naming the file when only one of the two files exists, a file cannot be read or written,
     *     the key does not match the certificate, or the certificate is not a valid CA
     */
    public static CaCertificate loadOrCreate(Path stateDir) throws IOException {
        Path cert = directory(stateDir).resolve(CERT_FILE);
        boolean existed = Files.exists(cert) || Files.exists(directory(stateDir).resolve(KEY_FILE));
        CertificateAuthority ca = CertificateAuthority.loadOrCreate(stateDir);
        return new CaCertificate(ca.certificate(), cert, !existed);
    }

    /**
     * Loads and checks an operator-supplied CA ({@code [openshell.supervisor.tls] ca_cert} and {@code ca_key}), as
     * the proxy does at start-up: the certificate must be a CA ({@code CA:true}), currently valid, and match the key.
     *
     * @param certPem the CA certificate (PEM; the first certificate in the file is used)
     * @param keyPem its private key (unencrypted PEM: PKCS#8, or traditional EC or RSA)
     * @return the CA certificate
     * @throws IOException naming the file when unreadable, not a CA, expired, or when the key does not match
     */
    public static CaCertificate loadOperatorCa(Path certPem, Path keyPem) throws IOException {
        return new CaCertificate(CertificateAuthority.load(certPem, keyPem).certificate(), certPem, false);
    }

    /**
     * Replaces the generated CA of a state directory with a new one. The old files are first copied to
     * {@code <stateDir>/ca/previous/<UTC time>/}; the new files then replace them with atomic moves (key first), so
     * there is never a moment without a CA on disk. A running supervisor keeps the CA it loaded until it restarts.
     *
     * @param stateDir the state directory; created if missing
     * @param now the time that names the backup directory
     * @return the new certificate and where the old files went
     * @throws IOException when a file cannot be read, copied or written, or a backup for the same second exists
     */
    public static Rotation rotate(Path stateDir, Instant now) throws IOException {
        CertificateAuthority.Rotated r = CertificateAuthority.rotate(stateDir, STAMP.format(now));
        return new Rotation(new CaCertificate(r.authority().certificate(), r.certificateFile(), true), r.previous());
    }

    /**
     * Reads the first certificate of a PEM file.
     *
     * @param file the file
     * @return the certificate
     * @throws IOException naming the file when it cannot be read or holds no certificate
     */
    public static X509Certificate readCertificate(Path file) throws IOException {
        return CertificateAuthority.readCertificate(file);
    }

    /**
     * {@return a certificate as PEM text, ending with a newline}
     *
     * @param certificate the certificate
     */
    public static String pem(X509Certificate certificate) {
        return CertificateAuthority.pem(certificate);
    }
}
