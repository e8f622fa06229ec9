package dev.openshell.supervisor.audit;

import dev.openshell.middleware.spi.internal.StageResult;
import static org.junit.jupiter.api.Assertions.assertEquals;

import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonReader;
import jakarta.json.JsonValue;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.From;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** The sink's JSON text parses back to the value it was made from, for any strings and any nesting. */
class JsonLinePropertyTest {
    private static JsonValue parse(byte[] line) {
        String text = new String(line, StandardCharsets.UTF_8);
        assertEquals('\n', text.charAt(text.length() - 1), "one record per line");
        assertEquals(-1, text.substring(0, text.length() - 1).indexOf('\n'), "no raw newline inside a record");
        try (JsonReader r = Json.createReader(new StringReader(text))) {
            return r.readValue();
        }
    }

    @Provide
    Arbitrary<String> anyText() {
        return Arbitraries.oneOf(Arbitraries.strings().ofMaxLength(30),
                Arbitraries.strings().withChars('"', '\\', '/', '\n', '\r', '\t', '\b', '\f', '\u0000', '\u001f',
                        '\u007f', '\u2028', '\u00e9', 'a').ofMaxLength(12),
                Arbitraries.just("\ud83d\ude00 and \u00e9"));
    }

    @Property(tries = 1000)
    void anObjectOfStringsNumbersAndLiteralsRoundTrips(@ForAll List<@From("anyText") String> keys,
                                                      @ForAll List<@From("anyText") String> values,
                                                      @ForAll long number, @ForAll boolean flag) {
        JsonObjectBuilder o = Json.createObjectBuilder();
        JsonArrayBuilder a = Json.createArrayBuilder();
        for (int i = 0; i < keys.size(); i++) {
            String v = values.isEmpty() ? "" : values.get(i % values.size());
            o.add(keys.get(i), v);
            a.add(v);
        }
        o.add("\u0000n", number).add("flag", flag).add("nothing", JsonValue.NULL).add("list", a)
                .add("nested", Json.createObjectBuilder().add("deep", Json.createArrayBuilder().add(1.5).add(-0L)));
        JsonObject value = o.build();
        assertEquals(value, parse(JsonLine.encode(value)));
    }

    @Test
    void everyEventKindRoundTrips() {
        OcsfEvents events = new OcsfEvents("0.1.0", "host \"quoted\"", Clock.systemUTC());
        RequestFacts r = new RequestFacts("req-1", "POST", "https", "api.example.com", 443, Optional.of("p"));
        StageOutcome s = new StageOutcome("secrets", "openshell/regex", StageResult.FAILED_CLOSED, false,
                1_000, Optional.of("stage_timeout"), true);
        for (JsonObject e : List.of(events.httpActivity(r, s), events.stageFailure(r, s),
                events.uninspectable(r, List.of("a", "b"), true, "body_over_capacity"),
                events.bodyPolicyFailure(r, "secrets", "openshell/regex", "body_recheck_failed"),
                events.middlewareFinding(r, "secrets", "openshell/regex", "secret.openai_api_key", 2),
                events.configChange(ConfigChange.POLICY_VALIDATION, false, "policy.yaml", "line 3"))) {
            assertEquals(e, parse(JsonLine.encode(e)));
            assertEquals(Json.createReader(new StringReader(e.toString())).readObject(), parse(JsonLine.encode(e)),
                    "the same value as the general-purpose writer's text");
        }
    }
    /**
     * The streaming writer of the events ({@link JsonText}) writes the same record as the general encoder does for a
     * Parsson object with the same members in the same order, for any strings (escaping, non-ASCII, surrogates).
     */
    @Property(tries = 1000)
    void theStreamingWriterMatchesTheGeneralEncoder(@ForAll List<@From("anyText") String> values,
                                                    @ForAll long number, @ForAll boolean flag) {
        JsonText t = new JsonText();
        JsonObjectBuilder o = Json.createObjectBuilder();
        for (int i = 0; i < values.size(); i++) {
            t.add("k" + i, values.get(i));
            o.add("k" + i, values.get(i));
        }
        String inner = values.isEmpty() ? "x" : values.get(0);
        t.add("n", number).add("flag", flag).open("nested").add(inner, inner).addSingletonArray("one", inner)
                .addArray("all", values).end().add("after", "nested");
        JsonArrayBuilder all = Json.createArrayBuilder();
        values.forEach(all::add);
        o.add("n", number).add("flag", flag).add("nested", Json.createObjectBuilder().add(inner, inner)
                .add("one", Json.createArrayBuilder().add(inner)).add("all", all)).add("after", "nested");
        RenderedEvent rendered = t.build();
        JsonObject expected = o.build();
        assertEquals(new String(JsonLine.encode(expected), StandardCharsets.UTF_8),
                new String(JsonLine.encode(rendered), StandardCharsets.UTF_8));
        assertEquals(expected, rendered);
        assertEquals(expected.getJsonObject("nested"), rendered.getJsonObject("nested"));
    }
}
