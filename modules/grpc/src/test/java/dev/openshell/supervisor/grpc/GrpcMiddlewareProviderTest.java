package dev.openshell.supervisor.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.openshell.middleware.proto.v1.Finding;
import dev.openshell.middleware.proto.v1.HeaderMutation;
import dev.openshell.middleware.proto.v1.HttpRequestResult;
import dev.openshell.middleware.proto.v1.RemoveHeader;
import dev.openshell.middleware.proto.v1.ValidateConfigResponse;
import dev.openshell.middleware.proto.v1.WriteHeader;
import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.ExistingHeaderAction;
import dev.openshell.middleware.spi.MiddlewareException;
import io.grpc.Status;
import jakarta.json.Json;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The adapter against grpc-java test doubles on 127.0.0.1: round trips, deadlines, garbage, outages, recovery. */
class GrpcMiddlewareProviderTest {
    private static final String ID = "acme/pii";

    private static GrpcMiddlewareProvider connect(TestServer server, ServiceRegistration reg,
                                                  RegistryListener listener) {
        ExternalServices services = ExternalServices.connect(List.of(reg), listener, Fixtures.FAST_RETRY);
        assertEquals(List.of(), services.failures().castToList());
        return services.providers().getOnly();
    }

    private static GrpcMiddlewareProvider connect(TestServer server) {
        return connect(server, Fixtures.plaintext("pii", server.endpoint(), 4L << 20), RegistryListener.NONE);
    }

    private static MiddlewareException failing(GrpcMiddlewareProvider p, Body body) {
        return assertThrows(MiddlewareException.class, () -> p.evaluate(Fixtures.evaluation(ID, body)));
    }

    private static HttpRequestResult.Builder allow() {
        return HttpRequestResult.newBuilder().setDecisionValue(1);
    }

    @Test
    void evaluateSendsTheRegistrationNameAndBindingIdAndTranslatesTheResultExactly() throws Exception {
        ScriptedService svc = ScriptedService.withBinding(ID).answering(e -> allow()
                .setReason("looked").setReasonCode("pii_redacted")
                .setHasBody(true).setBody(ByteString.copyFromUtf8("[redacted]"))
                .addHeaderMutations(HeaderMutation.newBuilder().setWrite(WriteHeader.newBuilder()
                        .setName("x-openshell-middleware-pii").setValue("1").setOnExistingValue(2)))
                .addHeaderMutations(HeaderMutation.newBuilder().setRemove(RemoveHeader.newBuilder().setName("x-a")))
                .addHeaderMutations(HeaderMutation.newBuilder().setWrite(WriteHeader.newBuilder()
                        .setName("x-openshell-middleware-b").setValue("2").setOnExistingValue(9)))
                .addFindings(Finding.newBuilder().setType("pii.email").setLabel("e-mail").setCount(-1))
                .putMetadata("sensitivity", "restricted")
                .build());
        try (TestServer server = TestServer.start(svc); GrpcMiddlewareProvider p = connect(server)) {
            var result = p.evaluate(Fixtures.evaluation(ID, Body.ofUtf8("mail a@b.example")));

            var sent = svc.evaluations.getFirst();
            assertEquals("pii", sent.getMiddlewareName());
            assertEquals(ID, sent.getBindingId());
            assertEquals("mail a@b.example", sent.getBody().toStringUtf8());
            assertEquals(List.of("x-a", "x-a"), sent.getHeadersList().stream().map(h -> h.getName())
                    .filter(n -> n.equals("x-a")).toList());
            assertEquals("a=1", sent.getTarget().getQuery());
            assertEquals("strict", sent.getConfig().getFieldsOrThrow("mode").getStringValue());
            assertEquals("req-1", sent.getContext().getRequestId());

            assertEquals(Decision.ALLOW, result.decision());
            assertEquals("looked", result.reason());
            assertEquals("pii_redacted", result.reasonCode().orElseThrow());
            assertEquals(Body.ofUtf8("[redacted]"), result.body().orElseThrow());
            assertEquals(3, result.headerMutations().size());
            assertEquals(ExistingHeaderAction.OVERWRITE,
                    ((dev.openshell.middleware.spi.HeaderMutation.WriteHeader) result.headerMutations().get(0))
                            .onExisting());
            assertEquals(new dev.openshell.middleware.spi.HeaderMutation.RemoveHeader("x-a"),
                    result.headerMutations().get(1));
            assertEquals(ExistingHeaderAction.UNRECOGNIZED,
                    ((dev.openshell.middleware.spi.HeaderMutation.WriteHeader) result.headerMutations().get(2))
                            .onExisting(), "unknown action numbers reach the header rules as UNRECOGNIZED");
            assertEquals(0xFFFF_FFFFL, result.findings().getFirst().count(), "uint32 counts are unsigned");
            assertEquals(Map.of("sensitivity", "restricted"), result.metadata());
        }
    }

    @Test
    void validateConfigAcceptsAndRefusesWithTheServicesOwnReasonForPolicyLoadingToKeepApart() throws Exception {
        ScriptedService svc = ScriptedService.withBinding(ID).validating(v -> ValidateConfigResponse.newBuilder()
                .setValid(v.getConfig().getFieldsOrThrow("mode").getStringValue().equals("strict"))
                .setReason("SECRET-TOKEN\r\nforged log line").build());
        try (TestServer server = TestServer.start(svc); GrpcMiddlewareProvider p = connect(server)) {
            BindingId id = new BindingId(ID);
            assertEquals(ConfigValidation.ok(), p.validateConfig(id, Json.createObjectBuilder()
                    .add("mode", "strict").build()));
            ConfigValidation no = p.validateConfig(id, Json.createObjectBuilder().add("mode", "lax").build());
            assertFalse(no.valid());
            // untrusted text: policy loading keeps it apart from the platform message, sanitised, console only
            // (PolicyValidationTest, ExternalRegistryStartupIT)
            assertEquals("SECRET-TOKEN\r\nforged log line", no.reason());
            assertEquals("pii", svc.validations.getFirst().getMiddlewareName());
            assertEquals(ID, svc.validations.getFirst().getBindingId());
        }
    }

    @Test
    void undecidedAndUnknownDecisionsAreStageFailures() throws Exception {
        for (int decision : new int[] {0, 3, 7, -1}) {
            ScriptedService svc = ScriptedService.withBinding(ID)
                    .answering(e -> HttpRequestResult.newBuilder().setDecisionValue(decision).build());
            try (TestServer server = TestServer.start(svc); GrpcMiddlewareProvider p = connect(server)) {
                MiddlewareException e = failing(p, Body.empty());
                assertEquals(StageFailureCodes.INVALID_DECISION, e.code(), "decision " + decision);
                assertEquals(GrpcMiddlewareProvider.State.AVAILABLE, p.state());
            }
        }
    }

    @Test
    void aHeaderMutationWithoutAnOperationIsAStageFailure() throws Exception {
        ScriptedService svc = ScriptedService.withBinding(ID).answering(e -> allow()
                .addHeaderMutations(HeaderMutation.getDefaultInstance()).build());
        try (TestServer server = TestServer.start(svc); GrpcMiddlewareProvider p = connect(server)) {
            assertEquals(StageFailureCodes.INVALID_HEADER_MUTATION, failing(p, Body.empty()).code());
        }
    }

    @Test
    void replacementBodiesOverTheBindingLimitOrThePlatformMaximumAreStageFailures() throws Exception {
        ScriptedService svc = ScriptedService.withBinding(ID).answering(e -> allow().setHasBody(true)
                .setBody(ByteString.copyFrom(new byte[e.getBody().size() + 1])).build());
        try (TestServer server = TestServer.start(svc)) {
            // 4 MiB each way: the deadline is not what this test is about, so a loaded machine gets room
            ServiceRegistration large = Fixtures.plaintext("pii", server.endpoint(), 4L << 20, Duration.ofSeconds(10));
            try (GrpcMiddlewareProvider p = connect(server, large, RegistryListener.NONE)) {
                MiddlewareException e = failing(p, Body.of(new byte[EnvelopeLimits.MAX_BODY_BYTES]));
                assertEquals(StageFailureCodes.RESULT_BODY_TOO_LARGE, e.code());
            }
            ServiceRegistration small = Fixtures.plaintext("pii", server.endpoint(), 1024);
            try (GrpcMiddlewareProvider p = connect(server, small, RegistryListener.NONE)) {
                assertEquals(StageFailureCodes.RESULT_BODY_TOO_LARGE, failing(p, Body.of(new byte[1024])).code());
                assertEquals(StageFailureCodes.INPUT_NOT_REPRESENTABLE, failing(p, Body.of(new byte[1025])).code(),
                        "an input over the binding's limit is never sent");
            }
        }
    }

    @Test
    void aReplyOverTheMessageLimitIsAServiceError() throws Exception {
        ScriptedService svc = ScriptedService.withBinding(ID).answering(e -> allow().setHasBody(true)
                .setBody(ByteString.copyFrom(new byte[EnvelopeLimits.MIN_GRPC_MESSAGE_BYTES + 1])).build());
        try (TestServer server = TestServer.start(svc); GrpcMiddlewareProvider p = connect(server)) {
            MiddlewareException e = failing(p, Body.empty());
            assertEquals(StageFailureCodes.SERVICE_ERROR, e.code());
            assertTrue(e.getMessage().contains("RESOURCE_EXHAUSTED"), e.getMessage());
        }
    }

    @Test
    void aServiceErrorNamesTheStatusCodeButNeverTheServicesDescription() throws Exception {
        ScriptedService svc = ScriptedService.withBinding(ID).answering(e -> {
            throw Status.INTERNAL.withDescription("SECRET-TOKEN leaked\r\nforged").asRuntimeException();
        });
        try (TestServer server = TestServer.start(svc); GrpcMiddlewareProvider p = connect(server)) {
            MiddlewareException e = failing(p, Body.empty());
            assertEquals(StageFailureCodes.SERVICE_ERROR, e.code());
            assertTrue(e.getMessage().contains("INTERNAL"), e.getMessage());
            assertFalse(e.getMessage().contains("SECRET") || e.getMessage().contains("forged"), e.getMessage());
            assertEquals(GrpcMiddlewareProvider.State.AVAILABLE, p.state(), "an error answer is not an outage");
        }
    }

    @Test
    void aHangingServiceFailsAtTheBindingsDeadlineNotTheRegistrations() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ScriptedService svc = new ScriptedService(ScriptedService.manifest(ScriptedService.binding(ID, 4L << 20,
                "50ms")));
        try (TestServer server = TestServer.start(svc)) {
            ServiceRegistration reg = Fixtures.plaintext("pii", server.endpoint(), 4L << 20, Duration.ofSeconds(30));
            try (GrpcMiddlewareProvider p = connect(server, reg, RegistryListener.NONE)) {
                assertEquals(Duration.ofMillis(50), p.timeout(new BindingId(ID)));
                assertEquals(Duration.ofMillis(50), p.manifest().bindings().getFirst().timeout().orElseThrow());
                svc.hangingOn(release, false);
                MiddlewareException e = failing(p, Body.ofUtf8("x"));
                assertEquals(StageFailureCodes.SERVICE_TIMEOUT, e.code());
                MiddlewareException v = assertThrows(MiddlewareException.class,
                        () -> p.validateConfig(new BindingId(ID), Json.createObjectBuilder().build()));
                assertEquals(StageFailureCodes.SERVICE_TIMEOUT, v.code());
                assertEquals(GrpcMiddlewareProvider.State.AVAILABLE, p.state(), "a timeout is not an outage");
            } finally {
                release.countDown();
            }
        }
    }

    @Test
    void withoutAnAdvertisedTimeoutTheRegistrationsTimeoutApplies() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ScriptedService svc = ScriptedService.withBinding(ID);
        try (TestServer server = TestServer.start(svc)) {
            ServiceRegistration reg = Fixtures.plaintext("pii", server.endpoint(), 4L << 20, Duration.ofMillis(40));
            try (GrpcMiddlewareProvider p = connect(server, reg, RegistryListener.NONE)) {
                assertEquals(Duration.ofMillis(40), p.timeout(new BindingId(ID)));
                svc.hangingOn(release, false);
                assertEquals(StageFailureCodes.SERVICE_TIMEOUT, failing(p, Body.empty()).code());
            } finally {
                release.countDown();
            }
        }
    }

    @Test
    void aServiceStoppedMidRunFailsFastAndTheProbePicksItUpWhenItComesBack() throws Exception {
        ScriptedService svc = ScriptedService.withBinding(ID);
        CountDownLatch down = new CountDownLatch(1);
        CountDownLatch recovered = new CountDownLatch(1);
        int[] attempts = new int[1];
        RegistryListener listener = new RegistryListener() {
            @Override
            public void serviceUnavailable(String name, String code) {
                assertEquals("pii", name);
                assertEquals(StageFailureCodes.SERVICE_UNAVAILABLE, code);
                down.countDown();
            }

            @Override
            public void serviceRecovered(String name, int n) {
                attempts[0] = n;
                recovered.countDown();
            }
        };
        TestServer server = TestServer.start(svc);
        int port = server.port();
        try (GrpcMiddlewareProvider p = connect(server, Fixtures.plaintext("pii", server.endpoint(), 4L << 20),
                listener)) {
            assertEquals(Decision.ALLOW, p.evaluate(Fixtures.evaluation(ID, Body.empty())).decision());
            server.close();

            assertEquals(StageFailureCodes.SERVICE_UNAVAILABLE, failing(p, Body.empty()).code());
            assertTrue(down.await(10, TimeUnit.SECONDS));
            assertEquals(GrpcMiddlewareProvider.State.UNAVAILABLE, p.state());
            int calls = svc.evaluations.size();
            MiddlewareException fast = failing(p, Body.empty());
            assertEquals(StageFailureCodes.SERVICE_UNAVAILABLE, fast.code());
            assertTrue(fast.getMessage().contains("retrying"), fast.getMessage());

            try (TestServer again = TestServer.start(svc, port)) {
                assertEquals(port, again.port());
                assertTrue(recovered.await(30, TimeUnit.SECONDS), "the probe did not pick the service up");
                assertTrue(attempts[0] >= 1);
                assertEquals(GrpcMiddlewareProvider.State.AVAILABLE, p.state());
                assertEquals(Decision.ALLOW, p.evaluate(Fixtures.evaluation(ID, Body.empty())).decision());
                assertEquals(calls + 1, svc.evaluations.size(), "calls while down never reached the service");
            }
        }
    }

    @Test
    void aServiceThatComesBackWithDifferentBindingsStaysFailed() throws Exception {
        CountDownLatch changed = new CountDownLatch(1);
        RegistryListener listener = new RegistryListener() {
            @Override
            public void serviceManifestChanged(String name, String problem) {
                assertTrue(problem.contains("'" + ID + "'"), problem);
                changed.countDown();
            }
        };
        TestServer server = TestServer.start(ScriptedService.withBinding(ID));
        int port = server.port();
        try (GrpcMiddlewareProvider p = connect(server, Fixtures.plaintext("pii", server.endpoint(), 4L << 20),
                listener)) {
            server.close();
            assertEquals(StageFailureCodes.SERVICE_UNAVAILABLE, failing(p, Body.empty()).code());
            try (TestServer other = TestServer.start(ScriptedService.withBinding("acme/other"), port)) {
                assertEquals(port, other.port());
                assertTrue(changed.await(30, TimeUnit.SECONDS));
                assertEquals(GrpcMiddlewareProvider.State.MANIFEST_CHANGED, p.state());
                assertEquals(StageFailureCodes.SERVICE_MANIFEST_CHANGED, failing(p, Body.empty()).code());
            }
        }
    }

    @Test
    void aFourMebibyteBodyRoundTrips() throws Exception {
        ScriptedService svc = ScriptedService.withBinding(ID).answering(e -> allow().setHasBody(true)
                .setBody(e.getBody()).build());
        byte[] big = new byte[EnvelopeLimits.MAX_BODY_BYTES];
        Arrays.fill(big, (byte) 'a');
        big[big.length - 1] = 'z';
        try (TestServer server = TestServer.start(svc); GrpcMiddlewareProvider p = connect(server,
                Fixtures.plaintext("pii", server.endpoint(), EnvelopeLimits.MAX_BODY_BYTES, Duration.ofSeconds(10)),
                RegistryListener.NONE)) {
            var r = p.evaluate(Fixtures.evaluation(ID, Body.of(big)));
            assertEquals(Body.of(big), r.body().orElseThrow());
        }
    }

    @Test
    void unknownBindingsAndClosedProvidersFailWithTheirOwnCodes() throws Exception {
        try (TestServer server = TestServer.start(ScriptedService.withBinding(ID))) {
            GrpcMiddlewareProvider p = connect(server);
            MiddlewareException unknown = assertThrows(MiddlewareException.class,
                    () -> p.evaluate(Fixtures.evaluation("acme/else", Body.empty())));
            assertEquals(StageFailureCodes.UNKNOWN_BINDING, unknown.code());
            p.close();
            assertEquals(GrpcMiddlewareProvider.State.CLOSED, p.state());
            assertEquals(StageFailureCodes.PROVIDER_CLOSED, failing(p, Body.empty()).code());
        }
    }

    @Test
    void aConfigNumberThatIsNotADoubleIsNeverSent() throws Exception {
        ScriptedService svc = ScriptedService.withBinding(ID);
        try (TestServer server = TestServer.start(svc); GrpcMiddlewareProvider p = connect(server)) {
            var config = Json.createObjectBuilder().add("n", new java.math.BigDecimal("1e400")).build();
            MiddlewareException e = assertThrows(MiddlewareException.class,
                    () -> p.evaluate(Fixtures.evaluation(ID, Body.empty(), config)));
            assertEquals(StageFailureCodes.INPUT_NOT_REPRESENTABLE, e.code());
            assertEquals(List.of(), svc.evaluations);
        }
    }

    @Test
    void noOtherExceptionTypeEverEscapes() throws Exception {
        Function<dev.openshell.middleware.proto.v1.HttpRequestEvaluation, HttpRequestResult> crash = e -> {
            throw new IllegalStateException("boom");
        };
        try (TestServer server = TestServer.start(ScriptedService.withBinding(ID).answering(crash));
             GrpcMiddlewareProvider p = connect(server)) {
            MiddlewareException e = failing(p, Body.empty());
            assertEquals(StageFailureCodes.SERVICE_ERROR, e.code(), "a crashing service answers UNKNOWN");
        }
    }

    private static dev.openshell.middleware.spi.WebSocketPreflight preflight() {
        return new dev.openshell.middleware.spi.WebSocketPreflight(new BindingId(ID), "ws-1",
                dev.openshell.middleware.spi.Phase.PRE_CREDENTIALS,
                dev.openshell.middleware.spi.RequestContext.of("ws-1"), Json.createObjectBuilder().build(),
                new dev.openshell.middleware.spi.HttpRequestTarget("https", "chat.example", 443, "GET", "/ws", ""),
                List.of());
    }

    private static ScriptedService sessions() {
        return new ScriptedService(ScriptedService.manifest(ScriptedService.binding(ID, 4L << 20, ""),
                ScriptedService.messages(ID, dev.openshell.middleware.proto.v1.SupervisorMiddlewarePhase
                        .SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS)));
    }

    @Test
    void aPreflightWhoseStreamFailsOnTheTransportIsSentOnceMoreOnANewStream() throws Exception {
        ScriptedService svc = sessions();
        svc.failingSessions.set(1);
        try (TestServer server = TestServer.start(svc); GrpcMiddlewareProvider p = connect(server)) {
            var session = p.openWebSocketSession(new BindingId(ID), dev.openshell.middleware.spi.Phase.PRE_CREDENTIALS);
            assertEquals(dev.openshell.middleware.spi.WebSocketPreflightDecision.Action.INSPECT,
                    session.preflight(preflight()).action());
            assertEquals(2, svc.sessionsOpened.get(), "the failed stream and one new one");
            session.end(dev.openshell.middleware.spi.SessionEndReason.NORMAL);
        }
    }

    @Test
    void aPreflightIsTriedOnceMoreOnlyAndNeverOnAStatusTheServiceChose() throws Exception {
        ScriptedService svc = sessions();
        svc.failingSessions.set(2);
        try (TestServer server = TestServer.start(svc); GrpcMiddlewareProvider p = connect(server)) {
            var twice = p.openWebSocketSession(new BindingId(ID), dev.openshell.middleware.spi.Phase.PRE_CREDENTIALS);
            assertThrows(MiddlewareException.class, () -> twice.preflight(preflight()));
            assertEquals(2, svc.sessionsOpened.get(), "one retry, not more");
            svc.sessionFailure = Status.PERMISSION_DENIED;
            svc.failingSessions.set(1);
            var denied = p.openWebSocketSession(new BindingId(ID), dev.openshell.middleware.spi.Phase.PRE_CREDENTIALS);
            MiddlewareException e = assertThrows(MiddlewareException.class, () -> denied.preflight(preflight()));
            assertTrue(e.getMessage().contains("PERMISSION_DENIED"), e.getMessage());
            assertEquals(3, svc.sessionsOpened.get(), "a status the service chose is not retried");
        }
    }
}
