package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.StringReader;
import java.net.Socket;
import java.net.URLDecoder;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 17 end to end, through the runtime image with real {@code curl}: each input that used to reach the upstream
 * with its key (backslash-n and backslash-t inside a JSON string, backslash-u escapes, a form body, a UTF-16LE JSON
 * body, a multipart body), over plain HTTP and intercepted HTTPS, with {@code openshell/regex} in redact mode (the
 * upstream receives valid JSON or form without the key) and in deny mode (the upstream receives nothing); an undecodable
 * body under {@code fail_closed} (refused) and {@code fail_open} (relayed with the bypass finding). And the
 * upgrade rule: a WebSocket upgrade under a {@code fail_closed} chain is refused before anything reaches the upstream,
 * relayed with the bypass finding under an all-{@code fail_open} chain, and relayed on an endpoint that opts in.
 */
class InspectionIntegrityIT extends RunningWorld {
    /** Fake keys in the OpenAI project-key and AWS access key ID formats; never real secrets. */
    static final String OPENAI = "sk-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7cF0iL";
    static final String AWS = "AKIAIOSFODNN7EXAMPLE";
    private static final AtomicInteger FILES = new AtomicInteger();

    /** One agent input: the body and its Content-Type. */
    record Input(String name, byte[] body, String contentType, Charset charset) {
    }

    static List<Input> inputs() {
        List<Input> in = new ArrayList<>();
        in.add(new Input("newline escapes", utf8("{\"content\":\"my keys:\\n" + OPENAI + "\\n" + AWS + "\"}"),
                "application/json", StandardCharsets.UTF_8));
        in.add(new Input("tab escapes", utf8("{\"content\":\"KEY\\t" + OPENAI + "\\t" + AWS + "\"}"),
                "application/json", StandardCharsets.UTF_8));
        in.add(new Input("unicode escapes", utf8("{\"content\":\"\\u0073k-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7cF0iL "
                + "\\u0041KIAIOSFODNN7EXAMPLE\"}"), "application/json", StandardCharsets.UTF_8));
        in.add(new Input("form", utf8("text=line1%0A" + OPENAI + "%0A" + AWS + "&n=1"),
                "application/x-www-form-urlencoded", StandardCharsets.UTF_8));
        in.add(new Input("utf-16le", ("{\"content\":\"my keys:\\n" + OPENAI + "\\n" + AWS + "\"}")
                .getBytes(StandardCharsets.UTF_16LE), "application/json; charset=utf-16le",
                StandardCharsets.UTF_16LE));
        in.add(new Input("multipart", utf8("--b0und\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n" + OPENAI
                + "\r\n--b0und\r\nContent-Disposition: form-data; name=\"j\"\r\nContent-Type: application/json\r\n\r\n"
                + "{\"k\":\"x\\n" + AWS + "\"}\r\n--b0und--\r\n"), "multipart/form-data; boundary=b0und",
                StandardCharsets.UTF_8));
        return in;
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Path file(byte[] body) throws Exception {
        return Files.write(tmp.resolve("body-" + FILES.incrementAndGet() + ".bin"), body);
    }

    private static Curl.Result post(boolean tls, String host, Input input) throws Exception {
        return post(tls, host, "/v1", input.body(), input.contentType());
    }

    private static JsonObject json(String body) {
        return Json.createReader(new StringReader(body)).readObject();
    }

    private static void holdsNoKey(RawUpstream.Received got, Input input) {
        String text = new String(got.body(), input.charset());
        assertFalse(text.contains("Ab3dE6gH9jK2mN5pQ8"), input.name() + ": the OpenAI key reached the upstream");
        assertFalse(text.contains("IOSFODNN7EXAMPLE"), input.name() + ": the AWS key reached the upstream");
        assertFalse(got.rawText().contains("Ab3dE6gH9jK2mN5pQ8"), input.name());
    }

    @Test
    void inRedactModeTheUpstreamReceivesEachBodyValidAndWithoutItsKeys() throws Exception {
        for (boolean tls : new boolean[] {false, true}) {
            RawUpstream upstream = tls ? world.tls : world.plain;
            for (Input input : inputs()) {
                upstream.drain();
                Curl.Result r = post(tls, ProxyWorld.REDACT, input);
                assertEquals(200, r.status(), input.name() + " " + r);
                RawUpstream.Received got = upstream.take();
                holdsNoKey(got, input);
                assertEquals(List.of(String.valueOf(got.body().length)), got.headers().get("content-length"),
                        input.name() + ": Content-Length is the redacted body's");
                String text = new String(got.body(), input.charset());
                if (input.contentType().startsWith("application/json")) {
                    JsonObject o = Json.createReader(new InputStreamReader(new ByteArrayInputStream(got.body()),
                            input.charset())).readObject();
                    assertTrue(o.getString("content").contains("[REDACTED:openai_api_key]"), input.name());
                    assertTrue(o.getString("content").contains("[REDACTED:aws_access_key_id]"), input.name());
                } else if (input.contentType().startsWith("application/x-www-form-urlencoded")) {
                    assertEquals("text=line1%0A%5BREDACTED%3Aopenai_api_key%5D%0A%5BREDACTED%3Aaws_access_key_id%5D"
                            + "&n=1", text);
                    assertEquals("line1\n[REDACTED:openai_api_key]\n[REDACTED:aws_access_key_id]",
                            URLDecoder.decode(text.substring(5, text.indexOf('&')), StandardCharsets.UTF_8));
                } else {
                    assertTrue(text.contains("name=\"a\"\r\n\r\n[REDACTED:openai_api_key]\r\n--b0und"), text);
                    assertTrue(text.contains("{\"k\":\"x\\n[REDACTED:aws_access_key_id]\"}"), text);
                }
            }
        }
    }

    @Test
    void inDenyModeTheUpstreamReceivesNothing() throws Exception {
        for (boolean tls : new boolean[] {false, true}) {
            RawUpstream upstream = tls ? world.tls : world.plain;
            for (Input input : inputs()) {
                int before = upstream.count();
                Curl.Result r = post(tls, ProxyWorld.DENY, input);
                assertEquals(403, r.status(), input.name() + " " + r);
                JsonObject error = json(r.body());
                assertEquals("middleware_denied", error.getString("error"), r.body());
                assertEquals("secret_detected", error.getString("reason_code"), r.body());
                assertFalse(r.body().contains("Ab3dE6gH9"), "the answer does not echo the key");
                assertEquals(before, upstream.count(), input.name() + ": nothing reached the upstream");
            }
        }
    }

    @Test
    void aGzipBodyIsScannedDecodedAndForwardedDecodedWhenRedacted() throws Exception {
        byte[] json = utf8("{\"content\":\"my keys:\\n" + OPENAI + "\"}");
        java.io.ByteArrayOutputStream gz = new java.io.ByteArrayOutputStream();
        try (java.util.zip.GZIPOutputStream z = new java.util.zip.GZIPOutputStream(gz)) {
            z.write(json);
        }
        Path file = file(gz.toByteArray());
        world.plain.drain();
        Curl.Result r = Curl.run("-x", supervisor.proxyUrl(), "-H", "Content-Type: application/json",
                "-H", "Content-Encoding: gzip", "--data-binary", "@" + file,
                "http://" + ProxyWorld.REDACT + ":" + world.plain.port() + "/v1");
        assertEquals(200, r.status(), r.toString());
        RawUpstream.Received got = world.plain.take();
        assertEquals("{\"content\":\"my keys:\\n[REDACTED:openai_api_key]\"}", got.bodyText());
        assertTrue(got.header("content-encoding").isEmpty(), "forwarded decoded: no Content-Encoding");
        assertEquals(List.of(String.valueOf(got.body().length)), got.headers().get("content-length"));

        int before = world.plain.count();
        Curl.Result denied = Curl.run("-x", supervisor.proxyUrl(), "-H", "Content-Type: application/json",
                "-H", "Content-Encoding: gzip", "--data-binary", "@" + file,
                "http://" + ProxyWorld.DENY + ":" + world.plain.port() + "/v1");
        assertEquals(403, denied.status(), denied.toString());
        assertEquals("secret_detected", json(denied.body()).getString("reason_code"));
        assertEquals(before, world.plain.count());

        // a clean gzip body is forwarded as inspected: decoded, without Content-Encoding (the compressed form's
        // header fields and block choices, which nothing scanned, could carry a secret)
        java.io.ByteArrayOutputStream clean = new java.io.ByteArrayOutputStream();
        try (java.util.zip.GZIPOutputStream z = new java.util.zip.GZIPOutputStream(clean)) {
            z.write(utf8("{\"content\":\"hello\"}"));
        }
        world.plain.drain();
        Curl.Result ok = Curl.run("-x", supervisor.proxyUrl(), "-H", "Content-Type: application/json",
                "-H", "Content-Encoding: gzip", "--data-binary", "@" + file(clean.toByteArray()),
                "http://" + ProxyWorld.REDACT + ":" + world.plain.port() + "/v1");
        assertEquals(200, ok.status(), ok.toString());
        RawUpstream.Received same = world.plain.take();
        assertArrayEquals(utf8("{\"content\":\"hello\"}"), same.body());
        assertTrue(same.header("content-encoding").isEmpty(), "forwarded decoded");
    }

    @Test
    void anUndecodableBodyIsRefusedUnderFailClosedAndRelayedWithTheBypassFindingUnderFailOpen() throws Exception {
        Input sjis = new Input("shift_jis", utf8("{\"content\":\"" + OPENAI + "\"}"),
                "application/json; charset=shift_jis", StandardCharsets.UTF_8);
        int before = world.plain.count();
        Curl.Result closed = post(false, ProxyWorld.REDACT, sjis);
        assertEquals(403, closed.status(), closed.toString());
        JsonObject error = json(closed.body());
        assertEquals("middleware_failed", error.getString("error"), closed.body());
        assertEquals("body_undecodable", error.getString("reason_code"), closed.body());
        assertEquals(before, world.plain.count(), "an undecodable body never passes a fail_closed stage");

        Input gzip = new Input("gzip", new byte[] {0x1f, (byte) 0x8b, 8, 0, 0, 0, 0, 0, 0, (byte) 0xff},
                "application/octet-stream", StandardCharsets.ISO_8859_1);
        assertEquals(403, post(false, ProxyWorld.DENY, gzip).status(), "binary is undecodable too");

        world.plain.drain();
        Curl.Result open = post(false, ProxyWorld.REGEX_OPEN, sjis);
        assertEquals(200, open.status(), open.toString());
        assertEquals("{\"content\":\"" + OPENAI + "\"}", world.plain.take().bodyText(),
                "fail_open relays the body unchanged");
        List<JsonObject> findings = AuditLog.read(world.audit).stream()
                .filter(e -> e.getInt("class_uid") == 2004).map(AuditLog::openshell).toList();
        assertTrue(findings.stream().anyMatch(o -> o.getString("config_key", "").equals("secrets-open")
                && o.getString("decision", "").equals("bypass")
                && o.getString("code", "").equals("body_undecodable")), "the bypass is a Detection Finding: "
                + findings);
    }

    // ------------------------------------------------------------------ upgrades

    /** A masked client text frame (RFC 6455 section 5.2) whose payload is {@code text}. */
    static byte[] frame(String text) {
        byte[] payload = utf8(text);
        byte[] mask = {0x11, 0x22, 0x33, 0x44};
        byte[] f = new byte[6 + payload.length];
        f[0] = (byte) 0x81;
        f[1] = (byte) (0x80 | payload.length);
        System.arraycopy(mask, 0, f, 2, 4);
        for (int i = 0; i < payload.length; i++) {
            f[6 + i] = (byte) (payload[i] ^ mask[i % 4]);
        }
        return f;
    }

    private static byte[] upgradeRequest(String host) {
        String authority = host + ":" + world.plain.port();
        return utf8("GET http://" + authority + "/ws HTTP/1.1\r\nHost: " + authority + "\r\nUpgrade: websocket\r\n"
                + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                + "Sec-WebSocket-Version: 13\r\n\r\n");
    }

    /** {@return the response head read from {@code in}, up to and including the empty line} */
    static String headOf(InputStream in) throws Exception {
        StringBuilder b = new StringBuilder();
        while (!b.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                break;
            }
            b.append((char) c);
        }
        return b.toString();
    }

    @Test
    void aWebSocketUpgradeUnderAFailClosedRegexChainIsInspectedAndAKeyInAFrameIsRedacted() throws Exception {
        world.plain.drain();
        byte[] keyFrame = frame("{\"type\":\"input\",\"text\":\"" + OPENAI + "\"}");
        try (Socket s = new Socket("127.0.0.1", supervisor.port())) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write(concat(upgradeRequest(ProxyWorld.REDACT), keyFrame)); // the frame follows at once
            out.flush();
            String head = headOf(s.getInputStream());
            assertTrue(head.startsWith("HTTP/1.1 101"), "openshell/regex reads WebSocket messages: " + head);
            String got = WsPeers.read(new java.io.ByteArrayInputStream(world.plain.upgradedBytes(30_000))).text();
            assertFalse(got.contains(OPENAI), got);
            assertTrue(got.contains("[REDACTED:"), got);
        }
    }

    @Test
    void underAnAllFailOpenRegexChainTheMessagesAreInspectedToo() throws Exception {
        world.plain.drain();
        byte[] keyFrame = frame("key " + AWS);
        try (Socket s = new Socket("127.0.0.1", supervisor.port())) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write(upgradeRequest(ProxyWorld.REGEX_OPEN));
            out.flush();
            String head = headOf(s.getInputStream());
            assertTrue(head.startsWith("HTTP/1.1 101"), head);
            out.write(keyFrame);
            out.flush();
            String got = WsPeers.read(new java.io.ByteArrayInputStream(world.plain.upgradedBytes(30_000))).text();
            assertFalse(got.contains(AWS), got);
        }
    }

    @Test
    void anEndpointThatOptsInRelaysUpgradesAndSaysSoAtLoad() throws Exception {
        world.plain.drain();
        byte[] frame = frame("hello");
        try (Socket s = new Socket("127.0.0.1", supervisor.port())) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write(upgradeRequest(ProxyWorld.WS_OPT_IN));
            out.flush();
            String head = headOf(s.getInputStream());
            assertTrue(head.startsWith("HTTP/1.1 101"), head);
            out.write(frame);
            out.flush();
            assertArrayEquals(frame, world.plain.upgradedBytes(30_000));
        }
        List<JsonObject> config = AuditLog.read(world.audit).stream()
                .filter(e -> e.getInt("class_uid") == 5019).map(AuditLog::openshell).toList();
        assertTrue(config.stream().anyMatch(o -> o.getString("change", "").equals("uninspected_upgrades")),
                "the opt-in is a config event at load: " + config);
    }
}
