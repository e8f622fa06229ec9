package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * A value split across events whose key changes case per event (attacker pass 3, R2): Go's {@code encoding/json}
 * (go-openai) fills one {@code Content} field from {@code content}, {@code Content} and {@code CONTENT}, so the join
 * paths compare keys folded ({@link EventText#fold}), for server-sent events and WebSocket messages alike. The fold
 * is of code points (attacker pass 4, R2b): {@code choiceſ} (U+017F) is {@code choices} and {@code toKen} (U+212A) is
 * {@code token}, raw in UTF-8 or escaped, in strict and lenient data.
 */
class EventKeyCaseTest {
    private static final String PLACEHOLDER = "openshell:resolve:env:TOKEN";
    private static final String SECRET = "k9Q7zR2mW4xT8vN1";
    private static final List<String> SPELLINGS = List.of("content", "Content", "CONTENT", "conTent");

    /** Text after an event's JSON value: Go's {@code json.Decoder} reads the value and leaves it. */
    private static final String LENIENT_TAIL = " x";

    /** {@return the Go reading of each event's {@code choices[0].delta.content}, joined: keys matched folded} */
    private static String goClientText(String stream) {
        return goClientText(stream, List.of("choices", "0", "delta", "content"));
    }

    /** {@return the Go reading of each event's string at {@code path}, joined: keys matched folded} */
    private static String goClientText(String stream, List<String> path) {
        StringBuilder t = new StringBuilder();
        for (String data : EventStreamReadingTest.events(stream)) {
            String value = data.endsWith(LENIENT_TAIL) ? data.substring(0, data.length() - LENIENT_TAIL.length())
                    : data;
            Object v = EventDuplicateKeysTest.Json.parse(value, true);
            for (String step : path) {
                v = v instanceof List<?> l ? l.get(Integer.parseInt(step)) : folded((Map<?, ?>) v, step);
            }
            t.append(v instanceof String s ? s : "");
        }
        return t.toString();
    }

    /** {@return the last member whose key equals {@code key} without regard to case, as Go reads a struct field} */
    private static Object folded(Map<?, ?> m, String key) {
        Object found = null;
        for (Map.Entry<?, ?> e : m.entrySet()) {
            if (EventText.fold((String) e.getKey()).equals(EventText.fold(key))) { // code points, as Go compares
                found = e.getValue();
            }
        }
        return found;
    }

    private static String sse(List<String> parts, List<Integer> spelling) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < parts.size(); i++) {
            String key = SPELLINGS.get(spelling.get(i % spelling.size()) % SPELLINGS.size());
            s.append("data: {\"choices\":[{\"delta\":{\"").append(key).append("\":\"").append(parts.get(i))
                    .append("\"}}]}\n\n");
        }
        return s.toString();
    }

    @Test
    void theAttackersStreamIsScrubbed() throws IOException {
        String in = sse(List.of("k9Q7", "zR2m", "W4xT", "8vN1"), List.of(0, 1, 2, 3));
        assertEquals(SECRET, goClientText(in), "the Go client reads the value unscrubbed");
        String out = EventSplitsTest.stream(new SecretScrubber(Map.of(SECRET, PLACEHOLDER)), in, List.of());
        assertEquals(PLACEHOLDER, goClientText(out), out);
    }

    @Test
    void foldingFollowsGoForTheTwoNonAsciiLettersThatFoldToAscii() {
        assertEquals(EventText.fold("s"), EventText.fold("\u017f"));
        assertEquals(EventText.fold("k"), EventText.fold("\u212a"));
        assertEquals("CONTENT", EventText.fold("conTent"));
        assertNotEquals(EventText.fold("content"), EventText.fold("contents"));
    }

    @Test
    void webSocketMessagesJoinAcrossKeyCaseToo() {
        List<EventText.Piece> a = EventText.message("{\"delta\":{\"Content\":\"k9Q\"}}".getBytes(
                StandardCharsets.UTF_8), 0);
        List<EventText.Piece> b = EventText.message("{\"DELTA\":{\"content\":\"7zR\"}}".getBytes(
                StandardCharsets.UTF_8), 1);
        assertEquals(a.get(0).channel, b.get(0).channel);
    }

    /** Data read leniently (a {@code NaN} member, a single-quoted key) names its members folded as strict data does. */
    @Test
    void dataReadLenientlyJoinsAcrossKeyCaseWithStrictData() {
        List<EventText.Piece> strict = EventText.message("{\"delta\":{\"content\":\"k9Q\"}}".getBytes(
                StandardCharsets.UTF_8), 0);
        List<EventText.Piece> lenient = EventText.message("{'Delta':{'CONTENT':'7zR'},\"n\":NaN}".getBytes(
                StandardCharsets.UTF_8), 1);
        String channel = strict.get(0).channel;
        assertEquals(1, lenient.stream().filter(p -> p.channel.equals(channel)).count(), lenient.toString());
    }

    /** {@return the secret cut into pieces of the lengths {@code cuts}, in order; the rest is the last piece} */
    private static List<String> pieces(List<Integer> cuts) {
        List<String> parts = new java.util.ArrayList<>();
        int at = 0;
        for (int c : cuts) {
            if (at < SECRET.length()) {
                parts.add(SECRET.substring(at, Math.min(SECRET.length(), at + c)));
                at += c;
            }
        }
        if (at < SECRET.length()) {
            parts.add(SECRET.substring(at));
        }
        return parts;
    }

    /** Any split and any spelling per event: the Go client never reads the value. */
    @Property(tries = 200)
    void aValueSplitOverCaseVariedKeysIsReplaced(@ForAll @Size(min = 1, max = 6) List<@IntRange(min = 1,
            max = 4) Integer> cuts, @ForAll @Size(min = 1, max = 8) List<@IntRange(min = 0, max = 3) Integer> spelling)
            throws IOException {
        List<String> parts = pieces(cuts);
        String in = sse(parts, spelling);
        String out = EventSplitsTest.stream(new SecretScrubber(Map.of(SECRET, PLACEHOLDER)), in, List.of());
        assertFalse(goClientText(out).contains(SECRET), out);
    }

    /**
     * The spellings of attacker pass 4 (R2b): a key holding U+017F (folds with {@code s}) or U+212A (folds with
     * {@code k}), raw in UTF-8 or {@code \\u}-escaped; each pair is one field to Go's {@code encoding/json}.
     */
    static final List<List<String>> FOLDED_PAIRS = List.of(
            List.of("choices", "choice\u017f"),
            List.of("choices", "choice\\u017f"),
            List.of("choices", "CHOICE\\u017F"),
            List.of("reasoning", "rea\u017foning"),
            List.of("reasoning", "rea\\u017foning"),
            List.of("token", "to\u212aen"),
            List.of("token", "to\\u212Aen"),
            List.of("TOKEN", "to\u212aen"));

    /** {@return the channel of the one string value {@code k9Q} of {@code data}, read as a WebSocket message} */
    private static String channel(String data) {
        List<EventText.Piece> p = EventText.message(data.getBytes(StandardCharsets.UTF_8), 0).stream()
                .filter(x -> x.json && x.text.equals("k9Q")).toList();
        assertEquals(1, p.size(), data + " " + p);
        return p.get(0).channel;
    }

    @Test
    void keysFoldAsCodePointsWhetherRawOrEscapedStrictOrLenient() {
        for (List<String> pair : FOLDED_PAIRS) {
            for (String shape : List.of("{\"%s\":{\"v\":\"k9Q\"}}", "{\"%s\":{\"v\":\"k9Q\"},\"n\":NaN}",
                    "{'%s':{v:'k9Q'}}", "\uFEFF{\"%s\":{\"v\":k9Q,}}")) {
                assertEquals(channel(String.format(shape, pair.get(0))), channel(String.format(shape, pair.get(1))),
                        pair + " " + shape);
            }
            assertEquals(channel(String.format("{\"%s\":{\"v\":\"k9Q\"}}", pair.get(0))),
                    channel(String.format("{\"%s\":{\"v\":\"k9Q\"},\"n\":NaN}", pair.get(1))), pair.toString());
        }
        assertNotEquals(channel("{\"choices\":\"k9Q\"}"), channel("{\"choice\u00c5\u00bf\":\"k9Q\"}"),
                "the Latin-1 reading of U+017F's bytes is another key");
    }

    /** The event stream the attacker sent: keys alternating between the two spellings of each pair. */
    @Test
    void theAttackersFoldedSpellingsAreScrubbedInEventStreams() throws IOException {
        for (List<String> pair : FOLDED_PAIRS) {
            StringBuilder in = new StringBuilder();
            List<String> parts = List.of("k9Q7", "zR2m", "W4xT", "8vN1");
            for (int k = 0; k < parts.size(); k++) {
                in.append("data: {\"").append(pair.get(k % 2)).append("\":\"").append(parts.get(k)).append("\"}\n\n");
            }
            String out = EventSplitsTest.stream(new SecretScrubber(Map.of(SECRET, PLACEHOLDER)), in.toString(),
                    List.of());
            assertEquals(PLACEHOLDER, goClientText(out, List.of(EventText.fold(pair.get(0)))), pair + "\n" + out);
        }
    }

    /** The spellings of {@code choices} the property draws from: ASCII case, U+017F raw and escaped. */
    private static final List<String> CHOICES = List.of("choices", "Choices", "choice\u017f", "CHOICE\u017f",
            "choice\\u017f", "choice\\u017F");
    /** The spellings of {@code token}: ASCII case, U+212A raw and escaped. */
    private static final List<String> TOKENS = List.of("token", "Token", "to\u212aen", "TO\u212aEN", "to\\u212aen",
            "to\\u212Aen");

    /**
     * Any split, any spelling per event of {@code choices} and of the leaf ({@code content} cased, or {@code token}
     * with U+212A), strict or lenient (text after the value, which Go's decoder leaves unread): Go never reads the value.
     */
    @Property(tries = 300)
    void aValueSplitOverFoldedSpellingsIsReplaced(@ForAll @Size(min = 1, max = 6) List<@IntRange(min = 1,
            max = 4) Integer> cuts, @ForAll @Size(min = 1, max = 8) List<@IntRange(min = 0, max = 5) Integer> top,
            @ForAll @Size(min = 1, max = 8) List<@IntRange(min = 0, max = 5) Integer> leaf,
            @ForAll boolean tokenLeaf, @ForAll @Size(min = 1, max = 4) List<Boolean> lenient) throws IOException {
        List<String> parts = pieces(cuts);
        StringBuilder in = new StringBuilder();
        for (int i = 0; i < parts.size(); i++) {
            String key = tokenLeaf ? TOKENS.get(leaf.get(i % leaf.size()))
                    : SPELLINGS.get(leaf.get(i % leaf.size()) % SPELLINGS.size());
            in.append("data: {\"").append(CHOICES.get(top.get(i % top.size()))).append("\":[{\"delta\":{\"")
                    .append(key).append("\":\"").append(parts.get(i)).append("\"}}]}")
                    .append(lenient.get(i % lenient.size()) ? LENIENT_TAIL : "").append("\n\n");
        }
        String out = EventSplitsTest.stream(new SecretScrubber(Map.of(SECRET, PLACEHOLDER)), in.toString(), List.of());
        String text = goClientText(out, List.of("choices", "0", "delta", tokenLeaf ? "token" : "content"));
        assertFalse(text.contains(SECRET), out);
    }
}
