package dev.openshell.supervisor.proxy;

import dev.openshell.supervisor.proxy.internal.Authority;
import dev.openshell.supervisor.proxy.internal.CertificateAuthority;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * A started proxy with a plain and an HTTPS upstream on 127.0.0.1. Names (all resolve to 127.0.0.1 through
 * {@code static_hosts}): {@code api.example.test} allowed and intercepted; {@code skip.example.test} allowed with
 * {@code tls: skip}; {@code denied.example.test} refused by network policy; {@code lan.example.test} maps to
 * {@code 10.1.2.3}, allowed by policy but blocked by SSRF.
 */
final class ProxyFixture implements AutoCloseable {
    static final String API = "api.example.test";
    static final String SKIP = "skip.example.test";
    static final String DENIED = "denied.example.test";
    static final String LAN = "lan.example.test";

    final TestUpstream upstream;
    final TestUpstream tlsUpstream;
    final RecordingSteps hook = new RecordingSteps((host, p, client) -> switch (host) {
        case DENIED -> AdmissionDecision.deny("no network policy allows this destination");
        case SKIP -> AdmissionDecision.allow(new EndpointFacts("skip", true, List.of(), Optional.empty()));
        default -> AdmissionDecision.allow(EndpointFacts.of("test-policy"));
    });
    final SupervisorProxy proxy;
    final int port;
    final Path stateDir;
    final Path proxyCaPem;
    final Path upstreamCaPem;
    /** The CA the proxy trusts for upstreams ({@code upstreamTrust}). */
    final CertificateAuthority upstreamCa;

    ProxyFixture(Path tmp) throws Exception {
        this(tmp, true);
    }

    ProxyFixture(Path tmp, boolean allowLoopback) throws Exception {
        this(tmp, allowLoopback, b -> { });
    }

    /**
     * A fixture whose policy steps {@code steps} configures before the proxy starts.
     *
     * @param tmp a temporary directory
     * @param steps sets the steps' answers
     */
    static ProxyFixture withSteps(Path tmp, java.util.function.Consumer<RecordingSteps> steps) throws Exception {
        return new ProxyFixture(tmp, true, steps, b -> { });
    }

    /**
     * A fixture whose policy steps {@code steps} configures and whose proxy {@code custom} configures.
     *
     * @param tmp a temporary directory
     * @param steps sets the steps' answers
     * @param custom sets the proxy's options
     */
    static ProxyFixture withSteps(Path tmp, java.util.function.Consumer<RecordingSteps> steps,
                                  java.util.function.Consumer<SupervisorProxy.Builder> custom) throws Exception {
        return new ProxyFixture(tmp, true, steps, custom);
    }

    ProxyFixture(Path tmp, boolean allowLoopback, java.util.function.Consumer<SupervisorProxy.Builder> custom)
            throws Exception {
        this(tmp, allowLoopback, s -> { }, custom);
    }

    private ProxyFixture(Path tmp, boolean allowLoopback, java.util.function.Consumer<RecordingSteps> steps,
                         java.util.function.Consumer<SupervisorProxy.Builder> custom) throws Exception {
        steps.accept(hook);
        upstreamCa = CertificateAuthority.generate();
        upstreamCaPem = tmp.resolve("upstream-ca.pem");
        Files.writeString(upstreamCaPem, upstreamCa.certificatePem(), StandardCharsets.US_ASCII);
        upstream = TestUpstream.plain();
        tlsUpstream = new TestUpstream(serverContext(upstreamCa, API));
        stateDir = tmp.resolve("state");
        InetAddress loopback = InetAddress.getByName("127.0.0.1");
        SupervisorProxy.Builder builder = SupervisorProxy.builder()
                .listen(new InetSocketAddress("127.0.0.1", 0))
                .stateDirectory(stateDir)
                .upstreamTrust(upstreamCaPem)
                .network(new NetworkSettings(allowLoopback, Map.of(API, loopback, SKIP, loopback, DENIED, loopback,
                        LAN, InetAddress.getByName("10.1.2.3"))))
                .policy(hook::steps);
        custom.accept(builder);
        proxy = builder.build();
        port = proxy.start();
        proxyCaPem = tmp.resolve("proxy-ca.pem");
        Files.writeString(proxyCaPem, proxy.caCertificatePem(), StandardCharsets.US_ASCII);
    }

    static SSLContext serverContext(CertificateAuthority ca, String host) throws Exception {
        CertificateAuthority.LeafCertificate leaf = ca.issue(Authority.parse(host, 443));
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("leaf", leaf.key(), new char[0], leaf.chain());
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, new char[0]);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), null, null);
        return ctx;
    }

    RawClient client() throws IOException {
        return new RawClient(port);
    }

    String apiUrl(String pathAndQuery) {
        return "http://" + API + ":" + upstream.port() + pathAndQuery;
    }

    String apiAuthority() {
        return API + ":" + upstream.port();
    }

    /**
     * {@return a GET of {@code pathAndQuery} from the plain API upstream: absolute-form, with its Host, no body}
     *
     * @param pathAndQuery the path, with a query if any
     */
    String get(String pathAndQuery) {
        return get(upstream.port(), pathAndQuery);
    }

    /**
     * {@return a GET of {@code pathAndQuery} from {@link #API} on {@code port}: absolute-form, with its Host, no body}
     *
     * @param port the port of an upstream on 127.0.0.1
     * @param pathAndQuery the path, with a query if any
     */
    static String get(int port, String pathAndQuery) {
        String authority = API + ":" + port;
        return "GET http://" + authority + pathAndQuery + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n";
    }

    /** {@return the API upstream a plain request ({@code false}) or an intercepted HTTPS one ({@code true}) reaches} */
    TestUpstream apiUpstream(boolean tls) {
        return tls ? tlsUpstream : upstream;
    }

    /** {@return the API authority as a request names it: the plain or the HTTPS upstream's port} */
    String apiAuthority(boolean tls) {
        return API + ":" + apiUpstream(tls).port();
    }

    /** {@return the request-target of {@code path}: absolute-form for a plain request, origin-form in a tunnel} */
    String apiTarget(boolean tls, String path) {
        return tls ? path : apiUrl(path);
    }

    /** The client's trust in the proxy's CA, made on first use. */
    private SSLContext trustProxyCa;

    /** {@return a TLS context that trusts the proxy's CA, as a sandbox with the supervisor's bundle does} */
    synchronized SSLContext trustProxyCa() throws Exception {
        if (trustProxyCa == null) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            ks.setCertificateEntry("proxy-ca", proxy.caCertificate());
            javax.net.ssl.TrustManagerFactory tmf = javax.net.ssl.TrustManagerFactory.getInstance(
                    javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            trustProxyCa = ctx;
        }
        return trustProxyCa;
    }

    /**
     * {@return a raw client of the API upstream} Plain: a connection to the proxy (send absolute-form targets,
     * {@link #apiTarget}). TLS: a CONNECT tunnel the proxy intercepts, already past its TLS handshake (send
     * origin-form targets); closing it closes the tunnel. Either way the upstream is {@link #apiUpstream}, whose
     * responder scripts the raw bytes it answers with.
     */
    RawClient apiClient(boolean tls) throws Exception {
        RawClient c = client();
        if (!tls) {
            return c;
        }
        String auth = apiAuthority(true);
        c.send("CONNECT " + auth + " HTTP/1.1\r\nHost: " + auth + "\r\n\r\n");
        String head = c.readHead();
        if (!head.startsWith("HTTP/1.1 200 ")) {
            c.close();
            throw new IOException("CONNECT was not established: " + head);
        }
        javax.net.ssl.SSLSocket s = (javax.net.ssl.SSLSocket) trustProxyCa().getSocketFactory()
                .createSocket(c.socket(), API, tlsUpstream.port(), true);
        s.startHandshake();
        return new RawClient(s);
    }

    @Override
    public void close() throws IOException {
        proxy.stop();
        upstream.close();
        tlsUpstream.close();
    }
}
