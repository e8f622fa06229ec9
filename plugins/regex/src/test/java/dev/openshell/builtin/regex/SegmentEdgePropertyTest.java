package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import jakarta.json.JsonObject;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * The stage reads every byte of a body the host buffered in pieces: a key that straddles a 64 KiB segment edge or the
 * 1 MiB edge (where a body read from the network stops being one array), in a body read with a length
 * ({@link Body#read}) or collected from chunks of any size ({@link Body#sink()}), plain text or JSON, is found and
 * redacted, and every other byte is forwarded as it was.
 */
class SegmentEdgePropertyTest {
    private static final String KEY = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z_9-Q";
    private static final String PLACEHOLDER = "[REDACTED:openai_api_key]";
    private static final int MIB = 1024 * 1024;

    /**
     * @param size the body size, from 70,000 bytes under 1 MiB to 140,000 over it
     * @param edge which edge the key straddles: a 64 KiB multiple (0 to 17) or, past the last one, the 1 MiB edge
     * @param into how many of the key's bytes lie before the edge (0: it starts on the edge)
     */
    @Property(tries = 60)
    void aKeyAcrossAnyEdgeIsRedacted(@ForAll @IntRange(min = MIB - 70_000, max = MIB + 140_000) int size,
                                     @ForAll @IntRange(min = 1, max = 18) int edge,
                                     @ForAll @IntRange(min = 0, max = 43) int into,
                                     @ForAll boolean json, @ForAll boolean chunked,
                                     @ForAll long seed) throws IOException {
        int cut = edge > size / Body.SEGMENT_BYTES ? MIB : edge * Body.SEGMENT_BYTES;
        int at = Math.max(8, Math.min(cut - into, size - KEY.length() - 8));
        byte[] original = body(size, at, json);
        Body body = chunked ? chunks(original, new Random(seed)) : Body.read(new ByteArrayInputStream(original),
                original.length);
        HttpRequestResult r = new RegexProvider().evaluate(new HttpRequestEvaluation(new BindingId(
                RegexProvider.BINDING_ID), Phase.PRE_CREDENTIALS, RequestContext.of("r"), JsonObject.EMPTY_JSON_OBJECT,
                new HttpRequestTarget("https", "api.example.com", 443, "POST", "/v1", ""),
                List.of(new HttpHeader("content-type", json ? "application/json" : "text/plain")), body));
        assertEquals(Decision.ALLOW, r.decision());
        String expected = new String(original, StandardCharsets.US_ASCII).replace(KEY, PLACEHOLDER);
        assertArrayEquals(expected.getBytes(StandardCharsets.US_ASCII), r.body().orElseThrow().toByteArray(),
                "size " + size + ", key at " + at);
    }

    /** {@return ASCII text of {@code size} bytes with the key at {@code at}, spaces around it; JSON if asked} */
    private static byte[] body(int size, int at, boolean json) {
        byte[] b = new byte[size];
        byte[] filler = "lorem ipsum dolor sit amet, consectetur adipiscing elit; ".getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < size; i++) {
            b[i] = filler[i % filler.length];
        }
        b[at - 1] = ' ';
        System.arraycopy(KEY.getBytes(StandardCharsets.US_ASCII), 0, b, at, KEY.length());
        b[at + KEY.length()] = ' ';
        if (json) {
            byte[] open = "{\"c\":\"".getBytes(StandardCharsets.US_ASCII);
            System.arraycopy(open, 0, b, 0, open.length);
            b[size - 2] = '"';
            b[size - 1] = '}';
        }
        return b;
    }

    /** {@return the bytes written to a sink in chunks of 1 byte to 100 KiB, as a chunked body is collected} */
    private static Body chunks(byte[] bytes, Random r) {
        Body.Sink sink = Body.sink();
        int at = 0;
        while (at < bytes.length) {
            int n = Math.min(bytes.length - at, 1 + r.nextInt(r.nextBoolean() ? 64 : 100 * 1024));
            sink.write(bytes, at, n);
            at += n;
        }
        return sink.toBody();
    }
}
