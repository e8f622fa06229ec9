package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * The forwarded head carries the canonical forms the proxy decided on, whatever the client wrote: {@code Host} as
 * the normalised authority the policy admitted (lowercase, no trailing dot, the port), {@code Content-Length} in
 * plain decimal and {@code Transfer-Encoding: chunked} (RFC 9112 sections 3.2.2, 6.1, 6.2), with and without a
 * middleware chain, plain HTTP (absolute-form) and intercepted HTTPS (origin-form and absolute-form).
 */
class CanonicalHeadPropertyTest {
    private static Path dir;
    private static ProxyFixture fx;
    private static SSLContext trustProxyCa;

    @BeforeContainer
    static void start() throws Exception {
        dir = TestDirs.create("canonical-head");
        fx = new ProxyFixture(dir);
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setCertificateEntry("proxy-ca", fx.proxy.caCertificate());
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        trustProxyCa = SSLContext.getInstance("TLS");
        trustProxyCa.init(null, tmf.getTrustManagers(), null);
    }

    @AfterContainer
    static void stop() throws Exception {
        try {
            fx.close();
        } finally {
            TestDirs.delete(dir); // jqwik has no @TempDir for a container: the fixture's CA and state go here
        }
    }

    /** How the client spells one request. */
    record Spelling(boolean tls, boolean chain, boolean absoluteForm, boolean chunked, String hostName,
                    String targetName, int zeros, String chunkedWord) {
    }

    @Property(tries = 60)
    void theUpstreamAlwaysReceivesTheCanonicalHead(@ForAll boolean tls, @ForAll boolean chain,
                                                   @ForAll boolean absoluteForm, @ForAll boolean chunked,
                                                   @ForAll long seed, @ForAll @IntRange(max = 6) int zeros)
            throws Exception {
        Random r = new Random(seed);
        Spelling s = new Spelling(tls, chain, absoluteForm || !tls, chunked, spell(r), spell(r), zeros,
                randomCase(r, "chunked"));
        check(s);
    }

    @Example
    void theAttackersSpellings() throws Exception {
        for (boolean tls : new boolean[] {false, true}) {
            for (boolean chain : new boolean[] {false, true}) {
                check(new Spelling(tls, chain, !tls, true, "API.EXAMPLE.TEST", ProxyFixture.API, 0, "ChUnKeD"));
                check(new Spelling(tls, chain, true, false, ProxyFixture.API + ".", ProxyFixture.API, 1, "chunked"));
                check(new Spelling(tls, chain, !tls, false, "Api.Example.Test.", "API.example.test.", 3, "x"));
            }
        }
    }

    private static void check(Spelling s) throws Exception {
        fx.hook.selector = s.chain() ? req -> ChainSelection.selected(1024, false) : req -> ChainSelection.none();
        fx.hook.evaluator = (req, b) -> new RequestVerdict.Forward(req.headers(), b);
        TestUpstream up = s.tls() ? fx.tlsUpstream : fx.upstream;
        up.respond(req -> TestUpstream.ok("ok"));
        int port = up.port();
        String target = (s.absoluteForm() ? (s.tls() ? "https://" : "http://") + s.targetName() + ":" + port : "")
                + "/canon";
        String framing = s.chunked() ? "Transfer-Encoding: " + s.chunkedWord() + "\r\n"
                : "Content-Length: " + "0".repeat(s.zeros()) + "5\r\n";
        String body = s.chunked() ? "5\r\nhello\r\n0\r\n\r\n" : "hello";
        String request = "POST " + target + " HTTP/1.1\r\nHost: " + s.hostName() + ":" + port + "\r\n" + framing
                + "X-Other: Kept As Sent\r\n\r\n" + body;
        String answer = send(s.tls(), port, request);
        assertTrue(answer.startsWith("HTTP/1.1 200 "), s + " " + answer);
        TestUpstream.Received got = up.take();
        List<String> lines = got.head().lines().toList();
        assertTrue(lines.contains("Host: " + ProxyFixture.API + ":" + port), s + " " + got.head());
        assertTrue(lines.contains("X-Other: Kept As Sent"), s + " " + got.head());
        boolean streamedChunked = s.chunked() && !s.chain();
        List<String> framingLines = lines.stream().filter(l -> l.toLowerCase(Locale.ROOT).startsWith("content-length:")
                || l.toLowerCase(Locale.ROOT).startsWith("transfer-encoding:")).toList();
        assertEquals(List.of(streamedChunked ? "Transfer-Encoding: chunked" : "Content-Length: 5"), framingLines,
                s + " " + got.head());
        assertEquals("hello", got.bodyText());
        assertFalse(got.head().lines().anyMatch(l -> l.regionMatches(true, 0, "host:", 0, 5)
                && !l.equals("Host: " + ProxyFixture.API + ":" + port)), got.head());
    }

    /** {@return the API host in random case, with a trailing dot half of the time} */
    private static String spell(Random r) {
        return randomCase(r, ProxyFixture.API) + (r.nextBoolean() ? "." : "");
    }

    private static String randomCase(Random r, String s) {
        StringBuilder sb = new StringBuilder(s.length());
        for (char c : s.toCharArray()) {
            sb.append(r.nextBoolean() ? Character.toUpperCase(c) : c);
        }
        return sb.toString();
    }

    /** Sends {@code request} plain, or in an intercepted tunnel; {@return the answer's head and body} */
    private static String send(boolean tls, int port, String request) throws Exception {
        try (RawClient c = fx.client()) {
            InputStream in = c.in();
            OutputStream out;
            if (tls) {
                String auth = ProxyFixture.API + ":" + port;
                c.send("CONNECT " + auth + " HTTP/1.1\r\nHost: " + auth + "\r\n\r\n");
                assertTrue(c.readHead().startsWith("HTTP/1.1 200 "));
                SSLSocket s = (SSLSocket) trustProxyCa.getSocketFactory().createSocket(c.socket(), ProxyFixture.API,
                        port, false);
                s.startHandshake();
                in = s.getInputStream();
                out = s.getOutputStream();
            } else {
                out = c.socket().getOutputStream();
            }
            out.write((request.replace("HTTP/1.1\r\n", "HTTP/1.1\r\nConnection: close\r\n"))
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }
}
