package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.supervisor.proxy.ExchangeRecord;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
}
