package dev.openshell.examples.privacyguard;

import com.google.protobuf.ByteString;
import com.google.protobuf.Empty;
import dev.openshell.middleware.proto.v1.Decision;
import dev.openshell.middleware.proto.v1.ExistingHeaderAction;
import dev.openshell.middleware.proto.v1.Finding;
import dev.openshell.middleware.proto.v1.HeaderMutation;
import dev.openshell.middleware.proto.v1.HttpRequestEvaluation;
import dev.openshell.middleware.proto.v1.HttpRequestResult;
import dev.openshell.middleware.proto.v1.MiddlewareBinding;
import dev.openshell.middleware.proto.v1.MiddlewareManifest;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewareGrpc;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewareOperation;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewarePhase;
import dev.openshell.middleware.proto.v1.ValidateConfigRequest;
import dev.openshell.middleware.proto.v1.ValidateConfigResponse;
import dev.openshell.middleware.proto.v1.WebSocketMessage;
import dev.openshell.middleware.proto.v1.WebSocketMessageResult;
import dev.openshell.middleware.proto.v1.WebSocketPreflightAction;
import dev.openshell.middleware.proto.v1.WebSocketPreflightDecision;
import dev.openshell.middleware.proto.v1.WebSocketSessionEvent;
import dev.openshell.middleware.proto.v1.WebSocketSessionEventResult;
import dev.openshell.middleware.proto.v1.WriteHeader;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

/**
 * Privacy Guard's {@code openshell.middleware.v1} service (RFC 0009, "Use-case: Privacy Guard").
 *
 * <h2>Manifest</h2>
 * One binding, {@value #BINDING_ID}, {@code HTTP_REQUEST/PRE_CREDENTIALS}, accepting bodies up to 4 MiB
 * ({@value #MAX_PAYLOAD_BYTES} bytes), with no timeout of its own (the registration's applies).
 *
 * <h2>ValidateConfig</h2>
 * Accepts {@code images: redact|deny|allow} and {@code pii: redact|allow} (both optional, default {@code redact});
 * refuses anything else with a reason naming the key. A request for another binding ID is refused.
 *
 * <h2>EvaluateHttpRequest</h2>
 * Inspects the body with {@link ChatInspector}:
 * <ul>
 *   <li>images with {@code images: deny}: {@code DENY}, reason {@value ChatInspector#IMAGE_PLACEHOLDER}, reason code
 *       {@code image_upload_disabled};</li>
 *   <li>anything redacted: {@code ALLOW} with the rewritten body, reason code {@code privacy_redacted}, and the header
 *       {@code x-openshell-middleware-privacy-guard: redacted} (overwrite);</li>
 *   <li>JSON with duplicate keys: {@code DENY} ({@code ambiguous_json}) unless both modes are {@code allow};</li>
 *   <li>otherwise {@code ALLOW}, body unchanged.</li>
 * </ul>
 * Findings (counts only, never values): {@code pii.email}, {@code pii.phone}, {@code content.image},
 * {@code content.not_json}, {@code content.unrecognized_format}, {@code content.duplicate_keys}. Metadata:
 * {@code modalities} ({@code text}, {@code image}, {@code text,image}, {@code none}, or {@code unknown} when the body
 * was not inspected) and {@code sensitivity} ({@code none}: nothing found; {@code redacted}: everything found was
 * removed; {@code restricted}: personal data or images go upstream because the config allows them; {@code unknown}).
 * An invalid config at evaluation answers {@code INVALID_ARGUMENT}; the supervisor then applies {@code on_error}. A
 * call the client cancelled while its body was inspected (its deadline passed) is not answered.
 */
public final class PrivacyGuardService extends SupervisorMiddlewareGrpc.SupervisorMiddlewareImplBase {
    /** The binding ID policies select with {@code middleware: examples/privacy-guard}. */
    public static final String BINDING_ID = "examples/privacy-guard";
    /** The body capability advertised in the manifest ({@code max_payload_bytes}): 4 MiB. */
    public static final long MAX_PAYLOAD_BYTES = 4L * 1024 * 1024;
    /** The header written when something was redacted. */
    public static final String HEADER = "x-openshell-middleware-privacy-guard";

    private static final MiddlewareManifest MANIFEST = MiddlewareManifest.newBuilder()
            .setName("privacy-guard")
            .setServiceVersion(version())
            .addBindings(MiddlewareBinding.newBuilder()
                    .setId(BINDING_ID)
                    .setOperation(SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_HTTP_REQUEST)
                    .setPhase(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS)
                    .setMaxPayloadBytes(MAX_PAYLOAD_BYTES))
            .addBindings(MiddlewareBinding.newBuilder()
                    .setId(BINDING_ID)
                    .setOperation(SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_WEBSOCKET_MESSAGE)
                    .setPhase(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS)
                    .setMaxPayloadBytes(MAX_PAYLOAD_BYTES))
            .addBindings(MiddlewareBinding.newBuilder()
                    .setId(BINDING_ID)
                    .setOperation(SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_WEBSOCKET_MESSAGE)
                    .setPhase(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_RETURN)
                    .setMaxPayloadBytes(MAX_PAYLOAD_BYTES))
            .addBindings(MiddlewareBinding.newBuilder()
                    .setId(PrivacyGuardResponses.BINDING_ID)
                    .setOperation(SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_HTTP_RESPONSE)
                    .setPhase(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_RETURN)
                    .setMaxPayloadBytes(MAX_PAYLOAD_BYTES))
            .build();

    private final MiddlewareManifest manifest;

    /** Creates the service; it is stateless and thread-safe. */
    public PrivacyGuardService() {
        this("");
    }

    /**
     * Creates the service advertising the audience its callers' tokens must carry.
     *
     * @param expectedAudience the {@code expected_audience} of the manifest; empty when tokens are not verified
     */
    public PrivacyGuardService(String expectedAudience) {
        this.manifest = MANIFEST.toBuilder().setExpectedAudience(expectedAudience).build();
    }

    @Override
    public void describe(Empty request, StreamObserver<MiddlewareManifest> out) {
        out.onNext(manifest);
        out.onCompleted();
    }

    @Override
    public void validateConfig(ValidateConfigRequest request, StreamObserver<ValidateConfigResponse> out) {
        ValidateConfigResponse.Builder r = ValidateConfigResponse.newBuilder();
        if (!request.getBindingId().isEmpty() && !request.getBindingId().equals(BINDING_ID)
                && !request.getBindingId().equals(PrivacyGuardResponses.BINDING_ID)) {
            r.setValid(false).setReason("this service serves only the bindings " + BINDING_ID + " and "
                    + PrivacyGuardResponses.BINDING_ID);
        } else {
            try {
                PrivacyGuardConfig.parse(request.getConfig());
                r.setValid(true);
            } catch (IllegalArgumentException e) {
                r.setValid(false).setReason(e.getMessage());
            }
        }
        out.onNext(r.build());
        out.onCompleted();
    }

    @Override
    public void evaluateHttpRequest(HttpRequestEvaluation request, StreamObserver<HttpRequestResult> out) {
        if (!request.getBindingId().isEmpty() && !request.getBindingId().equals(BINDING_ID)) {
            out.onError(Status.INVALID_ARGUMENT.withDescription("unknown binding").asRuntimeException());
            return;
        }
        if (request.getPhase() != SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS) {
            out.onError(Status.INVALID_ARGUMENT.withDescription("unsupported phase").asRuntimeException());
            return;
        }
        PrivacyGuardConfig config;
        try {
            config = PrivacyGuardConfig.parse(request.getConfig());
        } catch (IllegalArgumentException e) {
            out.onError(Status.INVALID_ARGUMENT.withDescription("invalid config").asRuntimeException());
            return;
        }
        HttpRequestResult result = evaluate(request.getBody().toByteArray(), config);
        if (cancelled(out)) {
            return;
        }
        out.onNext(result);
        out.onCompleted();
    }

    /**
     * One WebSocket session's text messages in one direction ({@code EvaluateWebSocketSession}; both
     * {@code WEBSOCKET_MESSAGE/PRE_CREDENTIALS} and {@code PRE_RETURN}): the preflight parses the config (an invalid
     * one answers {@code INVALID_ARGUMENT}) and inspects; each text message is scanned for e-mail addresses and
     * phone numbers ({@link PiiScanner}): with {@code pii: redact} they are replaced ({@code [email]},
     * {@code [phone]}), with {@code pii: allow} kept; either way counted in findings. The sequence is echoed; a
     * message before the preflight or after {@code session_end} fails the stream.
     */
    @Override
    public StreamObserver<WebSocketSessionEvent> evaluateWebSocketSession(
            StreamObserver<WebSocketSessionEventResult> out) {
        return new StreamObserver<>() {
            private PrivacyGuardConfig config;
            private boolean ended;

            @Override
            public void onNext(WebSocketSessionEvent e) {
                switch (e.getEventCase()) {
                    case PREFLIGHT -> {
                        try {
                            config = PrivacyGuardConfig.parse(e.getPreflight().getConfig());
                        } catch (IllegalArgumentException x) {
                            ended = true;
                            out.onError(Status.INVALID_ARGUMENT.withDescription("invalid config").asRuntimeException());
                            return;
                        }
                        out.onNext(WebSocketSessionEventResult.newBuilder().setPreflightDecision(
                                WebSocketPreflightDecision.newBuilder()
                                        .setAction(WebSocketPreflightAction.WEB_SOCKET_PREFLIGHT_ACTION_INSPECT))
                                .build());
                    }
                    case MESSAGE -> {
                        if (config == null || ended) {
                            ended = true;
                            out.onError(Status.FAILED_PRECONDITION.withDescription("message outside a session")
                                    .asRuntimeException());
                            return;
                        }
                        out.onNext(WebSocketSessionEventResult.newBuilder()
                                .setMessageResult(message(e.getMessage(), config)).build());
                    }
                    case SESSION_END -> {
                        if (!ended) {
                            ended = true;
                            out.onCompleted();
                        }
                    }
                    default -> { }
                }
            }

            @Override
            public void onError(Throwable t) {
                ended = true;
            }

            @Override
            public void onCompleted() {
                if (!ended) {
                    ended = true;
                    out.onCompleted();
                }
            }
        };
    }

    static WebSocketMessageResult message(WebSocketMessage m, PrivacyGuardConfig config) {
        WebSocketMessageResult.Builder r = WebSocketMessageResult.newBuilder().setSequence(m.getSequence())
                .setDecision(Decision.DECISION_ALLOW);
        if (!m.hasText()) {
            return r.build();
        }
        boolean redact = config.pii() == PrivacyGuardConfig.PiiMode.REDACT;
        PiiScanner.Result scan = PiiScanner.scan(m.getText(), redact);
        if (scan.emails() > 0) {
            r.addFindings(finding("pii.email", "e-mail address", scan.emails()).toBuilder().setConfidence("medium"));
        }
        if (scan.phones() > 0) {
            r.addFindings(finding("pii.phone", "phone number", scan.phones()).toBuilder().setConfidence("medium"));
        }
        if (redact && scan.found()) {
            r.setText(scan.text()).setReasonCode("privacy_redacted");
        }
        return r.build();
    }

    /**
     * Whether the client cancelled the call (its deadline passed) while the body was inspected. Such a call gets no
     * answer: the client has reset the stream (HTTP/2 {@code RST_STREAM}, RFC 9113 section 6.4) and discards
     * anything sent on it. Answering anyway is not only wasted work: Helidon 4.5.0's HTTP/2 server then writes the
     * response on the reset stream, the client answers that with {@code RST_STREAM(STREAM_CLOSED)}, and the server,
     * which has already forgotten the stream, treats that reset as a protocol error and closes the whole connection
     * with {@code GOAWAY}, failing every other call in flight on it.
     */
    private static boolean cancelled(StreamObserver<?> out) {
        return out instanceof ServerCallStreamObserver<?> call && call.isCancelled();
    }

    static HttpRequestResult evaluate(byte[] body, PrivacyGuardConfig config) {
        ChatInspector.Inspection in = ChatInspector.inspect(body, config);
        HttpRequestResult.Builder r = HttpRequestResult.newBuilder().setDecision(Decision.DECISION_ALLOW);
        switch (in.kind()) {
            case EMPTY -> {
                return r.putMetadata("modalities", "none").putMetadata("sensitivity", "none").build();
            }
            case NOT_JSON -> {
                return r.addFindings(finding("content.not_json", "body is not JSON: not inspected", 1))
                        .putMetadata("modalities", "unknown").putMetadata("sensitivity", "unknown").build();
            }
            case UNRECOGNIZED -> {
                return r.addFindings(finding("content.unrecognized_format",
                                "JSON without messages or system: not inspected", 1))
                        .putMetadata("modalities", "unknown").putMetadata("sensitivity", "unknown").build();
            }
            case DUPLICATE_KEYS -> {
                r.addFindings(finding("content.duplicate_keys", "JSON object repeats a key", 1))
                        .putMetadata("modalities", "unknown").putMetadata("sensitivity", "unknown");
                boolean allowAll = config.images() == PrivacyGuardConfig.ImageMode.ALLOW
                        && config.pii() == PrivacyGuardConfig.PiiMode.ALLOW;
                return allowAll ? r.build() : r.setDecision(Decision.DECISION_DENY)
                        .setReason("request body JSON repeats an object key; it cannot be inspected reliably")
                        .setReasonCode("ambiguous_json").build();
            }
            case CHAT -> {
                // below
            }
        }
        if (in.emails() > 0) {
            r.addFindings(finding("pii.email", "e-mail address", in.emails()).toBuilder().setConfidence("medium"));
        }
        if (in.phones() > 0) {
            r.addFindings(finding("pii.phone", "phone number", in.phones()).toBuilder().setConfidence("medium"));
        }
        if (in.images() > 0) {
            r.addFindings(finding("content.image", "image", in.images()).toBuilder().setConfidence("high"));
        }
        String modalities = in.text() && in.images() > 0 ? "text,image" : in.text() ? "text"
                : in.images() > 0 ? "image" : "none";
        boolean piiLeft = config.pii() == PrivacyGuardConfig.PiiMode.ALLOW && in.emails() + in.phones() > 0;
        boolean imagesLeft = config.images() == PrivacyGuardConfig.ImageMode.ALLOW && in.images() > 0;
        boolean found = in.emails() + in.phones() + in.images() > 0;
        r.putMetadata("modalities", modalities)
                .putMetadata("sensitivity", !found ? "none" : piiLeft || imagesLeft ? "restricted" : "redacted");
        if (in.images() > 0 && config.images() == PrivacyGuardConfig.ImageMode.DENY) {
            return r.setDecision(Decision.DECISION_DENY).setReason(ChatInspector.IMAGE_PLACEHOLDER)
                    .setReasonCode("image_upload_disabled").build();
        }
        if (in.rewritten() != null) {
            if (in.rewritten().length > MAX_PAYLOAD_BYTES) {
                return r.setDecision(Decision.DECISION_DENY)
                        .setReason("the redacted body would exceed 4 MiB").setReasonCode("redaction_too_large")
                        .build();
            }
            r.setHasBody(true).setBody(ByteString.copyFrom(in.rewritten()))
                    .setReason("personal data or images redacted").setReasonCode("privacy_redacted")
                    .addHeaderMutations(HeaderMutation.newBuilder().setWrite(WriteHeader.newBuilder()
                            .setName(HEADER).setValue("redacted")
                            .setOnExisting(ExistingHeaderAction.EXISTING_HEADER_ACTION_OVERWRITE)));
        }
        return r.build();
    }

    private static Finding finding(String type, String label, int count) {
        return Finding.newBuilder().setType(type).setLabel(label).setCount(count).setSeverity("medium").build();
    }

    private static String version() {
        Module m = PrivacyGuardService.class.getModule();
        return m.getDescriptor() == null ? "dev" : m.getDescriptor().rawVersion().orElse("dev");
    }
}
