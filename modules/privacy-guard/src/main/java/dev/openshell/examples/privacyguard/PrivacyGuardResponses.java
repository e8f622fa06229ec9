package dev.openshell.examples.privacyguard;

import com.google.protobuf.ByteString;
import dev.openshell.middleware.proto.v1.Finding;
import dev.openshell.middleware.proto.v1.HttpResponseBodyMode;
import dev.openshell.middleware.proto.v1.HttpResponseBodyPassThrough;
import dev.openshell.middleware.proto.v1.HttpResponseBodyResult;
import dev.openshell.middleware.proto.v1.HttpResponseBodyTransform;
import dev.openshell.middleware.proto.v1.HttpResponseEvent;
import dev.openshell.middleware.proto.v1.HttpResponseEventResult;
import dev.openshell.middleware.proto.v1.HttpResponsePreReturnGrpc;
import dev.openshell.middleware.proto.v1.HttpResponsePreflight;
import dev.openshell.middleware.proto.v1.HttpResponsePreflightDecision;
import dev.openshell.middleware.proto.v1.HttpResponsePreflightInspect;
import dev.openshell.middleware.proto.v1.HttpResponsePreflightSkip;
import io.grpc.stub.StreamObserver;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Privacy Guard's response mode (binding {@value #BINDING_ID}, {@code HTTP_RESPONSE/PRE_RETURN}, served as
 * {@code HttpResponsePreReturn}): e-mail addresses and phone numbers coming back in a response body are replaced by
 * {@code [email]} and {@code [phone]}, with one finding per kind. Preflight: {@code WHOLE_BODY_BYTES} when permitted,
 * else {@code STREAM_BYTES} (each unit scanned on its own), else skip. A unit that is not UTF-8 text passes through.
 * Each body result answers the unit's own sequence; the stream ends when the supervisor half-closes.
 */
public final class PrivacyGuardResponses extends HttpResponsePreReturnGrpc.HttpResponsePreReturnImplBase {
    /** The response binding ID. */
    public static final String BINDING_ID = "examples/privacy-guard-response";

    @Override
    public StreamObserver<HttpResponseEvent> evaluate(StreamObserver<HttpResponseEventResult> out) {
        return new StreamObserver<>() {
            @Override
            public void onNext(HttpResponseEvent e) {
                switch (e.getEventCase()) {
                    case PREFLIGHT -> out.onNext(HttpResponseEventResult.newBuilder()
                            .setPreflightDecision(decide(e.getPreflight())).build());
                    case BODY -> out.onNext(HttpResponseEventResult.newBuilder()
                            .setBodyResult(scan(e.getBody().getSequence(), e.getBody().getData())).build());
                    default -> { } // session_end: nothing to answer
                }
            }

            @Override
            public void onError(Throwable t) {
                // the supervisor cancelled the stream: nothing to answer
            }

            @Override
            public void onCompleted() {
                out.onCompleted();
            }
        };
    }

    static HttpResponsePreflightDecision decide(HttpResponsePreflight p) {
        var d = HttpResponsePreflightDecision.newBuilder();
        if (p.getPermittedBodyModesList().contains(HttpResponseBodyMode.HTTP_RESPONSE_BODY_MODE_WHOLE_BODY_BYTES)) {
            return d.setInspect(HttpResponsePreflightInspect.newBuilder()
                    .setBodyMode(HttpResponseBodyMode.HTTP_RESPONSE_BODY_MODE_WHOLE_BODY_BYTES)).build();
        }
        if (p.getPermittedBodyModesList().contains(HttpResponseBodyMode.HTTP_RESPONSE_BODY_MODE_STREAM_BYTES)) {
            return d.setInspect(HttpResponsePreflightInspect.newBuilder()
                    .setBodyMode(HttpResponseBodyMode.HTTP_RESPONSE_BODY_MODE_STREAM_BYTES)).build();
        }
        return d.setSkip(HttpResponsePreflightSkip.getDefaultInstance()).build();
    }

    static HttpResponseBodyResult scan(long sequence, ByteString data) {
        HttpResponseBodyResult.Builder r = HttpResponseBodyResult.newBuilder().setSequence(sequence);
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(data.toByteArray()))
                    .toString();
        } catch (CharacterCodingException e) {
            return r.setPassThrough(HttpResponseBodyPassThrough.getDefaultInstance()).build();
        }
        PiiScanner.Result found = PiiScanner.scan(text, true);
        if (found.emails() + found.phones() == 0) {
            return r.setPassThrough(HttpResponseBodyPassThrough.getDefaultInstance()).build();
        }
        if (found.emails() > 0) {
            r.addFindings(Finding.newBuilder().setType("pii.email").setLabel("E-mail address")
                    .setCount(found.emails()).setSeverity("medium"));
        }
        if (found.phones() > 0) {
            r.addFindings(Finding.newBuilder().setType("pii.phone").setLabel("Phone number")
                    .setCount(found.phones()).setSeverity("medium"));
        }
        return r.setTransform(HttpResponseBodyTransform.newBuilder()
                .setData(ByteString.copyFromUtf8(found.text()))).build();
    }
}
