package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * The event stream read as WHATWG HTML ("Server-sent events", parsing an event stream) reads it ({@link EventText},
 * {@link EventSplits}): a byte order mark at the start of the stream, the {@code data} lines of one event joined with
 * LF before a client parses them as JSON, a JSON string as an event's whole data, a field line without a colon, and a
 * body of another media type whose first bytes are an event stream's. The client read here is a WHATWG parser
 * ({@link #events}) followed by what a token-stream client does with each event's data.
 */
class EventStreamReadingTest {
    private static final String PLACEHOLDER = "openshell:resolve:env:TOKEN";
    private static final String SECRET = "k-abcdefgh";
    private static final String BOM = "\uFEFF";

    /** {@return the data of each event a WHATWG parser dispatches (one leading U+FEFF dropped)} */
    static List<String> events(String stream) {
        List<String> out = new ArrayList<>();
        String s = stream.startsWith(BOM) ? stream.substring(1) : stream;
        StringBuilder data = new StringBuilder();
        int i = 0;
        while (i < s.length()) {
            int end = i;
            while (end < s.length() && s.charAt(end) != '\n' && s.charAt(end) != '\r') {
                end++;
            }
            if (end == s.length()) {
                break; // an unfinished line: WHATWG discards it at the end of the stream
            }
            String line = s.substring(i, end);
            i = end + (s.charAt(end) == '\r' && end + 1 < s.length() && s.charAt(end + 1) == '\n' ? 2 : 1);
            if (line.isEmpty()) {
                if (!data.isEmpty()) {
                    out.add(data.substring(0, data.length() - 1));
                }
                data.setLength(0);
                continue;
            }
            int colon = line.indexOf(':');
            String name = colon < 0 ? line : line.substring(0, colon);
            String value = colon < 0 ? "" : line.substring(colon + 1);
            if (name.equals("data")) {
                data.append(value.startsWith(" ") ? value.substring(1) : value).append('\n');
            }
        }
        return out;
    }

    /**
     * {@return the text a token-stream client joins}: for each event, the JSON string values (keys excluded) when its
     * data is JSON of the shapes used here, else the data itself
     */
    static String clientText(String stream) {
        StringBuilder t = new StringBuilder();
        for (String data : events(stream)) {
            String d = data.strip();
            if (!d.startsWith("{") && !d.startsWith("\"")) {
                t.append(data);
                continue;
            }
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\"(\\s*:)?")
                    .matcher(d);
            while (m.find()) {
                if (m.group(2) == null) {
                    t.append(m.group(1).replace("\\\"", "\"").replace("\\\\", "\\"));
                }
            }
        }
        return t.toString();
    }

    private static String stream(SecretScrubber s, String all, List<Integer> cuts, boolean sniffing)
            throws IOException {
        return EventSplitsTest.stream(s, all, cuts, sniffing);
    }

    private static String stream(String all) throws IOException {
        return stream(new SecretScrubber(Map.of(SECRET, PLACEHOLDER)), all, List.of(), false);
    }

    @Test
    void aByteOrderMarkAtTheStartOfTheStreamIsNotPartOfTheFirstFieldName() throws IOException {
        String in = BOM + "data: k-abcd\n\ndata: efgh tail\n\n";
        assertEquals("k-abcdefgh tail", clientText(in), "the client reads the value without the scrub");
        String out = stream(in);
        assertEquals(BOM + "data: \n\ndata: " + PLACEHOLDER + " tail\n\n", out);
        byte[] whole = EventSplits.whole(new SecretScrubber(Map.of(SECRET, PLACEHOLDER)),
                in.getBytes(StandardCharsets.UTF_8));
        assertEquals(out, new String(whole, StandardCharsets.UTF_8), "a whole body alike");
    }

    @Test
    void aByteOrderMarkLaterInTheStreamIsPartOfTheFieldName() throws IOException {
        String in = "data: x\n\n" + BOM + "data: k-abcd\n\ndata: efgh\n\n";
        assertEquals("xefgh", clientText(in), "the client ignores a field named U+FEFF data");
        assertEquals(in, stream(in), "nothing a client reads as the value: unchanged");
    }

    @Test
    void aJsonValueSpanningTwoDataLinesIsJoinedAsTheClientParsesIt() throws IOException {
        String in = "data: {\"choices\":[{\"delta\":{\"content\":\ndata: \"k-abcd\"}}]}\n\n"
                + "data: {\"choices\":[{\"delta\":\ndata: {\"content\":\"efgh tail\"}}]}\n\n";
        assertEquals("k-abcdefgh tail", clientText(in));
        String out = stream(in);
        assertEquals("data: {\"choices\":[{\"delta\":{\"content\":\ndata: \"\"}}]}\n\n"
                + "data: {\"choices\":[{\"delta\":\ndata: {\"content\":\"" + PLACEHOLDER + " tail\"}}]}\n\n", out);
    }

    @Test
    void aDataLineWithoutAColonIsAnEmptyDataLine() throws IOException {
        String in = "data: {\"content\":\ndata\ndata: \"k-abcd\"}\n\ndata:{\"content\":\"efgh\"}\n\n";
        assertEquals("k-abcdefgh", clientText(in), "the empty line is JSON white space to the client");
        assertEquals("data: {\"content\":\ndata\ndata: \"\"}\n\ndata:{\"content\":\"" + PLACEHOLDER + "\"}\n\n",
                stream(in));
    }

    @Test
    void aJsonStringAsAnEventsWholeDataIsReadAsItsValue() throws IOException {
        String in = "data: \"k-a\"\n\ndata: \"bcd\"\n\ndata: \"efgh\"\n\n";
        assertEquals("k-abcdefgh", clientText(in));
        assertEquals("data: \"\"\n\ndata: \"\"\n\ndata: \"" + PLACEHOLDER + "\"\n\n", stream(in));
    }

    @Test
    void dataThatIsNotStrictJsonIsReadAsRawText() throws IOException {
        // a lenient reading took "{}k-abcd" for JSON without strings; a client's JSON parser refuses it
        String in = "data: {}k-abcd\n\ndata: efgh\n\n";
        assertEquals("{}k-abcdefgh", String.join("", events(in)), "the data a client not parsing it joins");
        assertEquals("data: {}\n\ndata: " + PLACEHOLDER + "\n\n", stream(in));
    }

    @Test
    void onlyOneSpaceAfterTheColonIsRemoved() throws IOException {
        String in = "data:  k-abcd\n\ndata: efgh\n\n";
        assertEquals(" k-abcdefgh", clientText(in));
        assertEquals("data:  \n\ndata: " + PLACEHOLDER + "\n\n", stream(in));
        String other = "data:k-abcd\n\ndata:efgh\n\n";
        assertEquals("data:\n\ndata:" + PLACEHOLDER + "\n\n", stream(other));
    }

    @Test
    void aCarriageReturnEndingAChunkBeforeItsLineFeedEndsTheLineOnce() throws IOException {
        SecretScrubber s = new SecretScrubber(Map.of(SECRET, PLACEHOLDER));
        String in = BOM + "data: {\"content\":\r\ndata: \"k-abcd\"}\r\n\r\ndata: {\"content\":\"efgh\"}\r\n\r\n";
        // cut after every CR
        List<Integer> cuts = new ArrayList<>();
        int last = 0;
        byte[] b = in.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < b.length; i++) {
            if (b[i] == '\r') {
                cuts.add(i + 1 - last);
                last = i + 1;
            }
        }
        assertEquals("k-abcdefgh", clientText(in));
        assertEquals(BOM + "data: {\"content\":\r\ndata: \"\"}\r\n\r\ndata: {\"content\":\"" + PLACEHOLDER
                + "\"}\r\n\r\n",
                stream(s, in, cuts, false));
    }

    @Test
    void anUnfinishedEventAtTheEndIsJoinedAsIfItHadEnded() throws IOException {
        // WHATWG clients drop it; a reader that dispatches at the end of the stream reads "k-abcdefgh"
        assertEquals("data: \n\ndata: " + PLACEHOLDER, stream("data: k-abcd\n\ndata: efgh"));
        assertEquals("data: \n\ndata: " + PLACEHOLDER + "\r", stream("data: k-abcd\n\ndata: efgh\r"));
    }

    @Test
    void theFirstBytesDecideWhetherABodyOfAnotherTypeIsAnEventStream() {
        for (String events : List.of("data: x", "data:x", "data\n", "data\r", ":", ": ping", "event: e", "id:1",
                "retry: 5", BOM + "data: x", BOM + ":")) {
            byte[] b = events.getBytes(StandardCharsets.UTF_8);
            assertEquals(EventText.Start.EVENTS, EventText.start(b, b.length), events);
        }
        for (String other : List.of("{\"data\":1}", "date: x", "data x", "datas: x", "ID: 1", "\ndata: x", "x",
                BOM + "{}", "\u00ef")) {
            byte[] b = other.getBytes(StandardCharsets.UTF_8);
            assertEquals(EventText.Start.OTHER, EventText.start(b, b.length), other);
        }
        for (String more : List.of("", "d", "dat", "data", "retr", "retry", "i", "id", "\uFEFF", BOM + "ev")) {
            byte[] b = more.getBytes(StandardCharsets.UTF_8);
            int n = more.equals("\uFEFF") ? 2 : b.length; // two bytes of the mark
            assertEquals(EventText.Start.UNDECIDED, EventText.start(b, n), more);
        }
    }

    @Test
    void aBodyOfAnotherTypeIsJoinedWhenItStartsAsEventsAndPassesOtherwise() throws IOException {
        SecretScrubber s = new SecretScrubber(Map.of(SECRET, PLACEHOLDER));
        String in = "data: k-abcd\n\ndata: efgh\n\n";
        List<Integer> ones = java.util.Collections.nCopies(in.length(), 1);
        assertEquals("data: \n\ndata: " + PLACEHOLDER + "\n\n", stream(s, in, ones, true), "byte by byte");
        String json = "{\"a\":\"k-abcd\"}\n\n{\"a\":\"efgh\"}\n\n";
        assertEquals(json, stream(s, json, ones, true), "not an event stream: unchanged");
        assertEquals("dat", stream(s, "dat", List.of(1, 1), true), "undecided at the end: its bytes go");
        assertEquals("", stream(s, "", List.of(), true));
    }

    @Provide
    Arbitrary<String> lineEnds() {
        return Arbitraries.of("\n", "\r\n", "\r");
    }

    /** {@return one event carrying {@code text} in the given shape, lines ended by {@code eol}} */
    private static String event(int shape, String text, String eol) {
        String json = "\"" + text + "\"";
        return switch (shape) {
            case 0 -> "data: {\"choices\":[{\"delta\":{\"content\":" + eol + "data: " + json + "}}]}" + eol + eol;
            case 1 -> "data: {\"choices\":[{\"delta\":" + eol + "data: {\"content\":" + json + "}}]}" + eol + eol;
            case 2 -> "data: " + json + eol + eol;
            case 3 -> "data: {\"content\":" + eol + "data" + eol + "data:" + json + "}" + eol + eol;
            default -> "data: " + text + eol + eol;
        };
    }

    /**
     * A value split into 2 up to one part per character, one part per event, in each form WHATWG clients read
     * (JSON spanning two or three {@code data} lines, one with no colon; a JSON string as the whole data; raw data),
     * after an optional byte order mark, in any line end and chunking, read as {@code text/event-stream} or sniffed:
     * the client's joined text holds the placeholder, never the value, and every other line arrives.
     */
    @Property(tries = 400)
    void aValueSplitInAnyWhatwgFormIsReplaced(@ForAll @IntRange(min = 2, max = 10) int parts,
                                              @ForAll @IntRange(min = 0, max = 4) int shape,
                                              @ForAll boolean bom,
                                              @ForAll boolean sniffing,
                                              @ForAll("lineEnds") String eol,
                                              @ForAll @Size(max = 8) List<@IntRange(min = 1, max = 9) Integer> cuts)
            throws IOException {
        StringBuilder sse = new StringBuilder(bom ? BOM : "");
        sse.append(event(shape, "intro ", eol));
        int from = 0;
        for (int i = 0; i < parts; i++) {
            int to = i == parts - 1 ? SECRET.length() : SECRET.length() * (i + 1) / parts;
            sse.append(event(shape, (i == 0 ? "key " : "") + SECRET.substring(from, to)
                    + (i == parts - 1 ? " tail" : ""), eol));
            if (i % 2 == 1) {
                sse.append(": keep-alive").append(eol).append(eol);
            }
            from = to;
        }
        sse.append(event(shape, " outro", eol));
        assertEquals("intro key " + SECRET + " tail outro", clientText(sse.toString()), "the unscrubbed stream");
        SecretScrubber s = new SecretScrubber(Map.of(SECRET, PLACEHOLDER));
        String out = stream(s, sse.toString(), cuts, sniffing);
        assertFalse(clientText(out).contains(SECRET), out);
        assertEquals("intro key " + PLACEHOLDER + " tail outro", clientText(out), out);
        assertEquals(1, s.matches());
        assertEquals(sse.toString().lines().filter(l -> !l.startsWith("data")).toList(),
                out.lines().filter(l -> !l.startsWith("data")).toList(), "every other line arrives");
    }
}
