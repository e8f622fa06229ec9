package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.StringReader;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.Certificate;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;

/**
 * Issue 5 end to end: the runtime image's {@code supervisor run} as a process, real {@code curl} and Java's
 * {@code HttpClient} as agents, and {@link RawUpstream}s on 127.0.0.1 recording the bytes that reach them. One
 * supervisor serves every test of this class (see {@link ProxyWorld} for its hosts).
 */
class ProxyEndToEndIT extends RunningWorld {
    /** A fake key in the OpenAI project-key format; never a real secret. */
    static final String KEY = "sk-proj-" + "E2Etest0123456789abcdefghijklmnopqrstuvwxyz";
    static final String CHAT = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"deploy with "
            + KEY + "\"}]}";
    static final String CHAT_REDACTED = CHAT.replace(KEY, "[REDACTED:openai_api_key]");

    private static String http(String host, String path) {
        return "http://" + host + ":" + world.plain.port() + path;
    }

    private static String https(String host, String path) {
        return "https://" + host + ":" + world.tls.port() + path;
    }

    private static JsonObject json(String body) {
        return Json.createReader(new StringReader(body)).readObject();
    }

    @Test
    void curlThroughTheProxyDeliversTheKeyRedacted() throws Exception {
        world.plain.drain();
        Curl.Result r = Curl.run("-x", supervisor.proxyUrl(), "-H", "Content-Type: application/json",
                "--data-binary", CHAT, http(ProxyWorld.REDACT, "/v1/chat/completions"));
        assertEquals(200, r.status(), r.toString());
        assertEquals("ok", r.body());
        RawUpstream.Received got = world.plain.take();
        assertEquals("POST /v1/chat/completions HTTP/1.1", got.requestLine());
        assertEquals(CHAT_REDACTED, got.bodyText());
        assertEquals(List.of(String.valueOf(CHAT_REDACTED.length())), got.headers().get("content-length"));
        assertFalse(got.rawText().contains(KEY));
    }

    @Test
    void curlWithHttpsProxyAndTheSupervisorCaDeliversTheKeyRedacted() throws Exception {
        world.tls.drain();
        Map<String, String> env = Map.of("HTTPS_PROXY", supervisor.proxyUrl());
        Curl.Result r = Curl.run(env, "--cacert", world.supervisorCa().toString(),
                "-H", "Content-Type: application/json", "--data-binary", CHAT,
                https(ProxyWorld.REDACT, "/v1/chat/completions"));
        assertEquals(200, r.status(), r.toString());
        assertEquals("ok", r.body());
        RawUpstream.Received got = world.tls.take();
        assertEquals(CHAT_REDACTED, got.bodyText());
        assertEquals(ProxyWorld.REDACT, got.sni().orElse(null), "the supervisor's own upstream TLS names the host");
        assertFalse(got.rawText().contains(KEY));

        // without the supervisor CA the client refuses the intercepting certificate: nothing is sent
        int before = world.tls.count();
        Curl.Result untrusted = Curl.run(env, "--cacert", world.upstreamCa.certFile().toString(),
                "--data-binary", CHAT, https(ProxyWorld.REDACT, "/v1/chat/completions"));
        assertEquals(60, untrusted.exit(), untrusted.toString());
        assertEquals(before, world.tls.count());
    }

    @Test
    void javaHttpClientWithAProxySelectorGetsRedactionOverHttpAndHttps() throws Exception {
        HttpClient client = ProxyWorld.client(supervisor, world.supervisorCa());
        for (RawUpstream upstream : List.of(world.plain, world.tls)) {
            upstream.drain();
            String url = upstream.isTls() ? https(ProxyWorld.REDACT, "/v1/chat/completions")
                    : http(ProxyWorld.REDACT, "/v1/chat/completions");
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(url))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(CHAT)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), url);
            assertEquals("ok", r.body());
            assertEquals(CHAT_REDACTED, upstream.take().bodyText(), url);
        }
    }

    @Test
    void aDeniedHostNeverReachesTheUpstream() throws Exception {
        int plainBefore = world.plain.count();
        int tlsBefore = world.tls.count();
        int connectionsBefore = world.plain.connections() + world.tls.connections();
        Curl.Result r = Curl.run("-x", supervisor.proxyUrl(), "--data-binary", CHAT,
                http(ProxyWorld.DENIED, "/upload"));
        assertEquals(403, r.status(), r.toString());
        JsonObject error = json(r.body());
        assertEquals("policy_denied", error.getString("error"));
        assertFalse(r.body().contains(KEY));

        // CONNECT is refused before 200: curl never gets a tunnel
        Curl.Result c = Curl.run(Map.of("HTTPS_PROXY", supervisor.proxyUrl()), "--cacert",
                world.supervisorCa().toString(), https(ProxyWorld.DENIED, "/upload"));
        assertEquals(56, c.exit(), c.toString());
        assertTrue(c.err().contains("403"), c.err());

        // an allowed host on a port the policy does not list
        RawClient.Response raw = RawClient.exchange(supervisor.host(), supervisor.port(),
                "GET http://" + ProxyWorld.PLAIN + ":9/ HTTP/1.1\r\nHost: " + ProxyWorld.PLAIN + ":9\r\n\r\n");
        assertEquals(403, raw.status(), raw.head());

        assertEquals(plainBefore, world.plain.count());
        assertEquals(tlsBefore, world.tls.count());
        assertEquals(connectionsBefore, world.plain.connections() + world.tls.connections(),
                "no connection was even opened");
    }

    @Test
    void aHostHeaderThatDisagreesWithTheRequestTargetIsRefused() throws Exception {
        int before = world.plain.count();
        String target = http(ProxyWorld.PLAIN, "/a");
        RawClient.Response r = RawClient.exchange(supervisor.host(), supervisor.port(),
                "GET " + target + " HTTP/1.1\r\nHost: " + ProxyWorld.REDACT + ":" + world.plain.port() + "\r\n\r\n");
        assertEquals(400, r.status(), r.head());
        assertEquals("host_mismatch", json(r.body()).getString("error"));
        assertTrue(r.closes(), r.head());

        // curl with a Host header of its own: refused the same way
        Curl.Result c = Curl.run("-x", supervisor.proxyUrl(), "-H", "Host: " + ProxyWorld.DENIED, target);
        assertEquals(400, c.status(), c.toString());
        assertEquals("host_mismatch", json(c.body()).getString("error"));

        // inside an intercepted CONNECT tunnel too: the tunnel's authority decides, not Host
        Curl.Result t = Curl.run(Map.of("HTTPS_PROXY", supervisor.proxyUrl()), "--cacert",
                world.supervisorCa().toString(), "-H", "Host: " + ProxyWorld.DENIED,
                https(ProxyWorld.PLAIN, "/a"));
        assertEquals(400, t.status(), t.toString());
        assertEquals("host_mismatch", json(t.body()).getString("error"));
        assertEquals(before, world.plain.count());
    }

    @Test
    void anOverCapBodyStreamsThroughUnprocessedWhenEveryStageIsFailOpen() throws Exception {
        world.plain.drain();
        // under the cap the tagger runs: its header reaches the upstream
        Curl.Result small = Curl.run("-x", supervisor.proxyUrl(), "--data-binary", "small",
                http(ProxyWorld.OPEN, "/small"));
        assertEquals(200, small.status(), small.toString());
        assertEquals("open", world.plain.take().header("x-openshell-middleware-tag").orElse(null));

        byte[] big = bigBody(ProxyWorld.TAGGER_LIMIT + 1);
        Path file = Files.write(tmp.resolve("over-cap-open.bin"), big);
        Curl.Result r = Curl.run("-x", supervisor.proxyUrl(), "-H", "Content-Type: application/octet-stream",
                "--data-binary", "@" + file, http(ProxyWorld.OPEN, "/big"));
        assertEquals(200, r.status(), r.toString());
        RawUpstream.Received got = world.plain.take();
        assertEquals("POST /big HTTP/1.1", got.requestLine());
        assertArrayEquals(big, got.body(), "streamed through unchanged");
        assertTrue(got.header("x-openshell-middleware-tag").isEmpty(), "the stage did not run");

        List<JsonObject> findings = AuditLog.read(world.audit).stream()
                .filter(e -> e.getInt("class_uid") == 2004).map(AuditLog::openshell).toList();
        assertTrue(findings.stream().anyMatch(o -> o.getString("decision", "").equals("bypass")
                && o.getString("code", "").equals("body_over_capacity")
                && o.containsKey("config_keys") && o.getJsonArray("config_keys").getString(0).equals("tag-open")),
                "the uninspectable relay is a Detection Finding: " + findings);
        assertTrue(findings.stream().anyMatch(o -> o.getString("config_key", "").equals("tag-open")
                && o.getString("decision", "").equals("bypass")), "the bypassed stage is a Detection Finding");
    }

    @Test
    void anOverCapBodyIsRefusedWhenAStageIsFailClosed() throws Exception {
        int before = world.plain.count();
        Path file = Files.write(tmp.resolve("over-cap-closed.bin"), bigBody(ProxyWorld.TAGGER_LIMIT + 1));
        Curl.Result r = Curl.run("-x", supervisor.proxyUrl(), "--data-binary", "@" + file,
                http(ProxyWorld.CLOSED, "/big"));
        assertEquals(413, r.status(), r.toString());
        assertEquals("body_too_large", json(r.body()).getString("error"));
        assertEquals(before, world.plain.count());

        // exactly at the cap the stage runs and the request goes through
        Path atCap = Files.write(tmp.resolve("at-cap-closed.bin"), bigBody(ProxyWorld.TAGGER_LIMIT));
        world.plain.drain();
        Curl.Result ok = Curl.run("-x", supervisor.proxyUrl(), "--data-binary", "@" + atCap,
                http(ProxyWorld.CLOSED, "/at-cap"));
        assertEquals(200, ok.status(), ok.toString());
        RawUpstream.Received got = world.plain.take();
        assertEquals(ProxyWorld.TAGGER_LIMIT, got.body().length);
        assertEquals("closed", got.header("x-openshell-middleware-tag").orElse(null));
    }

    @Test
    void aRequestMatchingNoMiddlewareIsForwardedByteIdentical() throws Exception {
        String authority = ProxyWorld.PLAIN + ":" + world.plain.port();
        String fields = "Host: " + authority + "\r\n"
                + "x-MiXeD-Case:   spaced value\t \r\n"
                + "Accept: */*\r\n"
                + "Cookie: a=1; b=\"two\"\r\n"
                + "X-Dup: 1\r\n"
                + "x-dup: 2\r\n"
                + "Content-Type: application/json; charset=utf-8\r\n";
        String body = "{\"text\":\"no middleware here: " + KEY + " stays as sent\",\"bytes\":\"\u00e9\u00e8\"}";
        byte[] bodyBytes = body.getBytes(StandardCharsets.UTF_8);
        byte[] sent = ("PUT http://" + authority + "/p/a%20th?q=1&r=%2F HTTP/1.1\r\n" + fields
                + "Content-Length: " + bodyBytes.length + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
        byte[] expected = ("PUT /p/a%20th?q=1&r=%2F HTTP/1.1\r\n" + fields + "Content-Length: " + bodyBytes.length
                + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
        world.plain.drain();
        RawClient.Response r = RawClient.exchange(supervisor.host(), supervisor.port(), concat(sent, bodyBytes));
        assertEquals(200, r.status(), r.head());
        assertArrayEquals(concat(expected, bodyBytes), world.plain.take().raw(),
                "the upstream receives the field lines and body byte for byte, the target in origin-form");

        // a chunked body: same chunks, same bytes
        String chunked = "POST http://" + authority + "/c HTTP/1.1\r\nHost: " + authority + "\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n";
        RawClient.Response rc = RawClient.exchange(supervisor.host(), supervisor.port(), chunked);
        assertEquals(200, rc.status(), rc.head());
        assertEquals(chunked.replace("http://" + authority + "/c", "/c"), world.plain.take().rawText());
    }

    @Test
    void aTlsSkipEndpointIsTunnelledOpaquely() throws Exception {
        world.tls.drain();
        // curl trusts only the upstream's CA: the handshake it completes is the upstream's own
        Curl.Result r = Curl.run(Map.of("HTTPS_PROXY", supervisor.proxyUrl()), "--cacert",
                world.upstreamCa.certFile().toString(), "--data-binary", CHAT, https(ProxyWorld.SKIP, "/v1/x"));
        assertEquals(200, r.status(), r.toString());
        RawUpstream.Received got = world.tls.take();
        assertEquals(CHAT, got.bodyText(), "nothing in a tls: skip tunnel is inspected or changed");
        assertEquals(ProxyWorld.SKIP, got.sni().orElse(null), "the client's own SNI reached the upstream");

        // the supervisor CA alone does not verify the tunnelled handshake
        Curl.Result withSupervisorCa = Curl.run(Map.of("HTTPS_PROXY", supervisor.proxyUrl()), "--cacert",
                world.supervisorCa().toString(), https(ProxyWorld.SKIP, "/v1/x"));
        assertEquals(60, withSupervisorCa.exit(), withSupervisorCa.toString());

        // the certificate seen through the tunnel is exactly the upstream's leaf
        try (Socket s = new Socket(supervisor.host(), supervisor.port())) {
            s.setSoTimeout(30_000);
            String authority = ProxyWorld.SKIP + ":" + world.tls.port();
            s.getOutputStream().write(("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            BufferedInputStream in = new BufferedInputStream(s.getInputStream());
            String status = readHead(in);
            assertTrue(status.startsWith("HTTP/1.1 200"), status);
            assertEquals(0, in.available(), "nothing but the 200 before the tunnel");
            try (SSLSocket tls = (SSLSocket) ProxyWorld.trusting(world.upstreamCa.certFile()).getSocketFactory()
                    .createSocket(s, ProxyWorld.SKIP, world.tls.port(), false)) {
                tls.startHandshake();
                Certificate[] chain = tls.getSession().getPeerCertificates();
                assertEquals(world.upstreamLeaf.certificate(), chain[0]);
            }
        }
    }

    @Test
    void theCloudMetadataAddressIsRefusedEvenWithLoopbackUpstreamsAllowed() throws Exception {
        Curl.Result r = Curl.run("-x", supervisor.proxyUrl(), "http://" + ProxyWorld.METADATA
                + "/latest/meta-data/");
        assertEquals(403, r.status(), r.toString());
        assertEquals("ssrf_blocked", json(r.body()).getString("error"));
    }

    private static byte[] bigBody(int size) {
        byte[] b = new byte[size];
        for (int i = 0; i < size; i++) {
            b[i] = (byte) ('a' + i % 26);
        }
        return b;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(a);
        out.writeBytes(b);
        return out.toByteArray();
    }

    private static String readHead(BufferedInputStream in) throws java.io.IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.write(b);
            matched = (b == (matched % 2 == 0 ? '\r' : '\n')) ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }
}
