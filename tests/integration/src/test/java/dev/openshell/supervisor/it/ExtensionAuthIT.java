package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Empty;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.TlsServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import openshell.published.v1.MiddlewareBinding;
import openshell.published.v1.MiddlewareManifest;
import openshell.published.v1.SupervisorMiddlewareGrpc;
import openshell.published.v1.SupervisorMiddlewareOperation;
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
 * listener ({@code /.well-known/openid-configuration}, then its {@code jwks_uri}) on its first call. A second service
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

    /** The published-proto service, its verifier loaded from the admin listener on the first call. */
    static final class Fixture extends SupervisorMiddlewareGrpc.SupervisorMiddlewareImplBase
            implements ServerInterceptor {
        final String audience;
        final String expectedAudience;
        final List<String> calls = new CopyOnWriteArrayList<>();
        final List<String> tokens = new CopyOnWriteArrayList<>();
        final List<String> refusals = new CopyOnWriteArrayList<>();
        final AtomicReference<CallerTokenVerifier> verifier = new AtomicReference<>();
        Server server;

        Fixture(String audience, String expectedAudience) {
            this.audience = audience;
            this.expectedAudience = expectedAudience;
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

        /** OpenShell's flow: discovery names the issuer and the JWKS URL; the JWKS has the keys. */
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

        @Override
        public void describe(Empty request, StreamObserver<MiddlewareManifest> out) {
            out.onNext(MiddlewareManifest.newBuilder().setName("guard").setServiceVersion("1")
                    .setExpectedAudience(expectedAudience)
                    .addBindings(MiddlewareBinding.newBuilder()
                            .setOperation(SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_HTTP_REQUEST)
                            .setPhase(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS)
                            .setMaxPayloadBytes(65536).setTimeout("20s"))
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
                    .addService(ServerInterceptors.intercept(this, this)).build().start();
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
        TestPki.Issued ca = TestPki.ca(work, "ca");
        TestPki.Issued leaf = TestPki.leaf(work, "service", ca);
        upstream = Upstream.start();
        guard = new Fixture("urn:openshell:extension:middleware:guard", "urn:openshell:extension:middleware:guard");
        guard.start(leaf);
        mismatched = new Fixture("urn:test:other", "urn:acme:other");
        mismatched.start(leaf);
        Path gateway = Files.writeString(work.resolve("gateway.toml"), """
                [openshell.supervisor.network]
                allow_loopback_upstreams = true

                [openshell.supervisor.network.static_hosts]
                "chat.test" = "127.0.0.1"

                [openshell.supervisor]
                state_dir = "%s"

                [openshell.supervisor.extension_auth]
                gateway_id = "it-gateway"
                sandbox_id = "it-sandbox"

                [[openshell.supervisor.middleware]]
                name = "guard"
                grpc_endpoint = "https://127.0.0.1:%d"
                tls_ca_bundle = "%s"
                max_body_bytes = 65536
                timeout = "10s"

                [[openshell.supervisor.middleware]]
                name = "other"
                grpc_endpoint = "https://127.0.0.1:%d"
                tls_ca_bundle = "%s"
                max_body_bytes = 65536
                timeout = "10s"
                audience = "urn:test:other"
                """.formatted(work.resolve("supervisor").resolve("state"), guard.server.getPort(), ca.certFile(),
                mismatched.server.getPort(), ca.certFile()));
        Path policy = Files.writeString(work.resolve("policy.yaml"), """
                version: 1
                network_policies:
                  api:
                    endpoints:
                      - { host: chat.test, port: %d }
                network_middlewares:
                  guarded:
                    middleware: guard
                    on_error: fail_closed
                    endpoints: { include: [chat.test] }
                """.formatted(upstream.port()));
        supervisor = StackProcess.start(work.resolve("supervisor"), policy, gateway, Map.of(), adminPort);
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
        String everything = supervisor.stdout() + supervisor.stderr() + supervisor.auditText();
        for (String t : sent) {
            assertFalse(everything.contains(t.substring(t.lastIndexOf('.') + 1)), "a token signature was logged");
            assertFalse(everything.contains(t.substring(0, t.indexOf('.', t.indexOf('.') + 1))),
                    "a token's header and claims were logged");
        }
    }

    private static Set<String> kids(JsonObject jwks) {
        return jwks.getJsonArray("keys").stream().map(k -> k.asJsonObject().getString("kid"))
                .collect(Collectors.toSet());
    }
}
