package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.MiddlewareException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * A streamed {@code openshell/regex-response} (deferral permitted) catches a key wherever the upstream splits the
 * body: in deny mode the stage fails, in redact mode the delivered bytes equal the whole body's redaction.
 */
class ResponseSplitPropertyTest {
    private final RegexResponseStageTest t = new RegexResponseStageTest();

    private void caught(List<HttpHeader> headers, byte[] body, int a, int b) {
        int x = Math.min(a, b) % (body.length + 1);
        int y = Math.max(x, Math.max(a, b) % (body.length + 1));
        List<byte[]> units = RegexResponseStageTest.split(body, x, y);
        MiddlewareException e = assertThrows(MiddlewareException.class,
                () -> RegexResponseStageTest.run(t.streaming("deny", headers), units));
        assertEquals(RegexProvider.DENY_CODE, e.code());
        assertArrayEquals(t.wholeRedaction(headers, body),
                RegexResponseStageTest.run(t.streaming("redact", headers), units));
    }

    @Property(tries = 150)
    void aKeyInAPlainStreamIsCaughtWhereverItIsSplit(@ForAll @IntRange(max = 3 * StreamHold.TAIL) int before,
                                                     @ForAll @IntRange(max = 2 * StreamHold.TAIL) int after,
                                                     @ForAll @IntRange(max = 1 << 16) int a,
                                                     @ForAll @IntRange(max = 1 << 16) int b) {
        byte[] body = ("x".repeat(before) + " " + RegexResponseStageTest.KEY + "\n" + "é".repeat(after / 2))
                .getBytes(StandardCharsets.UTF_8);
        caught(RegexResponseStageTest.PLAIN, body, a, b);
    }

    @Property(tries = 150)
    void aKeyInAnEventStreamIsCaughtWhereverItIsSplit(@ForAll @IntRange(max = 300) int events,
                                                      @ForAll @IntRange(max = 1 << 14) int a,
                                                      @ForAll @IntRange(max = 1 << 14) int b) {
        byte[] body = ("data: tick\n\n".repeat(events) + "event: m\r\ndata: x " + RegexResponseStageTest.KEY
                + "\r\n\r\ndata: [DONE]\n\n").getBytes(StandardCharsets.UTF_8);
        caught(RegexResponseStageTest.SSE, Arrays.copyOf(body, body.length), a, b);
    }
}
