package dev.openshell.supervisor.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.openshell.middleware.proto.v1.Finding;
import dev.openshell.middleware.proto.v1.HeaderMutation;
import dev.openshell.middleware.proto.v1.HttpRequestResult;
import dev.openshell.middleware.proto.v1.RemoveHeader;
import dev.openshell.middleware.proto.v1.WriteHeader;
import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.ExistingHeaderAction;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.OriginatingProcess;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonValue;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** SPI values survive translation to {@code openshell.middleware.v1} and back, field by field. */
class ProtoTranslationPropertyTest {
    /** Text a Java string can carry and UTF-8 can encode: no unpaired surrogates. */
    @Provide
    Arbitrary<String> text() {
        return Arbitraries.strings().ofMaxLength(40).filter(ProtoTranslationPropertyTest::encodable);
    }

    @Provide
    Arbitrary<List<HttpHeader>> headers() {
        Arbitrary<HttpHeader> h = Combinators.combine(Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(12)
                .map(String::toLowerCase), text()).as(HttpHeader::new);
        return h.list().ofMaxSize(20);
    }

    @Property
    void everyEvaluationFieldArrivesOnItsWireField(@ForAll("text") String requestId, @ForAll("text") String sandbox,
                                                   @ForAll("text") String host, @ForAll @IntRange(min = 1,
            max = 65535) int port, @ForAll("text") String query, @ForAll("headers") List<HttpHeader> headers,
                                                   @ForAll @Size(max = 300) byte[] body,
                                                   @ForAll @IntRange(min = 0) int pid) {
        var context = new RequestContext(requestId, sandbox, "name", "ws",
                Optional.of(new OriginatingProcess("/usr/bin/curl", Integer.toUnsignedLong(pid) * 2,
                        List.of("/bin/sh"))));
        var e = new HttpRequestEvaluation(new BindingId("acme/x"), Phase.PRE_CREDENTIALS, context,
                JsonValue.EMPTY_JSON_OBJECT, new HttpRequestTarget("https", host, port, "POST", "/p", query), headers,
                Body.of(body));
        var wire = ProtoTranslation.evaluation(e, "reg-name", 4L << 20);
        assertEquals("reg-name", wire.getMiddlewareName());
        assertEquals("acme/x", wire.getBindingId());
        assertEquals(1, wire.getPhaseValue());
        assertEquals(requestId, wire.getContext().getRequestId());
        assertEquals(sandbox, wire.getContext().getSandboxId());
        assertEquals(Integer.toUnsignedLong(pid) * 2,
                Integer.toUnsignedLong(wire.getContext().getOriginatingProcess().getPid()));
        assertEquals(host, wire.getTarget().getHost());
        assertEquals(port, wire.getTarget().getPort());
        assertEquals(query, wire.getTarget().getQuery());
        assertEquals(headers, wire.getHeadersList().stream().map(h -> new HttpHeader(h.getName(), h.getValue()))
                .toList(), "wire order and duplicates are kept");
        assertEquals(ByteString.copyFrom(body), wire.getBody());
    }

    @Property
    void everyResultFieldArrivesOnItsSpiField(@ForAll @IntRange(min = 1, max = 2) int decision,
                                              @ForAll("text") String reason, @ForAll boolean hasBody,
                                              @ForAll @Size(max = 200) byte[] body,
                                              @ForAll @Size(max = 10) List<@IntRange(min = -1, max = 6) Integer> actions,
                                              @ForAll int count, @ForAll Map<@Size(max = 8) String, String> meta) {
        HttpRequestResult.Builder b = HttpRequestResult.newBuilder().setDecisionValue(decision).setReason(reason)
                .setHasBody(hasBody).setBody(ByteString.copyFrom(body)).putAllMetadata(sanitize(meta))
                .addFindings(Finding.newBuilder().setType("t").setLabel("l").setCount(count).setConfidence("c")
                        .setSeverity("s"));
        for (int a : actions) {
            b.addHeaderMutations(a < 0 ? HeaderMutation.newBuilder().setRemove(RemoveHeader.newBuilder().setName("r"))
                    : HeaderMutation.newBuilder().setWrite(WriteHeader.newBuilder().setName("w").setValue("v")
                    .setOnExistingValue(a)));
        }
        var r = ProtoTranslation.result(b.build(), 4L << 20, "who");
        assertEquals(decision == 1 ? Decision.ALLOW : Decision.DENY, r.decision());
        assertEquals(reason, r.reason());
        assertEquals(hasBody ? Optional.of(Body.of(body)) : Optional.empty(), r.body());
        assertEquals(Integer.toUnsignedLong(count), r.findings().getFirst().count());
        assertEquals(sanitize(meta), r.metadata());
        for (int i = 0; i < actions.size(); i++) {
            int a = actions.get(i);
            var m = r.headerMutations().get(i);
            if (a < 0) {
                assertEquals(new dev.openshell.middleware.spi.HeaderMutation.RemoveHeader("r"), m);
            } else {
                ExistingHeaderAction expected = switch (a) {
                    case 0 -> ExistingHeaderAction.UNSPECIFIED;
                    case 1 -> ExistingHeaderAction.APPEND;
                    case 2 -> ExistingHeaderAction.OVERWRITE;
                    case 3 -> ExistingHeaderAction.SKIP;
                    default -> ExistingHeaderAction.UNRECOGNIZED;
                };
                assertEquals(expected, ((dev.openshell.middleware.spi.HeaderMutation.WriteHeader) m).onExisting());
            }
        }
    }

    private static boolean encodable(String s) {
        return s.codePoints().noneMatch(cp -> cp >= 0xD800 && cp <= 0xDFFF);
    }

    private static Map<String, String> sanitize(Map<String, String> m) {
        java.util.Map<String, String> out = new java.util.HashMap<>();
        m.forEach((k, v) -> {
            if (encodable(k) && encodable(v)) {
                out.put(k, v);
            }
        });
        return out;
    }

    @Property
    void decisionsOtherThanAllowAndDenyAreRefused(@ForAll int decision) {
        if (decision == 1 || decision == 2) {
            return;
        }
        var wire = HttpRequestResult.newBuilder().setDecisionValue(decision).build();
        MiddlewareException e = assertThrows(MiddlewareException.class,
                () -> ProtoTranslation.result(wire, 1024, "who"));
        assertEquals(StageFailureCodes.INVALID_DECISION, e.code());
    }

    @Provide
    Arbitrary<JsonValue> json() {
        return Arbitraries.recursive(this::leaf, this::container, 0, 4);
    }

    private Arbitrary<JsonValue> leaf() {
        return Arbitraries.oneOf(text().map(Json::createValue), Arbitraries.integers().map(i -> Json.createValue(i)),
                Arbitraries.doubles().map(d -> Json.createValue(d)),
                Arbitraries.of(JsonValue.TRUE, JsonValue.FALSE, JsonValue.NULL));
    }

    private Arbitrary<JsonValue> container(Arbitrary<JsonValue> inner) {
        Arbitrary<JsonValue> array = inner.list().ofMaxSize(4).map(l -> {
            JsonArrayBuilder b = Json.createArrayBuilder();
            l.forEach(b::add);
            return b.build();
        });
        Arbitrary<JsonValue> object = Arbitraries.maps(text(), inner).ofMaxSize(4).map(m -> {
            JsonObjectBuilder b = Json.createObjectBuilder();
            m.forEach(b::add);
            return b.build();
        });
        return Arbitraries.oneOf(array, object);
    }

    @Property
    void configJsonBecomesAStructWithTheSameTree(@ForAll("json") JsonValue value) {
        JsonObject config = Json.createObjectBuilder().add("root", value).build();
        Struct s = ProtoTranslation.config(config);
        assertEquals(normalize(config), toJson(Value.newBuilder().setStructValue(s).build()));
    }

    /** JSON numbers travel as doubles (google.protobuf.Value); compare after the same conversion. */
    private static JsonValue normalize(JsonValue v) {
        return switch (v.getValueType()) {
            case NUMBER -> Json.createValue(((jakarta.json.JsonNumber) v).doubleValue());
            case ARRAY -> {
                JsonArrayBuilder b = Json.createArrayBuilder();
                v.asJsonArray().forEach(x -> b.add(normalize(x)));
                yield b.build();
            }
            case OBJECT -> {
                JsonObjectBuilder b = Json.createObjectBuilder();
                v.asJsonObject().forEach((k, x) -> b.add(k, normalize(x)));
                yield b.build();
            }
            default -> v;
        };
    }

    private static JsonValue toJson(Value v) {
        return switch (v.getKindCase()) {
            case NUMBER_VALUE -> Json.createValue(v.getNumberValue());
            case STRING_VALUE -> Json.createValue(v.getStringValue());
            case BOOL_VALUE -> v.getBoolValue() ? JsonValue.TRUE : JsonValue.FALSE;
            case NULL_VALUE -> JsonValue.NULL;
            case LIST_VALUE -> {
                JsonArrayBuilder b = Json.createArrayBuilder();
                v.getListValue().getValuesList().forEach(x -> b.add(toJson(x)));
                yield b.build();
            }
            case STRUCT_VALUE -> {
                JsonObjectBuilder b = Json.createObjectBuilder();
                v.getStructValue().getFieldsMap().forEach((k, x) -> b.add(k, toJson(x)));
                yield b.build();
            }
            case KIND_NOT_SET -> throw new AssertionError("kind not set");
        };
    }

    @Example
    void inputsOverTheEnvelopeLimitsAreNeverSent() {
        JsonObject big = Json.createObjectBuilder().add("k", "v".repeat(64 * 1024)).build();
        assertEquals(StageFailureCodes.INPUT_NOT_REPRESENTABLE, assertThrows(MiddlewareException.class,
                () -> ProtoTranslation.validateConfig(big, "n", "acme/x")).code());
        var many = java.util.Collections.nCopies(129, new HttpHeader("x", "y"));
        var e = new HttpRequestEvaluation(new BindingId("acme/x"), Phase.PRE_CREDENTIALS, RequestContext.of("r"),
                JsonValue.EMPTY_JSON_OBJECT, new HttpRequestTarget("https", "h", 1, "GET", "/", ""), many,
                Body.empty());
        MiddlewareException m = assertThrows(MiddlewareException.class,
                () -> ProtoTranslation.evaluation(e, "n", 0));
        assertTrue(m.getMessage().contains("129 header lines"), m.getMessage());
        var post = new HttpRequestEvaluation(new BindingId("acme/x"), Phase.POST_CREDENTIALS, RequestContext.of("r"),
                JsonValue.EMPTY_JSON_OBJECT, new HttpRequestTarget("https", "h", 1, "GET", "/", ""), List.of(),
                Body.empty());
        assertEquals(StageFailureCodes.INPUT_NOT_REPRESENTABLE, assertThrows(MiddlewareException.class,
                () -> ProtoTranslation.evaluation(post, "n", 0)).code());
        var deep = Json.createObjectBuilder();
        JsonValue nested = JsonValue.EMPTY_JSON_ARRAY;
        for (int i = 0; i < 70; i++) {
            nested = Json.createArrayBuilder().add(nested).build();
        }
        JsonObject tooDeep = deep.add("d", nested).build();
        assertEquals(StageFailureCodes.INPUT_NOT_REPRESENTABLE, assertThrows(MiddlewareException.class,
                () -> ProtoTranslation.config(tooDeep)).code());
    }
}
