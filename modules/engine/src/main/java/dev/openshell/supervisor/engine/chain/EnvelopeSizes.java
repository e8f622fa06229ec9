package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.RequestContext;
import jakarta.json.JsonObject;
import java.util.List;

/**
 * The encoded sizes the {@link ChainEngine} compares with {@link StageLimits}, for code outside the engine that must
 * measure exactly as the engine does (the conformance kit builds requests at the limits with them). Each size is the
 * message's protobuf encoding without the tag and length of an enclosing field; headers are the sum over the
 * {@code HttpHeader} messages. Static and thread-safe.
 */
public final class EnvelopeSizes {
    private EnvelopeSizes() {
    }

    /** {@return the encoded size of a config as a {@code google.protobuf.Struct}} @param config the config */
    public static long config(JsonObject config) {
        return Wire.struct(config);
    }

    /** {@return the encoded size of a request context} @param context the context */
    public static long context(RequestContext context) {
        return Wire.context(context);
    }

    /** {@return the encoded size of a request target} @param target the target */
    public static long target(HttpRequestTarget target) {
        return Wire.target(target);
    }

    /** {@return the summed encoded sizes of the header lines} @param headers the lines a stage sees */
    public static long headers(List<HttpHeader> headers) {
        return Wire.headers(headers);
    }
}
