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
 * paths compare keys folded ({@link EventText#fold}), for server-sent events and WebSocket messages alike.
 */
class EventKeyCaseTest {
    private static final String PLACEHOLDER = "openshell:resolve:env:TOKEN";
    private static final String SECRET = "k9Q7zR2mW4xT8vN1";
    private static final List<String> SPELLINGS = List.of("content", "Content", "CONTENT", "conTent");

    /** {@return the Go reading of each event's {@code choices[0].delta.content}, joined: keys matched folded} */
    private static String goClientText(String stream) {
        StringBuilder t = new StringBuilder();
        for (String data : EventStreamReadingTest.events(stream)) {
            Object v = EventDuplicateKeysTest.Json.parse(data, true);
            for (String step : List.of("choices", "0", "delta", "content")) {
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
            if (EventText.fold((String) e.getKey()).equals(EventText.fold(key))) {
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

    /** Any split and any spelling per event: the Go client never reads the value. */
    @Property(tries = 200)
    void aValueSplitOverCaseVariedKeysIsReplaced(@ForAll @Size(min = 1, max = 6) List<@IntRange(min = 1,
            max = 4) Integer> cuts, @ForAll @Size(min = 1, max = 8) List<@IntRange(min = 0, max = 3) Integer> spelling)
            throws IOException {
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
        String in = sse(parts, spelling);
        String out = EventSplitsTest.stream(new SecretScrubber(Map.of(SECRET, PLACEHOLDER)), in, List.of());
        assertFalse(goClientText(out).contains(SECRET), out);
    }
}
