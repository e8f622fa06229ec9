package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.ExistingHeaderAction;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.OriginatingProcess;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.middleware.spi.internal.Syntax;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.util.List;
import java.util.Map;

/**
 * Protobuf (proto3) encoded sizes of the {@code openshell.middleware.v1} messages, computed from the SPI's Java values
 * without protobuf, so the envelope limits mean the same bytes for in-process and gRPC stages (RFC 0009, "The
 * middleware contract": the limits are on <em>encoded</em> config, context, target, headers, mutations and findings).
 *
 * <p>Every size is the message's own encoded length, without the tag and length prefix of an enclosing field. Rules
 * used: fields set to their default value are omitted (proto3), except oneof members and map-entry keys and values,
 * which protobuf-java always writes; every field number in these messages is below 16, so each tag is one byte;
 * strings count their UTF-8 bytes, an unpaired surrogate counting as the single {@code ?} protobuf-java writes.
 * {@code RequestContext.sandbox_name} and {@code workspace} are counted like the other string fields.
 */
final class Wire {
    /** Deepest JSON nesting measured; deeper configs are reported as {@link Long#MAX_VALUE} bytes. */
    static final int MAX_JSON_DEPTH = 512;

    private Wire() {
    }

    static int varintSize(long v) {
        int n = 1;
        while ((v & ~0x7FL) != 0) {
            v >>>= 7;
            n++;
        }
        return n;
    }

    static long utf8Length(String s) {
        return Syntax.utf8Length(s);
    }

    /** An always-written length-delimited field: tag, length, payload. */
    static long delimited(long payload) {
        return 1 + varintSize(payload) + payload;
    }

    /** An optional proto3 string field: nothing when empty. */
    static long string(String s) {
        return s.isEmpty() ? 0 : delimited(utf8Length(s));
    }

    /** An optional proto3 varint field: nothing when 0. */
    static long varintField(long v) {
        return v == 0 ? 0 : 1 + varintSize(v);
    }

    static long header(HttpHeader h) {
        return string(h.name()) + string(h.value());
    }

    /**
     * {@return the summed encoded sizes of the {@code HttpHeader} messages}
     *
     * @param headers the lines
     */
    static long headers(List<HttpHeader> headers) {
        long n = 0;
        for (HttpHeader h : headers) {
            n += header(h);
        }
        return n;
    }

    static long target(HttpRequestTarget t) {
        return string(t.scheme()) + string(t.host()) + varintField(t.port()) + string(t.method()) + string(t.path())
                + string(t.query());
    }

    static long context(RequestContext c) {
        long n = string(c.requestId()) + string(c.sandboxId()) + string(c.sandboxName()) + string(c.workspace());
        if (c.originatingProcess().isPresent()) {
            n += delimited(process(c.originatingProcess().get()));
        }
        return n;
    }

    static long process(OriginatingProcess p) {
        long n = string(p.binary()) + varintField(p.pid());
        for (String a : p.ancestors()) {
            n += delimited(utf8Length(a));
        }
        return n;
    }

    static long finding(Finding f) {
        return string(f.type()) + string(f.label()) + varintField(f.count()) + string(f.confidence())
                + string(f.severity());
    }

    /** {@return the encoded size of one {@code HeaderMutation} message (its oneof member is always written)} */
    static long mutation(HeaderMutation m) {
        long inner = switch (m) {
            case HeaderMutation.WriteHeader w -> string(w.name()) + string(w.value()) + action(w.onExisting());
            case HeaderMutation.RemoveHeader r -> string(r.name());
        };
        return delimited(inner);
    }

    static long mutations(List<HeaderMutation> mutations) {
        long n = 0;
        for (HeaderMutation m : mutations) {
            n += mutation(m);
        }
        return n;
    }

    private static long action(ExistingHeaderAction a) {
        return a == ExistingHeaderAction.UNSPECIFIED ? 0 : 2;
    }

    /**
     * {@return the encoded size of {@code config} as a {@code google.protobuf.Struct}}
     *
     * @param config the JSON
     */
    static long struct(JsonObject config) {
        return struct(config, 0);
    }

    private static long struct(JsonObject o, int depth) {
        if (depth > MAX_JSON_DEPTH) {
            return Long.MAX_VALUE / 4;
        }
        long n = 0;
        for (Map.Entry<String, JsonValue> e : o.entrySet()) {
            long entry = delimited(utf8Length(e.getKey())) + delimited(value(e.getValue(), depth + 1));
            n = saturatingAdd(n, delimited(entry));
        }
        return n;
    }

    private static long value(JsonValue v, int depth) {
        if (depth > MAX_JSON_DEPTH) {
            return Long.MAX_VALUE / 4;
        }
        return switch (v.getValueType()) {
            case NULL -> 2;
            case TRUE, FALSE -> 2;
            case NUMBER -> 9;
            case STRING -> delimited(utf8Length(((JsonString) v).getString()));
            case OBJECT -> delimited(struct((JsonObject) v, depth + 1));
            case ARRAY -> {
                long list = 0;
                for (JsonValue item : (JsonArray) v) {
                    list = saturatingAdd(list, delimited(value(item, depth + 1)));
                }
                yield delimited(list);
            }
        };
    }

    private static long saturatingAdd(long a, long b) {
        long r = a + b;
        return r < 0 || r > Long.MAX_VALUE / 4 ? Long.MAX_VALUE / 4 : r;
    }
}
