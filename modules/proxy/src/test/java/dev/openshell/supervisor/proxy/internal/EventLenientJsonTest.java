package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.supervisor.proxy.EndpointFacts;
import dev.openshell.supervisor.proxy.ExchangeRecord;
import dev.openshell.supervisor.proxy.InjectedCredentials;
import dev.openshell.supervisor.proxy.ProxyRequest;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * A value split across server-sent events or WebSocket messages whose data lenient JSON readers accept and a strict
 * one rejects (attacker pass 3, finding R1: {@code NaN}, {@code Infinity}, text after the value, single quotes,
 * comments, unquoted names, trailing commas): the string values are joined per field path as for strict JSON
 * ({@link LenientJson}), so the client's field reads the placeholder. The client here reads the {@code content}
 * field's string (either quote) out of each event, as Python's {@code json}, Jackson, Go's decoder or Gson would.
 * Attacker pass 4 (R1b): an unquoted string value ({@code "content":k9Q}) and a UTF-8 byte order mark starting each
 * event's or message's data, both of which Gson's default {@code fromJson} reads.
 */
class EventLenientJsonTest {
    private static final String PLACEHOLDER = "openshell:resolve:env:TOKEN";
    private static final String SECRET = "k9Q7zR2mW4xT8vN1pL6sJ3hF5dG0bCq";
    private static final Pattern CONTENT = Pattern.compile("content['\"]?\\s*[:=]\\s*(['\"])((?:\\\\.|(?!\\1).)*)\\1");

    /** The attacker's event shapes: {@code %s} is the part; each is not strict JSON. */
    static final List<String> SHAPES = List.of(
            "{\"choices\":[{\"delta\":{\"content\":\"%s\"}}],\"x\":NaN}",
            "{\"choices\":[{\"delta\":{\"content\":\"%s\"}}],\"x\":-Infinity}",
            "{\"choices\":[{\"delta\":{\"content\":\"%s\",\"n\":NaN}}]}",
            "{\"choices\":[{\"delta\":{\"content\":\"%s\"}}]} x",
            "{\"choices\":[{\"delta\":{\"content\":\"%s\"}}]}}",
            "{\"choices\":[{\"delta\":{\"content\":\"%s\"}}]}{}",
            "{'choices':[{'delta':{'content':'%s'}}]}",
            "{\"choices\":[{\"delta\":{/*c*/\"content\":\"%s\"}}]}",
            "{choices:[{delta:{content:\"%s\"}}]}",
            "{\"choices\":[{\"delta\":{\"content\":\"%s\",}}],}",
            "// note\n{\"choices\":[{\"delta\":{\"content\":\"%s\"}}]}",
            "{\"choices\":[{\"delta\":{\"content\"=\"%s\";\"role\"=>'a'}}]}");

    /** {@return what the client's {@code content} field reads across the events of {@code stream}, joined} */
    static String clientContent(String stream) {
        StringBuilder out = new StringBuilder();
        Matcher m = CONTENT.matcher(stream);
        while (m.find()) {
            out.append(m.group(2).replace("\\'", "'").replace("\\\"", "\""));
        }
        return out.toString();
    }

    private static String sse(String shape, List<String> parts) {
        StringBuilder sse = new StringBuilder();
        for (String p : parts) {
            for (String line : shape.replace("%s", p).split("\n")) {
                sse.append("data: ").append(line).append('\n');
            }
            sse.append('\n');
        }
        return sse.toString();
    }

    @Test
    void aSecretSplitAcrossLenientJsonEventsIsReplaced() throws IOException {
        List<String> parts = List.of(SECRET.substring(0, 3), SECRET.substring(3, 9), SECRET.substring(9));
        for (String shape : SHAPES) {
            SecretScrubber s = new SecretScrubber(Map.of(SECRET, PLACEHOLDER));
            String out = EventSplitsTest.stream(s, sse(shape, parts), List.of());
            assertEquals(PLACEHOLDER, clientContent(out), shape + "\n" + out);
            assertEquals(1, s.matches(), shape);
            assertEquals(3, out.split("\n\n", -1).length - 1, "every event arrives: " + out);
        }
    }

    @Test
    void lenientAndStrictEventsJoinOnTheSamePath() throws IOException {
        String strict = "{\"choices\":[{\"delta\":{\"content\":\"%s\"}}]}";
        for (String shape : SHAPES) {
            SecretScrubber s = new SecretScrubber(Map.of(SECRET, PLACEHOLDER));
            String in = sse(strict, List.of(SECRET.substring(0, 10))) + sse(shape, List.of(SECRET.substring(10)));
            String out = EventSplitsTest.stream(s, in, List.of(4, 7));
            assertEquals(PLACEHOLDER, clientContent(out), shape + "\n" + out);
        }
    }

    @Test
    void aWholeBodyOfLenientEventsIsReplaced() {
        SecretScrubber s = new SecretScrubber(Map.of(SECRET, PLACEHOLDER));
        String in = sse(SHAPES.get(0), List.of(SECRET.substring(0, 5), SECRET.substring(5)));
        String out = new String(EventSplits.whole(s, in.getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8);
        assertEquals(PLACEHOLDER, clientContent(out), out);
    }

    @Test
    void aReplacementInASingleQuotedStringKeepsItsQuotesEscaped() throws IOException {
        SecretScrubber s = new SecretScrubber(Map.of(SECRET, PLACEHOLDER));
        String in = sse("{'content':'it\\'s %s'}", List.of(SECRET.substring(0, 4)))
                + sse("{'content':'%s don\\'t'}", List.of(SECRET.substring(4)));
        String out = EventSplitsTest.stream(s, in, List.of());
        assertEquals("it's " + PLACEHOLDER + " don't", clientContent(out), out);
        assertTrue(out.contains("'it\\'s '"), out);
    }

    @Test
    void rawTextBetweenStringTokensStillJoinsForARawReader() throws IOException {
        SecretScrubber s = new SecretScrubber(Map.of(SECRET, PLACEHOLDER));
        String in = "data: {'a':'b'} " + SECRET.substring(0, 6) + "\n\ndata: " + SECRET.substring(6) + "\n\n"
                + "data: {'a':'" + SECRET.substring(0, 6) + "\n\ndata: " + SECRET.substring(6) + "\n\n";
        String out = EventSplitsTest.stream(s, in, List.of());
        assertFalse(out.replace("\n", "").replace("data: ", "").contains(SECRET), out);
        assertEquals(2, s.matches(), out);
    }

    /** A key repeated within one object is read last-wins in lenient data too (attacker pass 2, N1). */
    @Test
    void aRepeatedKeyInLenientDataIsReadAsTheLastOccurrence() throws IOException {
        SecretScrubber s = new SecretScrubber(Map.of(SECRET, PLACEHOLDER));
        StringBuilder in = new StringBuilder();
        for (String part : List.of(SECRET.substring(0, 5), SECRET.substring(5, 12), SECRET.substring(12))) {
            in.append("data: {\"content\":\"AAA\",\"content\":\"").append(part).append("\",\"x\":NaN}\n\n");
        }
        String out = EventSplitsTest.stream(s, in.toString(), List.of());
        StringBuilder last = new StringBuilder();
        for (String event : out.split("\n\n")) {
            Matcher m = CONTENT.matcher(event);
            String v = null;
            while (m.find()) {
                v = m.group(2);
            }
            last.append(v);
        }
        assertEquals(PLACEHOLDER, last.toString(), out);
        assertTrue(out.contains("\"content\":\"AAA\""), "the earlier occurrences are not joined: " + out);
    }

    @Provide
    Arbitrary<String> spellings() {
        return Arbitraries.of(" ", "/**/", "/*x*/ ", "\t", " //c\n", " #c\n", "");
    }

    @Provide
    Arbitrary<String> trailers() {
        return Arbitraries.of(" ", "/**/", "/*x*/ ", "\t", ",", " //c\n", " #c\n", "", " x", "}", "{}", " NaN", "[");
    }

    /** Lenient spellings around the split point, any split, any chunking: the field reads the placeholder. */
    @Property(tries = 400)
    void anySplitWithLenientSpellingsAroundItIsReplaced(@ForAll @IntRange(min = 1, max = 30) int split,
                                                        @ForAll @IntRange(min = 0, max = 11) int shapeA,
                                                        @ForAll @IntRange(min = 0, max = 11) int shapeB,
                                                        @ForAll("spellings") String before,
                                                        @ForAll("trailers") String after,
                                                        @ForAll @Size(max = 8) List<@IntRange(min = 1, max = 13) Integer> cuts)
            throws IOException {
        String a = before + SHAPES.get(shapeA) + after;
        String b = before + SHAPES.get(shapeB) + after;
        String in = sse(a, List.of(SECRET.substring(0, split))) + sse(b, List.of(SECRET.substring(split)));
        SecretScrubber s = new SecretScrubber(Map.of(SECRET, PLACEHOLDER));
        String out = EventSplitsTest.stream(s, in, cuts);
        assertEquals(PLACEHOLDER, clientContent(out), in + "\n->\n" + out);
    }

    @Test
    void aSecretSplitAcrossLenientJsonWebSocketMessagesIsReplaced() throws IOException {
        String secret = ScrubbedMessagesPropertyTest.SECRET;
        String placeholder = ScrubbedMessagesPropertyTest.PLACEHOLDER;
        for (String shape : SHAPES) {
            ByteArrayOutputStream wire = new ByteArrayOutputStream();
            for (String part : List.of(secret.substring(0, 4), secret.substring(4, 12), secret.substring(12))) {
                wire.writeBytes(ScrubbedMessagesPropertyTest.frame(0x81,
                        shape.replace("%s", part).getBytes(StandardCharsets.UTF_8)));
            }
            wire.writeBytes(ScrubbedMessagesPropertyTest.frame(0x88, new byte[] {3, (byte) 0xE8}));
            List<ExchangeRecord> records = new ArrayList<>();
            ByteArrayOutputStream client = new ByteArrayOutputStream();
            WebSocketFrames.Ended ended = MessageRelay.relay(new ByteArrayInputStream(wire.toByteArray()), client,
                    false, new ScrubbedMessages(ScrubbedMessagesPropertyTest.scrub(records), null));
            assertEquals(0, ended.closeStatus(), ended.reason());
            StringBuilder text = new StringBuilder();
            for (ScrubbedMessagesPropertyTest.Read f : ScrubbedMessagesPropertyTest.frames(client.toByteArray())) {
                if ((f.b0() & 0x0F) == 1) {
                    text.append(new String(f.payload(), StandardCharsets.UTF_8)).append('\n');
                }
            }
            assertEquals(placeholder, clientContent(text.toString()), shape + "\n" + text);
        }
    }

    /** A client field read as Gson's lenient reader reads it: a quoted string, or an unquoted run of characters. */
    private static final Pattern LENIENT_CONTENT = Pattern.compile(
            "content['\"]?\\s*[:=]\\s*(?:(['\"])((?:\\\\.|(?!\\1).)*)\\1|([^\\s,;:=}\\]'\"]+))");

    /** The attacker pass 4 shapes (R1b): an unquoted string value, and a byte order mark before the data. */
    static final List<String> PASS4_SHAPES = List.of(
            "{\"choices\":[{\"delta\":{\"content\":%s}}]}",
            "{\"choices\":[{\"delta\":{\"content\":%s,\"n\":NaN}}]}",
            "{choices:[{delta:{content:%s}}]}",
            "\uFEFF{\"choices\":[{\"delta\":{\"content\":\"%s\"}}]}",
            "\uFEFF{\"choices\":[{\"delta\":{\"content\":\"%s\"}}],\"x\":NaN}",
            "\uFEFF{\"choices\":[{\"delta\":{\"content\":%s}}]}");

    private static ResponseScrub scrub() {
        ProxyRequest req = new ProxyRequest("r1", new HttpRequestTarget("http", "h.test", 80, "GET", "/", ""),
                List.<HttpHeader>of(), Set.of(), EndpointFacts.of("p"), OptionalLong.empty(), false, true);
        return new ResponseScrub(req, InjectedCredentials.of(List.of(new InjectedCredentials.Entry("TOKEN", SECRET,
                PLACEHOLDER, false))), r -> { });
    }

    /** {@return what a Gson client's {@code content} field reads across {@code text}, quoted or not, joined} */
    static String gsonContent(String text) {
        StringBuilder out = new StringBuilder();
        Matcher m = LENIENT_CONTENT.matcher(text);
        while (m.find()) {
            out.append(m.group(2) != null ? m.group(2) : m.group(3));
        }
        return out.toString();
    }

    @Test
    void unquotedValuesAndALeadingByteOrderMarkAreReadAsGsonReadsThem() throws IOException {
        List<String> parts = List.of(SECRET.substring(0, 3), SECRET.substring(3, 9), SECRET.substring(9));
        for (String shape : PASS4_SHAPES) {
            assertEquals(SECRET, gsonContent(sse(shape, parts)), "the client reads the value unscrubbed");
            SecretScrubber s = new SecretScrubber(Map.of(SECRET, PLACEHOLDER));
            String out = EventSplitsTest.stream(s, sse(shape, parts), List.of());
            assertEquals(PLACEHOLDER, gsonContent(out), shape + "\n" + out);
            assertEquals(3, out.split("\n\n", -1).length - 1, "every event arrives: " + out);
        }
    }

    @Test
    void anUnquotedValueJoinsWithQuotedOnesOnItsPath() throws IOException {
        SecretScrubber s = new SecretScrubber(Map.of(SECRET, PLACEHOLDER));
        String in = sse("{\"content\":\"%s\"}", List.of(SECRET.substring(0, 8)))
                + sse("{\"content\":%s}", List.of(SECRET.substring(8, 20)))
                + sse("{'content':'%s'}", List.of(SECRET.substring(20)));
        String out = EventSplitsTest.stream(s, in, List.of(5, 11));
        assertEquals(PLACEHOLDER, gsonContent(out), out);
        assertTrue(out.contains("{\"content\":\"\"}"), "a removed unquoted part is written as an empty string: " + out);
    }

    /** Numbers and the keywords stay literals; a run that ends the data stays raw (no reader completes that value). */
    @Test
    void literalsAndARunEndingTheDataAreNotStringValues() {
        List<EventText.Piece> p = LenientJson.pieces(
                "{\"a\":12.5e3,\"b\":TRUE,\"c\":null,\"d\":-0,\"e\":x1,\"f\":k9Q".getBytes(StandardCharsets.UTF_8),
                0, 48, 0);
        List<String> json = p.stream().filter(x -> x.json).map(x -> x.text).toList();
        assertEquals(List.of("x1"), json, p.toString());
    }

    /** Any split, any chunking, unquoted or BOM-led shapes mixed: the Gson client's field reads the placeholder. */
    @Property(tries = 300)
    void anySplitOverUnquotedOrByteOrderMarkedEventsIsReplaced(@ForAll @IntRange(min = 1, max = 30) int split,
                                                               @ForAll @IntRange(min = 0, max = 5) int shapeA,
                                                               @ForAll @IntRange(min = 0, max = 5) int shapeB,
                                                               @ForAll @Size(max = 8) List<@IntRange(min = 1,
                                                                       max = 13) Integer> cuts) throws IOException {
        String in = sse(PASS4_SHAPES.get(shapeA), List.of(SECRET.substring(0, split)))
                + sse(PASS4_SHAPES.get(shapeB), List.of(SECRET.substring(split)));
        SecretScrubber s = new SecretScrubber(Map.of(SECRET, PLACEHOLDER));
        String out = EventSplitsTest.stream(s, in, cuts);
        assertEquals(PLACEHOLDER, gsonContent(out), in + "\n->\n" + out);
    }

    @Test
    void unquotedAndByteOrderMarkedWebSocketMessagesAreReplaced() throws IOException {
        String secret = SECRET; // unquoted: letters and digits, as an unquoted run holds them
        String placeholder = PLACEHOLDER;
        for (String shape : PASS4_SHAPES) {
            ByteArrayOutputStream wire = new ByteArrayOutputStream();
            for (String part : List.of(secret.substring(0, 4), secret.substring(4, 12), secret.substring(12))) {
                wire.writeBytes(ScrubbedMessagesPropertyTest.frame(0x81,
                        shape.replace("%s", part).getBytes(StandardCharsets.UTF_8)));
            }
            wire.writeBytes(ScrubbedMessagesPropertyTest.frame(0x88, new byte[] {3, (byte) 0xE8}));
            ByteArrayOutputStream client = new ByteArrayOutputStream();
            WebSocketFrames.Ended ended = MessageRelay.relay(new ByteArrayInputStream(wire.toByteArray()), client,
                    false, new ScrubbedMessages(scrub(), null));
            assertEquals(0, ended.closeStatus(), ended.reason());
            StringBuilder text = new StringBuilder();
            for (ScrubbedMessagesPropertyTest.Read f : ScrubbedMessagesPropertyTest.frames(client.toByteArray())) {
                if ((f.b0() & 0x0F) == 1) {
                    text.append(new String(f.payload(), StandardCharsets.UTF_8)).append('\n');
                }
            }
            assertEquals(placeholder, gsonContent(text.toString()), shape + "\n" + text);
        }
    }
}
