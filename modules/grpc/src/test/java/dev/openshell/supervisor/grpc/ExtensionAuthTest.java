package dev.openshell.supervisor.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Empty;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.supervisor.engine.RegisteredBinding;
import dev.openshell.supervisor.grpc.auth.CallerTokens;
import dev.openshell.supervisor.grpc.auth.ExtensionTokenIssuer;
import dev.openshell.supervisor.grpc.auth.MutableClock;
import dev.openshell.supervisor.grpc.auth.SigningKeys;
import dev.openshell.supervisor.grpc.tck.Check;
import dev.openshell.supervisor.grpc.tck.Tck;
import dev.openshell.supervisor.grpc.tck.TckOptions;
import dev.openshell.supervisor.grpc.tck.TckReport;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.TlsServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import jakarta.json.JsonObject;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import openshell.published.v1.MiddlewareBinding;
import openshell.published.v1.MiddlewareManifest;
import openshell.published.v1.SupervisorMiddlewareGrpc;
import openshell.published.v1.SupervisorMiddlewareOperation;
import openshell.published.v1.SupervisorMiddlewarePhase;
import openshell.published.v1.ValidateConfigRequest;
import openshell.published.v1.ValidateConfigResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Extension tokens end to end against a service generated from OpenShell's published proto that verifies them as
 * OpenShell's docs say (Privacy Guard's verifier: typ, alg, kid, signature, issuer, exact audience, expiry,
 * caller_kind), over TLS on 127.0.0.1.
 */
class ExtensionAuthTest {
    private static final String NAME = "guard";
    private static final String DEFAULT_AUD = "urn:openshell:extension:middleware:guard";
    private static final String ISSUER = "openshell-gateway:gw-test";

    @TempDir
    Path tmp;

    private final MutableClock clock = new MutableClock(Instant.now());
    private final List<String> logged = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            logged.add(new java.util.logging.SimpleFormatter().formatMessage(r));
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };
    private SigningKeys keys;
    private ExtensionTokenIssuer issuer;
    private Path jwks;
    private TestPki.Issued ca;
    private TestPki.Issued leaf;

    @BeforeEach
    void setUp() throws Exception {
        Logger.getLogger("").addHandler(capture);
        keys = SigningKeys.open(tmp.resolve("state"), clock, Duration.ofDays(30), Duration.ofMinutes(15));
        issuer = new ExtensionTokenIssuer(keys, new ExtensionTokenIssuer.Identity(ISSUER, "sb-1",
                Duration.ofMinutes(15)), clock);
        jwks = tmp.resolve("jwks.json");
        Files.writeString(jwks, keys.jwks());
        ca = TestPki.ca(tmp, "ca");
        leaf = TestPki.leaf(tmp, "service", ca);
    }

    @AfterEach
    void tearDown() {
        Logger.getLogger("").removeHandler(capture);
    }

    /** Records the authorization metadata of every call, by method. */
    static final class Recorder implements ServerInterceptor {
        final List<Map.Entry<String, Optional<String>>> calls = new CopyOnWriteArrayList<>();

        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                          ServerCallHandler<Q, R> next) {
            calls.add(Map.entry(call.getMethodDescriptor().getBareMethodName(),
                    Optional.ofNullable(headers.get(BearerCredentials.AUTHORIZATION))));
            return next.startCall(call, headers);
        }

        Set<String> tokens() {
            return calls.stream().map(Map.Entry::getValue).flatMap(Optional::stream).collect(Collectors.toSet());
        }
    }

    /** A service written against the published proto: one binding without ID, an optional expected_audience. */
    static final class Published extends SupervisorMiddlewareGrpc.SupervisorMiddlewareImplBase {
        private final String expectedAudience;
        private final String timeout;

        Published(String expectedAudience, String timeout) {
            this.expectedAudience = expectedAudience;
            this.timeout = timeout;
        }

        @Override
        public void describe(Empty request, StreamObserver<MiddlewareManifest> out) {
            out.onNext(MiddlewareManifest.newBuilder().setName("guard").setServiceVersion("1")
                    .setExpectedAudience(expectedAudience)
                    .addBindings(MiddlewareBinding.newBuilder()
                            .setOperation(SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_HTTP_REQUEST)
                            .setPhase(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS)
                            .setMaxPayloadBytes(EnvelopeLimits.MAX_BODY_BYTES).setTimeout(timeout))
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
    }

    private Server server(boolean tls, Published service, ServerInterceptor... interceptors) throws Exception {
        var creds = tls ? TlsServerCredentials.create(leaf.certFile().toFile(), leaf.keyFile().toFile())
                : io.grpc.InsecureServerCredentials.create();
        return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0), creds)
                .addService(ServerInterceptors.intercept(service, interceptors)).build().start();
    }

    private CallerAuthentication strict(String audience) throws Exception {
        return new CallerAuthentication(CallerTokenVerifier.open(jwks.toString(), audience, Optional.of(ISSUER),
                clock));
    }

    private ServiceRegistration.Builder tls(Server s) {
        return ServiceRegistration.builder(NAME, URI.create("https://127.0.0.1:" + s.getPort()), 1024)
                .caBundle(ca.certFile()).timeout(Duration.ofSeconds(5));
    }

    private static void stop(Server s) throws InterruptedException {
        s.shutdownNow();
        s.awaitTermination(10, TimeUnit.SECONDS);
    }

    private ExternalServices connect(ServiceRegistration reg, CallerTokens tokens) {
        return ExternalServices.connect(List.of(reg), RegistryListener.NONE, Fixtures.FAST_RETRY, tokens);
    }

    @Test
    void everyRpcOverTlsCarriesATokenTheStrictServiceAccepts() throws Exception {
        Recorder rec = new Recorder();
        CallerAuthentication auth = strict(DEFAULT_AUD);
        Server s = server(true, new Published(DEFAULT_AUD, ""), auth, rec);
        try (ExternalServices services = connect(tls(s).build(), issuer)) {
            assertEquals(List.of(), services.failures().castToList());
            RegisteredBinding claim = services.claims().getOnly();
            assertEquals(ConfigValidation.ok(), claim.provider().validateConfig(claim.id(), JsonObject.EMPTY_JSON_OBJECT));
            for (int i = 0; i < 3; i++) {
                assertEquals(Decision.ALLOW, claim.provider().evaluate(Fixtures.evaluation(NAME, Body.ofUtf8("hi")))
                        .decision());
            }
            assertEquals(0, auth.refused());
            assertEquals(List.of("Describe", "ValidateConfig", "EvaluateHttpRequest", "EvaluateHttpRequest",
                    "EvaluateHttpRequest"), rec.calls.stream().map(Map.Entry::getKey).toList());
            assertTrue(rec.calls.stream().allMatch(c -> c.getValue().orElse("").startsWith("Bearer ")), "every call");
            assertEquals(1, rec.tokens().size(), "one cached token for the whole run");
            assertNoTokenLogged(rec);
        } finally {
            stop(s);
        }
    }

    @Test
    void anAllowInsecureRegistrationGetsNoToken() throws Exception {
        Recorder rec = new Recorder();
        Server s = server(false, new Published("", ""), rec);
        try (ExternalServices services = connect(Fixtures.plaintext(NAME, URI.create("http://127.0.0.1:"
                + s.getPort()), 1024), issuer)) {
            RegisteredBinding claim = services.claims().getOnly();
            claim.provider().validateConfig(claim.id(), JsonObject.EMPTY_JSON_OBJECT);
            claim.provider().evaluate(Fixtures.evaluation(NAME, Body.ofUtf8("hi")));
            assertEquals(3, rec.calls.size());
            assertTrue(rec.calls.stream().allMatch(c -> c.getValue().isEmpty()), rec.calls.toString());
        } finally {
            stop(s);
        }
    }

    @Test
    void withoutATokenTheStrictServiceRefusesDescribeAndStartUpSaysSo() throws Exception {
        Server s = server(true, new Published("", ""), strict(DEFAULT_AUD));
        try (ExternalServices services = connect(tls(s).build(), CallerTokens.NONE)) {
            assertEquals(0, services.claims().size());
            String m = services.failures().getOnly().message();
            assertTrue(m.contains("UNAUTHENTICATED") && m.contains("without an extension token"), m);
        } finally {
            stop(s);
        }
    }

    @Test
    void aRegistrationWhoseAudienceDiffersIsRefusedWithBothValuesNamed() throws Exception {
        // a strict service verifying its own audience: the token for another one is refused before Describe answers
        Server strictSvc = server(true, new Published(DEFAULT_AUD, ""), strict(DEFAULT_AUD));
        try (ExternalServices services = connect(tls(strictSvc).audience("urn:test:guard").build(), issuer)) {
            String m = services.failures().getOnly().message();
            assertTrue(m.contains("UNAUTHENTICATED") && m.contains("'urn:test:guard'"), m);
        } finally {
            stop(strictSvc);
        }
        // a service that accepts the token but advertises another expected_audience: refused after Describe
        Server lenient = server(true, new Published("urn:acme:guard", ""), strict("urn:test:guard"));
        try (ExternalServices services = connect(tls(lenient).audience("urn:test:guard").build(), issuer)) {
            String m = services.failures().getOnly().message();
            assertTrue(m.contains("'urn:acme:guard'") && m.contains("'urn:test:guard'")
                    && m.contains("expected_audience"), m);
            assertEquals(0, services.claims().size());
        } finally {
            stop(lenient);
        }
    }

    @Test
    void tokensRotateWithAShortLifetimeAndNoCallFailsAcrossARotation() throws Exception {
        ExtensionTokenIssuer shortLived = new ExtensionTokenIssuer(keys, new ExtensionTokenIssuer.Identity(ISSUER,
                "sb-1", Duration.ofSeconds(5)), clock);
        Recorder rec = new Recorder();
        CallerAuthentication auth = strict(DEFAULT_AUD);
        Server s = server(true, new Published("", ""), auth, rec);
        try (ExternalServices services = connect(tls(s).build(), shortLived)) {
            RegisteredBinding claim = services.claims().getOnly();
            for (int i = 0; i < 40; i++) {
                clock.advance(Duration.ofMillis(700));
                assertEquals(Decision.ALLOW, claim.provider().evaluate(Fixtures.evaluation(NAME, Body.ofUtf8("x")))
                        .decision(), "call " + i);
            }
            assertEquals(0, auth.refused());
            assertTrue(rec.tokens().size() >= 6, "rotated about every 4 s over 28 s: " + rec.tokens().size());
            assertNoTokenLogged(rec);
        } finally {
            stop(s);
        }
    }

    @Test
    void aBindingTimeoutAboveTheRegistrationsIsCappedToIt() throws Exception {
        Server s = server(true, new Published("", "2s"), strict(DEFAULT_AUD));
        Server shorter = server(true, new Published("", "100ms"), strict(DEFAULT_AUD));
        try (ExternalServices services = connect(tls(s).timeout(Duration.ofMillis(500)).build(), issuer);
             ExternalServices services2 = connect(tls(shorter).timeout(Duration.ofMillis(500)).build(), issuer)) {
            RegisteredBinding claim = services.claims().getOnly();
            assertEquals(Optional.of(Duration.ofMillis(500)), claim.binding().timeout());
            String note = services.notes().getOnly();
            assertTrue(note.contains("advertises timeout 2s") && note.contains("capped to 500ms"), note);
            assertEquals(Optional.of(Duration.ofMillis(100)), services2.claims().getOnly().binding().timeout(),
                    "a shorter one is kept");
            assertEquals(0, services2.notes().size());
        } finally {
            stop(s);
            stop(shorter);
        }
    }

    @Test
    void theTcksTokenChecksPassAgainstAStrictServiceAndFailAgainstOneAcceptingAnyToken() throws Exception {
        Server strictSvc = server(true, new Published("", ""), new CallerAuthentication(CallerTokenVerifier.open(
                jwks.toString(), DEFAULT_AUD, Optional.of(ISSUER), Clock.systemUTC())));
        Server anyToken = server(true, new Published("", ""));
        try {
            Map<String, Check.Status> good = auth(Tck.run(TckOptions.of(tls(strictSvc).build())
                    .withTokens(new ExtensionTokenIssuer(keys, issuer.identity(), Clock.systemUTC()))));
            assertEquals(Map.of("auth.missing_token", Check.Status.PASS, "auth.expired_token", Check.Status.PASS,
                    "auth.wrong_audience", Check.Status.PASS, "auth.wrong_key", Check.Status.PASS,
                    "auth.valid_token", Check.Status.PASS), good);
            Map<String, Check.Status> lax = auth(Tck.run(TckOptions.of(tls(anyToken).build())
                    .withTokens(new ExtensionTokenIssuer(keys, issuer.identity(), Clock.systemUTC()))));
            assertEquals(Map.of("auth.missing_token", Check.Status.FAIL, "auth.expired_token", Check.Status.FAIL,
                    "auth.wrong_audience", Check.Status.FAIL, "auth.wrong_key", Check.Status.FAIL,
                    "auth.valid_token", Check.Status.PASS), lax);
        } finally {
            stop(strictSvc);
            stop(anyToken);
        }
    }

    private static Map<String, Check.Status> auth(TckReport report) {
        Map<String, Check.Status> m = new java.util.TreeMap<>();
        for (Check c : report.checks()) {
            if (c.name().startsWith("auth")) {
                m.put(c.name(), c.status());
            }
        }
        return m;
    }

    private void assertNoTokenLogged(Recorder rec) {
        Set<String> jws = new HashSet<>();
        for (String t : rec.tokens()) {
            jws.add(t.substring("Bearer ".length()));
        }
        List<String> lines = new ArrayList<>(logged);
        for (String t : jws) {
            String signature = t.substring(t.lastIndexOf('.') + 1);
            assertFalse(lines.stream().anyMatch(l -> l.contains(t) || l.contains(signature)), "a token was logged");
        }
    }
}
