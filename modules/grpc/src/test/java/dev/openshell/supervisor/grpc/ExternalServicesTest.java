package dev.openshell.supervisor.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Empty;
import dev.openshell.middleware.proto.v1.MiddlewareBinding;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewareOperation;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewarePhase;
import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareManifest;
import dev.openshell.middleware.spi.MiddlewareProvider;
import dev.openshell.middleware.spi.internal.RpcTimeout;
import dev.openshell.supervisor.engine.PluginFailure;
import dev.openshell.supervisor.engine.ProviderOrigin;
import dev.openshell.supervisor.engine.ProviderRegistry;
import dev.openshell.supervisor.engine.RegisteredBinding;
import io.grpc.stub.StreamObserver;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import openshell.published.v1.SupervisorMiddlewareGrpc;
import openshell.published.v1.ValidateConfigRequest;
import openshell.published.v1.ValidateConfigResponse;
import org.junit.jupiter.api.Test;

/** Start-up registration: Describe, manifest validation, refusals, and claims for the provider registry. */
class ExternalServicesTest {
    private static final long MIB4 = 4L << 20;

    private static ExternalServices connect(ServiceRegistration... regs) {
        return ExternalServices.connect(List.of(regs), RegistryListener.NONE, Fixtures.FAST_RETRY);
    }

    private static String refusal(dev.openshell.middleware.proto.v1.MiddlewareManifest manifest, long maxBody)
            throws Exception {
        try (TestServer server = TestServer.start(new ScriptedService(manifest));
             ExternalServices s = connect(Fixtures.plaintext("svc", server.endpoint(), maxBody))) {
            assertEquals(List.of(), s.claims().castToList());
            assertEquals(1, s.failures().size());
            PluginFailure f = s.failures().getFirst();
            assertEquals("service svc (external " + server.endpoint() + ")", f.source());
            return f.message();
        }
    }

    private static MiddlewareBinding binding(int op, int phase, String id) {
        return MiddlewareBinding.newBuilder().setOperationValue(op).setPhaseValue(phase).setId(id)
                .setMaxPayloadBytes(MIB4).build();
    }

    @Test
    void anAcceptedServiceYieldsExternalClaimsWithTheRegistrationsLimitAndEffectiveTimeout() throws Exception {
        var manifest = ScriptedService.manifest(ScriptedService.binding("acme/a", 8L << 20, "2s"),
                ScriptedService.binding("acme/b", MIB4, ""));
        try (TestServer server = TestServer.start(new ScriptedService(manifest));
             ExternalServices s = connect(Fixtures.plaintext("acme", server.endpoint(), 1 << 20))) {
            assertEquals(List.of(), s.failures().castToList());
            List<RegisteredBinding> claims = s.claims().castToList();
            assertEquals(List.of("acme/a", "acme/b"), claims.stream().map(c -> c.id().value()).toList());
            for (RegisteredBinding c : claims) {
                assertEquals(ProviderOrigin.Kind.EXTERNAL, c.origin().kind());
                assertEquals("acme", c.origin().name());
                assertEquals(server.endpoint().toString(), c.origin().source().orElseThrow());
                assertEquals("scripted", c.serviceName());
                assertEquals(1 << 20, c.binding().maxBodyBytes(), "the operator's limit applies to every binding");
            }
            // a binding's timeout may shorten the registration's but never extend it (the published proto)
            assertEquals(RpcTimeout.DEFAULT, claims.get(0).binding().timeout().orElseThrow());
            assertTrue(s.notes().getOnly().contains("binding 'acme/a' advertises timeout 2s, above the "
                    + "registration's 500ms: capped to 500ms"), s.notes().toString());
            assertEquals(RpcTimeout.DEFAULT, claims.get(1).binding().timeout().orElseThrow());
            assertTrue(s.provider("acme").isPresent());
        }
    }

    @Test
    void skipEmptyBodyIsReadFromTheWireAndDefaultsToFalse() throws Exception {
        var manifest = ScriptedService.manifest(ScriptedService.binding("acme/a", MIB4, "").toBuilder()
                .setSkipEmptyBody(true).build(), ScriptedService.binding("acme/b", MIB4, ""));
        try (TestServer server = TestServer.start(new ScriptedService(manifest));
             ExternalServices s = connect(Fixtures.plaintext("acme", server.endpoint(), 1 << 20))) {
            List<RegisteredBinding> claims = s.claims().castToList();
            assertEquals(List.of(true, false), claims.stream().map(c -> c.binding().skipEmptyBody()).toList(),
                    "declared by acme/a only; a service written for the published contract never sends it");
        }
    }

    @Test
    void anUnavailableServiceIsRefusedAtStartUp() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        try (ExternalServices s = connect(Fixtures.plaintext("gone", URI.create("http://127.0.0.1:" + port),
                MIB4))) {
            assertEquals(List.of(), s.claims().castToList());
            String msg = s.failures().getOnly().message();
            assertTrue(msg.contains("Describe failed") && msg.contains("UNAVAILABLE"), msg);
        }
    }

    @Test
    void describeUsesTheRegistrationTimeout() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ScriptedService svc = ScriptedService.withBinding("acme/slow").hangingOn(release, true);
        try (TestServer server = TestServer.start(svc);
             ExternalServices s = connect(Fixtures.plaintext("slow", server.endpoint(), MIB4,
                     Duration.ofMillis(30)))) {
            String msg = s.failures().getOnly().message();
            assertTrue(msg.contains("DEADLINE_EXCEEDED") && msg.contains("30ms"), msg);
        } finally {
            release.countDown();
        }
    }

    @Test
    void manifestsThatBreakTheRulesAreRefusedWithTheRuleNamed() throws Exception {
        int http = SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_HTTP_REQUEST_VALUE;
        int pre = SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS_VALUE;
        assertTrue(refusal(ScriptedService.manifest(ScriptedService.binding("openshell/regex", MIB4, "")), MIB4)
                .contains("reserved 'openshell/' namespace"));
        int post = SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_POST_CREDENTIALS_VALUE;
        assertTrue(refusal(ScriptedService.manifest(binding(http, post, "acme/post")), MIB4)
                .contains("POST_CREDENTIALS"));
        assertTrue(refusal(ScriptedService.manifest(binding(0, pre, "acme/x")), MIB4)
                .contains("operation UNSPECIFIED"));
        assertTrue(refusal(ScriptedService.manifest(binding(9, pre, "acme/x")), MIB4)
                .contains("operation number 9"));
        assertTrue(refusal(ScriptedService.manifest(binding(http, 0, "acme/x")), MIB4)
                .contains("phase UNSPECIFIED"));
        assertTrue(refusal(ScriptedService.manifest(ScriptedService.binding("acme//x", MIB4, "")), MIB4)
                .contains("invalid ID"));
        assertTrue(refusal(ScriptedService.manifest(ScriptedService.binding("acme/x", MIB4, ""),
                ScriptedService.binding("acme/x", MIB4, "")), MIB4).contains("declared twice"));
        String limit = refusal(ScriptedService.manifest(ScriptedService.binding("acme/x", 1000, "")), 1001);
        assertTrue(limit.contains("accepts at most 1000 bytes") && limit.contains("never clamped"), limit);
        assertTrue(refusal(ScriptedService.manifest(ScriptedService.binding("acme/x", MIB4, "5 s")), MIB4)
                .contains("invalid timeout"));
        assertTrue(refusal(ScriptedService.manifest(ScriptedService.binding("acme/x", MIB4, "31s")), MIB4)
                .contains("it must be from 10ms to 30s"));
        assertTrue(refusal(ScriptedService.manifest(ScriptedService.binding("", MIB4, ""),
                ScriptedService.binding("", MIB4, "")), MIB4).contains("single HTTP_REQUEST/PRE_CREDENTIALS"));
        assertTrue(refusal(ScriptedService.manifest(), MIB4).contains("no bindings"));
        assertTrue(refusal(ScriptedService.manifest(binding(2, pre, "acme/ws")), MIB4)
                .contains("no HTTP_REQUEST/PRE_CREDENTIALS or HTTP_RESPONSE/PRE_RETURN binding"));
        assertTrue(refusal(ScriptedService.manifest(binding(3, pre, "acme/x")), MIB4)
                .contains("HTTP_RESPONSE/PRE_RETURN"));
        assertTrue(refusal(ScriptedService.manifest(ScriptedService.binding("acme/x", MIB4, "")).toBuilder()
                .setName("x".repeat(257)).build(), MIB4).contains("longer than 256 bytes"));
        assertTrue(refusal(ScriptedService.manifest(ScriptedService.binding("acme/x", MIB4, "")).toBuilder()
                .setName("evil\r\nname").build(), MIB4).contains("control characters"));
    }

    @Test
    void webSocketBindingsJoinAndAResponseBindingIsClaimedBesideTheRequestBinding() throws Exception {
        int ws = SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_WEBSOCKET_MESSAGE_VALUE;
        int pre = SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS_VALUE;
        int response = SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_HTTP_RESPONSE_VALUE;
        int preReturn = SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_RETURN_VALUE;
        var manifest = ScriptedService.manifest(binding(ws, pre, ""), binding(response, preReturn, ""),
                ScriptedService.binding("", MIB4, ""));
        try (TestServer server = TestServer.start(new ScriptedService(manifest));
             ExternalServices s = connect(Fixtures.plaintext("guard", server.endpoint(), MIB4))) {
            assertEquals(List.of(), s.failures().castToList(), "every binding is claimed, none refused");
            assertEquals(List.of("guard HTTP_REQUEST", "guard HTTP_RESPONSE", "guard WEBSOCKET_MESSAGE"), s.claims()
                    .collect(c -> c.id().value() + " " + c.binding().operation()).castToList().stream().sorted()
                    .toList(), "the single request and the single response binding without an ID take the "
                    + "registration name, and the WEBSOCKET_MESSAGE binding joins the request binding");
        }
    }

    @Test
    void aRegistrationNameThatCannotStandInForAMissingIdIsRefused() throws Exception {
        var manifest = ScriptedService.manifest(ScriptedService.binding("", MIB4, ""));
        try (TestServer server = TestServer.start(new ScriptedService(manifest));
             ExternalServices s = connect(Fixtures.plaintext("acme//guard", server.endpoint(), MIB4))) {
            // a valid registration name (OpenShell's rule allows '//'), but not a valid binding ID
            assertTrue(s.failures().getOnly().message().contains("is not a valid binding ID"),
                    s.failures().getOnly().message());
        }
    }

    @Test
    void registrationsSharingANameAreAllRefused() throws Exception {
        try (TestServer a = TestServer.start(ScriptedService.withBinding("acme/a"));
             TestServer b = TestServer.start(ScriptedService.withBinding("acme/b"));
             ExternalServices s = connect(Fixtures.plaintext("twin", a.endpoint(), MIB4),
                     Fixtures.plaintext("twin", b.endpoint(), MIB4))) {
            assertEquals(List.of(), s.claims().castToList());
            assertEquals(2, s.failures().size());
            assertTrue(s.failures().allSatisfy(f -> f.message().contains("used by 2 registrations")));
        }
    }

    @Test
    void duplicateBindingIdsAcrossServicesAndAgainstBuiltInsAreRefusedByTheRegistry() throws Exception {
        try (TestServer a = TestServer.start(ScriptedService.withBinding("acme/dup"));
             TestServer b = TestServer.start(ScriptedService.withBinding("acme/dup"));
             TestServer c = TestServer.start(ScriptedService.withBinding("examples/tagger"));
             TestServer d = TestServer.start(ScriptedService.withBinding("acme/unique"));
             ExternalServices s = connect(Fixtures.plaintext("one", a.endpoint(), MIB4),
                     Fixtures.plaintext("two", b.endpoint(), MIB4), Fixtures.plaintext("three", c.endpoint(), MIB4),
                     Fixtures.plaintext("four", d.endpoint(), MIB4))) {
            assertEquals(List.of(), s.failures().castToList(), "each service alone is valid");
            RegisteredBinding builtIn = new RegisteredBinding(
                    dev.openshell.middleware.spi.MiddlewareBinding.httpRequest("examples/tagger", 1024),
                    new NoOp(), "tagger", ProviderOrigin.builtIn("dev.openshell.builtin.tagger"));
            List<RegisteredBinding> claims = new ArrayList<>();
            claims.add(builtIn); // built-ins first
            claims.addAll(s.claims().castToList());
            List<PluginFailure> failures = new ArrayList<>();
            ProviderRegistry registry = ProviderRegistry.assemble(claims, failures);

            assertEquals(List.of("acme/unique", "examples/tagger"),
                    registry.bindings().collect(r -> r.id().value()).castToList());
            assertEquals(ProviderOrigin.Kind.BUILT_IN,
                    registry.lookup(new BindingId("examples/tagger")).orElseThrow().origin().kind());
            assertEquals(3, failures.size(), failures.toString());
            assertTrue(failures.stream().anyMatch(f -> f.source().startsWith("service three")
                    && f.message().contains("already provided by module dev.openshell.builtin.tagger")));
            assertEquals(2, failures.stream().filter(f -> f.message().contains("duplicate binding ID 'acme/dup'")
                    && f.message().contains("service one") && f.message().contains("service two")).count());
        }
    }

    @Test
    void aServiceWrittenForThePublishedContractIsRegisteredUnderItsRegistrationName() throws Exception {
        PublishedOnly svc = new PublishedOnly();
        try (TestServer server = TestServer.start(svc);
             ExternalServices s = connect(Fixtures.plaintext("content-guard-example", server.endpoint(), MIB4))) {
            assertEquals(List.of(), s.failures().castToList());
            RegisteredBinding claim = s.claims().getOnly();
            assertEquals("content-guard-example", claim.id().value());
            MiddlewareProvider p = claim.provider();

            HttpRequestResult r = p.evaluate(Fixtures.evaluation("content-guard-example", Body.ofUtf8("hi")));
            assertEquals(Decision.DENY, r.decision());
            assertEquals("published_deny", r.reasonCode().orElseThrow());
            var seen = svc.evaluations.getFirst();
            assertEquals("content-guard-example", seen.getMiddlewareName());
            assertEquals("hi", seen.getBody().toStringUtf8());
            assertTrue(seen.getUnknownFields().hasField(1000),
                    "binding_id (1000) is unknown to a published service and ignored, never harmful");

            JsonObject config = Json.createObjectBuilder().add("block", true).build();
            assertEquals(ConfigValidation.ok(), p.validateConfig(claim.id(), config));
            assertEquals("content-guard-example", svc.validations.getFirst().getMiddlewareName());
        }
    }

    /** Speaks only the published field set: bindings without IDs, requests without binding IDs. */
    static final class PublishedOnly extends SupervisorMiddlewareGrpc.SupervisorMiddlewareImplBase {
        final List<openshell.published.v1.HttpRequestEvaluation> evaluations =
                new CopyOnWriteArrayList<>();
        final List<ValidateConfigRequest> validations = new CopyOnWriteArrayList<>();

        @Override
        public void describe(Empty request,
                             StreamObserver<openshell.published.v1.MiddlewareManifest> out) {
            out.onNext(openshell.published.v1.MiddlewareManifest.newBuilder().setName("content-guard").setServiceVersion("0.3.1")
                    .addBindings(openshell.published.v1.MiddlewareBinding.newBuilder()
                            .setOperation(openshell.published.v1.SupervisorMiddlewareOperation
                                    .SUPERVISOR_MIDDLEWARE_OPERATION_HTTP_REQUEST)
                            .setPhase(openshell.published.v1.SupervisorMiddlewarePhase
                                    .SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS)
                            .setMaxPayloadBytes(MIB4))
                    .build());
            out.onCompleted();
        }

        @Override
        public void validateConfig(ValidateConfigRequest request, StreamObserver<ValidateConfigResponse> out) {
            validations.add(request);
            out.onNext(ValidateConfigResponse.newBuilder().setValid(true).build());
            out.onCompleted();
        }

        @Override
        public void evaluateHttpRequest(openshell.published.v1.HttpRequestEvaluation request,
                                        StreamObserver<openshell.published.v1.HttpRequestResult> out) {
            evaluations.add(request);
            out.onNext(openshell.published.v1.HttpRequestResult.newBuilder()
                    .setDecision(openshell.published.v1.Decision.DECISION_DENY)
                    .setReason("blocked").setReasonCode("published_deny").build());
            out.onCompleted();
        }
    }

    /** A built-in stand-in for the duplicate test. */
    static final class NoOp implements MiddlewareProvider {
        @Override
        public MiddlewareManifest manifest() {
            return new MiddlewareManifest("noop", "1",
                    List.of(dev.openshell.middleware.spi.MiddlewareBinding.httpRequest("examples/tagger", 1024)));
        }

        @Override
        public ConfigValidation validateConfig(BindingId bindingId, JsonObject config) {
            return ConfigValidation.ok();
        }

        @Override
        public HttpRequestResult evaluate(HttpRequestEvaluation evaluation) {
            return HttpRequestResult.allow();
        }
    }
}
