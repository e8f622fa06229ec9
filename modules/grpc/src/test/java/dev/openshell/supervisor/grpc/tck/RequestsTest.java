package dev.openshell.supervisor.grpc.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.openshell.middleware.spi.Body;
import dev.openshell.supervisor.engine.chain.ChainRequest;
import dev.openshell.supervisor.engine.chain.EnvelopeSizes;
import dev.openshell.supervisor.engine.chain.HeaderRules;
import dev.openshell.supervisor.engine.chain.StageLimits;
import dev.openshell.supervisor.engine.chain.StageLimits.Limit;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The generated requests reach each limit exactly, as the chain engine measures it; percentiles by nearest rank. */
class RequestsTest {
    @Test
    void bodiesHaveTheRequestedSize() {
        for (int n : List.of(0, 1, 40, 41, 2048, 65536, 4 << 20)) {
            assertEquals(n, Requests.json(n).size(), "size " + n);
        }
    }

    @Test
    void theFullEnvelopeIsExactlyAtEveryLimit() {
        for (StageLimits limits : List.of(StageLimits.DEFAULT, StageLimits.DEFAULT.with(Limit.HEADER_LINES, 16)
                .with(Limit.HEADER_BYTES, 5000).with(Limit.TARGET_BYTES, 300).with(Limit.CONTEXT_BYTES, 200))) {
            ChainRequest r = Requests.fullEnvelope(Body.ofUtf8("{}"), limits, "tck-1");
            var visible = HeaderRules.visible(r.headers(), r.connectionNominated());
            assertEquals(limits.get(Limit.HEADER_LINES), visible.size(), limits.toString());
            assertEquals(limits.get(Limit.HEADER_BYTES), EnvelopeSizes.headers(visible), limits.toString());
            assertEquals(limits.get(Limit.TARGET_BYTES), EnvelopeSizes.target(r.target()), limits.toString());
            assertEquals(limits.get(Limit.CONTEXT_BYTES), EnvelopeSizes.context(r.context()), limits.toString());
        }
    }

    @Test
    void aPaddedConfigIsExactlyAtTheLimitAndKeepsTheGivenKeys() {
        JsonObject given = Json.createObjectBuilder().add("mode", "redact").build();
        for (int limit : List.of(100, 1000, 65536)) {
            JsonObject padded = Requests.paddedConfig(given, limit);
            assertEquals(limit, EnvelopeSizes.config(padded));
            assertEquals("redact", padded.getString("mode"));
        }
    }

    @Test
    void percentilesAreNearestRank() {
        long[] samples = new long[100];
        for (int i = 0; i < 100; i++) {
            samples[i] = 100 - i;
        }
        assertEquals(new Latency(50, 99, 100), Latency.of(samples));
        assertEquals(new Latency(7, 7, 1), Latency.of(new long[] {7}));
        assertEquals(new Latency(0, 0, 0), Latency.of(new long[0]));
        assertEquals(new Latency(2, 3, 3), Latency.of(new long[] {3, 1, 2}));
    }
}
