package dev.openshell.supervisor.grpc.auth;

import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.OctetKeyPair;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The supervisor's Ed25519 signing keys for extension tokens (RFC 0009 appendix "Extension Authentication"), kept
 * under {@code <state dir>/extension-keys/} with the care given to the CA key: the directory is created owner-only
 * ({@code 0700}), every key file owner-only ({@code 0600}), created exclusively (an existing file is never
 * overwritten), and a key is checked on load by signing and verifying a probe with its stored public half.
 *
 * <h2>Files</h2>
 * {@code ed25519-<unix seconds of creation>.pem}: a PKCS#8 {@code PRIVATE KEY} block followed by the X.509
 * {@code PUBLIC KEY} block. The newest file is the current key.
 *
 * <h2>Rotation with overlap</h2>
 * The current key signs for {@code keyLifetime} (default 30 days) after its creation; the first token minted after
 * that creates a new key. A retired key stays published in the JWKS for {@code tokenLifetime} after its successor's
 * creation (every token it signed has expired by then) and is deleted afterwards. Thread-safe.
 */
public final class SigningKeys {
    /** The directory under the state directory. */
    public static final String DIRECTORY = "extension-keys";
    /** Default time a key signs before the next one replaces it. */
    public static final Duration DEFAULT_KEY_LIFETIME = Duration.ofDays(30);

    private static final System.Logger LOG = System.getLogger(SigningKeys.class.getName());
    private static final Pattern FILE = Pattern.compile("ed25519-(\\d{1,12})\\.pem");
    private static final byte[] PROBE = "openshell-extension-key-check".getBytes(StandardCharsets.US_ASCII);

    /** One key. @param created when it was created @param pair the key pair @param jwk its public JWK */
    record Key(Instant created, KeyPair pair, OctetKeyPair jwk) {
        String kid() {
            return jwk.getKeyID();
        }
    }

    private final Optional<Path> directory;
    private final Clock clock;
    private final Duration keyLifetime;
    private final Duration tokenLifetime;
    private final List<Key> keys = new ArrayList<>(); // oldest first; guarded by this

    private SigningKeys(Optional<Path> directory, Clock clock, Duration keyLifetime, Duration tokenLifetime) {
        this.directory = directory;
        this.clock = clock;
        this.keyLifetime = keyLifetime;
        this.tokenLifetime = tokenLifetime;
    }

    /**
     * Opens (creating on first use) the keys under {@code <stateDir>/extension-keys}.
     *
     * @param stateDir the supervisor's state directory
     * @param clock the time source
     * @param keyLifetime how long a key signs before it is replaced; at least {@code tokenLifetime}
     * @param tokenLifetime the longest token lifetime; how long a retired key stays published
     * @return the keys, with a current one
     * @throws IOException naming the file when a key cannot be read, does not match its public half, or cannot be
     *     written
     * @throws IllegalArgumentException if {@code keyLifetime < tokenLifetime}
     */
    public static SigningKeys open(Path stateDir, Clock clock, Duration keyLifetime, Duration tokenLifetime)
            throws IOException {
        SigningKeys k = new SigningKeys(Optional.of(stateDir.resolve(DIRECTORY)), clock,
                check(keyLifetime, tokenLifetime), tokenLifetime);
        k.load();
        synchronized (k) {
            k.currentKey();
        }
        return k;
    }

    /**
     * {@return keys held in memory only, never written} For the conformance kit's wrong-key token and for tests.
     *
     * @param clock the time source
     */
    public static SigningKeys ephemeral(Clock clock) {
        SigningKeys k = new SigningKeys(Optional.empty(), clock, DEFAULT_KEY_LIFETIME,
                ExtensionTokenIssuer.MAX_LIFETIME);
        try {
            synchronized (k) {
                k.currentKey();
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return k;
    }

    /** {@return the directory holding the key files, or empty for in-memory keys} */
    public Optional<Path> directory() {
        return directory;
    }

    /**
     * {@return the public JWKS (RFC 7517) of every key a valid token may be signed with: the current key and each
     * retired key still inside its overlap} Each key has {@code kty: OKP}, {@code crv: Ed25519}, {@code x},
     * {@code kid} (RFC 7638 thumbprint), {@code use: sig}, {@code alg: EdDSA}.
     *
     * @throws IOException if a due rotation cannot write the new key
     */
    public synchronized String jwks() throws IOException {
        currentKey();
        List<JWK> published = new ArrayList<>();
        for (int i = keys.size() - 1; i >= 0; i--) {
            published.add(keys.get(i).jwk());
        }
        return new JWKSet(published).toString(true);
    }

    /** {@return the key that signs now, rotating first when it is due} */
    synchronized Key currentKey() throws IOException {
        Instant now = clock.instant();
        prune(now);
        if (keys.isEmpty() || !now.isBefore(keys.getLast().created().plus(keyLifetime))) {
            keys.add(create(now));
            prune(now);
        }
        return keys.getLast();
    }

    /** Drops (and deletes) retired keys whose every token has expired. */
    private void prune(Instant now) {
        for (int i = keys.size() - 2; i >= 0; i--) {
            Instant retired = keys.get(i + 1).created();
            if (!now.isBefore(retired.plus(tokenLifetime))) {
                Key old = keys.remove(i);
                directory.ifPresent(d -> delete(d.resolve(fileName(old.created()))));
            }
        }
    }

    private Key create(Instant now) throws IOException {
        KeyPair pair;
        try {
            pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK has no Ed25519 key generator", e);
        }
        Instant created = Instant.ofEpochSecond(now.getEpochSecond());
        if (!keys.isEmpty() && !created.isAfter(keys.getLast().created())) {
            created = keys.getLast().created().plusSeconds(1);
        }
        if (directory.isPresent()) {
            write(directory.get(), created, pair);
            LOG.log(System.Logger.Level.INFO, "created extension token signing key {0} in {1}",
                    Ed25519Keys.jwk(pair.getPublic()).getKeyID(), directory.get());
        }
        return new Key(created, pair, Ed25519Keys.jwk(pair.getPublic()));
    }

    private void load() throws IOException {
        Path dir = directory.orElseThrow();
        if (!Files.isDirectory(dir)) {
            return;
        }
        List<Key> found = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "ed25519-*.pem")) {
            for (Path f : files) {
                Matcher m = FILE.matcher(f.getFileName().toString());
                if (m.matches()) {
                    found.add(read(f, Instant.ofEpochSecond(Long.parseLong(m.group(1)))));
                }
            }
        }
        found.sort(Comparator.comparing(Key::created));
        synchronized (this) {
            keys.addAll(found);
        }
    }

    private static Key read(Path file, Instant created) throws IOException {
        String text = Files.readString(file, StandardCharsets.US_ASCII);
        try {
            KeyFactory f = KeyFactory.getInstance("Ed25519");
            PrivateKey priv = f.generatePrivate(new PKCS8EncodedKeySpec(block(text, "PRIVATE KEY", file)));
            PublicKey pub = f.generatePublic(new X509EncodedKeySpec(block(text, "PUBLIC KEY", file)));
            if (!Ed25519Keys.verify(pub, PROBE, Ed25519Keys.sign(priv, PROBE))) {
                throw new IOException(file + ": the private key does not match the public key stored with it");
            }
            return new Key(created, new KeyPair(pub, priv), Ed25519Keys.jwk(pub));
        } catch (GeneralSecurityException | IllegalArgumentException | IllegalStateException e) {
            // never the provider's message: it may quote key bytes
            throw new IOException(file + ": not an Ed25519 extension signing key");
        }
    }

    private static byte[] block(String text, String type, Path file) throws IOException {
        String begin = "-----BEGIN " + type + "-----";
        String end = "-----END " + type + "-----";
        int b = text.indexOf(begin);
        int e = b < 0 ? -1 : text.indexOf(end, b);
        if (b < 0 || e < 0) {
            throw new IOException(file + ": no " + type + " block");
        }
        return Base64.getMimeDecoder().decode(text.substring(b + begin.length(), e));
    }

    private static void write(Path dir, Instant created, KeyPair pair) throws IOException {
        if (!Files.isDirectory(dir)) {
            try {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(
                        PosixFilePermissions.fromString("rwx------")));
            } catch (UnsupportedOperationException e) {
                Files.createDirectories(dir);
            }
        }
        Path file = dir.resolve(fileName(created));
        String pem = pem("PRIVATE KEY", pair.getPrivate().getEncoded()) + pem("PUBLIC KEY",
                pair.getPublic().getEncoded());
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException e) {
            Files.createFile(file);
        } catch (FileAlreadyExistsException e) {
            throw new IOException(file + " exists already; it is never overwritten");
        }
        Files.writeString(file, pem, StandardCharsets.US_ASCII);
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    private static String fileName(Instant created) {
        return "ed25519-" + created.getEpochSecond() + ".pem";
    }

    private static void delete(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot delete the expired extension signing key {0}: {1}", file,
                    e.getClass().getSimpleName());
        }
    }

    private static Duration check(Duration keyLifetime, Duration tokenLifetime) {
        Objects.requireNonNull(keyLifetime, "keyLifetime");
        Objects.requireNonNull(tokenLifetime, "tokenLifetime");
        if (keyLifetime.compareTo(tokenLifetime) < 0) {
            throw new IllegalArgumentException("a signing key must live at least as long as a token");
        }
        return keyLifetime;
    }

    @Override
    public synchronized String toString() {
        return "SigningKeys[" + directory.map(Path::toString).orElse("in memory") + ", " + keys.size() + " keys]";
    }
}
