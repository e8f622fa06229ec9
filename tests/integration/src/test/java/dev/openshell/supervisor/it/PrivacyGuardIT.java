package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.ExistingHeaderAction;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.supervisor.engine.ProviderOrigin;
import dev.openshell.supervisor.engine.RegisteredBinding;
import dev.openshell.supervisor.grpc.ExternalServices;
import dev.openshell.supervisor.grpc.GrpcMiddlewareProvider;
import dev.openshell.supervisor.grpc.RegistryListener;
import dev.openshell.supervisor.grpc.RetryPolicy;
import dev.openshell.supervisor.grpc.ServiceRegistration;
import dev.openshell.supervisor.grpc.StageFailureCodes;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.StringReader;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Privacy Guard run from the runtime image as its own process on 127.0.0.1, called by the gRPC adapter and registry:
 * round trips, outage and recovery, TLS and mutual TLS, and the 4 MiB body.
 */
class PrivacyGuardIT {
    private static final String ID = "examples/privacy-guard";
    private static final RetryPolicy FAST = new RetryPolicy(Duration.ofMillis(50), Duration.ofMillis(500));
    private static final String PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4"
            + "2mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    static final String CHAT = """
            {"model":"gpt-4o","messages":[{"role":"user","content":[
              {"type":"text","text":"Describe this for jane.doe@corp.example, or call +1 415 555 0100."},
              {"type":"image_url","image_url":{"url":"%s"}}]}]}""".formatted(PNG);

    @TempDir
    Path tmp;

    static HttpRequestEvaluation evaluation(Body body, JsonObject config) {
        return new HttpRequestEvaluation(new BindingId(ID), Phase.PRE_CREDENTIALS, RequestContext.of("it-1"), config,
                new HttpRequestTarget("https", "api.openai.com", 443, "POST", "/v1/chat/completions", ""),
                List.of(new HttpHeader("content-type", "application/json")), body);
    }

    private static ServiceRegistration plaintext(int port, Duration timeout) {
        return ServiceRegistration.builder("privacy-guard", URI.create("http://127.0.0.1:" + port),
                EnvelopeLimits.MAX_BODY_BYTES).allowInsecure(true).timeout(timeout).build();
    }

    private static ExternalServices connect(ServiceRegistration reg, RegistryListener listener) {
        ExternalServices s = ExternalServices.connect(List.of(reg), listener, FAST);
        assertEquals(List.of(), s.failures().castToList(), "registration refused");
        return s;
    }

    private static Map<String, Long> findings(HttpRequestResult r) {
        Map<String, Long> m = new TreeMap<>();
        for (Finding f : r.findings()) {
            m.put(f.type(), f.count());
        }
        return m;
    }

    @Test
    void describeValidateAndEvaluateRoundTripThroughTheAdapter() throws Exception {
        try (PrivacyGuardProcess pg = PrivacyGuardProcess.start(0);
             ExternalServices services = connect(plaintext(pg.port(), Duration.ofSeconds(5)), RegistryListener.NONE)) {
            RegisteredBinding claim = requestClaim(services);
            assertEquals(ID, claim.id().value());
            assertEquals(ProviderOrigin.Kind.EXTERNAL, claim.origin().kind());
            assertEquals("privacy-guard", claim.serviceName());

            var provider = claim.provider();
            assertEquals(ConfigValidation.ok(), provider.validateConfig(claim.id(),
                    Json.createObjectBuilder().add("images", "deny").add("pii", "allow").build()));
            ConfigValidation bad = provider.validateConfig(claim.id(),
                    Json.createObjectBuilder().add("images", "blur").build());
            assertFalse(bad.valid());
            // the service's own reason, for policy loading to show apart on the console (untrusted text); the
            // adapter names the key, not the value it refused
            assertTrue(bad.reason().contains("images") && !bad.reason().contains("blur"), bad.reason());

            HttpRequestResult r = provider.evaluate(evaluation(Body.ofUtf8(CHAT), JsonObject.EMPTY_JSON_OBJECT));
            assertEquals(Decision.ALLOW, r.decision());
            assertEquals("privacy_redacted", r.reasonCode().orElseThrow());
            assertEquals(Map.of("content.image", 1L, "pii.email", 1L, "pii.phone", 1L), findings(r));
            assertEquals(Map.of("modalities", "text,image", "sensitivity", "redacted"), r.metadata());
            assertEquals(List.of(new HeaderMutation.WriteHeader("x-openshell-middleware-privacy-guard", "redacted",
                    ExistingHeaderAction.OVERWRITE)), r.headerMutations());
            String body = r.body().orElseThrow().utf8().orElseThrow();
            assertFalse(body.contains("jane.doe@corp.example") || body.contains("base64"), body);
            var parts = Json.createReader(new StringReader(body)).readObject().getJsonArray("messages")
                    .getJsonObject(0).getJsonArray("content");
            assertEquals("image upload is disabled for this model", parts.getJsonObject(1).getString("text"));

            HttpRequestResult denied = provider.evaluate(evaluation(Body.ofUtf8(CHAT),
                    Json.createObjectBuilder().add("images", "deny").build()));
            assertEquals(Decision.DENY, denied.decision());
            assertEquals("image_upload_disabled", denied.reasonCode().orElseThrow());
        }
    }

    @Test
    void aFourMebibyteBodyRoundTripsWithinTheDeadline() throws Exception {
        StringBuilder b = new StringBuilder("{\"messages\":[{\"role\":\"user\",\"content\":\"");
        String filler = "Lorem ipsum dolor sit amet, contact ops@corp.example. ";
        long addresses = 0;
        while (b.length() + filler.length() + 8 <= EnvelopeLimits.MAX_BODY_BYTES) {
            b.append(filler);
            addresses++;
        }
        b.append("\"}]}");
        Body big = Body.ofUtf8(b.toString());
        assertTrue(big.size() > EnvelopeLimits.MAX_BODY_BYTES - 64 && big.size() <= EnvelopeLimits.MAX_BODY_BYTES);
        try (PrivacyGuardProcess pg = PrivacyGuardProcess.start(0);
             ExternalServices services = connect(plaintext(pg.port(), Duration.ofSeconds(10)),
                     RegistryListener.NONE)) {
            var provider = requestClaim(services).provider();
            HttpRequestResult r = provider.evaluate(evaluation(big, JsonObject.EMPTY_JSON_OBJECT));
            assertEquals(Decision.ALLOW, r.decision());
            assertEquals(addresses, findings(r).get("pii.email"));
            assertFalse(r.body().orElseThrow().utf8().orElseThrow().contains("ops@corp.example"));
            HttpRequestResult untouched = provider.evaluate(evaluation(big,
                    Json.createObjectBuilder().add("pii", "allow").build()));
            assertTrue(untouched.body().isEmpty(), "nothing redacted: the body is kept");
        }
    }

    @Test
    void aServiceStoppedMidRunFailsItsStagesAndIsPickedUpAgainAfterARestart() throws Exception {
        CountDownLatch down = new CountDownLatch(1);
        CountDownLatch recovered = new CountDownLatch(1);
        RegistryListener listener = new RegistryListener() {
            @Override
            public void serviceUnavailable(String name, String code) {
                down.countDown();
            }

            @Override
            public void serviceRecovered(String name, int attempts) {
                recovered.countDown();
            }
        };
        PrivacyGuardProcess first = PrivacyGuardProcess.start(0);
        int port = first.port();
        try (ExternalServices services = connect(plaintext(port, Duration.ofSeconds(5)), listener)) {
            GrpcMiddlewareProvider provider = services.providers().getOnly();
            assertEquals(Decision.ALLOW, provider.evaluate(evaluation(Body.ofUtf8("{}"),
                    JsonObject.EMPTY_JSON_OBJECT)).decision());
            first.close();

            MiddlewareException e = assertThrows(MiddlewareException.class,
                    () -> provider.evaluate(evaluation(Body.ofUtf8(CHAT), JsonObject.EMPTY_JSON_OBJECT)));
            assertEquals(StageFailureCodes.SERVICE_UNAVAILABLE, e.code());
            assertTrue(down.await(30, TimeUnit.SECONDS));
            assertEquals(GrpcMiddlewareProvider.State.UNAVAILABLE, provider.state());

            try (PrivacyGuardProcess again = PrivacyGuardProcess.start(port)) {
                assertEquals(port, again.port());
                assertTrue(recovered.await(60, TimeUnit.SECONDS), "the retry loop did not pick the service up");
                HttpRequestResult r = provider.evaluate(evaluation(Body.ofUtf8(CHAT), JsonObject.EMPTY_JSON_OBJECT));
                assertEquals(Decision.ALLOW, r.decision());
                assertEquals(1L, findings(r).get("content.image"));
            }
        } finally {
            first.close();
        }
    }

    @Test
    void tlsRegistrationsVerifyTheServiceAgainstTheConfiguredCa() throws Exception {
        TestPki.Issued ca = TestPki.ca(tmp, "ca");
        TestPki.Issued server = TestPki.leaf(tmp, "server", ca);
        TestPki.Issued otherCa = TestPki.ca(tmp, "other-ca");
        try (PrivacyGuardProcess pg = PrivacyGuardProcess.start(0, "--tls-cert", server.certFile().toString(),
                "--tls-key", server.keyFile().toString())) {
            URI endpoint = URI.create("https://127.0.0.1:" + pg.port());
            ServiceRegistration good = ServiceRegistration.builder("privacy-guard", endpoint, 1 << 20)
                    .timeout(Duration.ofSeconds(5)).caBundle(ca.certFile()).build();
            try (ExternalServices s = connect(good, RegistryListener.NONE)) {
                HttpRequestResult r = requestClaim(s).provider().evaluate(evaluation(Body.ofUtf8(CHAT),
                        JsonObject.EMPTY_JSON_OBJECT));
                assertEquals(1L, findings(r).get("pii.email"));
            }
            ServiceRegistration wrongCa = ServiceRegistration.builder("privacy-guard", endpoint, 1 << 20)
                    .caBundle(otherCa.certFile()).build();
            try (ExternalServices s = ExternalServices.connect(List.of(wrongCa), RegistryListener.NONE, FAST)) {
                assertEquals(List.of(), s.claims().castToList());
                String msg = s.failures().getOnly().message();
                assertTrue(msg.contains("UNAVAILABLE") && msg.contains("certification path"), msg);
            }
            ServiceRegistration plaintextToTls = ServiceRegistration.builder("privacy-guard",
                    URI.create("http://127.0.0.1:" + pg.port()), 1 << 20).allowInsecure(true).build();
            try (ExternalServices s = ExternalServices.connect(List.of(plaintextToTls), RegistryListener.NONE,
                    FAST)) {
                assertEquals(1, s.failures().size(), "a plaintext client cannot talk to a TLS service");
            }
        }
    }

    @Test
    void mutualTlsAcceptsTheSupervisorsCertificateAndRefusesAnonymousClients() throws Exception {
        TestPki.Issued ca = TestPki.ca(tmp, "ca");
        TestPki.Issued server = TestPki.leaf(tmp, "server", ca);
        TestPki.Issued clientCa = TestPki.ca(tmp, "client-ca");
        TestPki.Issued supervisor = TestPki.leaf(tmp, "supervisor", clientCa);
        TestPki.Issued stranger = TestPki.leaf(tmp, "stranger", ca);
        try (PrivacyGuardProcess pg = PrivacyGuardProcess.start(0, "--tls-cert", server.certFile().toString(),
                "--tls-key", server.keyFile().toString(), "--client-ca", clientCa.certFile().toString())) {
            URI endpoint = URI.create("https://127.0.0.1:" + pg.port());
            ServiceRegistration mtls = ServiceRegistration.builder("privacy-guard", endpoint, 1 << 20)
                    .timeout(Duration.ofSeconds(5)).caBundle(ca.certFile())
                    .clientCertificate(supervisor.certFile(), supervisor.keyFile()).build();
            try (ExternalServices s = connect(mtls, RegistryListener.NONE)) {
                assertEquals(ID, requestClaim(s).id().value());
                HttpRequestResult r = requestClaim(s).provider().evaluate(evaluation(Body.ofUtf8(CHAT),
                        JsonObject.EMPTY_JSON_OBJECT));
                assertEquals(Decision.ALLOW, r.decision());
            }
            for (ServiceRegistration refused : List.of(
                    ServiceRegistration.builder("privacy-guard", endpoint, 1 << 20).caBundle(ca.certFile()).build(),
                    ServiceRegistration.builder("privacy-guard", endpoint, 1 << 20).caBundle(ca.certFile())
                            .clientCertificate(stranger.certFile(), stranger.keyFile()).build())) {
                try (ExternalServices s = ExternalServices.connect(List.of(refused), RegistryListener.NONE, FAST)) {
                    assertEquals(List.of(), s.claims().castToList(), refused.toString());
                    assertTrue(s.failures().getOnly().message().contains("Describe failed"),
                            s.failures().getOnly().message());
                }
            }
        }
    }

    @Test
    void plaintextNeedsAllowInsecure() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ServiceRegistration.builder("privacy-guard", URI.create("http://127.0.0.1:50051"), 1024)
                        .build());
        assertTrue(e.getMessage().contains("allow_insecure = true"), e.getMessage());
    }

    @Test
    void theCommandRefusesBadArgumentsWithAUsageError() throws Exception {
        assertEquals(2, Image.run(Image.HOME, "privacy-guard", "--listen", "nonsense").exit());
        assertEquals(2, Image.run(Image.HOME, "privacy-guard", "--listen", "127.0.0.1:0", "--client-ca",
                "ca.pem").exit());
        Image.Run missing = Image.run(Image.HOME, "privacy-guard", "--listen", "127.0.0.1:0", "--tls-cert",
                tmp.resolve("absent.pem").toString(), "--tls-key", tmp.resolve("absent.key").toString());
        assertEquals(1, missing.exit());
        assertTrue(missing.err().contains("cannot read"), missing.err());
    }

    /** {@return the service's HTTP_REQUEST claim (its WEBSOCKET_MESSAGE bindings are claims too)} */
    private static RegisteredBinding requestClaim(ExternalServices s) {
        return s.claims().detect(c -> c.binding().operation() == dev.openshell.middleware.spi.Operation.HTTP_REQUEST);
    }
}
