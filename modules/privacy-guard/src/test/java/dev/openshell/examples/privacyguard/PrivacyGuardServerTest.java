package dev.openshell.examples.privacyguard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.Empty;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.openshell.middleware.proto.v1.HttpRequestEvaluation;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewareGrpc;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewarePhase;
import dev.openshell.middleware.proto.v1.ValidateConfigRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The Helidon gRPC server, called by grpc-java's client (the supervisor's transport) over loopback. */
class PrivacyGuardServerTest {
    private PrivacyGuardServer server;
    private ManagedChannel channel;
    private SupervisorMiddlewareGrpc.SupervisorMiddlewareBlockingStub stub;

    @BeforeEach
    void start() {
        server = PrivacyGuardServer.start(PrivacyGuardServer.Options.plaintext("127.0.0.1", 0));
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext()
                .maxInboundMessageSize(PrivacyGuardServer.MAX_MESSAGE_BYTES).build();
        stub = SupervisorMiddlewareGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS);
    }

    @AfterEach
    void stop() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.close();
    }

    @Test
    void describeAdvertisesTheBinding() {
        var m = stub.describe(Empty.getDefaultInstance());
        assertEquals("privacy-guard", m.getName());
        assertEquals(PrivacyGuardService.BINDING_ID, m.getBindings(0).getId());
        assertEquals(4L << 20, m.getBindings(0).getMaxPayloadBytes());
        assertTrue(server.address().startsWith("127.0.0.1:"));
    }

    @Test
    void validateConfigAnswersBothWays() {
        var ok = stub.validateConfig(ValidateConfigRequest.newBuilder().setBindingId(PrivacyGuardService.BINDING_ID)
                .setConfig(Struct.newBuilder().putFields("images", Value.newBuilder().setStringValue("deny").build()))
                .build());
        assertTrue(ok.getValid());
        var no = stub.validateConfig(ValidateConfigRequest.newBuilder()
                .setConfig(Struct.newBuilder().putFields("mode", Value.newBuilder().setStringValue("x").build()))
                .build());
        assertFalse(no.getValid());
        assertTrue(no.getReason().contains("unknown config key 'mode'"), no.getReason());
    }

    @Test
    void aFourMebibyteRequestAndItsRewrittenReplyFitTheMessageLimits() {
        StringBuilder b = new StringBuilder("{\"messages\":[{\"role\":\"user\",\"content\":\"");
        String filler = "lorem ipsum mail bob@corp.example ";
        while (b.length() + filler.length() + 10 < 4 * 1024 * 1024) {
            b.append(filler);
        }
        b.append("\"}]}");
        byte[] body = b.toString().getBytes(StandardCharsets.UTF_8);
        var r = stub.evaluateHttpRequest(HttpRequestEvaluation.newBuilder()
                .setPhase(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS)
                .setBindingId(PrivacyGuardService.BINDING_ID).setBody(ByteString.copyFrom(body)).build());
        assertTrue(r.getHasBody());
        assertTrue(r.getFindings(0).getCount() > 100_000, "every address is counted");
        assertFalse(r.getBody().toStringUtf8().contains("bob@corp.example"));
        assertTrue(r.getBody().size() < body.length);
    }

    @Test
    void anInvalidConfigAtEvaluationIsAnInvalidArgumentStatus() {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> stub.evaluateHttpRequest(
                HttpRequestEvaluation.newBuilder()
                        .setPhase(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS)
                        .setConfig(Struct.newBuilder().putFields("pii", Value.newBuilder().setStringValue("?")
                                .build())).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
    }

    @Test
    void aBusyPortIsReportedNotIgnored() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> PrivacyGuardServer.start(
                PrivacyGuardServer.Options.plaintext("127.0.0.1", server.port())));
        assertTrue(e.getMessage().contains("cannot listen"), e.getMessage());
    }

    @Test
    void theResponseModeRedactsPiiInAWholeBodyOverABidiStream() throws Exception {
        var answers = new java.util.concurrent.LinkedBlockingQueue<Object>();
        var requests = dev.openshell.middleware.proto.v1.HttpResponsePreReturnGrpc.newStub(channel).evaluate(
                new io.grpc.stub.StreamObserver<>() {
                    @Override
                    public void onNext(dev.openshell.middleware.proto.v1.HttpResponseEventResult value) {
                        answers.add(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        answers.add(t);
                    }

                    @Override
                    public void onCompleted() {
                        answers.add("completed");
                    }
                });
        requests.onNext(dev.openshell.middleware.proto.v1.HttpResponseEvent.newBuilder().setPreflight(
                dev.openshell.middleware.proto.v1.HttpResponsePreflight.newBuilder().setStatusCode(200)
                        .setMaxPayloadBytes(1 << 20)
                        .addPermittedBodyModes(dev.openshell.middleware.proto.v1.HttpResponseBodyMode
                                .HTTP_RESPONSE_BODY_MODE_HEADERS_ONLY)
                        .addPermittedBodyModes(dev.openshell.middleware.proto.v1.HttpResponseBodyMode
                                .HTTP_RESPONSE_BODY_MODE_WHOLE_BODY_BYTES)).build());
        var pre = (dev.openshell.middleware.proto.v1.HttpResponseEventResult) answers.poll(10, TimeUnit.SECONDS);
        assertEquals(dev.openshell.middleware.proto.v1.HttpResponseBodyMode.HTTP_RESPONSE_BODY_MODE_WHOLE_BODY_BYTES,
                pre.getPreflightDecision().getInspect().getBodyMode());
        requests.onNext(dev.openshell.middleware.proto.v1.HttpResponseEvent.newBuilder().setBody(
                dev.openshell.middleware.proto.v1.HttpResponseBodyUnit.newBuilder().setSequence(1).setEndOfStream(true)
                        .setData(ByteString.copyFromUtf8("write to jane.doe@example.com"))).build());
        var body = (dev.openshell.middleware.proto.v1.HttpResponseEventResult) answers.poll(10, TimeUnit.SECONDS);
        assertEquals(1, body.getBodyResult().getSequence());
        assertEquals("write to [email]", body.getBodyResult().getTransform().getData().toStringUtf8());
        assertEquals("pii.email", body.getBodyResult().getFindings(0).getType());
        requests.onCompleted();
        assertEquals("completed", answers.poll(10, TimeUnit.SECONDS));
    }
}
