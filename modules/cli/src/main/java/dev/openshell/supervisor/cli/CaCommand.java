package dev.openshell.supervisor.cli;

import dev.openshell.supervisor.policy.ConfigProblem;
import dev.openshell.supervisor.policy.PolicyException;
import dev.openshell.supervisor.policy.gateway.GatewayConfig;
import dev.openshell.supervisor.policy.gateway.GatewayConfigLoader;
import dev.openshell.supervisor.policy.gateway.TlsSettings;
import dev.openshell.supervisor.proxy.CaStore;
import dev.openshell.supervisor.runtime.ConnectedRegistry;
import dev.openshell.supervisor.runtime.Supervisor;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code supervisor ca}: the CA sandboxes must trust for TLS interception. {@code export} prints or writes it (PEM,
 * environment lines for common runtimes, or a PKCS#12 truststore); {@code rotate} replaces the generated CA. The CA is
 * the one {@code supervisor run} uses: {@code <state dir>/ca/supervisor-ca.pem} (generated on first use), or the
 * operator-supplied {@code [openshell.supervisor.tls] ca_cert} of the gateway configuration.
 */
@Command(name = "ca", description = "The CA sandboxes must trust: export it, or rotate the generated one.",
        subcommands = {CaCommand.Export.class, CaCommand.Rotate.class})
final class CaCommand implements Callable<Integer> {
    /** The default PKCS#12 truststore password: Java's conventional one (a truststore holds no secret). */
    static final String DEFAULT_STORE_PASSWORD = "changeit";
    /** The truststore alias of the supervisor CA. */
    static final String ALIAS = "openshell-supervisor-ca";

    @Spec
    CommandSpec spec;

    CaCommand() {
    }

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand: export or rotate");
    }

    /** Options shared by both subcommands: where the CA is. */
    static final class Location {
        @Option(names = "--state-dir", paramLabel = "DIR",
                description = "State directory; the CA is DIR/ca/supervisor-ca.pem (default: the gateway's state_dir,"
                        + " else ~/.openshell/supervisor).")
        Path stateDir;

        @Option(names = "--gateway-config", paramLabel = "FILE",
                description = "Gateway configuration (TOML): its state_dir, and its operator CA (tls.ca_cert) if set.")
        Path gateway;

        GatewayConfig gateway(PrintWriter err) {
            if (gateway == null) {
                return ConnectedRegistry.defaultGateway();
            }
            try {
                return GatewayConfigLoader.load(gateway).value();
            } catch (PolicyException e) {
                err.println("supervisor: " + e.file() + " is invalid (" + e.errors().size() + " error(s))");
                for (ConfigProblem p : e.problems()) {
                    err.println("  " + p.describe());
                }
                throw new Failed();
            }
        }
    }

    /** Stops a subcommand with exit code 1 after its message is printed. */
    static final class Failed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Failed() {
            super(null, null, false, false);
        }
    }

    /** {@code supervisor ca export}. */
    @Command(name = "export", description = {
            "Export the CA certificate that sandboxes must trust.",
            "Formats:",
            "  pem     the certificate (PEM); with --include-system-roots, followed by the runtime's default roots",
            "  env     shell lines that make common runtimes trust it: SSL_CERT_FILE, REQUESTS_CA_BUNDLE, "
                    + "CURL_CA_BUNDLE, NODE_EXTRA_CA_CERTS and a Java truststore option (JAVA_TOOL_OPTIONS)",
            "  pkcs12  a PKCS#12 truststore (needs --out)",
            "The generated CA is created if the state directory has none (as 'supervisor run' would)."})
    static final class Export implements Callable<Integer> {
        private static final Pattern SHELL_SAFE = Pattern.compile("[A-Za-z0-9_./:=+-]+");

        @Spec
        CommandSpec spec;

        @CommandLine.Mixin
        Location location = new Location();

        @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "pem",
                description = "pem, env or pkcs12 (default: ${DEFAULT-VALUE}).")
        Format format;

        @Option(names = "--out", paramLabel = "FILE",
                description = "Write to FILE instead of standard output (required for pkcs12).")
        Path out;

        @Option(names = "--include-system-roots",
                description = "pem and pkcs12: also include the Java runtime's default trusted roots, for trust stores "
                        + "that replace the system's (the sandbox also reaches hosts the supervisor does not "
                        + "intercept).")
        boolean systemRoots;

        @Option(names = "--password", paramLabel = "PASSWORD", defaultValue = DEFAULT_STORE_PASSWORD,
                description = "pkcs12: the store password (default: ${DEFAULT-VALUE}; a truststore holds no secret).")
        String password;

        @Option(names = "--ca-path", paramLabel = "PATH",
                description = "env: where the sandbox finds the CA PEM (default: the CA file on this machine).")
        String caPath;

        @Option(names = "--bundle-path", paramLabel = "PATH",
                description = "env: where the sandbox finds a PEM bundle of the system roots plus the CA, for the "
                        + "variables that replace the default trust store (default: --ca-path).")
        String bundlePath;

        @Option(names = "--truststore-path", paramLabel = "PATH",
                description = "env: where the sandbox finds the PKCS#12 truststore (default: "
                        + "supervisor-ca.p12 beside the CA file).")
        String truststorePath;

        enum Format { pem, env, pkcs12 }

        Export() {
        }

        @Override
        public Integer call() {
            PrintWriter stdout = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            if (format == Format.pkcs12 && out == null) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--format pkcs12 writes a binary truststore: give --out FILE");
            }
            if (systemRoots && format == Format.env) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--include-system-roots applies to pem and pkcs12");
            }
            try {
                CaStore.CaCertificate ca = load(location, err);
                List<X509Certificate> roots = systemRoots ? systemRoots() : List.of();
                switch (format) {
                    case pem -> write(stdout, pem(ca, roots).getBytes(StandardCharsets.US_ASCII));
                    case env -> write(stdout, env(ca).getBytes(StandardCharsets.UTF_8));
                    case pkcs12 -> write(stdout, pkcs12(ca, roots, password.toCharArray()));
                }
                if (out != null) {
                    err.println("wrote " + format + " to " + out + " (" + describe(ca.certificate())
                            + (roots.isEmpty() ? "" : ", plus " + roots.size() + " system roots") + ")");
                }
                err.flush();
                return 0;
            } catch (Failed e) {
                err.flush();
                return 1;
            } catch (IOException | GeneralSecurityException e) {
                err.println("supervisor: cannot export the CA: " + e.getMessage());
                err.flush();
                return 1;
            }
        }

        private void write(PrintWriter stdout, byte[] bytes) throws IOException {
            if (out == null) {
                stdout.print(new String(bytes, StandardCharsets.UTF_8));
                stdout.flush();
                return;
            }
            try (OutputStream o = Files.newOutputStream(out)) {
                o.write(bytes);
            }
        }

        static String pem(CaStore.CaCertificate ca, List<X509Certificate> roots) {
            StringBuilder b = new StringBuilder(ca.pem());
            for (X509Certificate r : roots) {
                b.append(CaStore.pem(r));
            }
            return b.toString();
        }

        String env(CaStore.CaCertificate ca) {
            Path caFile = ca.certificateFile().toAbsolutePath();
            String pemPath = caPath != null ? caPath : caFile.toString();
            String bundle = bundlePath != null ? bundlePath : pemPath;
            Path defaultStore = caFile.resolveSibling("supervisor-ca.p12");
            String store = truststorePath != null ? truststorePath : defaultStore.toString();
            StringBuilder b = new StringBuilder();
            b.append("# OpenShell supervisor CA: ").append(describe(ca.certificate())).append('\n');
            b.append("# SSL_CERT_FILE, REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE replace the default trust store; if the\n");
            b.append("# sandbox also reaches hosts the supervisor does not intercept (tls: skip), point them at a\n");
            b.append("# bundle with the system roots too: supervisor ca export --include-system-roots --out FILE\n");
            b.append("# and --bundle-path FILE here. NODE_EXTRA_CA_CERTS adds to Node's roots.\n");
            b.append(line("SSL_CERT_FILE", bundle));
            b.append(line("REQUESTS_CA_BUNDLE", bundle));
            b.append(line("CURL_CA_BUNDLE", bundle));
            b.append(line("NODE_EXTRA_CA_CERTS", pemPath));
            b.append("# Java: a PKCS#12 truststore; create it with\n");
            b.append("#   supervisor ca export --format pkcs12 --include-system-roots --out ").append(store).append('\n');
            b.append(line("JAVA_TOOL_OPTIONS", "-Djavax.net.ssl.trustStore=" + store
                    + " -Djavax.net.ssl.trustStoreType=PKCS12 -Djavax.net.ssl.trustStorePassword=" + password));
            return b.toString();
        }

        private static String line(String name, String value) {
            return "export " + name + "=" + quote(value) + "\n";
        }

        /** POSIX shell quoting: safe words as they are, anything else in single quotes. */
        static String quote(String value) {
            if (SHELL_SAFE.matcher(value).matches()) {
                return value;
            }
            return "'" + value.replace("'", "'\\''") + "'";
        }

        static byte[] pkcs12(CaStore.CaCertificate ca, List<X509Certificate> roots, char[] password)
                throws GeneralSecurityException, IOException {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            ks.setCertificateEntry(ALIAS, ca.certificate());
            int i = 0;
            for (X509Certificate r : roots) {
                ks.setCertificateEntry("system-root-" + i++, r);
            }
            java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
            ks.store(bytes, password);
            return bytes.toByteArray();
        }
    }

    /** {@code supervisor ca rotate}. */
    @Command(name = "rotate", description = {
            "Replace the generated CA with a new one.",
            "The old certificate and key are first copied to STATE_DIR/ca/previous/<UTC time>/. Running "
                    + "supervisors keep the old CA until they restart; sandboxes must trust the new one before "
                    + "that."})
    static final class Rotate implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @CommandLine.Mixin
        Location location = new Location();

        Rotate() {
        }

        @Override
        public Integer call() {
            PrintWriter stdout = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            try {
                GatewayConfig g = location.gateway(err);
                if (g.supervisor().tls().caCert().isPresent()) {
                    err.println("supervisor: the gateway configuration supplies its own CA (tls.ca_cert = "
                            + g.supervisor().tls().caCert().get() + "); rotate it where it is issued, then update "
                            + "ca_cert and ca_key");
                    err.flush();
                    return 1;
                }
                Path stateDir = Supervisor.stateDirectory(Optional.ofNullable(location.stateDir), g);
                CaStore.Rotation r = CaStore.rotate(stateDir, Instant.now());
                stdout.println("new supervisor CA in " + r.certificate().certificateFile() + ": "
                        + describe(r.certificate().certificate()));
                r.previous().ifPresent(p -> stdout.println("previous CA copied to " + p));
                stdout.println("next: make sandboxes trust the new CA (supervisor ca export), then restart running "
                        + "supervisors, which keep the old CA until then");
                stdout.flush();
                return 0;
            } catch (Failed e) {
                err.flush();
                return 1;
            } catch (IOException e) {
                err.println("supervisor: cannot rotate the CA: " + e.getMessage());
                err.flush();
                return 1;
            }
        }
    }

    private static CaStore.CaCertificate load(Location location, PrintWriter err) throws IOException {
        GatewayConfig g = location.gateway(err);
        TlsSettings tls = g.supervisor().tls();
        if (tls.caCert().isPresent()) {
            // an operator-supplied CA: export its certificate; the key stays where it is
            Path cert = tls.caCert().get();
            return new CaStore.CaCertificate(CaStore.readCertificate(cert), cert, false);
        }
        Path stateDir = Supervisor.stateDirectory(Optional.ofNullable(location.stateDir), g);
        CaStore.CaCertificate ca = CaStore.loadOrCreate(stateDir);
        if (ca.created()) {
            err.println("created a new supervisor CA in " + CaStore.directory(stateDir)
                    + " (there was none; 'supervisor run' with this state directory uses it)");
        }
        return ca;
    }

    /** {@return the subject and SHA-256 fingerprint, for messages} */
    static String describe(X509Certificate cert) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(cert.getEncoded());
            return cert.getSubjectX500Principal().getName() + ", SHA-256 "
                    + HexFormat.ofDelimiter(":").withUpperCase().formatHex(d);
        } catch (GeneralSecurityException e) {
            return cert.getSubjectX500Principal().getName();
        }
    }

    /** {@return the trusted roots of this Java runtime ({@code lib/security/cacerts})} */
    static List<X509Certificate> systemRoots() throws IOException, GeneralSecurityException {
        Path cacerts = Path.of(System.getProperty("java.home"), "lib", "security", "cacerts");
        KeyStore ks = KeyStore.getInstance(cacerts.toFile(), (char[]) null);
        List<String> aliases = new ArrayList<>(Collections.list(ks.aliases()));
        aliases.sort(String.CASE_INSENSITIVE_ORDER);
        List<X509Certificate> out = new ArrayList<>();
        for (String a : aliases) {
            Certificate c = ks.getCertificate(a);
            if (c instanceof X509Certificate x && ks.isCertificateEntry(a)) {
                out.add(x);
            }
        }
        if (out.isEmpty()) {
            throw new IOException(cacerts + " holds no trusted roots");
        }
        return out;
    }
}
