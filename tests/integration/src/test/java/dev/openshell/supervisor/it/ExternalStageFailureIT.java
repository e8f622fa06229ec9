package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.Empty;
import dev.openshell.middleware.proto.v1.Decision;
import dev.openshell.middleware.proto.v1.ExistingHeaderAction;
import dev.openshell.middleware.proto.v1.HeaderMutation;
import dev.openshell.middleware.proto.v1.HttpRequestResult;
import dev.openshell.middleware.proto.v1.RemoveHeader;
import dev.openshell.middleware.proto.v1.WriteHeader;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import jakarta.json.JsonObject;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import openshell.published.v1.MiddlewareBinding;
import openshell.published.v1.MiddlewareManifest;
import openshell.published.v1.SupervisorMiddlewareGrpc;
import openshell.published.v1.SupervisorMiddlewareOperation;
import openshell.published.v1.SupervisorMiddlewarePhase;
import openshell.published.v1.ValidateConfigRequest;
import openshell.published.v1.ValidateConfigResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code supervisor run} as a process with external stages served by doubles the test runs: the failure modes of an
 * external stage under {@code fail_closed} and {@code fail_open} (RFC 0009, "Failure behavior"), a service written
 * for the published contract (no binding IDs) used by the policy under its registration name, and the start-up
 * refusal of a plaintext registration without {@code allow_insecure}.
 *
 * <p>One binding, {@code tests/double}, is selected by two configs: {@code guard-closed} ({@code fail_closed}) for
 * {@code closed.test} and {@code guard-open} ({@code fail_open}) for {@code open.test}. The double's registration
 * allows 65536-byte bodies and a 2 s timeout.
 */
class ExternalStageFailureIT {
    private static final int MAX_BODY = 65536;
    private static final AtomicInteger NONCE = new AtomicInteger();

    @TempDir
    static Path work;

    private static Upstream upstream;
    private static MiddlewareDouble faulty;
    private static PublishedContentGuard guard;
    private static StackProcess supervisor;

    @BeforeAll
    static void start() throws Exception {
        upstream = Upstream.start();
        faulty = MiddlewareDouble.start("tests/double");
        guard = PublishedContentGuard.start();
        Path gateway = Files.writeString(work.resolve("gateway.toml"), """
                [openshell.supervisor.network]
                allow_loopback_upstreams = true

                [openshell.supervisor.network.static_hosts]
                "closed.test" = "127.0.0.1"
                "open.test" = "127.0.0.1"
                "guard.test" = "127.0.0.1"

                [[openshell.supervisor.middleware]]
                name = "double"
                grpc_endpoint = "http://127.0.0.1:%d"
                max_body_bytes = %d
                timeout = "2s"
                allow_insecure = true

                [[openshell.supervisor.middleware]]
                name = "content-guard-example"
                grpc_endpoint = "http://127.0.0.1:%d"
                max_body_bytes = 1048576
                timeout = "2s"
                allow_insecure = true
                """.formatted(faulty.port(), MAX_BODY, guard.port()));
        Path policy = Files.writeString(work.resolve("policy.yaml"), """
                version: 1
                network_policies:
                  test_hosts:
                    endpoints:
                      - { host: closed.test, port: %1$d }
                      - { host: open.test, port: %1$d }
                      - { host: guard.test, port: %1$d }
                network_middlewares:
                  guard-closed:
                    middleware: tests/double
                    order: 10
                    on_error: fail_closed
                    endpoints: { include: [closed.test] }
                  guard-open:
                    middleware: tests/double
                    order: 20
                    on_error: fail_open
                    endpoints: { include: [open.test] }
                  content-guard:
                    middleware: content-guard-example
                    order: 30
                    config: { blocked_words: [forbidden] }
                    endpoints: { include: [guard.test] }
                """.formatted(upstream.port()));
        supervisor = StackProcess.start(work.resolve("supervisor"), policy, gateway, Map.of());
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable c : new AutoCloseable[] {supervisor, faulty, guard, upstream}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                // keep closing the rest
            }
        }
    }

    private static HttpRequestResult.Builder allow() {
        return HttpRequestResult.newBuilder().setDecision(Decision.DECISION_ALLOW);
    }

    /** The misbehaviours, each with the stage failure codes it may produce. */
    static Stream<Arguments> misbehaviours() {
        return Stream.of(
                Arguments.of(Named.of("hangs past its deadline", new MiddlewareDouble.Reply.Hang()),
                        // the chain engine and the gRPC deadline both enforce the same effective timeout (2 s)
                        Set.of("stage_timeout", "service_timeout")),
                Arguments.of(Named.of("returns bytes that are not a protobuf message",
                        new MiddlewareDouble.Reply.Raw(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, 0x7f, 1})),
                        Set.of("service_error")),
                Arguments.of(Named.of("returns an unknown decision number",
                        new MiddlewareDouble.Reply.Result(HttpRequestResult.newBuilder().setDecisionValue(7)
                                .build())), Set.of("invalid_decision")),
                Arguments.of(Named.of("returns a body over the registration's max_body_bytes",
                        new MiddlewareDouble.Reply.Result(allow().setHasBody(true)
                                .setBody(ByteString.copyFrom(new byte[MAX_BODY + 1])).build())),
                        Set.of("result_body_too_large")),
                Arguments.of(Named.of("removes a credential-bearing header", new MiddlewareDouble.Reply.Result(
                        allow().addHeaderMutations(write("x-openshell-middleware-double", "seen"))
                                .addHeaderMutations(HeaderMutation.newBuilder().setRemove(
                                        RemoveHeader.newBuilder().setName("authorization"))).build())),
                        Set.of("header_mutation_protected_header")),
                Arguments.of(Named.of("writes outside x-openshell-middleware-*", new MiddlewareDouble.Reply.Result(
                        allow().addHeaderMutations(write("x-openshell-middleware-double", "seen"))
                                .addHeaderMutations(write("x-forwarded-for", "10.0.0.1")).build())),
                        Set.of("header_mutation_write_namespace")),
                Arguments.of(Named.of("sends a mutation with neither write nor remove",
                        new MiddlewareDouble.Reply.Result(allow().addHeaderMutations(HeaderMutation.newBuilder())
                                .build())), Set.of("invalid_header_mutation")));
    }

    private static HeaderMutation write(String name, String value) {
        return HeaderMutation.newBuilder().setWrite(WriteHeader.newBuilder().setName(name).setValue(value)
                .setOnExisting(ExistingHeaderAction.EXISTING_HEADER_ACTION_OVERWRITE)).build();
    }

    @ParameterizedTest(name = "a service that {0}: fail_closed denies, fail_open bypasses")
    @MethodSource("misbehaviours")
    void aMisbehavingServiceIsAStageFailureThatFollowsOnError(MiddlewareDouble.Reply reply, Set<String> codes)
            throws Exception {
        faulty.answer(e -> reply);
        try {
            int auditBefore = supervisor.auditEvents().size();
            String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"hello " + NONCE.incrementAndGet() + "\"}]}";

            HttpResponse<String> closed = supervisor.postJson("http://closed.test:" + upstream.port() + "/v1/chat",
                    body);
            assertEquals(403, closed.statusCode(), closed.body());
            JsonObject deny = StackProcess.json(closed);
            assertEquals("middleware_failed", deny.getString("error"));
            assertEquals("guard-closed", deny.getString("config_key"));
            assertEquals("tests/double", deny.getString("binding_id"));
            assertTrue(codes.contains(deny.getString("reason_code")), closed.body());
            assertTrue(upstream.nothingReceived(), "a fail_closed failure never reaches the upstream");

            HttpResponse<String> open = supervisor.postJson("http://open.test:" + upstream.port() + "/v1/chat", body);
            assertEquals(200, open.statusCode(), open.body());
            Upstream.Received got = upstream.take();
            assertEquals(body, got.text(), "fail_open relays the request as it was before the stage");
            assertFalse(got.headers().containsKey("x-openshell-middleware-double"),
                    "mutations of a failed stage are never applied, not even the valid ones");

            List<JsonObject> fresh = supervisor.auditEvents().stream().skip(auditBefore)
                    .filter(e -> e.containsKey("unmapped") && "Detection Finding".equals(e.getString("class_name")))
                    .map(e -> e.getJsonObject("unmapped").getJsonObject("openshell")).toList();
            assertTrue(fresh.stream().anyMatch(d -> "guard-closed".equals(d.getString("config_key", ""))
                    && "deny".equals(d.getString("decision", "")) && codes.contains(d.getString("code", ""))
                    && "fail_closed".equals(d.getString("on_error", ""))), fresh.toString());
            assertTrue(fresh.stream().anyMatch(d -> "guard-open".equals(d.getString("config_key", ""))
                    && "bypass".equals(d.getString("decision", "")) && codes.contains(d.getString("code", ""))
                    && "fail_open".equals(d.getString("on_error", ""))), fresh.toString());
        } finally {
            faulty.answer(e -> MiddlewareDouble.allow());
            faulty.releaseHangs();
        }
    }

    @Test
    void aWellBehavedAnswerIsAppliedOnBothHosts() throws Exception {
        faulty.answer(e -> new MiddlewareDouble.Reply.Result(allow()
                .addHeaderMutations(write("x-openshell-middleware-double", "seen")).setHasBody(true)
                .setBody(ByteString.copyFromUtf8("{\"replaced\":true}")).build()));
        try {
            for (String host : List.of("closed.test", "open.test")) {
                HttpResponse<String> r = supervisor.postJson("http://" + host + ":" + upstream.port() + "/v1/chat",
                        "{\"original\":true}");
                assertEquals(200, r.statusCode(), r.body());
                Upstream.Received got = upstream.take();
                assertEquals("{\"replaced\":true}", got.text());
                assertEquals("seen", got.header("x-openshell-middleware-double"));
            }
        } finally {
            faulty.answer(e -> MiddlewareDouble.allow());
        }
    }

    /**
     * A service written for the published contract reports its binding without an ID; its registration name
     * ({@code content-guard-example}) is its binding ID, and the policy names it by that name, as the OpenShell
     * example policy does.
     */
    @Test
    void aPublishedContractServiceIsUsedUnderItsRegistrationName() throws Exception {
        assertTrue(guard.validations.stream().anyMatch(v -> v.getMiddlewareName().equals("content-guard-example")
                && v.getConfig().getFieldsOrThrow("blocked_words").getListValue().getValues(0).getStringValue()
                .equals("forbidden")), "ValidateConfig at policy load, keyed by the registration name");

        HttpResponse<String> ok = supervisor.postJson("http://guard.test:" + upstream.port() + "/v1/chat",
                "{\"text\":\"fine words\"}");
        assertEquals(200, ok.statusCode(), ok.body());
        Upstream.Received got = upstream.take();
        assertEquals("checked", got.header("x-openshell-middleware-content-guard"));

        HttpResponse<String> denied = supervisor.postJson("http://guard.test:" + upstream.port() + "/v1/chat",
                "{\"text\":\"a forbidden word\"}");
        assertEquals(403, denied.statusCode(), denied.body());
        JsonObject d = StackProcess.json(denied);
        assertEquals("middleware_denied", d.getString("error"));
        assertEquals("request denied by middleware content-guard-example", d.getString("detail"),
                "the service's own reason is untrusted text and never shown");
        assertEquals("content-guard", d.getString("config_key"));
        assertEquals("content-guard-example", d.getString("binding_id"));
        assertEquals("blocked_word", d.getString("reason_code"));
        assertTrue(upstream.nothingReceived());

        var evaluation = guard.evaluations.get(guard.evaluations.size() - 1);
        assertEquals("content-guard-example", evaluation.getMiddlewareName());
        assertEquals("guard.test", evaluation.getTarget().getHost());
        assertTrue(evaluation.getUnknownFields().hasField(1000),
                "the supervisor also sends binding_id (1000), which a published service does not know and ignores");
    }

    @Test
    void aPlaintextRegistrationWithoutAllowInsecureStopsStartUpNamingTheKey() throws Exception {
        for (String setting : List.of("", "allow_insecure = false\n")) {
            Path dir = Files.createTempDirectory(work, "insecure");
            Path gateway = Files.writeString(dir.resolve("gateway.toml"), """
                    [[openshell.supervisor.middleware]]
                    name = "privacy-guard"
                    grpc_endpoint = "http://127.0.0.1:50051"
                    max_body_bytes = 4194304
                    """ + setting);
            Path policy = Files.writeString(dir.resolve("policy.yaml"), "version: 1\n");
            Image.Run run = Image.run(Image.HOME, "run", "--policy", policy.toString(), "--gateway-config",
                    gateway.toString(), "--listen", "127.0.0.1:0", "--admin-listen", "off", "--state-dir",
                    dir.resolve("state").toString(), "--audit-log", "off");
            assertEquals(1, run.exit(), run.err());
            assertEquals("", run.out(), "never ready");
            assertTrue(run.err().startsWith("supervisor: cannot start: " + gateway + ": 1 error(s)"), run.err());
            assertTrue(run.err().contains(gateway + ":3:1: error: openshell.supervisor.middleware[0].grpc_endpoint: "
                    + "plaintext endpoint 'http://127.0.0.1:50051' needs allow_insecure = true"), run.err());
            assertFalse(run.err().contains("\tat "), "a configuration error is a message, not a stack trace");
        }
    }

    /**
     * A content guard written for the published {@code openshell.middleware.v1} field set: its binding has no ID, and
     * it keys its configuration by {@code middleware_name}. Denies bodies holding a blocked word.
     */
    static final class PublishedContentGuard extends SupervisorMiddlewareGrpc.SupervisorMiddlewareImplBase
            implements AutoCloseable {
        final List<ValidateConfigRequest> validations = new CopyOnWriteArrayList<>();
        final List<openshell.published.v1.HttpRequestEvaluation> evaluations =
                new CopyOnWriteArrayList<>();
        private Server server;

        static PublishedContentGuard start() throws IOException {
            PublishedContentGuard g = new PublishedContentGuard();
            g.server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(g).build()
                    .start();
            return g;
        }

        int port() {
            return server.getPort();
        }

        @Override
        public void describe(Empty request, StreamObserver<MiddlewareManifest> out) {
            out.onNext(MiddlewareManifest.newBuilder().setName("content-guard").setServiceVersion("0.3.1")
                    .addBindings(MiddlewareBinding.newBuilder()
                            .setOperation(SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_HTTP_REQUEST)
                            .setPhase(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS)
                            .setMaxPayloadBytes(1 << 20)).build());
            out.onCompleted();
        }

        @Override
        public void validateConfig(ValidateConfigRequest request, StreamObserver<ValidateConfigResponse> out) {
            validations.add(request);
            out.onNext(ValidateConfigResponse.newBuilder().setValid(request.getConfig()
                    .containsFields("blocked_words")).build());
            out.onCompleted();
        }

        @Override
        public void evaluateHttpRequest(openshell.published.v1.HttpRequestEvaluation request,
                                        StreamObserver<openshell.published.v1.HttpRequestResult> out) {
            evaluations.add(request);
            String body = request.getBody().toString(StandardCharsets.UTF_8);
            boolean blocked = request.getConfig().getFieldsOrThrow("blocked_words").getListValue().getValuesList()
                    .stream().anyMatch(w -> body.contains(w.getStringValue()));
            var r = openshell.published.v1.HttpRequestResult.newBuilder();
            if (blocked) {
                r.setDecision(openshell.published.v1.Decision.DECISION_DENY)
                        .setReason("blocked word").setReasonCode("blocked_word");
            } else {
                r.setDecision(openshell.published.v1.Decision.DECISION_ALLOW)
                        .addHeaderMutations(openshell.published.v1.HeaderMutation.newBuilder()
                                .setWrite(openshell.published.v1.WriteHeader.newBuilder()
                                        .setName("x-openshell-middleware-content-guard").setValue("checked")
                                        .setOnExisting(openshell.published.v1.ExistingHeaderAction
                                                .EXISTING_HEADER_ACTION_OVERWRITE)));
            }
            out.onNext(r.build());
            out.onCompleted();
        }

        @Override
        public void close() throws InterruptedException {
            server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }
}
