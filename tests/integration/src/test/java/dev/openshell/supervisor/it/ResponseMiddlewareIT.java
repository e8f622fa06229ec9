package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.Empty;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import openshell.published.v1.ExistingHeaderAction;
import openshell.published.v1.HeaderMutation;
import openshell.published.v1.HttpResponseBodyMode;
import openshell.published.v1.HttpResponseBodyResult;
import openshell.published.v1.HttpResponseBodyTransform;
import openshell.published.v1.HttpResponseEvent;
import openshell.published.v1.HttpResponseEventResult;
import openshell.published.v1.HttpResponsePreReturnGrpc;
import openshell.published.v1.HttpResponsePreflight;
import openshell.published.v1.HttpResponsePreflightBlockDelivery;
import openshell.published.v1.HttpResponsePreflightDecision;
import openshell.published.v1.HttpResponsePreflightInspect;
import openshell.published.v1.HttpResponsePreflightSkip;
import openshell.published.v1.MiddlewareManifest;
import openshell.published.v1.SupervisorMiddlewareGrpc;
import openshell.published.v1.ValidateConfigRequest;
import openshell.published.v1.ValidateConfigResponse;
import openshell.published.v1.WriteHeader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * Response middleware end to end ({@code HTTP_RESPONSE/PRE_RETURN}): {@code supervisor run} from the image, a gRPC
 * service generated from OpenShell's published proto ({@code openshell.published.v1}, the verbatim copy in
 * {@code tests/data/reference/openshell-proto}) serving {@code HttpResponsePreReturn}, Java's HttpClient as the
 * sandbox, and a loopback upstream ({@link StagedUpstream}) over plain HTTP and HTTPS (intercepted). The service
 * removes a prompt-injection marker from a JSON page ({@code WHOLE_BODY_BYTES}, also gzip-compressed) and from a
 * server-sent event stream ({@code STREAM_BYTES}, whose first event reaches the sandbox before the upstream sends its
 * last), blocks one response at preflight (no upstream byte reaches the sandbox) and skips another.
 * {@code openshell/regex-response} (redact mode, before it) redacts a key, also one written in ASCII bytes under
 * {@code charset=UTF-16LE}.
 */
class ResponseMiddlewareIT {
    static final String MARKER = StagedUpstream.MARKER;

    @TempDir
    static Path work;

    private static StagedUpstream plain;
    private static StagedUpstream tls;
    private static Guard guard;
    private static StackProcess supervisor;
    private static HttpClient client;

    @BeforeAll
    static void start() throws Exception {
        LoopbackUpstreams upstreams = LoopbackUpstreams.create(work, "api.test");
        plain = StagedUpstream.plain();
        tls = StagedUpstream.tls(upstreams.serverContext());
        guard = Guard.start();
        Path gateway = Files.writeString(work.resolve("gateway.toml"), upstreams.gatewayToml() + """
                [[openshell.supervisor.middleware]]
                name = "response-guard"
                grpc_endpoint = "http://127.0.0.1:%d"
                max_payload_bytes = 1048576
                timeout = "2s"
                allow_insecure = true
                """.formatted(guard.port()));
        Path policy = Files.writeString(work.resolve("policy.yaml"), """
                version: 1
                network_policies:
                  api:
                    endpoints:
                      - { host: api.test, ports: [%d, %d] }
                network_middlewares:
                  secrets-back:
                    middleware: openshell/regex-response
                    order: 5
                    on_error: fail_closed
                    config: { mode: redact }
                    endpoints: { include: [api.test] }
                  guard-responses:
                    middleware: response-guard
                    order: 10
                    on_error: fail_closed
                    config: { marker: %s }
                    endpoints: { include: [api.test] }
                """.formatted(plain.port(), tls.port(), MARKER));
        supervisor = StackProcess.start(work.resolve("supervisor"), policy, gateway, Map.of());
        client = HttpClient.newBuilder()
                .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", supervisor.port())))
                .sslContext(ProxyWorld.trusting(work.resolve("supervisor").resolve("state").resolve("ca")
                        .resolve("supervisor-ca.pem")))
                .connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable c : new AutoCloseable[] {supervisor, plain, tls, guard}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                // keep closing the rest
            }
        }
    }

    private static String url(String scheme, String path) {
        return scheme.equals("https") ? "https://api.test:" + tls.port() + path
                : "http://api.test:" + plain.port() + path;
    }

    private static HttpResponse<String> get(String scheme, String path) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create(url(scheme, path))).timeout(Duration.ofSeconds(30))
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"http", "https"})
    void aJsonPageIsTransformedWhole(String scheme) throws Exception {
        HttpResponse<String> r = get(scheme, "/json");
        assertEquals(200, r.statusCode(), r.body() + "\n" + supervisor.stderr());
        assertEquals("{\"page\":\"hello [removed] world\"}", r.body());
        assertEquals("whole", r.headers().firstValue("x-response-guard").orElse(""));
        assertEquals(String.valueOf(r.body().length()), r.headers().firstValue("content-length").orElse(""));
        HttpResponsePreflight p = guard.preflights.stream().filter(x -> x.getTarget().getPath().equals("/json")
                && x.getTarget().getScheme().equals(scheme)).findFirst().orElseThrow();
        assertTrue(p.getPermittedBodyModesList().contains(HttpResponseBodyMode.HTTP_RESPONSE_BODY_MODE_WHOLE_BODY_BYTES));
        assertEquals("response-guard", p.getMiddlewareName());
        assertTrue(p.getDeferralPermitted(), "fail_closed: deferral permitted");
        assertEquals(1048576, p.getMaxPayloadBytes());
    }

    @ParameterizedTest
    @ValueSource(strings = {"http", "https"})
    void aGzipPageIsInspectedDecodedAndDeliveredDecoded(String scheme) throws Exception {
        HttpResponse<String> r = get(scheme, "/gzip");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("{\"page\":\"zipped [removed]\"}", r.body());
        assertTrue(r.headers().firstValue("content-encoding").isEmpty());
        assertTrue(guard.bodies.contains("{\"page\":\"zipped " + MARKER + "\"}"), guard.bodies.toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"http", "https"})
    void anEventStreamIsTransformedUnitByUnitAndKeepsStreaming(String scheme) throws Exception {
        StagedUpstream up = scheme.equals("https") ? tls : plain;
        CountDownLatch second = up.armEvents();
        HttpResponse<InputStream> r = client.send(HttpRequest.newBuilder(URI.create(url(scheme, "/events")))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, r.statusCode());
        try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
            // the upstream sends its second event only after the sandbox has read the first
            assertEquals("data: one [removed]", in.readLine());
            assertEquals("", in.readLine());
            second.countDown();
            assertEquals("data: two", in.readLine());
            assertEquals("", in.readLine());
            assertNull(in.readLine());
        }
        assertTrue(up.releasedInTime, "the second event was sent after the first reached the sandbox");
        HttpResponsePreflight p = guard.preflights.stream().filter(x -> x.getTarget().getPath().equals("/events")
                && x.getTarget().getScheme().equals(scheme)).findFirst().orElseThrow();
        assertFalse(p.getPermittedBodyModesList()
                .contains(HttpResponseBodyMode.HTTP_RESPONSE_BODY_MODE_WHOLE_BODY_BYTES), "an event stream");
    }

    @ParameterizedTest
    @ValueSource(strings = {"http", "https"})
    void aBlockedResponseCarriesNoUpstreamByteAndASkippedOneIsUnchanged(String scheme) throws Exception {
        HttpResponse<String> blocked = get(scheme, "/blocked");
        assertEquals(502, blocked.statusCode());
        assertTrue(blocked.body().contains("response_blocked") && blocked.body().contains("prompt_injection"),
                blocked.body());
        assertFalse(blocked.body().contains("UPSTREAM-BLOCKED-PAGE"), blocked.body());
        HttpResponse<String> skipped = get(scheme, "/skip");
        assertEquals(200, skipped.statusCode());
        assertEquals("{\"page\":\"" + MARKER + " left alone\"}", skipped.body());
    }

    @ParameterizedTest
    @ValueSource(strings = {"http", "https"})
    void theBuiltInRegexRedactsASecretAndTheSecondStageSeesItsOutput(String scheme) throws Exception {
        HttpResponse<String> r = get(scheme, "/secret");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("{\"key\":\"[REDACTED:aws_access_key_id]\",\"note\":\"[removed]\"}", r.body());
        assertTrue(guard.bodies.contains("{\"key\":\"[REDACTED:aws_access_key_id]\",\"note\":\"" + MARKER + "\"}"),
                "the guard (order 10) sees openshell/regex-response's (order 5) output: " + guard.bodies);
        assertFalse(guard.bodies.stream().anyMatch(b -> b.contains("AKIAIOSFODNN7EXAMPLE")));
    }

    /** A fake key in the OpenAI project-key format; never a real secret. */
    static final String OPENAI = "sk-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7cF0iL";

    @ParameterizedTest
    @ValueSource(strings = {"http", "https"})
    void aKeyInAsciiBytesUnderAWideCharsetIsRedactedInBothReadings(String scheme) throws Exception {
        for (String path : List.of("/utf16le-form", "/utf16-text")) {
            HttpResponse<byte[]> r = client.send(HttpRequest.newBuilder(URI.create(url(scheme, path)))
                    .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofByteArray());
            assertEquals(200, r.statusCode(), path);
            for (java.nio.charset.Charset reading : List.of(StandardCharsets.ISO_8859_1, StandardCharsets.UTF_16LE,
                    StandardCharsets.UTF_16BE)) {
                assertFalse(new String(r.body(), reading).contains(OPENAI.substring(8)), path + " as " + reading);
            }
            assertTrue(new String(r.body(), StandardCharsets.ISO_8859_1).contains("REDACTED"),
                    path + ": redacted where the ASCII reading held it");
        }
        assertFalse(guard.bodies.stream().anyMatch(b -> b.contains(OPENAI.substring(8))), "the guard saw no key");
    }

    /** The published-proto response service. */
    static final class Guard extends SupervisorMiddlewareGrpc.SupervisorMiddlewareImplBase implements AutoCloseable {
        final List<HttpResponsePreflight> preflights = new CopyOnWriteArrayList<>();
        final List<String> bodies = new CopyOnWriteArrayList<>();
        private Server server;

        static Guard start() throws IOException {
            Guard g = new Guard();
            g.server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(g)
                    .addService(g.new PreReturn()).build().start();
            return g;
        }

        /** Starts the service over TLS with {@code leaf}, every call (each stream included) passing {@code check}. */
        static Guard start(TestPki.Issued leaf, io.grpc.ServerInterceptor check) throws IOException {
            Guard g = new Guard();
            g.server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0),
                            io.grpc.TlsServerCredentials.create(leaf.certFile().toFile(), leaf.keyFile().toFile()))
                    .addService(io.grpc.ServerInterceptors.intercept(g, check))
                    .addService(io.grpc.ServerInterceptors.intercept(g.new PreReturn(), check)).build().start();
            return g;
        }

        int port() {
            return server.getPort();
        }

        @Override
        public void describe(Empty request, StreamObserver<MiddlewareManifest> out) {
            out.onNext(MiddlewareManifest.newBuilder().setName("response-guard").setServiceVersion("1.0.0")
                    .addBindings(PublishedBindings.response(1 << 20))
                    .build());
            out.onCompleted();
        }

        @Override
        public void validateConfig(ValidateConfigRequest request, StreamObserver<ValidateConfigResponse> out) {
            out.onNext(ValidateConfigResponse.newBuilder().setValid(request.getConfig().containsFields("marker"))
                    .build());
            out.onCompleted();
        }

        /** {@code HttpResponsePreReturn}: decides by path, removes the config's marker from every body unit. */
        final class PreReturn extends HttpResponsePreReturnGrpc.HttpResponsePreReturnImplBase {
            @Override
            public StreamObserver<HttpResponseEvent> evaluate(StreamObserver<HttpResponseEventResult> out) {
                return new StreamObserver<>() {
                    private String marker = "";

                    @Override
                    public void onNext(HttpResponseEvent e) {
                        switch (e.getEventCase()) {
                            case PREFLIGHT -> {
                                preflights.add(e.getPreflight());
                                marker = e.getPreflight().getConfig().getFieldsOrThrow("marker").getStringValue();
                                out.onNext(HttpResponseEventResult.newBuilder()
                                        .setPreflightDecision(decide(e.getPreflight())).build());
                            }
                            case BODY -> {
                                String text = e.getBody().getData().toStringUtf8();
                                bodies.add(text);
                                out.onNext(HttpResponseEventResult.newBuilder().setBodyResult(
                                        HttpResponseBodyResult.newBuilder().setSequence(e.getBody().getSequence())
                                                .setTransform(HttpResponseBodyTransform.newBuilder().setData(
                                                        ByteString.copyFromUtf8(text.replace(marker, "[removed]")))))
                                        .build());
                            }
                            case SESSION_END -> out.onCompleted();
                            default -> { }
                        }
                    }

                    @Override
                    public void onError(Throwable t) {
                    }

                    @Override
                    public void onCompleted() {
                    }
                };
            }
        }

        private static HttpResponsePreflightDecision decide(HttpResponsePreflight p) {
            var d = HttpResponsePreflightDecision.newBuilder();
            switch (p.getTarget().getPath()) {
                case "/blocked" -> d.setBlockDelivery(HttpResponsePreflightBlockDelivery.getDefaultInstance())
                        .setReasonCode("prompt_injection");
                case "/skip" -> d.setSkip(HttpResponsePreflightSkip.getDefaultInstance());
                case "/events" -> d.setInspect(HttpResponsePreflightInspect.newBuilder()
                        .setBodyMode(HttpResponseBodyMode.HTTP_RESPONSE_BODY_MODE_STREAM_BYTES));
                default -> d.setInspect(HttpResponsePreflightInspect.newBuilder()
                        .setBodyMode(HttpResponseBodyMode.HTTP_RESPONSE_BODY_MODE_WHOLE_BODY_BYTES)
                        .addHeaderMutations(HeaderMutation.newBuilder().setWrite(WriteHeader.newBuilder()
                                .setName("x-response-guard").setValue("whole")
                                .setOnExisting(ExistingHeaderAction.EXISTING_HEADER_ACTION_OVERWRITE))));
            }
            return d.build();
        }

        @Override
        public void close() throws InterruptedException {
            server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }
}
