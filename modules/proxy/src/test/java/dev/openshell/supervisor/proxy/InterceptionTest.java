package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Body;
import dev.openshell.supervisor.proxy.internal.CertificateAuthority;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** CONNECT, TLS interception and {@code tls: skip} with real clients: raw sockets, Java's HttpClient and curl. */
class InterceptionTest extends SharedProxy {
    @BeforeEach
    void reset() {
        fx.hook.forwardUnchained();
        fx.upstream.reset();
        fx.tlsUpstream.reset();
    }

    private static HttpClient javaClient() throws Exception {
        return HttpClient.newBuilder()
                .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", fx.port)))
                .sslContext(fx.trustProxyCa())
                .connectTimeout(Duration.ofSeconds(10))
                .build();
    }

    @Test
    void javaHttpClientOverInterceptedHttps() throws Exception {
        fx.hook.selector = r -> ChainSelection.selected(1024, false);
        fx.hook.evaluator = (r, b) -> new RequestVerdict.Forward(r.headers(),
                Body.ofUtf8(b.utf8().orElseThrow().replace("sk-secret", "[REDACTED]")));
        fx.tlsUpstream.respond(r -> TestUpstream.ok("seen: " + r.bodyText()));
        String url = "https://" + ProxyFixture.API + ":" + fx.tlsUpstream.port() + "/v1/chat?x=1";
        HttpResponse<String> resp = javaClient().send(HttpRequest.newBuilder(URI.create(url))
                        .POST(HttpRequest.BodyPublishers.ofString("{\"key\":\"sk-secret\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, resp.statusCode());
        assertEquals("seen: {\"key\":\"[REDACTED]\"}", resp.body());
        assertEquals(HttpClient.Version.HTTP_1_1, resp.version(), "ALPN is pinned to http/1.1");
        TestUpstream.Received got = fx.tlsUpstream.take();
        assertTrue(got.head().startsWith("POST /v1/chat?x=1 HTTP/1.1\r\n"), got.head());
        assertEquals("https", fx.hook.selected.get(0).target().scheme());
        assertEquals(fx.tlsUpstream.port(), fx.hook.selected.get(0).target().port());
    }

    @Test
    void javaHttpClientOverPlainHttp() throws Exception {
        HttpResponse<String> resp = javaClient().send(HttpRequest.newBuilder(URI.create(fx.apiUrl("/plain"))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, resp.statusCode());
        assertEquals("ok", resp.body());
        assertTrue(fx.upstream.take().head().startsWith("GET /plain HTTP/1.1\r\n"));
    }

    @Test
    void curlWithDashX() throws Exception {
        Result r = curl(Map.of(), "-x", "http://127.0.0.1:" + fx.port, fx.apiUrl("/curl?a=1"));
        assertEquals(0, r.exit(), r.stderr());
        assertEquals("ok", r.stdout());
        assertTrue(fx.upstream.take().head().startsWith("GET /curl?a=1 HTTP/1.1\r\n"));
    }

    @Test
    void curlWithHttpsProxyAndTheSupervisorCa() throws Exception {
        fx.hook.selector = r -> ChainSelection.selected(1024, false);
        fx.hook.evaluator = (r, b) -> new RequestVerdict.Forward(r.headers(),
                Body.ofUtf8(b.utf8().orElseThrow().replace("sk-secret", "[REDACTED]")));
        Result r = curl(Map.of("HTTPS_PROXY", "http://127.0.0.1:" + fx.port), "--cacert", fx.proxyCaPem.toString(),
                "-d", "token=sk-secret", "https://" + ProxyFixture.API + ":" + fx.tlsUpstream.port() + "/curl");
        assertEquals(0, r.exit(), r.stderr());
        assertEquals("ok", r.stdout());
        assertEquals("token=[REDACTED]", fx.tlsUpstream.take().bodyText());
    }

    @Test
    void curlRefusesTheInterceptedCertificateWithoutTheCa() throws Exception {
        Result r = curl(Map.of("HTTPS_PROXY", "http://127.0.0.1:" + fx.port),
                "https://" + ProxyFixture.API + ":" + fx.tlsUpstream.port() + "/curl");
        assertEquals(60, r.exit(), "curl exit 60: peer certificate cannot be authenticated");
        assertEquals(0, fx.tlsUpstream.pending());
    }

    @Test
    void leafCertificateNamesTheConnectHostAndAlpnIsHttp11() throws Exception {
        try (RawClient c = fx.client()) {
            String auth = ProxyFixture.API + ":" + fx.tlsUpstream.port();
            c.send("CONNECT " + auth + " HTTP/1.1\r\nHost: " + auth + "\r\n\r\n");
            assertTrue(c.readHead().startsWith("HTTP/1.1 200 "));
            SSLSocket tls = (SSLSocket) fx.trustProxyCa().getSocketFactory()
                    .createSocket(c.socket(), ProxyFixture.API, fx.tlsUpstream.port(), false);
            SSLParameters p = tls.getSSLParameters();
            p.setApplicationProtocols(new String[] {"h2", "http/1.1"});
            p.setEndpointIdentificationAlgorithm("HTTPS");
            tls.setSSLParameters(p);
            tls.startHandshake();
            assertEquals("http/1.1", tls.getApplicationProtocol());
            X509Certificate leaf = (X509Certificate) tls.getSession().getPeerCertificates()[0];
            assertEquals(List.of(List.of(2, ProxyFixture.API)), new ArrayList<>(leaf.getSubjectAlternativeNames())
                    .stream().map(l -> List.copyOf(l)).toList());
            // a Host that disagrees with the CONNECT authority is refused inside the tunnel too
            tls.getOutputStream().write(("GET / HTTP/1.1\r\nHost: evil.example.test\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            tls.getOutputStream().flush();
            String resp = new String(tls.getInputStream().readNBytes(40), StandardCharsets.US_ASCII);
            assertTrue(resp.startsWith("HTTP/1.1 400 Bad Request"), resp);
        }
        assertEquals(0, fx.tlsUpstream.pending());
    }

    private static SSLSocket intercepted(RawClient c, int port) throws Exception {
        String auth = ProxyFixture.API + ":" + port;
        c.send("CONNECT " + auth + " HTTP/1.1\r\nHost: " + auth + "\r\n\r\n");
        assertTrue(c.readHead().startsWith("HTTP/1.1 200 "));
        SSLSocket tls = (SSLSocket) fx.trustProxyCa().getSocketFactory()
                .createSocket(c.socket(), ProxyFixture.API, port, false);
        tls.startHandshake();
        return tls;
    }

    /** Sends a WebSocket upgrade of {@code /ws}, then {@code after}: {@return the response head read back} */
    private static String upgrade(SSLSocket tls, String after) throws IOException {
        tls.getOutputStream().write(("GET /ws HTTP/1.1\r\nHost: " + ProxyFixture.API + ":" + fx.tlsUpstream.port()
                + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n" + after).getBytes(StandardCharsets.US_ASCII));
        tls.getOutputStream().flush();
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            head.append((char) tls.getInputStream().read());
        }
        return head.toString();
    }

    @Test
    void webSocketInsideAnInterceptedTunnelRelaysFramesBothWays() throws Exception {
        fx.hook.selector = r -> ChainSelection.selected(1024, true);
        try (RawClient c = fx.client()) {
            SSLSocket tls = intercepted(c, fx.tlsUpstream.port());
            String head = upgrade(tls, "");
            assertTrue(head.startsWith("HTTP/1.1 101 "), head);
            for (int i = 0; i < 20; i++) {
                byte[] frame = ("frame-" + i + "-" + "y".repeat(i * 500)).getBytes(StandardCharsets.US_ASCII);
                tls.getOutputStream().write(frame);
                tls.getOutputStream().flush();
                assertArrayEquals(frame, tls.getInputStream().readNBytes(frame.length));
            }
        }
        assertTrue(fx.hook.selected.get(0).websocketUpgrade());
        assertEquals("https", fx.hook.selected.get(0).target().scheme());
    }

    @Test
    void webSocketInsideAnInterceptedTunnelUnderAFailClosedChainIsRefused() throws Exception {
        fx.hook.selector = r -> ChainSelection.selected(1024, false);
        try (RawClient c = fx.client()) {
            SSLSocket tls = intercepted(c, fx.tlsUpstream.port());
            String head = upgrade(tls, "frame with a key");
            assertTrue(head.startsWith("HTTP/1.1 403 "), head);
        }
        assertEquals(0, fx.tlsUpstream.pending(), "nothing reached the upstream");
    }

    @Test
    void plainHttpInsideAConnectTunnelIsParsedAndForwarded() throws Exception {
        try (RawClient c = fx.client()) {
            String auth = ProxyFixture.API + ":" + fx.upstream.port();
            c.send("CONNECT " + auth + " HTTP/1.1\r\nHost: " + auth + "\r\n\r\n");
            assertTrue(c.readHead().startsWith("HTTP/1.1 200 "));
            c.send("GET /inner?q=1 HTTP/1.1\r\nHost: " + auth + "\r\n\r\n");
            assertEquals(200, c.read().status());
            c.send("GET /inner HTTP/1.1\r\nHost: " + auth + "\r\nX-A : b\r\n\r\n");
            assertEquals(400, c.read().status(), "the tunnel's requests get the same strict framing");
        }
        assertEquals("GET /inner?q=1 HTTP/1.1\r\nHost: " + ProxyFixture.API + ":" + fx.upstream.port() + "\r\n\r\n",
                fx.upstream.take().rawText());
        assertEquals("http", fx.hook.selected.get(0).target().scheme());
    }

    @Test
    void tlsSkipEndpointIsTunnelledAsOpaqueBytes() throws Exception {
        // bytes the proxy's own parser would reject (obs-fold) pass untouched: the tunnel is never parsed
        String inner = "GET /opaque HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n";
        try (RawClient c = fx.client()) {
            String auth = ProxyFixture.SKIP + ":" + fx.upstream.port();
            c.send("CONNECT " + auth + " HTTP/1.1\r\nHost: " + auth + "\r\n\r\n");
            assertEquals("HTTP/1.1 200 Connection Established\r\n\r\n", c.readHead());
            c.send(inner);
            RawClient.Response r = c.read();
            assertEquals(200, r.status());
        }
        assertArrayEquals(inner.getBytes(StandardCharsets.ISO_8859_1), fx.upstream.take().raw());
        assertTrue(fx.hook.selected.isEmpty(), "no middleware runs on tls: skip traffic");
    }

    @Test
    void connectRefusalsComeBefore200() throws Exception {
        record Case(String target, String host, int status, String code) {
        }
        int up = fx.tlsUpstream.port();
        for (Case k : List.of(
                new Case("denied.example.test:443", "denied.example.test:443", 403, "policy_denied"),
                new Case("lan.example.test:443", "lan.example.test:443", 403, "ssrf_blocked"),
                new Case(ProxyFixture.API + ":" + up, "other.example.test:" + up, 400, "host_mismatch"),
                new Case(ProxyFixture.API, ProxyFixture.API, 400, "invalid_authority"),
                new Case("[fe80::1%25eth0]:443", "[fe80::1%25eth0]:443", 400, "invalid_authority"))) {
            try (RawClient c = fx.client()) {
                c.send("CONNECT " + k.target() + " HTTP/1.1\r\nHost: " + k.host() + "\r\n\r\n");
                RawClient.Response r = c.read();
                assertEquals(k.status(), r.status(), k.toString());
                assertTrue(r.bodyText().contains("\"" + k.code() + "\""), r.bodyText());
                assertTrue(c.closedByPeer());
            }
        }
    }

    @Test
    void upstreamCertificateIsVerified() throws Exception {
        // 127.0.0.1 is not a name in the upstream's certificate: the proxy must refuse the upstream
        try (RawClient c = fx.client()) {
            String auth = "127.0.0.1:" + fx.tlsUpstream.port();
            c.send("CONNECT " + auth + " HTTP/1.1\r\nHost: " + auth + "\r\n\r\n");
            assertTrue(c.readHead().startsWith("HTTP/1.1 200 "));
            SSLSocket tls = (SSLSocket) fx.trustProxyCa().getSocketFactory()
                    .createSocket(c.socket(), "127.0.0.1", fx.tlsUpstream.port(), false);
            tls.startHandshake();
            X509Certificate leaf = (X509Certificate) tls.getSession().getPeerCertificates()[0];
            assertEquals(List.of(List.of(7, "127.0.0.1")), new ArrayList<>(leaf.getSubjectAlternativeNames())
                    .stream().map(l -> List.copyOf(l)).toList());
            tls.getOutputStream().write(("GET / HTTP/1.1\r\nHost: " + auth + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            tls.getOutputStream().flush();
            String resp = new String(tls.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            assertTrue(resp.startsWith("HTTP/1.1 502 Bad Gateway"), resp);
            assertTrue(resp.contains("upstream_tls_failed"), resp);
        }
    }

    @Test
    void caIsPersistedInTheStateDirectory() throws Exception {
        X509Certificate stored = CertificateAuthority.readCertificate(
                fx.stateDir.resolve("ca").resolve(CertificateAuthority.CERT_FILE));
        assertEquals(fx.proxy.caCertificate(), stored);
        CertificateAuthority again = CertificateAuthority.loadOrCreate(fx.stateDir);
        assertEquals(stored, again.certificate(), "a restart reuses the stored CA");
    }

    record Result(int exit, String stdout, String stderr) {
    }

    static Result curl(Map<String, String> env, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("curl", "-sS", "--max-time", "20"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().keySet().removeIf(k -> k.toLowerCase().endsWith("_proxy"));
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("curl did not finish");
        }
        return new Result(p.exitValue(), out, err);
    }
}
