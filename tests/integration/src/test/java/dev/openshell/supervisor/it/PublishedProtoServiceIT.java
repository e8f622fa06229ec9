package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.Empty;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import openshell.published.v1.Decision;
import openshell.published.v1.ExistingHeaderAction;
import openshell.published.v1.Finding;
import openshell.published.v1.HeaderMutation;
import openshell.published.v1.HttpRequestEvaluation;
import openshell.published.v1.HttpRequestResult;
import openshell.published.v1.MiddlewareManifest;
import openshell.published.v1.SupervisorMiddlewareGrpc;
import openshell.published.v1.SupervisorMiddlewarePhase;
import openshell.published.v1.ValidateConfigRequest;
import openshell.published.v1.ValidateConfigResponse;
import openshell.published.v1.WriteHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A gRPC service generated from OpenShell's published proto (the verbatim copy in
 * {@code tests/data/reference/openshell-proto}, compiled in this module's test scope as {@code openshell.published.v1})
 * registered with the image: the supervisor describes it, validates its config and invokes its
 * {@code EvaluateHttpRequest}, and the redaction it returns ({@code has_body}) is what the upstream receives. The
 * service also advertises the published {@code HTTP_RESPONSE/PRE_RETURN} pair and serves
 * {@code HttpResponsePreReturn}, skipping every response ({@code ResponseMiddlewareIT} covers response stages).
 */
class PublishedProtoServiceIT {
    @TempDir
    Path work;

    @Test
    void aServiceBuiltFromThePublishedProtoRedactsARequestThroughTheImage() throws Exception {
        try (Upstream upstream = Upstream.start(); Redactor redactor = Redactor.start()) {
            Path gateway = Files.writeString(work.resolve("gateway.toml"), """
                    [openshell.supervisor.network]
                    allow_loopback_upstreams = true

                    [openshell.supervisor.network.static_hosts]
                    "api.test" = "127.0.0.1"

                    [[openshell.supervisor.middleware]]
                    name = "published-redactor"
                    grpc_endpoint = "http://127.0.0.1:%d"
                    max_payload_bytes = 1048576
                    timeout = "2s"
                    allow_insecure = true
                    """.formatted(redactor.port()));
            Path policy = Files.writeString(work.resolve("policy.yaml"), """
                    version: 1
                    network_policies:
                      api:
                        endpoints:
                          - { host: api.test, port: %d }
                    network_middlewares:
                      redact-keys:
                        middleware: published-redactor
                        order: 10
                        on_error: fail_closed
                        config: { secret: sk-live-0123456789 }
                        endpoints: { include: [api.test] }
                    """.formatted(upstream.port()));
            try (StackProcess supervisor = StackProcess.start(work.resolve("supervisor"), policy, gateway, Map.of())) {
                HttpResponse<String> r = supervisor.postJson("http://api.test:" + upstream.port() + "/v1/chat",
                        "{\"prompt\":\"my key is sk-live-0123456789\"}");
                assertEquals(200, r.statusCode(), r.body() + "\n" + supervisor.stderr());
                Upstream.Received got = upstream.take();
                assertEquals("{\"prompt\":\"my key is [REDACTED]\"}", got.text(),
                        "the published-proto service's replacement body reached the upstream");
                assertEquals("1", got.header("x-openshell-middleware-published-redactor"));

                assertEquals(1, redactor.evaluations.size());
                HttpRequestEvaluation seen = redactor.evaluations.getFirst();
                assertEquals("published-redactor", seen.getMiddlewareName());
                assertEquals(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS, seen.getPhase());
                assertEquals("api.test", seen.getTarget().getHost());
                assertEquals("sk-live-0123456789", seen.getConfig().getFieldsOrThrow("secret").getStringValue());
                assertTrue(seen.getUnknownFields().hasField(1000),
                        "binding_id is an addition at 1000, unknown to and ignored by a published-proto service");
                assertTrue(redactor.validations.stream().anyMatch(v -> v.getMiddlewareName()
                        .equals("published-redactor")), "ValidateConfig was called at policy load");
            }
        }
    }

    /**
     * Replaces every occurrence of its config's {@code secret} in the body with {@code [REDACTED]}, with
     * {@code has_body}, a finding and a header counting them. Written against the published proto only.
     */
    static final class Redactor extends SupervisorMiddlewareGrpc.SupervisorMiddlewareImplBase
            implements AutoCloseable {
        final List<ValidateConfigRequest> validations = new CopyOnWriteArrayList<>();
        final List<HttpRequestEvaluation> evaluations = new CopyOnWriteArrayList<>();
        private Server server;

        static Redactor start() throws IOException {
            Redactor r = new Redactor();
            r.server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(r)
                    .addService(new SkipResponses()).build().start();
            return r;
        }

        int port() {
            return server.getPort();
        }

        @Override
        public void describe(Empty request, StreamObserver<MiddlewareManifest> out) {
            out.onNext(MiddlewareManifest.newBuilder().setName("published-redactor").setServiceVersion("1.0.0")
                    .addBindings(PublishedBindings.request(1 << 20))
                    .addBindings(PublishedBindings.response(1 << 20))
                    .build());
            out.onCompleted();
        }

        @Override
        public void validateConfig(ValidateConfigRequest request, StreamObserver<ValidateConfigResponse> out) {
            validations.add(request);
            boolean ok = request.getConfig().getFieldsCount() == 1 && request.getConfig().containsFields("secret");
            out.onNext(ValidateConfigResponse.newBuilder().setValid(ok).setReason(ok ? "" : "needs secret").build());
            out.onCompleted();
        }

        @Override
        public void evaluateHttpRequest(HttpRequestEvaluation request, StreamObserver<HttpRequestResult> out) {
            evaluations.add(request);
            String secret = request.getConfig().getFieldsOrThrow("secret").getStringValue();
            String body = request.getBody().toString(StandardCharsets.UTF_8);
            int count = body.split(java.util.regex.Pattern.quote(secret), -1).length - 1;
            out.onNext(HttpRequestResult.newBuilder().setDecision(Decision.DECISION_ALLOW)
                    .setHasBody(true).setBody(ByteString.copyFromUtf8(body.replace(secret, "[REDACTED]")))
                    .addFindings(Finding.newBuilder().setType("secret.api_key").setLabel("API key").setCount(count))
                    .addHeaderMutations(HeaderMutation.newBuilder().setWrite(WriteHeader.newBuilder()
                            .setName("x-openshell-middleware-published-redactor").setValue(Integer.toString(count))
                            .setOnExisting(ExistingHeaderAction.EXISTING_HEADER_ACTION_OVERWRITE)))
                    .build());
            out.onCompleted();
        }

        /** {@code HttpResponsePreReturn}: skips every response at preflight. */
        static final class SkipResponses
                extends openshell.published.v1.HttpResponsePreReturnGrpc.HttpResponsePreReturnImplBase {
            @Override
            public StreamObserver<openshell.published.v1.HttpResponseEvent> evaluate(
                    StreamObserver<openshell.published.v1.HttpResponseEventResult> out) {
                return new StreamObserver<>() {
                    @Override
                    public void onNext(openshell.published.v1.HttpResponseEvent e) {
                        if (e.hasPreflight()) {
                            out.onNext(openshell.published.v1.HttpResponseEventResult.newBuilder().setPreflightDecision(
                                    openshell.published.v1.HttpResponsePreflightDecision.newBuilder().setSkip(
                                            openshell.published.v1.HttpResponsePreflightSkip.getDefaultInstance()))
                                    .build());
                        } else if (e.hasSessionEnd()) {
                            out.onCompleted();
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

        @Override
        public void close() throws InterruptedException {
            server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }
}
