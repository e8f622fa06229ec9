package dev.openshell.supervisor.engine.chain;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.OneofDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.DescriptorValidationException;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.ListValue;
import com.google.protobuf.NullValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.openshell.middleware.spi.ExistingHeaderAction;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.OriginatingProcess;
import dev.openshell.middleware.spi.RequestContext;
import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * The engine's encoded-size arithmetic ({@link Wire}) against protobuf-java itself: dynamic messages built from the
 * {@code openshell.middleware.v1} shapes of RFC 0009, and {@code google.protobuf.Struct} for configs.
 */
class WirePropertyTest {
    private static final FileDescriptor FILE = file();
    private static final Descriptor HEADER = FILE.findMessageTypeByName("HttpHeader");
    private static final Descriptor TARGET = FILE.findMessageTypeByName("HttpRequestTarget");
    private static final Descriptor PROCESS = FILE.findMessageTypeByName("Process");
    private static final Descriptor CONTEXT = FILE.findMessageTypeByName("RequestContext");
    private static final Descriptor FINDING = FILE.findMessageTypeByName("Finding");
    private static final Descriptor WRITE = FILE.findMessageTypeByName("WriteHeader");
    private static final Descriptor REMOVE = FILE.findMessageTypeByName("RemoveHeader");
    private static final Descriptor MUTATION = FILE.findMessageTypeByName("HeaderMutation");

    private static FieldDescriptorProto field(String name, int number, FieldDescriptorProto.Type type) {
        return FieldDescriptorProto.newBuilder().setName(name).setNumber(number).setType(type)
                .setLabel(FieldDescriptorProto.Label.LABEL_OPTIONAL).build();
    }

    private static FieldDescriptorProto str(String name, int number) {
        return field(name, number, FieldDescriptorProto.Type.TYPE_STRING);
    }

    private static FieldDescriptorProto u32(String name, int number) {
        return field(name, number, FieldDescriptorProto.Type.TYPE_UINT32);
    }

    private static FieldDescriptorProto msg(String name, int number, String type) {
        return field(name, number, FieldDescriptorProto.Type.TYPE_MESSAGE).toBuilder().setTypeName(type).build();
    }

    private static FileDescriptor file() {
        FileDescriptorProto proto = FileDescriptorProto.newBuilder()
                .setName("middleware_test.proto").setPackage("openshell.middleware.v1").setSyntax("proto3")
                .addMessageType(DescriptorProto.newBuilder().setName("HttpHeader")
                        .addField(str("name", 1)).addField(str("value", 2)))
                .addMessageType(DescriptorProto.newBuilder().setName("HttpRequestTarget")
                        .addField(str("scheme", 1)).addField(str("host", 2)).addField(u32("port", 3))
                        .addField(str("method", 4)).addField(str("path", 5)).addField(str("query", 6)))
                .addMessageType(DescriptorProto.newBuilder().setName("Process")
                        .addField(str("binary", 1)).addField(u32("pid", 2))
                        .addField(str("ancestors", 3).toBuilder()
                                .setLabel(FieldDescriptorProto.Label.LABEL_REPEATED)))
                .addMessageType(DescriptorProto.newBuilder().setName("RequestContext")
                        .addField(str("request_id", 1)).addField(str("sandbox_id", 2))
                        .addField(msg("originating_process", 3, ".openshell.middleware.v1.Process"))
                        .addField(str("sandbox_name", 4)).addField(str("workspace", 5)))
                .addMessageType(DescriptorProto.newBuilder().setName("Finding")
                        .addField(str("type", 1)).addField(str("label", 2)).addField(u32("count", 3))
                        .addField(str("confidence", 4)).addField(str("severity", 5)))
                .addEnumType(EnumDescriptorProto.newBuilder().setName("ExistingHeaderAction")
                        .addValue(EnumValueDescriptorProto.newBuilder().setName("EXISTING_HEADER_ACTION_UNSPECIFIED")
                                .setNumber(0))
                        .addValue(EnumValueDescriptorProto.newBuilder().setName("APPEND").setNumber(1))
                        .addValue(EnumValueDescriptorProto.newBuilder().setName("OVERWRITE").setNumber(2))
                        .addValue(EnumValueDescriptorProto.newBuilder().setName("SKIP").setNumber(3)))
                .addMessageType(DescriptorProto.newBuilder().setName("WriteHeader")
                        .addField(str("name", 1)).addField(str("value", 2))
                        .addField(field("on_existing", 3, FieldDescriptorProto.Type.TYPE_ENUM).toBuilder()
                                .setTypeName(".openshell.middleware.v1.ExistingHeaderAction")))
                .addMessageType(DescriptorProto.newBuilder().setName("RemoveHeader").addField(str("name", 1)))
                .addMessageType(DescriptorProto.newBuilder().setName("HeaderMutation")
                        .addOneofDecl(OneofDescriptorProto.newBuilder().setName("operation"))
                        .addField(msg("write", 1, ".openshell.middleware.v1.WriteHeader").toBuilder()
                                .setOneofIndex(0))
                        .addField(msg("remove", 2, ".openshell.middleware.v1.RemoveHeader").toBuilder()
                                .setOneofIndex(0)))
                .build();
        try {
            return FileDescriptor.buildFrom(proto, new FileDescriptor[0]);
        } catch (DescriptorValidationException e) {
            throw new AssertionError(e);
        }
    }

    /** Sets proto3 implicit-presence fields only when they are not their default, as generated code writes them. */
    private static DynamicMessage.Builder set(DynamicMessage.Builder b, String field, Object value) {
        boolean isDefault = value instanceof String s ? s.isEmpty() : value instanceof Integer i && i == 0;
        if (!isDefault) {
            b.setField(b.getDescriptorForType().findFieldByName(field), value);
        }
        return b;
    }

    @Provide
    Arbitrary<String> text() {
        return Arbitraries.oneOf(Arbitraries.strings().ofMaxLength(40), Arbitraries.strings().all().ofMaxLength(300),
                Arbitraries.strings().ascii().ofMinLength(120).ofMaxLength(20_000));
    }

    @Property(tries = 300)
    void headerSizesMatchProtobuf(@ForAll("text") String name, @ForAll("text") String value) {
        DynamicMessage.Builder b = DynamicMessage.newBuilder(HEADER);
        set(b, "name", name);
        set(b, "value", value);
        assertEquals(b.build().getSerializedSize(), Wire.header(new HttpHeader(name, value)));
    }

    @Property(tries = 300)
    void targetSizesMatchProtobuf(@ForAll("text") String host, @ForAll @IntRange(min = 1, max = 65535) int port,
                                  @ForAll("text") String path, @ForAll("text") String query) {
        DynamicMessage.Builder b = DynamicMessage.newBuilder(TARGET);
        set(b, "scheme", "https");
        set(b, "host", host);
        set(b, "port", port);
        set(b, "method", "POST");
        set(b, "path", path);
        set(b, "query", query);
        assertEquals(b.build().getSerializedSize(),
                Wire.target(new HttpRequestTarget("https", host, port, "POST", path, query)));
    }

    @Property(tries = 300)
    void contextSizesMatchProtobuf(@ForAll("text") String requestId, @ForAll("text") String sandbox,
                                   @ForAll boolean withProcess, @ForAll("text") String binary,
                                   @ForAll @LongRange(min = 0, max = 0xFFFF_FFFFL) long pid,
                                   @ForAll @Size(max = 5) List<@net.jqwik.api.From("text") String> ancestors) {
        DynamicMessage.Builder b = DynamicMessage.newBuilder(CONTEXT);
        set(b, "request_id", requestId);
        set(b, "sandbox_id", sandbox);
        set(b, "sandbox_name", "name");
        set(b, "workspace", "");
        Optional<OriginatingProcess> process = Optional.empty();
        if (withProcess) {
            DynamicMessage.Builder p = DynamicMessage.newBuilder(PROCESS);
            set(p, "binary", binary);
            set(p, "pid", (int) pid);
            for (String a : ancestors) {
                p.addRepeatedField(PROCESS.findFieldByName("ancestors"), a);
            }
            b.setField(CONTEXT.findFieldByName("originating_process"), p.build());
            process = Optional.of(new OriginatingProcess(binary, pid, ancestors));
        }
        assertEquals(b.build().getSerializedSize(),
                Wire.context(new RequestContext(requestId, sandbox, "name", "", process)));
    }

    @Property(tries = 300)
    void findingSizesMatchProtobuf(@ForAll("text") String type, @ForAll("text") String label,
                                   @ForAll @LongRange(min = 0, max = 0xFFFF_FFFFL) long count,
                                   @ForAll("text") String severity) {
        DynamicMessage.Builder b = DynamicMessage.newBuilder(FINDING);
        set(b, "type", type);
        set(b, "label", label);
        set(b, "count", (int) count);
        set(b, "severity", severity);
        assertEquals(b.build().getSerializedSize(), Wire.finding(new Finding(type, label, count, "", severity)));
    }

    @Property(tries = 300)
    void mutationSizesMatchProtobuf(@ForAll("text") String name, @ForAll("text") String value,
                                    @ForAll @IntRange(min = 0, max = 4) int kind) {
        DynamicMessage.Builder m = DynamicMessage.newBuilder(MUTATION);
        HeaderMutation mutation;
        if (kind == 4) {
            DynamicMessage.Builder r = DynamicMessage.newBuilder(REMOVE);
            set(r, "name", name);
            m.setField(MUTATION.findFieldByName("remove"), r.build());
            mutation = HeaderMutation.remove(name);
        } else {
            DynamicMessage.Builder w = DynamicMessage.newBuilder(WRITE);
            set(w, "name", name);
            set(w, "value", value);
            if (kind > 0) {
                w.setField(WRITE.findFieldByName("on_existing"),
                        FILE.findEnumTypeByName("ExistingHeaderAction").findValueByNumber(kind));
            }
            m.setField(MUTATION.findFieldByName("write"), w.build());
            mutation = HeaderMutation.write(name, value, ExistingHeaderAction.values()[kind]);
        }
        assertEquals(m.build().getSerializedSize(), Wire.mutation(mutation));
    }

    // ------------------------------------------------------------------ google.protobuf.Struct

    @Provide
    Arbitrary<JsonObject> configs() {
        Arbitrary<JsonValue> leaf = Arbitraries.oneOf(
                Arbitraries.strings().all().ofMaxLength(200).map(Json::createValue),
                Arbitraries.doubles().map(Json::createValue),
                Arbitraries.longs().map(Json::createValue),
                Arbitraries.of(JsonValue.TRUE, JsonValue.FALSE, JsonValue.NULL));
        Arbitrary<JsonValue> value = Arbitraries.recursive(() -> leaf, this::nest, 0, 4);
        return Arbitraries.maps(Arbitraries.strings().ofMaxLength(20), value).ofMaxSize(8).map(WirePropertyTest::object);
    }

    private Arbitrary<JsonValue> nest(Arbitrary<JsonValue> inner) {
        return Arbitraries.oneOf(
                Arbitraries.maps(Arbitraries.strings().ofMaxLength(10), inner).ofMaxSize(4)
                        .map(m -> (JsonValue) object(m)),
                inner.list().ofMaxSize(4).map(l -> {
                    JsonArrayBuilder a = Json.createArrayBuilder();
                    l.forEach(a::add);
                    return (JsonValue) a.build();
                }));
    }

    private static JsonObject object(Map<String, JsonValue> m) {
        JsonObjectBuilder b = Json.createObjectBuilder();
        m.forEach(b::add);
        return b.build();
    }

    private static Struct struct(JsonObject o) {
        Struct.Builder b = Struct.newBuilder();
        o.forEach((k, v) -> b.putFields(k, value(v)));
        return b.build();
    }

    private static Value value(JsonValue v) {
        return switch (v.getValueType()) {
            case NULL -> Value.newBuilder().setNullValue(NullValue.NULL_VALUE).build();
            case TRUE -> Value.newBuilder().setBoolValue(true).build();
            case FALSE -> Value.newBuilder().setBoolValue(false).build();
            case NUMBER -> Value.newBuilder().setNumberValue(((JsonNumber) v).doubleValue()).build();
            case STRING -> Value.newBuilder().setStringValue(((JsonString) v).getString()).build();
            case OBJECT -> Value.newBuilder().setStructValue(struct((JsonObject) v)).build();
            case ARRAY -> {
                ListValue.Builder l = ListValue.newBuilder();
                ((JsonArray) v).forEach(item -> l.addValues(value(item)));
                yield Value.newBuilder().setListValue(l).build();
            }
        };
    }

    @Property(tries = 300)
    void configSizesMatchProtobufStruct(@ForAll("configs") JsonObject config) {
        assertEquals(struct(config).getSerializedSize(), Wire.struct(config));
    }

    @Test
    void emptyAndDefaultValuedEntriesAreStillWritten() {
        JsonObject config = Json.createObjectBuilder().add("", "").add("n", 0).add("f", false).addNull("z")
                .add("l", Json.createArrayBuilder()).add("o", Json.createObjectBuilder()).build();
        assertEquals(struct(config).getSerializedSize(), Wire.struct(config));
    }

    @Test
    void absurdlyDeepConfigsCountAsOverCapacity() {
        JsonValue v = Json.createValue("leaf");
        for (int i = 0; i < Wire.MAX_JSON_DEPTH + 10; i++) {
            v = Json.createArrayBuilder().add(v).build();
        }
        JsonObject config = Json.createObjectBuilder().add("deep", v).build();
        assertEquals(true, Wire.struct(config) > dev.openshell.middleware.spi.EnvelopeLimits.MAX_CONFIG_BYTES);
    }
}
