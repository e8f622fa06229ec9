package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpResponseBodyMode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The response step through the real proxy ({@link PolicySteps.ResponseChain}): what the step sees (decoded heads,
 * permitted body modes), whole bodies re-framed with a new Content-Length, streamed units chunked as they arrive, a
 * withheld response carrying no upstream byte, a failure after the head was committed leaving an incomplete response,
 * and the accumulation deadline.
 */
class ResponseStagesTest {
    @TempDir
    Path tmp;

    /** A body step: holds the whole body ({@code whole}) or streams, transforming each piece with {@code f}. */
    static final class TestBody implements ResponseBody {
        final boolean whole;
        final UnaryOperator<String> f;
        final Duration deadline;
        final List<String> seen = new CopyOnWriteArrayList<>();
        final ByteArrayOutputStream held = new ByteArrayOutputStream();
        volatile int failAt = -1;
        volatile boolean timeoutFails = true;
        volatile Boolean ended;
        private boolean holding;
        private int units;

        TestBody(boolean whole, UnaryOperator<String> f, Duration deadline) {
            this.whole = whole;
            this.f = f;
            this.deadline = deadline;
            this.holding = whole;
        }

        @Override
        public boolean holdsHead() {
            return holding;
        }

        @Override
        public Duration accumulationDeadline() {
            return deadline;
        }

        @Override
        public List<Body> unit(Body data, boolean end) throws Failure {
            if (++units == failAt) {
                throw new Failure(new Answer(502, "response_middleware_failed", "failed", java.util.Map.of(), true));
            }
            String text = new String(data.toByteArray(), StandardCharsets.UTF_8);
            seen.add(text);
            if (holding) {
                held.writeBytes(data.toByteArray());
                if (!end) {
                    return List.of();
                }
                holding = false;
                return List.of(Body.ofUtf8(f.apply(held.toString(StandardCharsets.UTF_8))));
            }
            return List.of(Body.ofUtf8(f.apply(text)));
        }

        @Override
        public List<Body> accumulationTimedOut() throws Failure {
            if (timeoutFails) {
                throw new Failure(new Answer(502, "response_middleware_failed", "whole_body_accumulation_timeout",
                        java.util.Map.of(), true));
            }
            holding = false;
            return List.of(Body.of(held.toByteArray()));
        }

        @Override
        public void end(boolean complete) {
            ended = complete;
        }
    }

    private static PolicySteps.ResponseChain<Void> deliver(TestBody body, HttpHeader... added) {
        return deliver(() -> body, added);
    }

    private static PolicySteps.ResponseChain<Void> deliver(java.util.function.Supplier<TestBody> bodies,
                                                           HttpHeader... added) {
        return (p, r, response) -> {
            TestBody body = bodies.get();
            List<HttpHeader> h = new ArrayList<>(response.headers());
            h.addAll(List.of(added));
            return new ResponseVerdict.Deliver(h, Optional.ofNullable(body));
        };
    }

    private static String get(ProxyFixture fx, String path) {
        return "GET " + fx.apiUrl(path) + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\n\r\n";
    }

    @Test
    void aWholeBodyIsReplacedAndFramedWithItsNewLengthOnAReusedConnection() throws Exception {
        var last = new java.util.concurrent.atomic.AtomicReference<TestBody>();
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.responses = deliver(() -> {
            last.set(new TestBody(true, t -> t.toUpperCase(Locale.ROOT) + "!", Duration.ofSeconds(10)));
            return last.get();
        },
                new HttpHeader("x-checked", "yes")))) {
            fx.upstream.respond(r -> TestUpstream.ok("{\"a\":\"hello\"}"));
            try (RawClient c = fx.client()) {
                for (int i = 0; i < 2; i++) {
                    RawClient.Response resp = c.send(get(fx, "/json")).read();
                    assertEquals(200, resp.status());
                    assertEquals("{\"A\":\"HELLO\"}!", resp.bodyText());
                    assertEquals(String.valueOf("{\"A\":\"HELLO\"}!".length()), resp.header("content-length"));
                    assertEquals("yes", resp.header("x-checked"));
                    assertNull(resp.header("transfer-encoding"));
                }
            }
            ProxyResponse seen = fx.hook.responded.get(0);
            assertEquals(200, seen.status());
            assertTrue(seen.permittedBodyModes(1 << 20).contains(HttpResponseBodyMode.WHOLE_BODY_BYTES));
            assertEquals(Boolean.TRUE, last.get().ended);
        }
    }

    @Test
    void aGzipBodyIsInspectedDecodedAndDeliveredWithoutContentEncoding() throws Exception {
        TestBody body = new TestBody(true, s -> s.replace("INJECT", "[removed]"), Duration.ofSeconds(10));
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.responses = deliver(body))) {
            byte[] z = gzip("page text INJECT more");
            fx.upstream.respond(r -> concat(TestUpstream.bytes("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                    + "Content-Encoding: gzip\r\nContent-Length: " + z.length + "\r\n\r\n"), z));
            try (RawClient c = fx.client()) {
                RawClient.Response resp = c.send(get(fx, "/page")).read();
                assertEquals("page text [removed] more", resp.bodyText());
                assertNull(resp.header("content-encoding"));
            }
            assertEquals("page text INJECT more", String.join("", body.seen));
            ProxyResponse seen = fx.hook.responded.get(0);
            assertTrue(seen.headers().stream().noneMatch(h -> h.name().equals("content-encoding")), seen::toString);
        }
    }

    /** A response step that delivers every head unchanged and withholds interim heads when told to. */
    private static PolicySteps.ResponseChain<Void> interimPolicy(boolean withhold) {
        return new PolicySteps.ResponseChain<>() {
            @Override
            public ResponseVerdict open(Void plan, ProxyRequest request, ProxyResponse response) {
                return new ResponseVerdict.Deliver(response.headers(), Optional.empty());
            }

            @Override
            public boolean withholdsInterim(Void plan, ProxyRequest request) {
                return withhold;
            }
        };
    }

    /**
     * The contract never evaluates an interim head: where a fail_closed response stage is selected
     * ({@link PolicySteps.ResponseChain#withholdsInterim}), a {@code 103} (or a {@code 102}) never reaches the client,
     * the final response does, and the exchange is recorded once; otherwise interim heads are relayed.
     */
    @Test
    void interimHeadsAreWithheldWhereAFailClosedResponseStageIsSelected() throws Exception {
        for (boolean withhold : new boolean[] {true, false}) {
            try (ProxyFixture fx = ProxyFixture.withSteps(java.nio.file.Files.createDirectories(tmp.resolve("w" + withhold)),
                    s -> s.responses = interimPolicy(withhold))) {
                fx.upstream.respond(r -> TestUpstream.bytes("HTTP/1.1 103 Early Hints\r\nLink: </SECRET-HINT>\r\n\r\n"
                        + "HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </b>\r\n\r\n"
                        + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"));
                try (RawClient c = fx.client()) {
                    for (int i = 0; i < 2; i++) {
                        RawClient.Response first = c.send(get(fx, "/hints")).read();
                        if (!withhold) {
                            assertEquals(103, first.status());
                            assertEquals(102, c.read().status());
                            assertEquals(103, c.read().status());
                            first = c.read();
                        }
                        assertEquals(200, first.status(), first.head());
                        assertEquals("ok", first.bodyText());
                    }
                }
                assertEquals(withhold ? List.of(103, 103) : List.of(), fx.hook.interimWithheld,
                        "recorded once per exchange that withheld interim heads");
            }
        }
    }

    @Test
    void aWithheldResponseCarriesNoUpstreamByteAndTheNextRequestIsServed() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.responses = (p, r, response) ->
                r.target().path().equals("/blocked") ? new ResponseVerdict.Withhold(new Answer(502,
                        "response_blocked", "the upstream request may have completed", java.util.Map.of(), false))
                        : null)) {
            fx.upstream.respond(r -> TestUpstream.ok("UPSTREAM-SECRET-PAGE"));
            try (RawClient c = fx.client()) {
                RawClient.Response blocked = c.send(get(fx, "/blocked")).read();
                assertEquals(502, blocked.status());
                assertFalse(blocked.bodyText().contains("UPSTREAM"), blocked.bodyText());
                assertTrue(blocked.bodyText().contains("response_blocked"));
                RawClient.Response next = c.send(get(fx, "/open")).read();
                assertEquals("UPSTREAM-SECRET-PAGE", next.bodyText());
            }
        }
    }

    @Test
    void bodylessPartialNoTransformEventStreamOverLimitAndBrotliNarrowThePermittedModes() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.responses = (p, r, response) -> null)) {
            fx.upstream.respond(r -> {
                String path = r.head().split(" ")[1];
                return TestUpstream.bytes(switch (path) {
                    case "/204" -> "HTTP/1.1 204 No Content\r\n\r\n";
                    case "/304" -> "HTTP/1.1 304 Not Modified\r\n\r\n";
                    case "/206" -> "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-1/10\r\n"
                            + "Content-Length: 2\r\n\r\nab";
                    case "/no-transform" -> "HTTP/1.1 200 OK\r\nCache-Control: public, no-transform\r\n"
                            + "Content-Length: 2\r\n\r\nab";
                    case "/sse" -> "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 2\r\n\r\nab";
                    case "/big" -> "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + "x".repeat(100);
                    case "/br" -> "HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 2\r\n\r\nab";
                    default -> "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nab";
                });
            });
            try (RawClient c = fx.client()) {
                for (String path : List.of("/204", "/304", "/206", "/no-transform", "/sse", "/big", "/br", "/ok")) {
                    c.send(get(fx, path)).read();
                }
                c.send("HEAD " + fx.apiUrl("/head") + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\n\r\n")
                        .read(true);
            }
            List<ProxyResponse> seen = fx.hook.responded;
            var headersOnly = java.util.EnumSet.of(HttpResponseBodyMode.HEADERS_ONLY);
            var noWhole = java.util.EnumSet.of(HttpResponseBodyMode.HEADERS_ONLY, HttpResponseBodyMode.STREAM_BYTES);
            assertEquals(headersOnly, seen.get(0).permittedBodyModes(50), "204");
            assertEquals(headersOnly, seen.get(1).permittedBodyModes(50), "304");
            assertEquals(headersOnly, seen.get(2).permittedBodyModes(50), "206");
            assertEquals(headersOnly, seen.get(3).permittedBodyModes(50), "no-transform");
            assertEquals(noWhole, seen.get(4).permittedBodyModes(50), "sse");
            assertEquals(noWhole, seen.get(5).permittedBodyModes(50), "over the limit");
            assertEquals(headersOnly, seen.get(6).permittedBodyModes(50), "br");
            assertEquals(java.util.EnumSet.allOf(HttpResponseBodyMode.class), seen.get(7).permittedBodyModes(50));
            assertEquals(headersOnly, seen.get(8).permittedBodyModes(50), "HEAD");
        }
    }

    /** An upstream that sends an event stream in parts, each after the test releases it. */
    static final class SteppedUpstream implements AutoCloseable {
        final ServerSocket server = new ServerSocket(0, 10, InetAddress.getLoopbackAddress());
        final List<CountDownLatch> gates = new ArrayList<>();
        final Thread thread;

        SteppedUpstream(String head, List<String> parts, boolean chunked) throws IOException {
            for (int i = 0; i < parts.size(); i++) {
                gates.add(new CountDownLatch(i == 0 ? 0 : 1));
            }
            thread = Thread.ofVirtual().start(() -> {
                try (Socket s = server.accept()) {
                    InputStream in = s.getInputStream();
                    ByteArrayOutputStream h = new ByteArrayOutputStream();
                    while (!h.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
                        int b = in.read();
                        if (b < 0) {
                            return;
                        }
                        h.write(b);
                    }
                    OutputStream out = s.getOutputStream();
                    out.write(head.getBytes(StandardCharsets.ISO_8859_1));
                    for (int i = 0; i < parts.size(); i++) {
                        if (!gates.get(i).await(10, TimeUnit.SECONDS)) {
                            return;
                        }
                        byte[] p = parts.get(i).getBytes(StandardCharsets.UTF_8);
                        if (chunked) {
                            out.write((Integer.toHexString(p.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                            out.write(p);
                            out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                        } else {
                            out.write(p);
                        }
                        out.flush();
                    }
                    if (chunked) {
                        out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                        out.flush();
                    }
                    in.read(); // until the proxy closes
                } catch (IOException | InterruptedException e) {
                    // the proxy went away
                }
            });
        }

        int port() {
            return server.getLocalPort();
        }

        void release(int part) {
            gates.get(part).countDown();
        }

        @Override
        public void close() throws IOException {
            server.close();
            thread.interrupt();
        }
    }

    private static String readChunk(InputStream in) throws IOException {
        String size = readLine(in);
        int n = Integer.parseInt(size.trim(), 16);
        String data = new String(in.readNBytes(n), StandardCharsets.UTF_8);
        readLine(in);
        return n == 0 ? "" : data;
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        int c;
        while ((c = in.read()) >= 0 && c != '\n') {
            if (c != '\r') {
                sb.append((char) c);
            }
        }
        if (c < 0 && sb.isEmpty()) {
            throw new java.io.EOFException();
        }
        return sb.toString();
    }

    @Test
    void aStreamedEventReachesTheClientBeforeTheUpstreamSendsTheNext() throws Exception {
        TestBody body = new TestBody(false, s -> s.replace("INJECT", "[removed]"), Duration.ofSeconds(10));
        String head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.responses = deliver(body));
             SteppedUpstream up = new SteppedUpstream(head, List.of("data: one INJECT\n\n", "data: two\n\n"), true);
             RawClient c = fx.client()) {
            c.send(ProxyFixture.get(up.port(), "/events"));
            String h = c.readHead();
            assertTrue(h.toLowerCase(Locale.ROOT).contains("transfer-encoding: chunked"), h);
            // the upstream holds its second event until the client has the first
            assertEquals("data: one [removed]\n\n", readChunk(c.in()));
            up.release(1);
            assertEquals("data: two\n\n", readChunk(c.in()));
            assertEquals("", readChunk(c.in())); // the last chunk: complete
            assertTrue(waitFor(() -> Boolean.TRUE.equals(body.ended)));
        }
    }

    @Test
    void aFailureAfterTheHeadWasCommittedLeavesTheClientAnIncompleteResponse() throws Exception {
        TestBody body = new TestBody(false, s -> s, Duration.ofSeconds(10));
        body.failAt = 2;
        String head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.responses = deliver(body));
             SteppedUpstream up = new SteppedUpstream(head, List.of("data: one\n\n", "data: two\n\n"), true);
             RawClient c = fx.client()) {
            c.send(ProxyFixture.get(up.port(), "/events"));
            c.readHead();
            assertEquals("data: one\n\n", readChunk(c.in()));
            up.release(1);
            // no terminating chunk: the connection ends inside the body
            assertThrows(IOException.class, () -> {
                while (true) {
                    if (readChunk(c.in()).isEmpty()) {
                        throw new AssertionError("the response was completed");
                    }
                }
            });
            assertTrue(waitFor(() -> Boolean.FALSE.equals(body.ended)));
        }
    }

    @Test
    void aWholeBodyThatDoesNotArriveInTimeIsAnsweredWithoutAnUpstreamByte() throws Exception {
        TestBody body = new TestBody(true, s -> s, Duration.ofMillis(300));
        String head = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n";
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.responses = deliver(body));
             SteppedUpstream up = new SteppedUpstream(head, List.of("UPSTREAM-PART", "never"), false);
             RawClient c = fx.client()) {
            c.send(ProxyFixture.get(up.port(), "/slow"));
            RawClient.Response r = c.read();
            assertEquals(502, r.status());
            assertFalse(r.bodyText().contains("UPSTREAM"), r.bodyText());
            assertTrue(r.bodyText().contains("whole_body_accumulation_timeout"), r.bodyText());
        }
    }

    @Test
    void aResponseStageOnACredentialBoundHostNeverSeesTheInjectedValue() throws Exception {
        String secret = "resp/secret+" + Long.toHexString(System.nanoTime());
        String placeholder = "openshell:resolve:env:API_TOKEN";
        TestBody body = new TestBody(false, t -> t, Duration.ofSeconds(10));
        PolicySteps.Credentials<Void> inject = (plan, req, sent) -> {
            List<HttpHeader> out = sent.headers().stream()
                    .map(h -> new HttpHeader(h.name(), h.value().replace(placeholder, secret))).toList();
            return new CredentialVerdict.Forward(InjectedCredentials.narrowForScrubbing(out), sent.rawQuery(),
                    InjectedCredentials.of(List.of(new InjectedCredentials.Entry("API_TOKEN", secret, placeholder,
                            false))));
        };
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> {
            s.credentials = inject;
            s.responses = deliver(body);
        })) {
            fx.upstream.respond(r -> {
                String v = r.head().lines().filter(l -> l.toLowerCase(Locale.ROOT).startsWith("x-reflect:"))
                        .findFirst().map(l -> l.substring(l.indexOf(':') + 1).strip()).orElse("none");
                String b = "{\"echo\":\"" + v + "\"}";
                return TestUpstream.bytes("HTTP/1.1 200 OK\r\nX-Echo: " + v + "\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + Integer.toHexString(b.length()) + "\r\n" + b + "\r\n0\r\n\r\n");
            });
            try (RawClient c = fx.client()) {
                RawClient.Response r = c.send("GET " + fx.apiUrl("/echo") + " HTTP/1.1\r\nHost: "
                        + fx.apiAuthority() + "\r\nX-Reflect: " + placeholder + "\r\n\r\n").read();
                assertEquals(200, r.status());
                assertFalse(r.bodyText().contains(secret), r.bodyText());
            }
            ProxyResponse seen = fx.hook.responded.get(0);
            assertEquals(placeholder, seen.headers().stream().filter(h -> h.name().equals("x-echo")).findFirst()
                    .orElseThrow().value(), "the stage sees the scrubbed head");
            String all = String.join("", body.seen);
            assertTrue(all.contains(placeholder), all);
            assertFalse(all.contains(secret), "the stage never sees the injected value: " + all);
            assertTrue(waitFor(() -> !fx.hook.scrubs.isEmpty()), "the scrub is reported");
        }
    }

    /**
     * With a response stage on the host, a value split across two events of an event stream is scrubbed before the
     * stage reads the units (and so before the client does): neither a client joining the events nor the stage sees
     * it.
     */
    @Test
    void aValueSplitAcrossTwoEventsIsScrubbedBeforeAStreamingStage() throws Exception {
        String secret = "sse/secret+" + Long.toHexString(System.nanoTime());
        String placeholder = "openshell:resolve:env:API_TOKEN";
        TestBody body = new TestBody(false, t -> t, Duration.ofSeconds(10));
        PolicySteps.Credentials<Void> inject = (plan, req, sent) -> new CredentialVerdict.Forward(
                InjectedCredentials.narrowForScrubbing(sent.headers()), sent.rawQuery(), InjectedCredentials.of(
                        List.of(new InjectedCredentials.Entry("API_TOKEN", secret, placeholder, false))));
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> {
            s.credentials = inject;
            s.responses = deliver(body);
        })) {
            fx.upstream.respond(r -> {
                StringBuilder b = new StringBuilder("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\n");
                for (String e : List.of("data: a " + secret.substring(0, 9) + "\n\n", "data: " + secret.substring(9)
                        + " b\n\n")) {
                    b.append(Integer.toHexString(e.length())).append("\r\n").append(e).append("\r\n");
                }
                return TestUpstream.bytes(b.append("0\r\n\r\n").toString());
            });
            try (RawClient c = fx.client()) {
                RawClient.Response r = c.send(get(fx, "/events")).read();
                assertEquals(200, r.status());
                assertEquals("data: a \n\ndata: " + placeholder + " b\n\n", r.bodyText());
            }
            String all = String.join("", body.seen);
            assertFalse(all.replace("\n\ndata: ", "").contains(secret), "the stage saw the joined value: " + all);
        }
    }

    /**
     * Under a fail_open response stage interim heads are relayed: one echoing the injected value is scrubbed, and
     * the scrub is reported with the final response even when the final response itself held no value.
     */
    @Test
    void anInterimHeadScrubbedBeforeAFailOpenStageIsReported() throws Exception {
        String secret = "early/secret+" + Long.toHexString(System.nanoTime());
        String placeholder = "openshell:resolve:env:API_TOKEN";
        PolicySteps.Credentials<Void> inject = (plan, req, sent) -> new CredentialVerdict.Forward(
                InjectedCredentials.narrowForScrubbing(sent.headers()), sent.rawQuery(), InjectedCredentials.of(
                        List.of(new InjectedCredentials.Entry("API_TOKEN", secret, placeholder, false))));
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> {
            s.credentials = inject;
            s.responses = interimPolicy(false);
        })) {
            fx.upstream.respond(r -> TestUpstream.bytes("HTTP/1.1 103 Early Hints\r\nLink: </k?t=" + secret
                    + ">\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nclean"));
            try (RawClient c = fx.client()) {
                RawClient.Response early = c.send(get(fx, "/early")).read();
                assertEquals(103, early.status());
                assertEquals("</k?t=" + placeholder + ">", early.header("link"));
                assertEquals("clean", c.read().bodyText());
            }
            assertTrue(waitFor(() -> !fx.hook.scrubs.isEmpty()), "the interim scrub is reported");
            assertEquals(List.of("[API_TOKEN] 1 0"), fx.hook.scrubs);
        }
    }

    private static boolean waitFor(java.util.function.BooleanSupplier c) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!c.getAsBoolean()) {
            if (System.nanoTime() > end) {
                return false;
            }
            Thread.onSpinWait();
            Thread.sleep(5);
        }
        return true;
    }

    private static byte[] gzip(String s) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try (GZIPOutputStream z = new GZIPOutputStream(b)) {
            z.write(s.getBytes(StandardCharsets.UTF_8));
        }
        return b.toByteArray();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }
}
