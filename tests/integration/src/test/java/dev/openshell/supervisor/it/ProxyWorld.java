package dev.openshell.supervisor.it;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The parts an end-to-end test needs around {@code supervisor run}: a test CA and an upstream leaf for every test host
 * name, a plain and an HTTPS {@link RawUpstream} on 127.0.0.1, the example third-party plugin in a plugins directory,
 * and the policy and gateway files that point the test host names at the upstreams.
 *
 * <p>Hosts (all mapped to 127.0.0.1 by {@code static_hosts}):
 * <ul>
 *   <li>{@value #REDACT}: {@code openshell/regex} in redact mode, fail_closed (plain and HTTPS ports);</li>
 *   <li>{@value #PLAIN}: allowed, no middleware (plain and HTTPS ports);</li>
 *   <li>{@value #DENY}: {@code openshell/regex} in deny mode, fail_closed;</li>
 *   <li>{@value #OPEN}: {@code examples/tagger} (64 KiB body limit), fail_open;</li>
 *   <li>{@value #CLOSED}: {@code examples/tagger}, fail_closed;</li>
 *   <li>{@value #SKIP}: HTTPS port, {@code tls: skip};</li>
 *   <li>{@value #DENIED}: resolvable, but no network policy allows it;</li>
 *   <li>{@value #METADATA}: allowed on port 80, resolves to the cloud metadata address 169.254.169.254;</li>
 *   <li>{@code 127.0.0.1} itself on the plain port;</li>
 *   <li>with a Privacy Guard port: {@value #GUARDED} ({@code examples/privacy-guard} over plaintext gRPC,
 *       fail_closed) and {@value #GUARDED_OPEN} (the same, fail_open).</li>
 * </ul>
 */
final class ProxyWorld implements AutoCloseable {
    static final String REDACT = "api.redact.test";
    static final String PLAIN = "plain.test";
    static final String DENY = "deny.test";
    static final String OPEN = "open.test";
    static final String CLOSED = "closed.test";
    static final String SKIP = "skip.test";
    static final String DENIED = "denied.test";
    static final String METADATA = "metadata.test";
    static final String GUARDED = "pg.test";
    static final String GUARDED_OPEN = "pg-open.test";
    static final List<String> LOOPBACK_HOSTS = List.of(REDACT, PLAIN, DENY, OPEN, CLOSED, SKIP, DENIED, GUARDED,
            GUARDED_OPEN);
    /** The example third-party plugin's body limit (bytes). */
    static final int TAGGER_LIMIT = 64 * 1024;

    final Path dir;
    final TestPki.Issued upstreamCa;
    final TestPki.Issued upstreamLeaf;
    final RawUpstream plain;
    final RawUpstream tls;
    final Path plugins;
    final Path policy;
    final Path stateDir;
    final Path audit;
    private final OptionalInt privacyGuard;

    private ProxyWorld(Path dir, TestPki.Issued upstreamCa, TestPki.Issued upstreamLeaf, RawUpstream plain,
                       RawUpstream tls, Path plugins, OptionalInt privacyGuard) throws IOException {
        this.privacyGuard = privacyGuard;
        this.dir = dir;
        this.upstreamCa = upstreamCa;
        this.upstreamLeaf = upstreamLeaf;
        this.plain = plain;
        this.tls = tls;
        this.plugins = plugins;
        this.policy = Files.writeString(dir.resolve("policy.yaml"), policyText());
        this.stateDir = dir.resolve("state");
        this.audit = dir.resolve("audit.jsonl");
    }

    static ProxyWorld create(Path dir) throws Exception {
        return create(dir, OptionalInt.empty());
    }

    /**
     * @param privacyGuard the port of a Privacy Guard service on 127.0.0.1 to register (plaintext gRPC)
     */
    static ProxyWorld create(Path dir, OptionalInt privacyGuard) throws Exception {
        Files.createDirectories(dir);
        Path pki = Files.createDirectories(dir.resolve("pki"));
        TestPki.Issued ca = TestPki.ca(pki, "upstream-ca");
        List<String> names = new ArrayList<>(LOOPBACK_HOSTS);
        names.add("localhost");
        TestPki.Issued leaf = TestPki.leaf(pki, "upstream", ca, names.toArray(String[]::new));
        Path plugins = Files.createDirectories(dir.resolve("plugins"));
        Files.copy(Image.plugin("example-tagger"), plugins.resolve("example-tagger.jar"));
        RawUpstream plain = RawUpstream.plain();
        RawUpstream tls = RawUpstream.tls(serverContext(leaf));
        return new ProxyWorld(dir, ca, leaf, plain, tls, plugins, privacyGuard);
    }

    private String policyText() {
        int up = plain.port();
        int ups = tls.port();
        return """
                version: 1
                network_policies:
                  test:
                    name: end-to-end test hosts
                    endpoints:
                      - { host: %1$s, ports: [%2$d, %3$d] }
                      - { host: %4$s, ports: [%2$d, %3$d] }
                      - { host: %5$s, port: %2$d }
                      - { host: %6$s, port: %2$d }
                      - { host: %7$s, port: %2$d }
                      - { host: %8$s, port: %3$d, tls: skip }
                      - { host: %9$s, port: 80 }
                      - { host: "127.0.0.1", port: %2$d }
                      - { host: %10$s, port: %2$d }
                      - { host: %11$s, port: %2$d }
                network_middlewares:
                  secrets:
                    name: Redact known secret formats
                    middleware: openshell/regex
                    order: 10
                    config: { mode: redact }
                    on_error: fail_closed
                    endpoints:
                      include: ["%1$s"]
                  secrets-deny:
                    middleware: openshell/regex
                    order: 11
                    config: { mode: deny }
                    on_error: fail_closed
                    endpoints:
                      include: ["%5$s"]
                  tag-open:
                    middleware: examples/tagger
                    order: 20
                    config: { tag: open }
                    on_error: fail_open
                    endpoints:
                      include: ["%6$s"]
                  tag-closed:
                    middleware: examples/tagger
                    order: 21
                    config: { tag: closed }
                    on_error: fail_closed
                    endpoints:
                      include: ["%7$s"]
                """.formatted(REDACT, up, ups, PLAIN, DENY, OPEN, CLOSED, SKIP, METADATA, GUARDED, GUARDED_OPEN)
                + (privacyGuard.isEmpty() ? "" : """
                  privacy:
                    middleware: examples/privacy-guard
                    order: 30
                    config: { images: redact, pii: redact }
                    on_error: fail_closed
                    endpoints:
                      include: ["%1$s"]
                  privacy-open:
                    middleware: examples/privacy-guard
                    order: 31
                    config: { images: redact, pii: redact }
                    on_error: fail_open
                    endpoints:
                      include: ["%2$s"]
                """.formatted(GUARDED, GUARDED_OPEN));
    }

    /**
     * Writes a gateway file.
     *
     * @param allowLoopback {@code allow_loopback_upstreams}
     * @return the file
     */
    Path gateway(boolean allowLoopback) throws IOException {
        StringBuilder b = new StringBuilder();
        b.append("[openshell.supervisor.network]\n");
        b.append("allow_loopback_upstreams = ").append(allowLoopback).append('\n');
        b.append("\n[openshell.supervisor.network.static_hosts]\n");
        for (String h : LOOPBACK_HOSTS) {
            b.append('"').append(h).append("\" = \"127.0.0.1\"\n");
        }
        b.append('"').append(METADATA).append("\" = \"169.254.169.254\"\n");
        b.append(Image.pins(plugins.resolve("example-tagger.jar")));
        b.append("\n[openshell.supervisor.tls]\n");
        b.append("upstream_ca_bundle = \"").append(upstreamCa.certFile().toAbsolutePath()).append("\"\n");
        if (privacyGuard.isPresent()) {
            b.append("""

                    [[openshell.supervisor.middleware]]
                    name = "privacy-guard"
                    grpc_endpoint = "http://127.0.0.1:%d"
                    max_body_bytes = 4194304
                    timeout = "2s"
                    allow_insecure = true
                    """.formatted(privacyGuard.getAsInt()));
        }
        return Files.writeString(dir.resolve(allowLoopback ? "gateway.toml" : "gateway-no-loopback.toml"),
                b.toString());
    }

    /** {@return the arguments of {@code supervisor run} for this world; admin on a port the OS picks} */
    List<String> runArgs(boolean allowLoopback) throws IOException {
        return new ArrayList<>(List.of("--policy", policy.toString(),
                "--gateway-config", gateway(allowLoopback).toString(),
                "--listen", "127.0.0.1:0",
                "--plugins", plugins.toString(),
                "--state-dir", stateDir.toString(),
                "--audit-log", audit.toString(),
                "--admin-listen", "127.0.0.1:0"));
    }

    SupervisorProcess start(boolean allowLoopback) throws IOException, InterruptedException {
        return SupervisorProcess.start(runArgs(allowLoopback), Map.of());
    }

    /** {@return the supervisor CA file clients trust (written by the proxy on first start)} */
    Path supervisorCa() {
        return stateDir.resolve("ca").resolve("supervisor-ca.pem");
    }

    /** {@return a client context trusting only the certificates in {@code pem}} */
    static SSLContext trusting(Path pem) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        int i = 0;
        try (var in = Files.newInputStream(pem)) {
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                ks.setCertificateEntry("ca" + i++, c);
            }
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    /** {@return a server context presenting {@code leaf}} */
    static SSLContext serverContext(TestPki.Issued leaf) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        char[] pw = "test".toCharArray();
        ks.setKeyEntry("leaf", leaf.key(), pw, new X509Certificate[] {leaf.certificate()});
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, pw);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), null, null);
        return ctx;
    }

    /** {@return Java's HttpClient sending everything through {@code proxy}, trusting {@code ca} for HTTPS} */
    static HttpClient client(SupervisorProcess proxy, Path ca) throws Exception {
        return HttpClient.newBuilder()
                .proxy(ProxySelector.of(new InetSocketAddress(proxy.host(), proxy.port())))
                .sslContext(trusting(ca))
                .connectTimeout(Duration.ofSeconds(10))
                .build();
    }

    @Override
    public void close() throws IOException {
        try {
            plain.close();
        } finally {
            tls.close();
        }
    }
}
