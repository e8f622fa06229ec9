package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.AlphaChars;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

/**
 * A value split across server-sent events whose JSON repeats a key within one object (attacker pass 2, finding N1):
 * JavaScript's {@code JSON.parse}, Python's {@code json} and most SDKs keep the last occurrence, so the joined text
 * must be the last occurrence's, at every nesting level ({@link EventText}); the earlier occurrences neither join it
 * nor come between its parts. The client here is a strict JSON parser ({@link Json}) keeping the last (or the first)
 * duplicate, reading {@code choices[0].delta.content} of each event.
 */
class EventDuplicateKeysTest {
    private static final String PLACEHOLDER = "openshell:resolve:env:TOKEN";
    private static final String SECRET = "k-abcdefgh";
    private static final List<String> PARTS = List.of("k-a", "bcd", "efgh");

    /** A strict JSON reader (RFC 8259) to maps, lists, strings and the other values' text. */
    static final class Json {
        private final String s;
        private final boolean last;
        private int i;

        private Json(String s, boolean last) {
            this.s = s;
            this.last = last;
        }

        /** {@return the value of {@code s}, a repeated key's value being its last occurrence's (or first's)} */
        static Object parse(String s, boolean last) {
            Json j = new Json(s, last);
            Object v = j.value();
            j.ws();
            if (j.i != s.length()) {
                throw new IllegalArgumentException("trailing text: " + s);
            }
            return v;
        }

        private void ws() {
            while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
        }

        private void expect(char c) {
            ws();
            if (i >= s.length() || s.charAt(i) != c) {
                throw new IllegalArgumentException("expected " + c + " at " + i + ": " + s);
            }
            i++;
        }

        private boolean next(char c) {
            ws();
            if (i < s.length() && s.charAt(i) == c) {
                i++;
                return true;
            }
            return false;
        }

        private Object value() {
            ws();
            char c = s.charAt(i);
            if (c == '{') {
                i++;
                Map<String, Object> m = new LinkedHashMap<>();
                if (next('}')) {
                    return m;
                }
                do {
                    ws();
                    String k = string();
                    expect(':');
                    Object v = value();
                    if (last || !m.containsKey(k)) {
                        m.put(k, v);
                    }
                } while (next(','));
                expect('}');
                return m;
            }
            if (c == '[') {
                i++;
                List<Object> l = new ArrayList<>();
                if (next(']')) {
                    return l;
                }
                do {
                    l.add(value());
                } while (next(','));
                expect(']');
                return l;
            }
            if (c == '"') {
                return string();
            }
            int from = i;
            while (i < s.length() && "+-.0123456789eEtruefalsn".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
            if (from == i) {
                throw new IllegalArgumentException("no value at " + i + ": " + s);
            }
            return new StringBuilder(s.substring(from, i)); // not a String: a scalar is no text
        }

        private String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (s.charAt(i) != '"') {
                char c = s.charAt(i++);
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char x = s.charAt(i++);
                switch (x) {
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'n' -> out.append('\n');
                    case 'r' -> out.append('\r');
                    case 't' -> out.append('\t');
                    case 'u' -> {
                        out.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                    }
                    default -> out.append(x);
                }
            }
            i++;
            return out.toString();
        }
    }

    /** {@return {@code path} (keys and indices) in a parsed value; "" when absent or not a string} */
    static String at(Object v, Object... path) {
        for (Object step : path) {
            if (step instanceof String k && v instanceof Map<?, ?> m) {
                v = m.get(k);
            } else if (step instanceof Integer n && v instanceof List<?> l && n < l.size()) {
                v = l.get(n);
            } else {
                return "";
            }
        }
        return v instanceof String s ? s : "";
    }

    /** {@return the {@code choices[0].delta.content} texts of the stream's events, joined; every event is JSON} */
    static String clientText(String stream, boolean last) {
        StringBuilder t = new StringBuilder();
        for (String data : EventStreamReadingTest.events(stream)) {
            t.append(at(Json.parse(data, last), "choices", 0, "delta", "content"));
        }
        return t.toString();
    }

    private static String stream(SecretScrubber s, String all, List<Integer> cuts) throws IOException {
        return EventSplitsTest.stream(s, all, cuts);
    }

    /** {@return the stream of {@code PARTS} in the event template ({@code %s} the part), and the scrubbed one} */
    private static String[] run(String template) throws IOException {
        StringBuilder sse = new StringBuilder();
        for (String p : PARTS) {
            sse.append("data: ").append(template.replace("%s", p)).append("\n\n");
        }
        assertEquals(SECRET, clientText(sse.toString(), true), "the client reads the value unscrubbed");
        String out = stream(new SecretScrubber(Map.of(SECRET, PLACEHOLDER)), sse.toString(), List.of());
        return new String[] {sse.toString(), out};
    }

    @Test
    void aRepeatedStringKeyIsReadAsItsLastOccurrence() throws IOException {
        String[] r = run("{\"choices\":[{\"delta\":{\"content\":\"AAA\",\"content\":\"%s\"}}]}");
        assertEquals(PLACEHOLDER, clientText(r[1], true), r[1]);
        assertEquals("AAAAAAAAA", clientText(r[1], false), "the earlier occurrences arrive unchanged");
    }

    @Test
    void aRepeatedObjectKeyIsReadAsItsLastOccurrence() throws IOException {
        String[] r = run("{\"choices\":[{\"delta\":{\"content\":\"AAA\"}}],"
                + "\"choices\":[{\"delta\":{\"content\":\"%s\"}}]}");
        assertEquals(PLACEHOLDER, clientText(r[1], true), r[1]);
        assertEquals("AAAAAAAAA", clientText(r[1], false));
    }

    @Test
    void repeatedKeysAtSeveralLevelsAndInEscapedSpellingsAreReadAsTheParserReadsThem() throws IOException {
        String[] r = run("{\"choices\":[{\"delta\":{\"content\":\"x\",\"content\":{\"content\":\"y\"}}}],\"id\":\"1\","
                + "\"choices\":[{\"delta\":{\"content\":\"A\"},"
                + "\"delta\":{\"content\":\"B\",\"cont\\u0065nt\":\"%s\"}}]}");
        assertEquals(PLACEHOLDER, clientText(r[1], true), r[1]);
    }

    @Test
    void aValueInTheFirstOccurrencesIsReplacedForAClientKeepingTheFirst() throws IOException {
        String template = "{\"choices\":[{\"delta\":{\"content\":\"%s\",\"content\":\"z\"}}]}";
        StringBuilder sse = new StringBuilder();
        for (String p : PARTS) {
            sse.append("data: ").append(template.replace("%s", p)).append("\n\n");
        }
        assertEquals(SECRET, clientText(sse.toString(), false));
        String out = stream(new SecretScrubber(Map.of(SECRET, PLACEHOLDER)), sse.toString(), List.of());
        assertEquals(PLACEHOLDER, clientText(out, false), out);
        assertEquals("zzz", clientText(out, true));
    }

    /** {@return a JSON string of {@code s}} */
    private static String q(String s) {
        return "\"" + s + "\"";
    }

    /** {@return an earlier occurrence's value of kind {@code kind}: a string, a number, an object or an array} */
    private static String decoy(int kind, String text) {
        return switch (kind) {
            case 0 -> q(text);
            case 1 -> "17";
            case 2 -> "{\"content\":" + q(text) + "}";
            default -> "[" + q(text) + "]";
        };
    }

    /**
     * {@return one event whose {@code choices[0].delta.content} is {@code part}, an earlier occurrence of
     * {@code choices} (bit 0 of {@code mask}), {@code delta} (bit 1) and {@code content} (bit 2) before the real key}
     */
    private static String event(String part, int mask, int kind, String text) {
        String delta = "{" + ((mask & 4) != 0 ? "\"content\":" + decoy(kind, text) + "," : "")
                + "\"content\":" + q(part) + "}";
        String choice = "{" + ((mask & 2) != 0 ? "\"delta\":" + decoy(kind, text) + ",\"role\":\"r\"," : "")
                + "\"delta\":" + delta + "}";
        String top = "{" + ((mask & 1) != 0 ? "\"choices\":[{\"delta\":{\"content\":" + q(text) + "}}]," : "")
                + "\"choices\":[" + choice + "]}";
        return "data: " + top + "\n\n";
    }

    /**
     * A value split into 2 up to 10 parts, one per event, with earlier occurrences of the keys on its path inserted at
     * random levels (strings, numbers, objects, arrays): a client keeping the last duplicate reads the placeholder,
     * never the value, one keeping the first never reads the value, and every event is still JSON.
     */
    @Property(tries = 300)
    void aValueSplitAcrossEventsWithRepeatedKeysIsReplaced(
            @ForAll @IntRange(min = 2, max = 10) int parts,
            @ForAll @Size(min = 1, max = 12) List<@IntRange(min = 0, max = 7) Integer> masks,
            @ForAll @IntRange(min = 0, max = 3) int kind,
            @ForAll @AlphaChars @StringLength(max = 4) String text,
            @ForAll @Size(max = 8) List<@IntRange(min = 1, max = 40) Integer> cuts) throws IOException {
        StringBuilder sse = new StringBuilder(event("intro ", masks.get(0), kind, text));
        int from = 0;
        for (int i = 0; i < parts; i++) {
            int to = i == parts - 1 ? SECRET.length() : SECRET.length() * (i + 1) / parts;
            String part = (i == 0 ? "key " : "") + SECRET.substring(from, to) + (i == parts - 1 ? " tail" : "");
            sse.append(event(part, masks.get((i + 1) % masks.size()), kind, text));
            from = to;
        }
        sse.append(event(" outro", 0, kind, text));
        assertEquals("intro key " + SECRET + " tail outro", clientText(sse.toString(), true), "unscrubbed");
        SecretScrubber s = new SecretScrubber(Map.of(SECRET, PLACEHOLDER));
        String out = stream(s, sse.toString(), cuts);
        assertEquals("intro key " + PLACEHOLDER + " tail outro", clientText(out, true), out);
        assertFalse(clientText(out, false).contains(SECRET), out);
        assertEquals(1, s.matches());
    }
}
