package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Empty;
import dev.openshell.examples.privacyguard.CallerTokenVerifier;
import io.grpc.ClientInterceptor;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.StringReader;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import openshell.published.v1.HttpResponsePreReturnGrpc;
import openshell.published.v1.MiddlewareManifest;
import openshell.published.v1.SupervisorMiddlewareGrpc;
import openshell.published.v1.SupervisorMiddlewarePhase;
import openshell.published.v1.ValidateConfigRequest;
import openshell.published.v1.ValidateConfigResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The supervisor from the runtime image calling a TLS service generated from OpenShell's published proto that
 * verifies extension tokens as OpenShell's docs say, learning the issuer and keys from the supervisor's admin
 * listener ({@code /.well-known/openid-configuration}, then its {@code jwks_uri}) on its first call, on every call and
 * every stream: request evaluations, the WebSocket message streams of a {@link SessionService} and the response
 * streams of a {@link ResponseMiddlewareIT.Guard}, each registered over TLS under its own audience. A second service
 * advertises an {@code expected_audience} other than its registration's and is refused, naming both.
 */
class ExtensionAuthIT {
    private static final String ISSUER = "openshell-gateway:it-gateway";
    private static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization",
            Metadata.ASCII_STRING_MARSHALLER);

    @TempDir
    static Path work;

    private static Upstream upstream;
    private static Fixture guard;
    private static Fixture mismatched;
    private static StackProcess supervisor;
    private static int adminPort;
    private static TestPki.Issued ca;
    private static WsPeers.Upstream wsUpstream;
    private static StagedUpstream pages;
    private static TokenCheck sessionCheck;
    private static SessionService sessions;
    private static TokenCheck responseCheck;
    private static ResponseMiddlewareIT.Guard responses;

    /**
     * A service's caller check as OpenShell's docs describe it, run on every call and so on every stream (each stream
     * is one call with its own metadata): the verifier is loaded from the admin listener on the first call
     * (discovery names the issuer and the JWKS URL; the JWKS has the keys); a call without a valid token for
     * {@link #audience} is closed with UNAUTHENTICATED before the service sees it.
     */
    static final class TokenCheck implements ServerInterceptor {
        final String audience;
        /** Bare method names of the calls that passed, in order. */
        final List<String> calls = new CopyOnWriteArrayList<>();
        /** The token of each call that passed. */
        final List<String> tokens = new CopyOnWriteArrayList<>();
        /** The failed check of each refused call. */
        final List<String> refusals = new CopyOnWriteArrayList<>();
        final AtomicReference<CallerTokenVerifier> verifier = new AtomicReference<>();

        TokenCheck(String audience) {
            this.audience = audience;
        }

        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                          ServerCallHandler<Q, R> next) {
            String auth = headers.get(AUTHORIZATION);
            Optional<CallerTokenVerifier.Refusal> refusal;
            try {
                refusal = verifier().check(auth);
            } catch (Exception e) {
                refusal = Optional.of(new CallerTokenVerifier.Refusal("keys unavailable: " + e));
            }
            if (refusal.isPresent()) {
                refusals.add(refusal.get().check());
                call.close(Status.UNAUTHENTICATED, new Metadata());
                return new ServerCall.Listener<>() { };
            }
            calls.add(call.getMethodDescriptor().getBareMethodName());
            tokens.add(auth.substring("Bearer ".length()));
            return next.startCall(call, headers);
        }

        long count(String method) {
            return calls.stream().filter(method::equals).count();
        }

        private CallerTokenVerifier verifier() throws Exception {
            CallerTokenVerifier v = verifier.get();
            if (v == null) {
                JsonObject discovery = get("/.well-known/openid-configuration");
                if (!ISSUER.equals(discovery.getString("issuer"))) {
                    throw new IllegalStateException("discovery names another issuer");
                }
                v = CallerTokenVerifier.open(discovery.getString("jwks_uri"), audience,
                        Optional.of(discovery.getString("issuer")), Clock.systemUTC());
                verifier.compareAndSet(null, v);
            }
            return verifier.get();
        }
    }

    /** The published-proto request service, behind a {@link TokenCheck} for its audience. */
    static final class Fixture extends SupervisorMiddlewareGrpc.SupervisorMiddlewareImplBase {
        final String expectedAudience;
        final TokenCheck check;
        final List<String> calls;
        final List<String> tokens;
        final List<String> refusals;
        Server server;

        Fixture(String audience, String expectedAudience) {
            this.expectedAudience = expectedAudience;
            this.check = new TokenCheck(audience);
            this.calls = check.calls;
            this.tokens = check.tokens;
            this.refusals = check.refusals;
        }

        @Override
        public void describe(Empty request, StreamObserver<MiddlewareManifest> out) {
            out.onNext(MiddlewareManifest.newBuilder().setName("guard").setServiceVersion("1")
                    .setExpectedAudience(expectedAudience)
                    .addBindings(PublishedBindings.request(65536).setTimeout("20s"))
                    .build());
            out.onCompleted();
        }

        @Override
        public void validateConfig(ValidateConfigRequest request, StreamObserver<ValidateConfigResponse> out) {
            out.onNext(ValidateConfigResponse.newBuilder().setValid(true).build());
            out.onCompleted();
        }

        @Override
        public void evaluateHttpRequest(openshell.published.v1.HttpRequestEvaluation request,
                                        StreamObserver<openshell.published.v1.HttpRequestResult> out) {
            out.onNext(openshell.published.v1.HttpRequestResult.newBuilder()
                    .setDecision(openshell.published.v1.Decision.DECISION_ALLOW).build());
            out.onCompleted();
        }

        void start(TestPki.Issued leaf) throws Exception {
            server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0),
                            TlsServerCredentials.create(leaf.certFile().toFile(), leaf.keyFile().toFile()))
                    .addService(ServerInterceptors.intercept(this, check)).build().start();
        }

        void stop() throws InterruptedException {
            if (server != null) {
                server.shutdownNow();
                server.awaitTermination(10, TimeUnit.SECONDS);
            }
        }
    }

    static JsonObject get(String path) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + adminPort + path)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IllegalStateException(path + " answered " + r.statusCode());
        }
        return Json.createReader(new StringReader(r.body())).readObject();
    }

    @BeforeAll
    static void start() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            adminPort = s.getLocalPort();
        }
        ca = TestPki.ca(work, "ca");
        TestPki.Issued leaf = TestPki.leaf(work, "service", ca);
        upstream = Upstream.start();
        guard = new Fixture("urn:openshell:extension:middleware:guard", "urn:openshell:extension:middleware:guard");
        guard.start(leaf);
        mismatched = new Fixture("urn:test:other", "urn:acme:other");
        mismatched.start(leaf);
        wsUpstream = new WsPeers.Upstream();
        pages = StagedUpstream.plain();
        sessionCheck = new TokenCheck("urn:openshell:extension:middleware:ws-session");
        sessions = SessionService.start("ws-session", true, leaf, sessionCheck);
        responseCheck = new TokenCheck("urn:openshell:extension:middleware:response-guard");
        responses = ResponseMiddlewareIT.Guard.start(leaf, responseCheck);
        Path gateway = writeGateway();
        Path policy = writePolicy();
        supervisor = StackProcess.start(work.resolve("supervisor"), policy, gateway, Map.of(), adminPort);
    }

    /** Four registrations over TLS: guard, the mismatched one, the message service and the response service. */
    private static Path writeGateway() throws Exception {
        return Files.writeString(work.resolve("gateway.toml"), """
                [openshell.supervisor.network]
                allow_loopback_upstreams = true

                [openshell.supervisor.network.static_hosts]
                "chat.test" = "127.0.0.1"
                "ws.test" = "127.0.0.1"
                "page.test" = "127.0.0.1"

                [openshell.supervisor]
                state_dir = "%s"

                [openshell.supervisor.extension_auth]
                gateway_id = "it-gateway"
                sandbox_id = "it-sandbox"

                """.formatted(work.resolve("supervisor").resolve("state"))
                + registration("guard", guard.server.getPort(), "max_body_bytes = 65536")
                + registration("other", mismatched.server.getPort(),
                        "max_body_bytes = 65536\naudience = \"urn:test:other\"")
                + registration("ws-session", sessions.port(), "max_payload_bytes = 1048576")
                + registration("response-guard", responses.port(), "max_payload_bytes = 1048576"));
    }

    /** {@return a registration of the service on 127.0.0.1:{@code port} over TLS (the test CA), with {@code more}} */
    private static String registration(String name, int port, String more) {
        return """

                [[openshell.supervisor.middleware]]
                name = "%s"
                grpc_endpoint = "https://127.0.0.1:%d"
                tls_ca_bundle = "%s"
                timeout = "10s"
                %s
                """.formatted(name, port, ca.certFile(), more);
    }

    /** Requests to chat.test through guard, WebSocket messages on ws.test, responses from page.test. */
    private static Path writePolicy() throws Exception {
        return Files.writeString(work.resolve("policy.yaml"), """
                version: 1
                network_policies:
                  api:
                    endpoints:
                      - { host: chat.test, port: %d }
                      - { host: ws.test, port: %d }
                      - { host: page.test, port: %d }
                network_middlewares:
                  guarded:
                    middleware: guard
                    on_error: fail_closed
                    endpoints: { include: [chat.test] }
                  messages:
                    middleware: ws-session
                    order: 10
                    on_error: fail_closed
                    endpoints: { include: [ws.test] }
                  pages:
                    middleware: response-guard
                    order: 20
                    on_error: fail_closed
                    config: { marker: %s }
                    endpoints: { include: [page.test] }
                """.formatted(upstream.port(), wsUpstream.port(), pages.port(), ResponseMiddlewareIT.MARKER));
    }

    @AfterAll
    static void stop() throws Exception {
        if (supervisor != null) {
            supervisor.close();
        }
        if (upstream != null) {
            upstream.close();
        }
        guard.stop();
        mismatched.stop();
        for (AutoCloseable c : new AutoCloseable[] {sessions, responses, wsUpstream, pages}) {
            if (c != null) {
                c.close();
            }
        }
    }

    @Test
    void theVerifyingServiceAcceptsTheSupervisorsCallsEndToEnd() throws Exception {
        HttpResponse<String> r = supervisor.postJson("http://chat.test:" + upstream.port() + "/v1/chat",
                "{\"q\":\"hello\"}");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("{\"q\":\"hello\"}", new String(upstream.take().body(), java.nio.charset.StandardCharsets.UTF_8));
        assertEquals(List.of(), guard.refusals, "no call was refused");
        assertTrue(guard.calls.containsAll(List.of("Describe", "ValidateConfig", "EvaluateHttpRequest")),
                guard.calls.toString());
        assertEquals(guard.calls.size(), guard.tokens.size());
    }

    @Test
    void aRegistrationWhoseAudienceDiffersFromTheServicesIsRefusedWithBothNamed() throws Exception {
        supervisor.awaitLog("urn:acme:other", Duration.ofSeconds(30));
        String line = supervisor.stderr().lines().filter(l -> l.contains("urn:acme:other")).findFirst().orElseThrow();
        assertTrue(line.contains("'urn:test:other'") && line.contains("expected_audience"), line);
        assertEquals(List.of("Describe"), mismatched.calls, "refused after one authenticated Describe");
    }

    @Test
    void aBindingTimeoutAboveTheRegistrationsIsCappedAndValidateSaysSo() throws Exception {
        supervisor.awaitLog("capped to 10s", Duration.ofSeconds(30));
        Image.Run run = Image.run(Image.HOME, "validate", "--policy", work.resolve("policy.yaml").toString(),
                "--gateway-config", work.resolve("gateway.toml").toString());
        String all = run.out() + run.err();
        assertTrue(all.contains("binding 'guard' advertises timeout 20s, above the registration's 10s: capped to 10s"),
                all);
        assertTrue(all.contains("'urn:acme:other'") && all.contains("'urn:test:other'"), all);
    }

    @Test
    void discoveryAndKeysExportGiveWhatAVerifierReads() throws Exception {
        JsonObject discovery = get("/.well-known/openid-configuration");
        assertEquals(ISSUER, discovery.getString("issuer"));
        assertEquals("http://127.0.0.1:" + adminPort + "/.well-known/jwks.json", discovery.getString("jwks_uri"));
        assertEquals("EdDSA", discovery.getJsonArray("id_token_signing_alg_values_supported").getString(0));
        Path exported = work.resolve("exported-jwks.json");
        Path exportedDiscovery = work.resolve("exported-discovery.json");
        Image.Run run = Image.run(Image.HOME, "keys", "export", "--state-dir",
                work.resolve("supervisor").resolve("state").toString(), "--gateway-config",
                work.resolve("gateway.toml").toString(), "--out", exported.toString(), "--discovery-out",
                exportedDiscovery.toString(), "--jwks-uri", "https://keys.example/.well-known/jwks.json");
        assertEquals(0, run.exit(), run.err());
        assertEquals(kids(get("/.well-known/jwks.json")), kids(Json.createReader(new StringReader(
                Files.readString(exported))).readObject()), "the export is the JWKS the admin listener serves");
        JsonObject d = Json.createReader(new StringReader(Files.readString(exportedDiscovery))).readObject();
        assertEquals(ISSUER, d.getString("issuer"));
        assertEquals("https://keys.example/.well-known/jwks.json", d.getString("jwks_uri"));
        // a verifier configured from the exported file accepts the token the supervisor actually sent
        supervisor.postJson("http://chat.test:" + upstream.port() + "/v1/chat", "{}");
        upstream.take();
        CallerTokenVerifier fromFile = CallerTokenVerifier.open(exported.toString(),
                "urn:openshell:extension:middleware:guard", Optional.of(ISSUER), Clock.systemUTC());
        String sent = guard.tokens.get(guard.tokens.size() - 1);
        assertEquals(Optional.empty(), fromFile.check("Bearer " + sent));
    }

    @Test
    void noTokenAppearsInAnyLogOrAuditLine() throws Exception {
        supervisor.postJson("http://chat.test:" + upstream.port() + "/v1/chat", "{\"a\":1}");
        upstream.take();
        Set<String> sent = new java.util.HashSet<>(guard.tokens);
        sent.addAll(mismatched.tokens);
        assertFalse(sent.isEmpty());
        assertNotLogged(sent);
    }

    /** Neither a token's signature nor its header and claims appear in stdout, stderr or the audit log. */
    private static void assertNotLogged(java.util.Collection<String> tokens) throws Exception {
        String everything = supervisor.stdout() + supervisor.stderr() + supervisor.auditText();
        for (String t : tokens) {
            assertFalse(everything.contains(t.substring(t.lastIndexOf('.') + 1)), "a token signature was logged");
            assertFalse(everything.contains(t.substring(0, t.indexOf('.', t.indexOf('.') + 1))),
                    "a token's header and claims were logged");
        }
    }

    /**
     * A WebSocket session with a message each way and a response through a {@code WHOLE_BODY_BYTES} stage: every
     * {@code EvaluateWebSocketSession} stream (one per direction) and every {@code HttpResponsePreReturn.Evaluate}
     * stream reached its service only after the token in that stream's own metadata was verified; the same streams
     * opened without a token, or with another registration's token (another audience), are refused.
     */
    @Test
    void theMessageAndResponseStreamsCarryAValidTokenAndAnyOtherIsRefused() throws Exception {
        try (WsPeers.Client c = new WsPeers.Client(supervisor.port(), "ws.test", wsUpstream.port(), "")) {
            assertTrue(c.upgraded(), c.response + supervisor.stderr());
            wsUpstream.awaitSession();
            c.send(WsPeers.text("out " + SessionService.SECRET, true));
            assertEquals("out [REDACTED]", wsUpstream.next().text());
            wsUpstream.send(WsPeers.text("back " + SessionService.SECRET, false));
            assertEquals("back [REDACTED]", c.read().text());
        }
        sessions.nextEnd();
        HttpResponse<String> page = supervisor.send(HttpRequest.newBuilder(URI.create("http://page.test:"
                + pages.port() + "/json")).timeout(Duration.ofSeconds(30)).build());
        assertEquals(200, page.statusCode(), page.body() + supervisor.stderr());
        assertEquals("{\"page\":\"hello [removed] world\"}", page.body(), "the response stage ran");

        assertEquals(List.of(), sessionCheck.refusals, "no message-service call was refused");
        assertEquals(List.of(), responseCheck.refusals, "no response-service call was refused");
        assertEquals(Set.of(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS,
                        SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_RETURN),
                sessions.preflights.stream().map(p -> p.getPhase()).collect(Collectors.toSet()));
        assertEquals(sessions.preflights.size(), sessionCheck.count("EvaluateWebSocketSession"),
                "every message stream was verified: " + sessionCheck.calls);
        assertTrue(sessionCheck.calls.containsAll(List.of("Describe", "ValidateConfig", "EvaluateHttpRequest")),
                sessionCheck.calls.toString());
        assertFalse(responses.preflights.isEmpty());
        assertEquals(responses.preflights.size(), responseCheck.count("Evaluate"),
                "every response stream was verified: " + responseCheck.calls);
        assertTrue(responseCheck.calls.containsAll(List.of("Describe", "ValidateConfig")),
                responseCheck.calls.toString());

        String otherAudience = guard.tokens.getFirst();
        for (boolean messages : new boolean[] {true, false}) {
            int port = messages ? sessions.port() : responses.port();
            assertEquals(Status.Code.UNAUTHENTICATED, openStream(port, messages, null), "no token");
            assertEquals(Status.Code.UNAUTHENTICATED, openStream(port, messages, otherAudience), "guard's audience");
        }
        assertEquals(List.of("no authorization metadata", "wrong audience"), sessionCheck.refusals);
        assertEquals(List.of("no authorization metadata", "wrong audience"), responseCheck.refusals);

        List<String> sent = new java.util.ArrayList<>(sessionCheck.tokens);
        sent.addAll(responseCheck.tokens);
        assertNotLogged(sent);
    }

    /** {@return how a stream opened on the TLS service at {@code port} with {@code token} (or none) ended} */
    private static Status.Code openStream(int port, boolean messages, String token) throws Exception {
        ManagedChannel channel = Grpc.newChannelBuilderForAddress("127.0.0.1", port,
                TlsChannelCredentials.newBuilder().trustManager(ca.certFile().toFile()).build()).build();
        try {
            Metadata md = new Metadata();
            if (token != null) {
                md.put(AUTHORIZATION, "Bearer " + token);
            }
            ClientInterceptor attach = MetadataUtils.newAttachHeadersInterceptor(md);
            CompletableFuture<Status.Code> ended = new CompletableFuture<>();
            if (messages) {
                SupervisorMiddlewareGrpc.newStub(channel).withInterceptors(attach)
                        .evaluateWebSocketSession(new Ending<>(ended));
            } else {
                HttpResponsePreReturnGrpc.newStub(channel).withInterceptors(attach).evaluate(new Ending<>(ended));
            }
            return ended.get(30, TimeUnit.SECONDS);
        } finally {
            channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    /** Completes with the status a stream ended with. */
    private record Ending<T>(CompletableFuture<Status.Code> ended) implements StreamObserver<T> {
        @Override
        public void onNext(T value) {
            // a refused stream carries no message
        }

        @Override
        public void onError(Throwable t) {
            ended.complete(Status.fromThrowable(t).getCode());
        }

        @Override
        public void onCompleted() {
            ended.complete(Status.Code.OK);
        }
    }

    private static Set<String> kids(JsonObject jwks) {
        return jwks.getJsonArray("keys").stream().map(k -> k.asJsonObject().getString("kid"))
                .collect(Collectors.toSet());
    }
}
