package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.HttpHeader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Response scrubbing through the real proxy (issue 22, item 2): the credential step injects a secret, a loopback
 * upstream echoes it in every place and framing a response can carry it, and the client reads none of it back,
 * while the connection stays usable.
 */
class ResponseScrubTest {
    static final String SECRET = "s3cr3t/value+" + Long.toHexString(System.nanoTime());
    static final String PLACEHOLDER = "openshell:resolve:env:API_TOKEN";

    @TempDir
    Path tmp;

    /** Replaces the placeholder in any header value, and reports the value as injected. */
    static PolicySteps.Credentials<Void> inject(boolean relayUnscannable) {
        return (plan, req, sent) -> {
            boolean used = sent.headers().stream().anyMatch(h -> h.value().contains(PLACEHOLDER));
            List<HttpHeader> out = sent.headers().stream()
                    .map(h -> new HttpHeader(h.name(), h.value().replace(PLACEHOLDER, SECRET))).toList();
            return new CredentialVerdict.Forward(used ? InjectedCredentials.narrowForScrubbing(out) : out,
                    sent.rawQuery(), used ? InjectedCredentials.of(List.of(new InjectedCredentials.Entry("API_TOKEN", SECRET,
                            PLACEHOLDER, relayUnscannable))) : InjectedCredentials.none());
        };
    }

    private static String percent(String s) {
        return s.replace("/", "%2F").replace("+", "%2B");
    }

    static String request(ProxyFixture fx, String path, String extra) {
        return "GET " + fx.apiUrl(path) + " HTTP/1.1\r\nHost: " + fx.apiAuthority()
                + "\r\nX-Reflect: " + PLACEHOLDER + "\r\n" + extra + "\r\n";
    }

    private static void assertClean(RawClient.Response r) {
        String all = r.head() + "\n" + new String(r.body(), StandardCharsets.ISO_8859_1);
        for (String form : List.of(SECRET, percent(SECRET), Base64.getEncoder().encodeToString(
                SECRET.getBytes(StandardCharsets.UTF_8)), SECRET.replace("/", "\\/"))) {
            assertFalse(all.contains(form), () -> "the client read a secret form back: " + all);
        }
    }

    private static byte[] gzip(String s) {
        try {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            try (GZIPOutputStream z = new GZIPOutputStream(b)) {
                z.write(s.getBytes(StandardCharsets.UTF_8));
            }
            return b.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] zlib(String s) {
        try {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            try (DeflaterOutputStream z = new DeflaterOutputStream(b)) {
                z.write(s.getBytes(StandardCharsets.UTF_8));
            }
            return b.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    /** {@return a 200 with {@code body}, its Content-Length and {@code fields}, no coding label} */
    private static byte[] unlabelled(byte[] body, String fields) {
        return concat(TestUpstream.bytes("HTTP/1.1 200 OK\r\n" + fields + "Content-Length: " + body.length
                + "\r\n\r\n"), body);
    }

    /** {@return the gzip member {@code gz} (flags 0, as GZIPOutputStream writes it) with one header field added} */
    private static byte[] withField(byte[] gz, int flag, byte[] field) {
        byte[] head = java.util.Arrays.copyOf(gz, 10);
        head[3] = (byte) flag;
        return concat(concat(head, field), java.util.Arrays.copyOfRange(gz, 10, gz.length));
    }

    private static String gunzip(byte[] b) throws IOException {
        try (java.util.zip.GZIPInputStream in = new java.util.zip.GZIPInputStream(
                new java.io.ByteArrayInputStream(b))) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** The echo: every request header value it received comes back in the way the path names. */
    private static byte[] echo(TestUpstream.Received r) {
        String head = r.head();
        String path = head.substring(head.indexOf(' ') + 1, head.indexOf(' ', head.indexOf(' ') + 1));
        String value = head.lines().filter(l -> l.toLowerCase().startsWith("x-reflect:")).findFirst()
                .map(l -> l.substring(l.indexOf(':') + 1).strip()).orElse("none");
        String json = "{\"x-reflect\":\"" + value.replace("/", "\\/") + "\",\"b64\":\""
                + Base64.getEncoder().encodeToString(("alice:" + value).getBytes(StandardCharsets.UTF_8)) + "\"}";
        return switch (path) {
            case "/headers" -> TestUpstream.bytes("HTTP/1.1 200 " + value + "\r\nX-Echo: " + value
                    + "\r\nSet-Cookie: s=" + value + "; Path=/\r\nWWW-Authenticate: Basic realm=\"" + value
                    + "\"\r\nContent-Length: " + json.length() + "\r\n\r\n" + json);
            case "/redirect" -> TestUpstream.bytes("HTTP/1.1 302 Found\r\nLocation: http://other.test/?k="
                    + percent(value) + "\r\nContent-Length: 0\r\n\r\n");
            case "/chunked" -> {
                // the value split over many small chunks
                StringBuilder b = new StringBuilder("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
                String body = "before " + value + " middle " + value + " after";
                for (int i = 0; i < body.length(); i += 3) {
                    String part = body.substring(i, Math.min(body.length(), i + 3));
                    b.append(Integer.toHexString(part.length())).append("\r\n").append(part).append("\r\n");
                }
                yield TestUpstream.bytes(b.append("0\r\n\r\n").toString());
            }
            case "/large" -> {
                String body = ("x".repeat(70_000) + value).repeat(3);
                yield TestUpstream.bytes("HTTP/1.1 200 OK\r\nContent-Length: " + body.length() + "\r\n\r\n" + body);
            }
            case "/gzip" -> {
                byte[] z = gzip("gzipped " + value + " " + json);
                yield concat(TestUpstream.bytes("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: "
                        + z.length + "\r\n\r\n"), z);
            }
            case "/deflate" -> {
                byte[] z = zlib("deflated " + value);
                yield concat(TestUpstream.bytes("HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nContent-Length: "
                        + z.length + "\r\n\r\n"), z);
            }
            case "/broken-gzip" -> TestUpstream.bytes("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
                    + "Content-Length: 12\r\n\r\nnot gzip " + value.substring(0, 3));
            case "/br" -> TestUpstream.bytes("HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: "
                    + value.length() + "\r\n\r\n" + value);
            case "/gz-tail", "/gz-tail-identity" -> unlabelled(concat(gzip("hello\n"),
                    ("\nauthorization: Bearer " + value + "\n").getBytes(StandardCharsets.UTF_8)),
                    path.endsWith("identity") ? "Content-Encoding: identity\r\n" : "");
            case "/gz-fname" -> unlabelled(withField(gzip("hello\n"), 8, (value + "\0")
                    .getBytes(StandardCharsets.UTF_8)), "");
            case "/gz-fcomment" -> unlabelled(withField(gzip("hello\n"), 16, (value + "\0")
                    .getBytes(StandardCharsets.UTF_8)), "");
            case "/gz-fextra" -> {
                byte[] v = ("XY" + (char) value.length() + "\0" + value).getBytes(StandardCharsets.ISO_8859_1);
                yield unlabelled(withField(gzip("hello\n"), 4, concat(new byte[] {(byte) v.length, 0}, v)), "");
            }
            case "/gz-inside" -> unlabelled(gzip("inside " + value), "");
            case "/gz-second" -> unlabelled(concat(gzip("first "), gzip(value)), "");
            case "/gz-truncated" -> {
                byte[] z = gzip("truncated " + value);
                yield unlabelled(java.util.Arrays.copyOf(z, z.length - 4), "");
            }
            case "/gz-truncated-tail" -> {
                byte[] z = gzip("truncated");
                yield unlabelled(concat(java.util.Arrays.copyOf(z, z.length - 4),
                        value.getBytes(StandardCharsets.UTF_8)), "");
            }
            case "/gz-clean" -> unlabelled(gzip("clean data\n"), "");
            case "/iso2022" -> { // no charset declared; one byte per chunk
                byte[] body = iso2022Body(value).getBytes(StandardCharsets.ISO_8859_1);
                StringBuilder b = new StringBuilder("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\n");
                for (byte x : body) {
                    b.append("1\r\n").append((char) (x & 0xff)).append("\r\n");
                }
                yield b.append("0\r\n\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
            }
            case "/iso2022-overlong" -> { // 70 sequences in one gap: past the streamed bound, 512-byte chunks
                String body = "x".repeat(4096) + value.charAt(0) + "\u001b(B".repeat(70) + value.substring(1) + "\n"
                        + "y".repeat(4096);
                StringBuilder b = new StringBuilder("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\n");
                for (int i = 0; i < body.length(); i += 512) {
                    String piece = body.substring(i, Math.min(body.length(), i + 512));
                    b.append(Integer.toHexString(piece.length())).append("\r\n").append(piece).append("\r\n");
                }
                yield b.append("0\r\n\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
            }
            case "/iso2022-gzip" -> {
                byte[] z = gzip(iso2022Body(value));
                yield concat(TestUpstream.bytes("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: "
                        + z.length + "\r\n\r\n"), z);
            }
            case "/close" -> TestUpstream.bytes("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil close " + value);
            case "/sse-split" -> {
                // a token stream: the value's first 7 characters end one event, the rest starts the next
                StringBuilder b = new StringBuilder("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\n");
                for (String event : List.of("data: one\n\n", "data: key " + value.substring(0, 7) + "\n\n",
                        "data: " + value.substring(7) + " tail\n\n", "data: two\n\n")) {
                    b.append(Integer.toHexString(event.length())).append("\r\n").append(event).append("\r\n");
                }
                yield TestUpstream.bytes(b.append("0\r\n\r\n").toString());
            }
            case "/paused", "/paused-sse" -> {
                // the first chunk ends with the start of the value; the upstream then pauses (holdAfter)
                boolean sse = path.equals("/paused-sse");
                String first = sse ? "data: first part " + value.substring(0, 5) + "\n\n" : PAD + "first part "
                        + value.substring(0, 5);
                String then = sse ? "data: then more\n\n" : " then more";
                yield TestUpstream.bytes("HTTP/1.1 200 OK\r\n" + (sse ? "Content-Type: text/event-stream\r\n" : "")
                        + "Transfer-Encoding: chunked\r\n\r\n" + Integer.toHexString(first.length()) + "\r\n"
                        + first + "\r\n" + Integer.toHexString(then.length()) + "\r\n" + then + "\r\n0\r\n\r\n");
            }
            case "/sse-split-length" -> {
                String events = "data: one\n\ndata: key " + value.substring(0, 7) + "\n\ndata: " + value.substring(7)
                        + " tail\n\ndata: two\n\n";
                yield TestUpstream.bytes("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: "
                        + events.length() + "\r\n\r\n" + events);
            }
            case "/sse-untyped" -> { // events without a media type (a stream reader that does not check it)
                StringBuilder b = new StringBuilder("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
                for (String event : List.of("data: key " + value.substring(0, 7) + "\n\n",
                        "data: " + value.substring(7) + " tail\n\n")) {
                    b.append(Integer.toHexString(event.length())).append("\r\n").append(event).append("\r\n");
                }
                yield TestUpstream.bytes(b.append("0\r\n\r\n").toString());
            }
            case "/sse-mistyped" -> {
                String events = "data: key " + value.substring(0, 7) + "\n\ndata: " + value.substring(7) + " tail\n\n";
                yield TestUpstream.bytes("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                        + events.length() + "\r\n\r\n" + events);
            }
            case "/interim" -> TestUpstream.bytes("HTTP/1.1 103 " + value + "\r\nLink: </s.css?k=" + percent(value)
                    + ">; rel=preload\r\nX-Hint: " + value + "\r\nX-Hint-B64: " + Base64.getEncoder().encodeToString(
                    ("alice:" + value).getBytes(StandardCharsets.UTF_8)) + "\r\nX-Split-A: "
                    + value.substring(0, 5) + "\r\nX-Split-B: " + value.substring(5)
                    + "\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
            default -> TestUpstream.ok("plain");
        };
    }

    @Test
    void headersStatusLineRedirectAndBodyAreScrubbedAndTheConnectionIsReused() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = inject(false))) {
            fx.upstream.respond(ResponseScrubTest::echo);
            try (RawClient c = fx.client()) {
                RawClient.Response h = c.send(request(fx, "/headers", "")).read();
                assertClean(h);
                assertEquals(200, h.status());
                assertEquals(PLACEHOLDER, h.header("x-echo"));
                assertEquals("s=" + PLACEHOLDER + "; Path=/", h.header("set-cookie"));
                assertTrue(h.head().startsWith("HTTP/1.1 200 " + PLACEHOLDER + "\r\n"), h.head());
                assertTrue(h.bodyText().contains("\"x-reflect\":\"" + PLACEHOLDER + "\""), h.bodyText());
                assertEquals(String.valueOf(h.body().length), h.header("content-length"), "re-framed exactly");
                assertTrue(SECRET.equals(fx.upstream.take().head().lines()
                        .filter(l -> l.toLowerCase().startsWith("x-reflect:")).findFirst().orElseThrow().substring(11)),
                        "the upstream did receive the value");

                RawClient.Response redirect = c.send(request(fx, "/redirect", "")).read();
                assertClean(redirect);
                assertEquals("http://other.test/?k=" + PLACEHOLDER, redirect.header("location"));

                RawClient.Response chunked = c.send(request(fx, "/chunked", "")).read();
                assertClean(chunked);
                assertEquals("before " + PLACEHOLDER + " middle " + PLACEHOLDER + " after", chunked.bodyText());

                RawClient.Response large = c.send(request(fx, "/large", "")).read();
                assertClean(large);
                assertEquals("chunked", large.header("transfer-encoding"), "a long body is streamed, re-chunked");
                assertNull(large.header("content-length"));
                assertEquals(("x".repeat(70_000) + PLACEHOLDER).repeat(3), large.bodyText());

                RawClient.Response plain = c.send("GET " + fx.apiUrl("/plain") + " HTTP/1.1\r\nHost: "
                        + fx.apiAuthority() + "\r\n\r\n").read();
                assertEquals("plain", plain.bodyText(), "a request without a credential is relayed untouched");
            }
            assertEquals(1, fx.upstream.connections(), "every response kept both connections open");
            assertEquals(List.of("[API_TOKEN] 4 2", "[API_TOKEN] 1 0", "[API_TOKEN] 0 2", "[API_TOKEN] 0 3"),
                    fx.hook.scrubs, "each scrubbed response is reported once, with counts");
        }
    }

    /**
     * An interim {@code 103 Early Hints} head that echoes the value (its reason phrase, a {@code Link} with it
     * percent-encoded, a field with it base64-encoded inside {@code user:value}, a value split across two fields) is
     * scrubbed like a final head before the client reads it.
     */
    @Test
    void interimHeadsAreScrubbedLikeFinalHeads() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = inject(false))) {
            fx.upstream.respond(ResponseScrubTest::echo);
            try (RawClient c = fx.client()) {
                RawClient.Response early = c.send(request(fx, "/interim", "")).read();
                assertEquals(103, early.status(), early.head());
                assertClean(early);
                assertTrue(early.head().startsWith("HTTP/1.1 103 " + PLACEHOLDER + "\r\n"), early.head());
                assertEquals("</s.css?k=" + PLACEHOLDER + ">; rel=preload", early.header("link"));
                assertEquals(PLACEHOLDER, early.header("x-hint"));
                assertFalse(early.head().contains(SECRET.substring(0, 5)) && early.head().contains(SECRET.substring(5)),
                        early.head());
                RawClient.Response last = c.read();
                assertEquals(200, last.status());
                assertEquals("ok", last.bodyText());
            }
        }
    }

    /**
     * A value split across two events of an event stream (a token stream delivering the key a few characters per
     * event) never reaches a client that joins the events' data: the part in the first event is removed, the second
     * starts with the placeholder; every event is still delivered.
     */
    @Test
    void aValueSplitAcrossTwoServerSentEventsIsScrubbed() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = inject(false))) {
            fx.upstream.respond(ResponseScrubTest::echo);
            try (RawClient c = fx.client()) {
                RawClient.Response r = c.send(request(fx, "/sse-split", "")).read();
                assertEquals(200, r.status());
                String joined = r.bodyText().lines().filter(l -> l.startsWith("data: "))
                        .map(l -> l.substring(6)).collect(java.util.stream.Collectors.joining());
                assertFalse(joined.contains(SECRET), "a client joining the events read the value: " + r.bodyText());
                assertEquals("data: one\n\ndata: key \n\ndata: " + PLACEHOLDER + " tail\n\ndata: two\n\n",
                        r.bodyText());
                RawClient.Response whole = c.send(request(fx, "/sse-split-length", "")).read();
                assertEquals("data: one\n\ndata: key \n\ndata: " + PLACEHOLDER + " tail\n\ndata: two\n\n",
                        whole.bodyText(), "a short event stream with a Content-Length, read whole");
                assertEquals(String.valueOf(whole.body().length), whole.header("content-length"));
            }
            assertEquals(List.of("[API_TOKEN] 0 1", "[API_TOKEN] 0 1"), fx.hook.scrubs);
        }
    }

    /** Events served without {@code text/event-stream} (none, or a wrong type): joined when the body starts as one. */
    @Test
    void eventsWithoutTheEventStreamTypeAreJoinedToo() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = inject(false))) {
            fx.upstream.respond(ResponseScrubTest::echo);
            try (RawClient c = fx.client()) {
                for (String path : List.of("/sse-untyped", "/sse-mistyped")) {
                    RawClient.Response r = c.send(request(fx, path, "")).read();
                    assertEquals(200, r.status());
                    assertEquals("data: key \n\ndata: " + PLACEHOLDER + " tail\n\n", r.bodyText(), path);
                }
            }
            assertEquals(List.of("[API_TOKEN] 0 1", "[API_TOKEN] 0 1"), fx.hook.scrubs);
        }
    }

    /** {@return the data of the chunks read until it holds {@code needle}, or to the last chunk when null} */
    private static String readChunksUntil(java.io.InputStream in, String needle) throws IOException {
        StringBuilder data = new StringBuilder();
        while (needle == null || !data.toString().contains(needle)) {
            StringBuilder line = new StringBuilder();
            for (int b = in.read(); b != '\n'; b = in.read()) {
                if (b < 0) {
                    throw new java.io.EOFException("ended inside the body: " + data);
                }
                line.append((char) b);
            }
            int size = Integer.parseInt(line.toString().strip(), 16);
            data.append(new String(in.readNBytes(size), StandardCharsets.ISO_8859_1));
            in.readNBytes(2);
            if (size == 0) {
                return data.toString();
            }
        }
        return data.toString();
    }

    /** Past the first 1024 bytes, which are read before the head for a charset the body declares in itself. */
    private static final String PAD = ".".repeat(1100);

    /**
     * A streamed body (and an event stream) whose upstream falls silent after text that could start the value: the
     * text held back reaches the client while the upstream is still silent (after
     * {@code ResponseScrub.SILENCE_MILLIS}), not when it sends more; the upstream waits for the client to have read it.
     */
    @Test
    void aHeldTailReachesTheClientWhileTheUpstreamIsSilent() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = inject(false))) {
            fx.upstream.respond(ResponseScrubTest::echo);
            try (RawClient c = fx.client()) {
                for (String path : List.of("/paused", "/paused-sse")) {
                    boolean sse = path.equals("/paused-sse");
                    String first = sse ? "data: first part " + SECRET.substring(0, 5) + "\n\n"
                            : PAD + "first part " + SECRET.substring(0, 5);
                    java.util.concurrent.CountDownLatch resume = new java.util.concurrent.CountDownLatch(1);
                    fx.upstream.holdAfter = first + "\r\n";
                    fx.upstream.holdBodyUntil = resume;
                    c.send(request(fx, path, ""));
                    String head = c.readHead();
                    assertTrue(head.startsWith("HTTP/1.1 200"), head);
                    readChunksUntil(c.in(), first); // the held text arrives while the upstream waits for this
                    resume.countDown();
                    String rest = readChunksUntil(c.in(), null);
                    assertTrue(rest.contains(sse ? "data: then more\n\n" : " then more"), rest);
                    assertFalse(fx.upstream.holdTimedOut, "the held text went out only when the upstream went on");
                }
            } finally {
                fx.upstream.holdBodyUntil = null;
                fx.upstream.holdAfter = null;
            }
        }
    }

    @Test
    void compressedBodiesAreDecodedAndScrubbedOrRefused() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = inject(false))) {
            fx.upstream.respond(ResponseScrubTest::echo);
            try (RawClient c = fx.client()) {
                RawClient.Response g = c.send(request(fx, "/gzip", "Accept-Encoding: br, gzip;q=0.9, zstd\r\n"))
                        .read();
                assertClean(g);
                assertNull(g.header("content-encoding"), "sent decoded");
                assertTrue(g.bodyText().startsWith("gzipped " + PLACEHOLDER + " {"), g.bodyText());
                assertTrue(fx.upstream.take().head().toLowerCase().contains("accept-encoding: gzip;q=0.9\r\n"),
                        "the upstream is asked only for codings the proxy decodes");

                RawClient.Response d = c.send(request(fx, "/deflate", "")).read();
                assertClean(d);
                assertEquals("deflated " + PLACEHOLDER, d.bodyText());

                RawClient.Response br = c.send(request(fx, "/br", "")).read();
                assertEquals(502, br.status());
                assertTrue(br.bodyText().contains("\"error\":\"response_uninspectable\""), br.bodyText());
                assertClean(br);

                RawClient.Response broken = c.send(request(fx, "/broken-gzip", "")).read();
                assertEquals(502, broken.status(), "a body that does not decode is refused before its head");

                RawClient.Response after = c.send(request(fx, "/chunked", "")).read();
                assertEquals(200, after.status(), "the client connection survives the refusals");
            }
            assertEquals(List.of("response_uninspectable false", "response_uninspectable false"),
                    fx.hook.unscannable);
        }
    }

    /**
     * Gzip data without a label (attacker pass finding 3): a value in the bytes after the member or in its header
     * fields never reaches the client, nor one inside the compressed data; clean data is relayed byte for byte; a
     * member that does not decode is refused.
     */
    @Test
    void unlabelledGzipIsScannedAsDeliveredAndAsDecoded() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = inject(false))) {
            fx.upstream.respond(ResponseScrubTest::echo);
            try (RawClient c = fx.client()) {
                for (String path : List.of("/gz-tail", "/gz-tail-identity", "/gz-fname", "/gz-fcomment",
                        "/gz-fextra")) {
                    RawClient.Response r = c.send(request(fx, path, "")).read();
                    assertEquals(200, r.status(), path);
                    assertClean(r);
                    assertEquals("hello\n", gunzip(r.body()), path + ": the content, re-encoded");
                }
                RawClient.Response inside = c.send(request(fx, "/gz-inside", "")).read();
                assertClean(inside);
                assertEquals("inside " + PLACEHOLDER, gunzip(inside.body()));
                RawClient.Response second = c.send(request(fx, "/gz-second", "")).read();
                assertClean(second);
                assertFalse(gunzip(second.body()).contains(SECRET), "second member");
                assertTrue(gunzip(second.body()).startsWith("first "), "second member");
                RawClient.Response truncated = c.send(request(fx, "/gz-truncated", "")).read();
                assertEquals(502, truncated.status());
                assertTrue(truncated.bodyText().contains("\"error\":\"response_uninspectable\""));
                assertClean(truncated);
                RawClient.Response clean = c.send(request(fx, "/gz-clean", "")).read();
                assertEquals(java.util.Arrays.toString(gzip("clean data\n")), java.util.Arrays.toString(clean.body()),
                        "clean gzip data is relayed byte for byte");
            }
            assertEquals(List.of("response_uninspectable false"), fx.hook.unscannable);
        }
    }

    @Test
    void anUnscannableBodyIsRelayedWhenTheCredentialAllowsIt() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = inject(true))) {
            fx.upstream.respond(ResponseScrubTest::echo);
            try (RawClient c = fx.client()) {
                RawClient.Response br = c.send(request(fx, "/br", "")).read();
                assertEquals(200, br.status());
                assertEquals("br", br.header("content-encoding"));
                assertEquals(PLACEHOLDER, br.bodyText(), "its bytes are still scrubbed as delivered");
                RawClient.Response gz = c.send(request(fx, "/gz-truncated-tail", "")).read();
                assertEquals(200, gz.status());
                assertClean(gz);
                assertTrue(gz.bodyText().endsWith(PLACEHOLDER), "the delivered bytes are scrubbed");
            }
            assertEquals(List.of("response_uninspectable true", "response_uninspectable true"),
                    fx.hook.unscannable);
        }
    }

    /** {@return a body with ISO-2022-JP text, then {@code value} split by ISO 2022 escapes, SO/SI and HZ shifts} */
    private static String iso2022Body(String value) {
        String[] dropped = {"\u001b(B", "\u001b$B\u001b(B", "\u000e\u000f", "~{~}", "~\n"};
        StringBuilder b = new StringBuilder("\u001b$B$3$s\u001b(B ");
        for (int i = 0; i < value.length(); i++) {
            b.append(i == 0 ? "" : dropped[i % dropped.length]).append(value.charAt(i));
        }
        return b.append("\n").toString();
    }

    /**
     * Attacker pass 8, P10-4: a body without a declared charset, the value split by sequences an ISO-2022 or HZ
     * decoder drops (a client sniffing the charset reads the value), chunked one byte per chunk or gzip-encoded.
     */
    @Test
    void aValueSplitByIso2022OrHzSequencesIsScrubbed() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = inject(false))) {
            fx.upstream.respond(ResponseScrubTest::echo);
            try (RawClient c = fx.client()) {
                for (String path : List.of("/iso2022", "/iso2022-gzip")) {
                    RawClient.Response r = c.send(request(fx, path, "")).read();
                    assertEquals(200, r.status(), path);
                    assertClean(r);
                    assertEquals("\u001b$B$3$s\u001b(B " + PLACEHOLDER + "\n",
                            new String(r.body(), StandardCharsets.ISO_8859_1), path);
                }
            }
        }
    }

    /**
     * A streamed value split by more ISO 2022 sequences than the scrub's window holds (attacker pass 8: 70 in one gap)
     * cannot be decided: the response is cut before the value's first byte, never relayed past it.
     */
    @Test
    void aValueSplitByMoreSequencesThanTheWindowHoldsCutsTheResponse() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = inject(false))) {
            fx.upstream.respond(ResponseScrubTest::echo);
            try (RawClient c = fx.client()) {
                c.socket().setSoTimeout(10_000);
                c.send(request(fx, "/iso2022-overlong", ""));
                String head = c.readHead();
                assertTrue(head.startsWith("HTTP/1.1 200"), head);
                String rest = new String(c.in().readAllBytes(), StandardCharsets.ISO_8859_1);
                String read = rest.replace("\u001b(B", "");
                assertFalse(read.contains(SECRET.substring(1, 9)), "no part of the value after its first byte");
                assertFalse(rest.endsWith("0\r\n\r\n"), "the response is cut, not completed");
                assertTrue(rest.contains("xxxx"), "what came before the value was relayed");
            }
        }
    }

    @Test
    void closeDelimitedResponsesAndHttp10ClientsAreScrubbed() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = inject(false))) {
            fx.upstream.respond(ResponseScrubTest::echo);
            try (RawClient c = fx.client()) {
                RawClient.Response r = c.send(request(fx, "/close", "")).read();
                assertClean(r);
                assertEquals("until close " + PLACEHOLDER, r.bodyText());
            }
            try (RawClient c = fx.client()) {
                RawClient.Response r = c.send(request(fx, "/large", "").replace(" HTTP/1.1\r\n", " HTTP/1.0\r\n"))
                        .read();
                assertClean(r);
                assertNull(r.header("transfer-encoding"), "an HTTP/1.0 client gets a close-delimited body");
                assertEquals(("x".repeat(70_000) + PLACEHOLDER).repeat(3), r.bodyText());
            }
        }
    }
}
