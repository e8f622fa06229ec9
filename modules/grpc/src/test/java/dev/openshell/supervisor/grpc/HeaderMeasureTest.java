package dev.openshell.supervisor.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.supervisor.engine.chain.EnvelopeSizes;
import jakarta.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The adapter measures the header list as the chain engine does: a list the engine admits at exactly 64 KiB is sent,
 * one byte more is refused by both. (It counted each line's tag and length too, so 128 lines at the engine's limit
 * failed with {@code input_not_representable}.)
 */
class HeaderMeasureTest {
    private static List<HttpHeader> headers(int lines, long total) {
        List<HttpHeader> h = new ArrayList<>();
        for (int i = 0; i < lines - 1; i++) {
            h.add(new HttpHeader("x-h-%03d".formatted(i), "v".repeat(400)));
        }
        long used = EnvelopeSizes.headers(h);
        int n = 0;
        while (used + EnvelopeSizes.headers(List.of(new HttpHeader("x-last", "v".repeat(n + 1)))) <= total) {
            n++;
        }
        h.add(new HttpHeader("x-last", "v".repeat(n)));
        return h;
    }

    private static HttpRequestEvaluation evaluation(List<HttpHeader> headers) {
        return new HttpRequestEvaluation(new BindingId("acme/x"), Phase.PRE_CREDENTIALS, RequestContext.of("r"),
                JsonObject.EMPTY_JSON_OBJECT, new HttpRequestTarget("https", "h", 443, "GET", "/", ""), headers,
                Body.empty());
    }

    @Test
    void aHeaderListAtTheEnginesLimitIsSentAndOneByteMoreIsNot() {
        List<HttpHeader> atLimit = headers(EnvelopeLimits.MAX_HEADER_LINES, EnvelopeLimits.MAX_HEADER_BYTES);
        assertEquals(EnvelopeLimits.MAX_HEADER_BYTES, EnvelopeSizes.headers(atLimit));
        assertEquals(EnvelopeLimits.MAX_HEADER_LINES,
                ProtoTranslation.evaluation(evaluation(atLimit), "reg", 0).getHeadersCount());
        List<HttpHeader> over = new ArrayList<>(atLimit);
        HttpHeader last = over.remove(over.size() - 1);
        over.add(new HttpHeader(last.name(), last.value() + "v"));
        assertEquals(EnvelopeLimits.MAX_HEADER_BYTES + 1, EnvelopeSizes.headers(over));
        MiddlewareException e = assertThrows(MiddlewareException.class,
                () -> ProtoTranslation.evaluation(evaluation(over), "reg", 0));
        assertEquals(StageFailureCodes.INPUT_NOT_REPRESENTABLE, e.code());
    }
}
