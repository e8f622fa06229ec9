package dev.openshell.supervisor.grpc;

import com.google.protobuf.UnsafeByteOperations;
import dev.openshell.middleware.proto.v1.HttpRequestTarget;
import dev.openshell.middleware.proto.v1.HttpResponseBodyUnit;
import dev.openshell.middleware.proto.v1.HttpResponseEvent;
import dev.openshell.middleware.proto.v1.HttpResponseEventResult;
import dev.openshell.middleware.proto.v1.MiddlewareSessionEnd;
import dev.openshell.middleware.proto.v1.MiddlewareSessionEndReason;
import dev.openshell.middleware.proto.v1.MiddlewareExchangeProtocolError;
import dev.openshell.middleware.proto.v1.MiddlewareSessionProtocolError;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpResponseBodyMode;
import dev.openshell.middleware.spi.HttpResponseBodyResult;
import dev.openshell.middleware.spi.HttpResponsePreflight;
import dev.openshell.middleware.spi.HttpResponsePreflightDecision;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.SessionEndReason;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Translation between the SPI's response types and the wire's {@code HttpResponsePreReturn} messages (NVIDIA/OpenShell
 * {@code proto/supervisor_middleware.proto}), field for field. A wire answer the SPI cannot express (no action, an
 * unknown body mode number, a mutation with no operation, a result to the wrong event) is a
 * {@link MiddlewareException} with a {@link StageFailureCodes} code: a stage failure.
 */
final class ResponseTranslation {
    private ResponseTranslation() {
    }

    /** {@return the preflight event} @param p the preflight @param middlewareName the registration name */
    static HttpResponseEvent preflight(HttpResponsePreflight p, String middlewareName) {
        var t = p.target();
        var b = dev.openshell.middleware.proto.v1.HttpResponsePreflight.newBuilder()
                .setContext(ProtoTranslation.context(p.context()))
                .setTarget(HttpRequestTarget.newBuilder().setScheme(t.scheme()).setHost(t.host()).setPort(t.port())
                        .setMethod(t.method()).setPath(t.path()).setQuery(t.query()))
                .setStatusCode(p.statusCode())
                .setMiddlewareName(middlewareName)
                .setConfig(ProtoTranslation.config(p.config()))
                .setMaxPayloadBytes(p.maxPayloadBytes())
                .setDeferralPermitted(p.deferralPermitted());
        for (HttpHeader h : p.headers()) {
            b.addHeaders(dev.openshell.middleware.proto.v1.HttpHeader.newBuilder().setName(h.name())
                    .setValue(h.value()));
        }
        for (HttpResponseBodyMode m : HttpResponseBodyMode.values()) {
            if (p.permittedBodyModes().contains(m)) {
                b.addPermittedBodyModesValue(m.ordinal() + 1);
            }
        }
        return HttpResponseEvent.newBuilder().setPreflight(b).build();
    }

    /** {@return the body event} @param u the unit */
    static HttpResponseEvent body(dev.openshell.middleware.spi.HttpResponseBodyUnit u) {
        com.google.protobuf.ByteString data = com.google.protobuf.ByteString.EMPTY;
        for (java.nio.ByteBuffer segment : u.data().segments()) {
            data = data.concat(UnsafeByteOperations.unsafeWrap(segment));
        }
        return HttpResponseEvent.newBuilder().setBody(HttpResponseBodyUnit.newBuilder().setSequence(u.sequence())
                .setData(data).setEndOfStream(u.endOfStream())).build();
    }

    /** {@return the session-end event} @param reason why */
    static HttpResponseEvent end(SessionEndReason reason) {
        var e = MiddlewareSessionEnd.newBuilder()
                .setReasonValue(reason.ordinal() + 1);
        if (reason == SessionEndReason.PROTOCOL_ERROR) {
            e.setProtocolError(MiddlewareSessionProtocolError.newBuilder()
                    .setMiddlewareExchange(MiddlewareExchangeProtocolError.getDefaultInstance()));
        }
        return HttpResponseEvent.newBuilder().setSessionEnd(e).build();
    }

    /**
     * {@return the SPI decision}
     *
     * @param r the wire result
     * @param who the binding, for messages
     * @throws MiddlewareException when the result is not a preflight decision or cannot be expressed
     */
    static HttpResponsePreflightDecision decision(HttpResponseEventResult r, String who) {
        if (r.getResultCase() != HttpResponseEventResult.ResultCase.PREFLIGHT_DECISION) {
            throw new MiddlewareException(StageFailureCodes.INVALID_DECISION,
                    who + ": the answer to the preflight is not a preflight decision");
        }
        var d = r.getPreflightDecision();
        HttpResponsePreflightDecision.Action action = switch (d.getActionCase()) {
            case SKIP -> HttpResponsePreflightDecision.Action.SKIP;
            case INSPECT -> HttpResponsePreflightDecision.Action.INSPECT;
            case BLOCK_DELIVERY -> HttpResponsePreflightDecision.Action.BLOCK_DELIVERY;
            case ACTION_NOT_SET -> throw new MiddlewareException(StageFailureCodes.INVALID_DECISION,
                    who + ": the preflight decision sets no action");
        };
        HttpResponseBodyMode mode = HttpResponseBodyMode.HEADERS_ONLY;
        List<HeaderMutation> mutations = List.of();
        if (action == HttpResponsePreflightDecision.Action.INSPECT) {
            int m = d.getInspect().getBodyModeValue();
            if (m < 1 || m > HttpResponseBodyMode.values().length) {
                throw new MiddlewareException("response_body_mode_not_permitted",
                        who + ": the preflight selected body mode number " + m);
            }
            mode = HttpResponseBodyMode.values()[m - 1];
            mutations = mutations(d.getInspect().getHeaderMutationsList(), who);
        }
        return new HttpResponsePreflightDecision(action, mode, mutations, d.getReason(),
                d.getReasonCode().isEmpty() ? Optional.empty() : Optional.of(d.getReasonCode()),
                findings(d.getFindingsList()), d.getMetadataMap());
    }

    /**
     * {@return the SPI body result}
     *
     * @param r the wire result
     * @param who the binding, for messages
     * @throws MiddlewareException when the result is not a body result or sets no action
     */
    static HttpResponseBodyResult bodyResult(HttpResponseEventResult r, String who) {
        if (r.getResultCase() != HttpResponseEventResult.ResultCase.BODY_RESULT) {
            throw new MiddlewareException(StageFailureCodes.INVALID_DECISION,
                    who + ": the answer to a body unit is not a body result");
        }
        var b = r.getBodyResult();
        Optional<Body> replacement = switch (b.getActionCase()) {
            case PASS_THROUGH -> Optional.empty();
            case TRANSFORM -> {
                if (!b.getTransform().hasData()) {
                    throw new MiddlewareException(StageFailureCodes.INVALID_DECISION,
                            who + ": the transform carries no replacement");
                }
                yield Optional.of(Body.ofOwned(b.getTransform().getData().toByteArray()));
            }
            case ACTION_NOT_SET -> throw new MiddlewareException(StageFailureCodes.INVALID_DECISION,
                    who + ": the body result sets no action");
        };
        return new HttpResponseBodyResult(b.getSequence(), replacement, b.getReason(),
                b.getReasonCode().isEmpty() ? Optional.empty() : Optional.of(b.getReasonCode()),
                findings(b.getFindingsList()), b.getMetadataMap());
    }

    private static List<HeaderMutation> mutations(List<dev.openshell.middleware.proto.v1.HeaderMutation> wire,
                                                  String who) {
        List<HeaderMutation> out = new ArrayList<>(wire.size());
        for (int i = 0; i < wire.size(); i++) {
            var m = wire.get(i);
            int at = i;
            out.add(switch (m.getOperationCase()) {
                case WRITE -> new HeaderMutation.WriteHeader(m.getWrite().getName(), m.getWrite().getValue(),
                        ProtoTranslation.action(m.getWrite().getOnExistingValue()));
                case REMOVE -> new HeaderMutation.RemoveHeader(m.getRemove().getName());
                case OPERATION_NOT_SET -> throw new MiddlewareException(StageFailureCodes.INVALID_HEADER_MUTATION,
                        who + ": header mutation " + at + " sets neither write nor remove");
            });
        }
        return out;
    }

    private static List<Finding> findings(List<dev.openshell.middleware.proto.v1.Finding> wire) {
        List<Finding> out = new ArrayList<>(wire.size());
        for (var f : wire) {
            out.add(new Finding(f.getType(), f.getLabel(), Integer.toUnsignedLong(f.getCount()), f.getConfidence(),
                    f.getSeverity()));
        }
        return out;
    }

    /** Wire value of a session end reason, for tests: the SPI constants are the wire's in order from 1. */
    static MiddlewareSessionEndReason wire(SessionEndReason r) {
        return MiddlewareSessionEndReason.forNumber(r.ordinal() + 1);
    }
}
