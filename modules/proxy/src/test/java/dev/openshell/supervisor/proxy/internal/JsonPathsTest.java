package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * The channels of JSON string values ({@link JsonPaths}): one spelling per path, so that no other text comes between
 * the parts of a value split across events, and linear in the text however deep it nests.
 */
class JsonPathsTest {
    private static final String PLACEHOLDER = "openshell:resolve:env:TOKEN";
    private static final String SECRET = "k9Q7zR2mW4xT8vN1";

    /** {@return the JSON text of an object holding {@code value} at the path of {@code keys}} */
    private static String nested(List<String> keys, String value) {
        StringBuilder s = new StringBuilder();
        for (String k : keys) {
            s.append("{").append(quote(k)).append(":");
        }
        s.append(quote(value));
        return s + "}".repeat(keys.size());
    }

    private static String quote(String s) {
        StringBuilder q = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                q.append('\\').append(c);
            } else if (c < 0x20) {
                q.append(String.format("\\u%04x", (int) c));
            } else {
                q.append(c);
            }
        }
        return q.append('"').toString();
    }

    private static String channel(String json) {
        List<EventText.Piece> p = EventText.message(json.getBytes(StandardCharsets.UTF_8), 0);
        assertEquals(1, p.size(), p.toString());
        assertTrue(p.get(0).json);
        return p.get(0).channel;
    }

    @Test
    void aDottedKeyIsNotThePathItSpells() {
        assertNotEquals(channel("{\"a.b\":\"x\"}"), channel("{\"a\":{\"b\":\"x\"}}"));
        assertNotEquals(channel("{\"a\\\\\":{\"b\":\"x\"}}"), channel("{\"a\\\\.b\":\"x\"}"));
        assertEquals(channel("{\"a\":{\"b\":\"x\"}}"), channel("{\"A\":{\"B\":\"y\"}}"), "keys compare folded");
    }

    @Test
    void aKeyHoldingTheRenamingMarkIsNotARenamedMember() {
        // {"a":…,"a":…}: the earlier "a" is renamed with U+0000 and its number; a key spelling that name is another
        String renamedEarlier = EventText.message(
                "{\"a\":\"1\",\"a\":\"2\"}".getBytes(StandardCharsets.UTF_8), 0).get(0).channel;
        assertNotEquals(renamedEarlier, channel("{\"a\\u00000\":\"1\"}"));
    }

    /**
     * The attack the escaping closes: a secret split over three events in {@code choices[0].delta.content}, and in
     * the middle event a member {@code "choices.0.delta.content"} whose text would have come between the parts.
     */
    @Test
    void aDottedKeyDoesNotComeBetweenTheParts() throws IOException {
        String in = "data: {\"choices\":[{\"delta\":{\"content\":\"k9Q7zR\"}}]}\n\n"
                + "data: {\"choices\":[{\"delta\":{\"content\":\"2mW4\"}}],\"choices.0.delta.content\":\"--\"}\n\n"
                + "data: {\"choices\":[{\"delta\":{\"content\":\"xT8vN1\"}}]}\n\n";
        String out = EventSplitsTest.stream(new SecretScrubber(Map.of(SECRET, PLACEHOLDER)), in, List.of());
        assertFalse(out.contains("k9Q7zR") && out.contains("xT8vN1"), out);
        assertTrue(out.contains(PLACEHOLDER), out);
    }

    /**
     * A 64 KiB message of arrays nested 16,000 deep with 8,000 strings at the bottom: every string's path is 16,000
     * steps. Spelled out, the channels would take about 10^9 characters; named by digest, each is a few dozen.
     */
    @Test
    void aDeeplyNestedMessageIsReadInProportionToItsLength() {
        int depth = 16_000;
        String json = "[".repeat(depth) + "\"a\",".repeat(8_000) + "\"b\"" + "]".repeat(depth);
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        for (List<EventText.Piece> pieces : List.of(EventText.message(bytes, 0),
                LenientJson.pieces(bytes, 0, bytes.length, 0))) {
            assertEquals(8_001, pieces.stream().filter(p -> p.json).count());
            long chars = pieces.stream().mapToLong(p -> p.channel.length()).sum();
            assertTrue(chars < 100L * pieces.size(), "channel characters: " + chars);
            assertEquals(8_001, pieces.stream().filter(p -> p.json).map(p -> p.channel).distinct().count(),
                    "one channel per element");
        }
    }

    @Test
    void aDeepPathHasOneChannelInEveryMessageAndInBothReadings() {
        List<String> deep = java.util.stream.IntStream.range(0, 100).mapToObj(i -> "k" + i).toList();
        String a = channel(nested(deep, "x"));
        assertEquals(a, channel(nested(deep, "y")));
        byte[] lenient = (nested(deep, "y") + " trailing").getBytes(StandardCharsets.UTF_8);
        List<EventText.Piece> p = LenientJson.pieces(lenient, 0, lenient.length, 0);
        assertEquals(a, p.stream().filter(x -> x.json).findFirst().orElseThrow().channel);
        List<String> other = new java.util.ArrayList<>(deep);
        other.set(50, "k50.");
        assertNotEquals(a, channel(nested(other, "x")));
    }

    @Provide
    Arbitrary<List<String>> paths() {
        return Arbitraries.strings().withChars('a', 'b', '.', '\\', '\u0000', '0')
                .ofMinLength(0).ofMaxLength(4).list().ofMinSize(1).ofMaxSize(40);
    }

    /** Two key paths have one channel exactly when they are equal (keys compared folded; these fold to themselves). */
    @Property(tries = 400)
    void channelsAreEqualExactlyWhenPathsAre(@ForAll("paths") List<String> p, @ForAll("paths") List<String> q) {
        assertEquals(p.equals(q), channel(nested(p, "v")).equals(channel(nested(q, "v"))), p + " / " + q);
    }
}
