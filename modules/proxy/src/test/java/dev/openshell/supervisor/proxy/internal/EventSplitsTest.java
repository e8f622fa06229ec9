package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * A value split across two server-sent events ({@link EventSplits}): whatever the split point, the chunking of the
 * stream and the line ends, a client joining the events' data never reads the value, and every event arrives.
 */
class EventSplitsTest {
    private static final String PLACEHOLDER = "openshell:resolve:env:TOKEN";

    @Provide
    Arbitrary<String> secrets() {
        return Arbitraries.strings().withChars("abcXYZ0189-_.").ofMinLength(8).ofMaxLength(40).map(s -> "k" + s);
    }

    @Provide
    Arbitrary<String> lineEnds() {
        return Arbitraries.of("\n", "\r\n", "\r");
    }

    /** {@return {@code all} through the body scrubber and the event splitter, written in chunks of the sizes given} */
    private static String stream(SecretScrubber s, String all, List<Integer> cuts) throws IOException {
        byte[] in = all.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        EventSplits events = new EventSplits(s, out);
        SecretScrubber.Scrubbing scrubbing = s.scrubbing(events);
        int at = 0;
        for (int c : cuts) {
            int next = Math.min(in.length, at + c);
            scrubbing.write(in, at, next - at);
            scrubbing.flush();
            at = next;
        }
        scrubbing.write(in, at, in.length - at);
        scrubbing.finish();
        events.finish();
        return out.toString(StandardCharsets.UTF_8);
    }

    /** {@return the data of every event, joined as a client assembling a token stream would} */
    private static String joinedData(String stream) {
        return stream.lines().filter(l -> l.startsWith("data:")).map(l -> l.substring(l.startsWith("data: ") ? 6 : 5))
                .collect(Collectors.joining());
    }

    @Property(tries = 300)
    void aValueSplitAtAnyPointAcrossTwoEventsIsReplaced(@ForAll("secrets") String secret,
                                                       @ForAll @IntRange(min = 1, max = 39) int split,
                                                       @ForAll("lineEnds") String eol,
                                                       @ForAll @Size(max = 8) List<@IntRange(min = 1, max = 9) Integer> cuts)
            throws IOException {
        int k = Math.min(split, secret.length() - 1);
        String sse = "data: one" + eol + eol + "event: token" + eol + "data: key " + secret.substring(0, k) + eol + eol
                + "data: " + secret.substring(k) + " tail" + eol + "id: 7" + eol + eol + "data: two" + eol + eol;
        String out = stream(new SecretScrubber(Map.of(secret, PLACEHOLDER)), sse, cuts);
        assertFalse(joinedData(out).contains(secret), out);
        assertEquals("data: one" + eol + eol + "event: token" + eol + "data: key " + eol + eol + "data: "
                + PLACEHOLDER + " tail" + eol + "id: 7" + eol + eol + "data: two" + eol + eol, out);
    }

    @Property(tries = 100)
    void aStreamWithoutAValueIsUnchanged(@ForAll @Size(max = 6) List<@IntRange(min = 0, max = 3) Integer> kinds,
                                         @ForAll("lineEnds") String eol,
                                         @ForAll @Size(max = 8) List<@IntRange(min = 1, max = 9) Integer> cuts)
            throws IOException {
        StringBuilder sse = new StringBuilder();
        for (int kind : kinds) {
            sse.append(switch (kind) {
                case 0 -> "data: k-abc" + eol + eol; // starts the value: held until the next event
                case 1 -> ": keep-alive" + eol + eol;
                case 2 -> "data: a" + eol + "data: b" + eol + eol;
                default -> "data: x-secret-ish" + eol + eol;
            });
        }
        assertEquals(sse.toString(), stream(new SecretScrubber(Map.of("k-abcdefgh", PLACEHOLDER)), sse.toString(),
                cuts));
    }

    @Test
    void anEventIsHeldOnlyWhileItsDataCouldStartAValue() throws IOException {
        SecretScrubber s = new SecretScrubber(Map.of("k-abcdefgh", PLACEHOLDER));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        EventSplits events = new EventSplits(s, out);
        events.write("data: plain\n\n".getBytes(StandardCharsets.UTF_8));
        assertEquals("data: plain\n\n", out.toString(StandardCharsets.UTF_8), "a clean event goes on at once");
        events.write("data: then k-ab\n\n".getBytes(StandardCharsets.UTF_8));
        assertEquals("data: plain\n\n", out.toString(StandardCharsets.UTF_8), "held: its end could start the value");
        events.write("data: xyz\n\n".getBytes(StandardCharsets.UTF_8));
        assertEquals("data: plain\n\ndata: then k-ab\n\ndata: xyz\n\n", out.toString(StandardCharsets.UTF_8),
                "released unchanged when the next event does not complete it");
        events.write("data: k-abc\n\n".getBytes(StandardCharsets.UTF_8));
        events.finish();
        assertTrue(out.toString(StandardCharsets.UTF_8).endsWith("data: k-abc\n\n"), "the end of the body releases it");
        assertEquals(0, s.matches());
    }

    @Test
    void anEventLongerThanTheBoundPassesThroughUnheld() throws IOException {
        SecretScrubber s = new SecretScrubber(Map.of("k-abcdefgh", PLACEHOLDER));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        EventSplits events = new EventSplits(s, out);
        String big = "data: " + "x".repeat(EventSplits.MAX_EVENT) + " k-abcd";
        events.write(big.getBytes(StandardCharsets.UTF_8));
        assertEquals(big, out.toString(StandardCharsets.UTF_8), "written as it arrives: at most 64 KiB are kept");
        events.write("\n\ndata: efgh\n\n".getBytes(StandardCharsets.UTF_8));
        events.finish();
        assertEquals(big + "\n\ndata: efgh\n\n", out.toString(StandardCharsets.UTF_8), "never joined");
    }
}
