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
    static String stream(SecretScrubber s, String all, List<Integer> cuts) throws IOException {
        return stream(s, all, cuts, false);
    }

    /**
     * {@return {@code all} through the body scrubber and the event splitter (sniffing the body's first bytes when
     * {@code sniffing}), written in chunks of the sizes given}
     */
    static String stream(SecretScrubber s, String all, List<Integer> cuts, boolean sniffing) throws IOException {
        byte[] in = all.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        EventSplits events = new EventSplits(s, out);
        SecretScrubber.Scrubbing scrubbing = s.scrubbing(sniffing ? events.sniffing() : events);
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

    /**
     * An event is held until the window of its field's text follows it, whether or not its text could start a
     * value: a clean event and a possible start of the value go on the same schedule (attacker pass finding 12).
     */
    @Test
    void anEventIsHeldUntilTheWindowFollowsWhateverItSays() throws IOException {
        for (String first : List.of("data: plain\n\n", "data: k-ab\n\n")) {
            SecretScrubber s = new SecretScrubber(Map.of("k-abcdefgh", PLACEHOLDER));
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            EventSplits events = new EventSplits(s, out);
            int w = events.held.window();
            events.write(first.getBytes(StandardCharsets.UTF_8));
            assertEquals("", out.toString(StandardCharsets.UTF_8), "held: " + first);
            String filler = "data: " + "x".repeat(w - 1) + "\n\n";
            events.write(filler.getBytes(StandardCharsets.UTF_8));
            assertEquals("", out.toString(StandardCharsets.UTF_8), "one character short of the window: " + first);
            events.write("data: y\n\n".getBytes(StandardCharsets.UTF_8));
            assertEquals(first, out.toString(StandardCharsets.UTF_8), "the window followed: released unchanged");
            events.release();
            assertEquals(first + filler + "data: y\n\n", out.toString(StandardCharsets.UTF_8),
                    "the upstream went silent: everything held goes");
            assertEquals(0, s.matches());
        }
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
    /** {@return the text a token-stream client reassembles: raw {@code data} joined, or JSON {@code content} joined} */
    private static String clientText(String stream) {
        StringBuilder t = new StringBuilder();
        for (String l : stream.lines().filter(x -> x.startsWith("data:")).toList()) {
            String v = l.substring(l.startsWith("data: ") ? 6 : 5);
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"content\":\"([^\"]*)\"").matcher(v);
            if (v.startsWith("{")) {
                while (m.find()) {
                    t.append(m.group(1));
                }
            } else {
                t.append(v);
            }
        }
        return t.toString();
    }

    /**
     * A value split into any number of parts (2 up to one character each), one part per event (raw {@code data}, two
     * {@code data} lines of one event, or a JSON delta as model APIs stream tokens), with data-less events (a comment,
     * {@code retry:}, {@code id:}) between the parts, in any line end and chunking: the client's reassembled text
     * holds the placeholder, never the value, and every other line arrives.
     */
    @Property(tries = 400)
    void aValueSplitIntoAnyNumberOfPartsIsReplaced(@ForAll("secrets") String secret,
                                                  @ForAll @IntRange(min = 2, max = 41) int parts,
                                                  @ForAll @IntRange(min = 0, max = 2) int shape,
                                                  @ForAll @Size(max = 41) List<@IntRange(min = 0, max = 3) Integer> between,
                                                  @ForAll("lineEnds") String eol,
                                                  @ForAll @Size(max = 8) List<@IntRange(min = 1, max = 9) Integer> cuts)
            throws IOException {
        int n = Math.min(parts, secret.length());
        StringBuilder sse = new StringBuilder();
        sse.append(event(shape, "intro ", eol));
        int from = 0;
        for (int i = 0; i < n; i++) {
            int to = i == n - 1 ? secret.length() : secret.length() * (i + 1) / n;
            String part = (i == 0 ? "key " : "") + secret.substring(from, to) + (i == n - 1 ? " tail" : "");
            sse.append(event(shape, part, eol));
            int kind = i < between.size() ? between.get(i) : 0;
            sse.append(switch (kind) {
                case 1 -> ": keep-alive" + eol + eol;
                case 2 -> "retry: 1000" + eol + eol;
                case 3 -> "id: " + i + eol + eol;
                default -> "";
            });
            from = to;
        }
        sse.append(event(shape, " outro", eol));
        SecretScrubber s = new SecretScrubber(Map.of(secret, PLACEHOLDER));
        String out = stream(s, sse.toString(), cuts);
        String text = clientText(out);
        assertFalse(text.contains(secret), out);
        assertEquals("intro key " + PLACEHOLDER + " tail outro", text, out);
        assertEquals(1, s.matches());
        assertEquals(sse.toString().lines().filter(l -> !l.startsWith("data:")).toList(),
                out.lines().filter(l -> !l.startsWith("data:")).toList(), "every other line arrives");
    }

    /** {@return one event carrying {@code text}: raw, split over two data lines, or as a JSON delta} */
    private static String event(int shape, String text, String eol) {
        return switch (shape) {
            case 0 -> "data: " + text + eol + eol;
            case 1 -> "data: " + text.substring(0, text.length() / 2) + eol + "data: " + text.substring(text.length() / 2)
                    + eol + eol;
            default -> "data: {\"id\":\"c-1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + text
                    + "\"}}]}" + eol + eol;
        };
    }

    @Test
    void aStreamHeldPastTheBoundIsClosed() throws IOException {
        SecretScrubber s = new SecretScrubber(Map.of("k-abcdefgh", PLACEHOLDER));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        EventSplits events = new EventSplits(s, out);
        // two large events: less than half the bound follows the first, so it is still held when the bound is passed
        events.write(("data: " + "a".repeat(40 * 1024) + " k-ab\n\n").getBytes(StandardCharsets.UTF_8));
        org.junit.jupiter.api.Assertions.assertThrows(EventSplits.HeldTooLong.class, () -> events.write(
                (": " + "x".repeat(30 * 1024) + "\n\n").getBytes(StandardCharsets.UTF_8)),
                "64 KiB held: closed, not delivered");
        assertEquals("", out.toString(StandardCharsets.UTF_8), "nothing held was delivered");
    }

    /**
     * A field sent once (an {@code id}, a {@code role}) does not hold the stream: its event goes once
     * {@value EventSplits#AFTER_EVENTS} events follow it; the delta field is joined on its own, the other field's
     * strings do not come between its parts.
     */
    @Test
    void jsonStringsOfOtherFieldsDoNotHoldTheStreamNorComeBetween() throws IOException {
        SecretScrubber s = new SecretScrubber(Map.of("k-abcdefgh", PLACEHOLDER));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        EventSplits events = new EventSplits(s, out);
        String a = "data: {\"id\":\"k-ab\",\"delta\":\"hello\"}\n\n";
        events.write(a.getBytes(StandardCharsets.UTF_8));
        String b = "data: {\"id\":\"zz\",\"delta\":\"k-abcd\"}\n\n";
        events.write(b.getBytes(StandardCharsets.UTF_8));
        String c = "data: {\"id\":\"zz\",\"delta\":\"efgh!\"}\n\n";
        events.write(c.getBytes(StandardCharsets.UTF_8));
        for (int i = 0; i < EventSplits.AFTER_EVENTS - 3; i++) {
            events.write(": ping\n\n".getBytes(StandardCharsets.UTF_8));
        }
        assertEquals("", out.toString(StandardCharsets.UTF_8), "held: less than the window followed the fields");
        events.write(": ping\n\n".getBytes(StandardCharsets.UTF_8));
        assertEquals(a, out.toString(StandardCharsets.UTF_8), "the first goes once 256 events follow it");
        events.finish();
        assertTrue(out.toString(StandardCharsets.UTF_8).startsWith(a + "data: {\"id\":\"zz\",\"delta\":\"\"}\n\n"
                + "data: {\"id\":\"zz\",\"delta\":\"" + PLACEHOLDER + "!\"}\n\n"), out.toString(StandardCharsets.UTF_8));
    }

    /**
     * Feeds events up to the bound while the first one holds the stream; {@return the bytes fed} The work the held
     * text costs is asserted, not timed: at most a few characters per byte fed.
     */
    private static long holdToTheBound(EventSplits events, java.util.function.IntFunction<String> event, int count)
            throws IOException {
        long fed = 0;
        byte[] first = "data: k-ab\n\n".getBytes(StandardCharsets.UTF_8);
        events.write(first);
        fed += first.length;
        for (int i = 1; i < count; i++) {
            byte[] e = event.apply(i).getBytes(StandardCharsets.UTF_8);
            events.write(e);
            fed += e.length;
        }
        return fed;
    }

    @Test
    void aFieldGrowingWhileTheStreamIsHeldCostsLinearWork() throws IOException {
        SecretScrubber s = new SecretScrubber(Map.of("k-abcdefgh", PLACEHOLDER));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        EventSplits events = new EventSplits(s, out);
        // 4,096 events: the first's field stops, each later one adds a byte to one delta field
        long fed = holdToTheBound(events, i -> "data:{\"d\":\"x\"}\n\n", EventSplits.MAX_HELD_EVENTS);
        assertTrue(events.held.heldUnits() <= EventSplits.AFTER_EVENTS + 1, "held " + events.held.heldUnits());
        assertTrue(events.held.work <= 4 * fed, "work " + events.held.work + " for " + fed + " bytes");
        events.finish();
        assertEquals(fed, out.size(), "at the end of the body every held event goes, unchanged");
    }

    @Test
    void manyOpenFieldsCostLinearWork() throws IOException {
        SecretScrubber s = new SecretScrubber(Map.of("k-abcdefgh", PLACEHOLDER));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        EventSplits events = new EventSplits(s, out);
        // every event opens a field of its own that could start the value
        long fed = holdToTheBound(events, i -> "data:{\"" + i + "\":\"k\"}\n\n", 3000);
        assertTrue(events.held.heldUnits() <= EventSplits.AFTER_EVENTS + 1, "held " + events.held.heldUnits());
        assertTrue(events.held.work <= 4 * fed, "work " + events.held.work + " for " + fed + " bytes");
        events.finish();
        assertEquals(fed, out.size(), "at the end of the body every held event goes, unchanged");
    }
}
