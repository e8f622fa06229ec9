package dev.openshell.supervisor.grpc;

import com.google.protobuf.ListValue;
import com.google.protobuf.NullValue;
import com.google.protobuf.Struct;
import com.google.protobuf.UnsafeByteOperations;
import com.google.protobuf.Value;
import dev.openshell.middleware.proto.v1.HttpRequestEvaluation;
import dev.openshell.middleware.proto.v1.HttpRequestResult;
import dev.openshell.middleware.proto.v1.HttpRequestTarget;
import dev.openshell.middleware.proto.v1.RequestContext;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewarePhase;
import dev.openshell.middleware.proto.v1.ValidateConfigRequest;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.ExistingHeaderAction;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.OriginatingProcess;
import dev.openshell.middleware.spi.Phase;
import jakarta.json.JsonArray;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Exact translation between the SPI values and {@code openshell.middleware.v1} messages (RFC 0009, "The middleware
 * contract"; field numbers per {@code wire-compat.md}). Inputs that cannot be put on the wire, and results that
 * cannot be represented in the SPI, become {@link MiddlewareException}s with a {@link StageFailureCodes} code. Limits
 * of the result beyond representability (mutation rules, metadata and finding limits, reason length) are the chain
 * engine's to check, not this class's.
 */
final class ProtoTranslation {
    /** Deepest config nesting translated; deeper input is refused (the config is at most 64 KiB anyway). */
    static final int MAX_CONFIG_DEPTH = 64;

    private ProtoTranslation() {
    }

    // ---- SPI -> wire -------------------------------------------------------------------------------------------

    /**
     * Builds the wire evaluation.
     *
     * @param e the SPI evaluation; its phase must be {@link Phase#PRE_CREDENTIALS}
     * @param middlewareName the registration name, sent as {@code middleware_name}
     * @param bodyLimit the binding's body limit, in bytes
     * @throws MiddlewareException {@link StageFailureCodes#INPUT_NOT_REPRESENTABLE} if any part cannot be sent
     */
    static HttpRequestEvaluation evaluation(dev.openshell.middleware.spi.HttpRequestEvaluation e,
                                            String middlewareName, long bodyLimit) {
        if (e.phase() != Phase.PRE_CREDENTIALS) {
            throw notRepresentable("phase " + e.phase() + " is never sent to an external service");
        }
        if (e.body().size() > bodyLimit) {
            throw notRepresentable("body of %d bytes exceeds the binding's %d-byte limit"
                    .formatted(e.body().size(), bodyLimit));
        }
        RequestContext context = context(e.context());
        if (context.getSerializedSize() > EnvelopeLimits.MAX_CONTEXT_BYTES) {
            throw notRepresentable("request context exceeds %d bytes encoded"
                    .formatted(EnvelopeLimits.MAX_CONTEXT_BYTES));
        }
        Struct config = config(e.config());
        if (config.getSerializedSize() > EnvelopeLimits.MAX_CONFIG_BYTES) {
            throw notRepresentable("config exceeds %d bytes encoded".formatted(EnvelopeLimits.MAX_CONFIG_BYTES));
        }
        var t = e.target();
        HttpRequestTarget target = HttpRequestTarget.newBuilder()
                .setScheme(t.scheme()).setHost(t.host()).setPort(t.port()).setMethod(t.method()).setPath(t.path())
                .setQuery(t.query()).build();
        if (target.getSerializedSize() > EnvelopeLimits.MAX_TARGET_BYTES) {
            throw notRepresentable("request target exceeds %d bytes encoded"
                    .formatted(EnvelopeLimits.MAX_TARGET_BYTES));
        }
        if (e.headers().size() > EnvelopeLimits.MAX_HEADER_LINES) {
            throw notRepresentable("%d header lines exceed the limit of %d"
                    .formatted(e.headers().size(), EnvelopeLimits.MAX_HEADER_LINES));
        }
        HttpRequestEvaluation.Builder b = HttpRequestEvaluation.newBuilder()
                .setPhase(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS)
                .setContext(context)
                .setConfig(config)
                .setTarget(target)
                // Body is immutable and never hands its arrays out: wrapping its segments without a copy is safe
                .setBody(wrap(e.body()))
                .setMiddlewareName(middlewareName)
                .setBindingId(e.bindingId().value());
        int headerBytes = 0;
        for (HttpHeader h : e.headers()) {
            var wire = dev.openshell.middleware.proto.v1.HttpHeader.newBuilder()
                    .setName(h.name()).setValue(h.value()).build();
            // measured as the chain engine measures (the HttpHeader messages, without the list's tags and lengths),
            // so a header list the engine admits at exactly 64 KiB is never refused here
            headerBytes += wire.getSerializedSize();
            b.addHeaders(wire);
        }
        if (headerBytes > EnvelopeLimits.MAX_HEADER_BYTES) {
            throw notRepresentable("headers exceed %d bytes encoded".formatted(EnvelopeLimits.MAX_HEADER_BYTES));
        }
        return b.build();
    }

    /**
     * Builds the wire config check.
     *
     * @throws MiddlewareException {@link StageFailureCodes#INPUT_NOT_REPRESENTABLE} if the config cannot be sent
     */
    static ValidateConfigRequest validateConfig(JsonObject config, String middlewareName, String bindingId) {
        Struct s = config(config);
        if (s.getSerializedSize() > EnvelopeLimits.MAX_CONFIG_BYTES) {
            throw notRepresentable("config exceeds %d bytes encoded".formatted(EnvelopeLimits.MAX_CONFIG_BYTES));
        }
        return ValidateConfigRequest.newBuilder().setConfig(s).setMiddlewareName(middlewareName)
                .setBindingId(bindingId).build();
    }

    /** {@return the body's segments as one {@code ByteString} rope, without copying them} */
    private static com.google.protobuf.ByteString wrap(dev.openshell.middleware.spi.Body body) {
        com.google.protobuf.ByteString out = com.google.protobuf.ByteString.EMPTY;
        for (java.nio.ByteBuffer segment : body.segments()) {
            out = out.concat(UnsafeByteOperations.unsafeWrap(segment));
        }
        return out;
    }

    static RequestContext context(dev.openshell.middleware.spi.RequestContext c) {
        RequestContext.Builder b = RequestContext.newBuilder()
                .setRequestId(c.requestId()).setSandboxId(c.sandboxId()).setSandboxName(c.sandboxName())
                .setWorkspace(c.workspace());
        if (c.originatingProcess().isPresent()) {
            OriginatingProcess p = c.originatingProcess().get();
            if (p.pid() < 0 || p.pid() > 0xFFFF_FFFFL) {
                throw notRepresentable("process ID is outside 0..4294967295");
            }
            b.setOriginatingProcess(dev.openshell.middleware.proto.v1.Process.newBuilder()
                    .setBinary(p.binary()).setPid((int) p.pid()).addAllAncestors(p.ancestors()));
        }
        return b.build();
    }

    /** JSON object to {@code google.protobuf.Struct}: numbers become doubles, which must be finite. */
    static Struct config(JsonObject config) {
        return struct(config, 0);
    }

    private static Struct struct(JsonObject o, int depth) {
        Struct.Builder b = Struct.newBuilder();
        for (Map.Entry<String, JsonValue> e : o.entrySet()) {
            b.putFields(e.getKey(), value(e.getValue(), depth + 1));
        }
        return b.build();
    }

    private static Value value(JsonValue v, int depth) {
        if (depth > MAX_CONFIG_DEPTH) {
            throw notRepresentable("config nests deeper than " + MAX_CONFIG_DEPTH + " levels");
        }
        return switch (v.getValueType()) {
            case OBJECT -> Value.newBuilder().setStructValue(struct((JsonObject) v, depth)).build();
            case ARRAY -> {
                ListValue.Builder l = ListValue.newBuilder();
                for (JsonValue item : (JsonArray) v) {
                    l.addValues(value(item, depth + 1));
                }
                yield Value.newBuilder().setListValue(l).build();
            }
            case STRING -> Value.newBuilder().setStringValue(((JsonString) v).getString()).build();
            case NUMBER -> {
                double d = ((JsonNumber) v).doubleValue();
                if (!Double.isFinite(d)) {
                    throw notRepresentable("a config number is too large for google.protobuf.Value (a double)");
                }
                yield Value.newBuilder().setNumberValue(d).build();
            }
            case TRUE -> Value.newBuilder().setBoolValue(true).build();
            case FALSE -> Value.newBuilder().setBoolValue(false).build();
            case NULL -> Value.newBuilder().setNullValue(NullValue.NULL_VALUE).build();
        };
    }

    // ---- wire -> SPI -------------------------------------------------------------------------------------------

    /**
     * Translates a result.
     *
     * @param r the wire result
     * @param bodyLimit the binding's body limit in bytes (at most 4 MiB)
     * @param who the registration and binding, for messages
     * @throws MiddlewareException {@link StageFailureCodes#INVALID_DECISION},
     *     {@link StageFailureCodes#INVALID_HEADER_MUTATION} or {@link StageFailureCodes#RESULT_BODY_TOO_LARGE}
     */
    static dev.openshell.middleware.spi.HttpRequestResult result(HttpRequestResult r, long bodyLimit, String who) {
        Decision decision = switch (r.getDecisionValue()) {
            case 1 -> Decision.ALLOW;
            case 2 -> Decision.DENY;
            default -> throw new MiddlewareException(StageFailureCodes.INVALID_DECISION,
                    who + ": result decision " + (r.getDecisionValue() == 0 ? "DECISION_UNSPECIFIED (0)"
                            : "number " + r.getDecisionValue() + " is unknown") + "; only ALLOW and DENY are valid");
        };
        Optional<Body> body = Optional.empty();
        if (r.getHasBody()) {
            int size = r.getBody().size();
            if (size > bodyLimit || size > EnvelopeLimits.MAX_BODY_BYTES) {
                throw new MiddlewareException(StageFailureCodes.RESULT_BODY_TOO_LARGE,
                        "%s: replacement body of %d bytes exceeds the binding's %d-byte limit"
                                .formatted(who, size, Math.min(bodyLimit, EnvelopeLimits.MAX_BODY_BYTES)));
            }
            body = Optional.of(Body.ofOwned(r.getBody().toByteArray()));
        }
        List<HeaderMutation> mutations = new ArrayList<>(r.getHeaderMutationsCount());
        for (int i = 0; i < r.getHeaderMutationsCount(); i++) {
            var m = r.getHeaderMutations(i);
            mutations.add(switch (m.getOperationCase()) {
                case WRITE -> new HeaderMutation.WriteHeader(m.getWrite().getName(), m.getWrite().getValue(),
                        action(m.getWrite().getOnExistingValue()));
                case REMOVE -> new HeaderMutation.RemoveHeader(m.getRemove().getName());
                case OPERATION_NOT_SET -> throw new MiddlewareException(StageFailureCodes.INVALID_HEADER_MUTATION,
                        who + ": header mutation " + i + " sets neither write nor remove");
            });
        }
        List<Finding> findings = new ArrayList<>(r.getFindingsCount());
        for (var f : r.getFindingsList()) {
            findings.add(new Finding(f.getType(), f.getLabel(), Integer.toUnsignedLong(f.getCount()),
                    f.getConfidence(), f.getSeverity()));
        }
        return new dev.openshell.middleware.spi.HttpRequestResult(decision, r.getReason(),
                r.getReasonCode().isEmpty() ? Optional.empty() : Optional.of(r.getReasonCode()), body, mutations,
                findings, r.getMetadataMap());
    }

    /** Wire {@code ExistingHeaderAction} number to the SPI; 0 and unknown numbers are kept for the header rules. */
    static ExistingHeaderAction action(int wire) {
        return switch (wire) {
            case 0 -> ExistingHeaderAction.UNSPECIFIED;
            case 1 -> ExistingHeaderAction.APPEND;
            case 2 -> ExistingHeaderAction.OVERWRITE;
            case 3 -> ExistingHeaderAction.SKIP;
            default -> ExistingHeaderAction.UNRECOGNIZED;
        };
    }

    private static MiddlewareException notRepresentable(String what) {
        return new MiddlewareException(StageFailureCodes.INPUT_NOT_REPRESENTABLE, what);
    }
}
