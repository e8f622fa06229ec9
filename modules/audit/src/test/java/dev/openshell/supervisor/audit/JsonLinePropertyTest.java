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

    /** Any UTF-16 text: every char, lone surrogates and pairs (non-BMP) among them. */
    @Provide
    Arbitrary<String> anyChars() {
        Arbitrary<String> surrogates = Arbitraries.strings().withCharRange('\ud800', '\udfff').ofMaxLength(6);
        Arbitrary<String> pairs = Arbitraries.integers().between(0x10000, 0x10FFFF)
                .map(cp -> new String(Character.toChars(cp)));
        return Arbitraries.oneOf(Arbitraries.strings().all().ofMaxLength(40), anyText(), surrogates,
                Arbitraries.strings().withChars('a', '"', '\\', '\u0001', '\u00e9', '\u0800', '\uffff', '\ud83d',
                        '\ude00').ofMaxLength(20),
                Arbitraries.oneOf(pairs, anyText()).list().ofMaxSize(5).map(l -> String.join("", l)));
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

    /**
     * The event writer's bytes ({@link JsonText}) are exactly the bytes today's records were made of: Parsson's
     * generator writing the same members in the same order, encoded with {@link String#getBytes} in UTF-8 (lone
     * surrogates as {@code ?}), for any names and values; and they parse back (jakarta.json) to those members.
     */
    @Property(tries = 2000)
    void theEventWriterWritesParssonsBytes(@ForAll List<@From("anyChars") String> texts, @ForAll long number,
                                           @ForAll boolean flag, @ForAll long msb, @ForAll long lsb) {
        java.util.UUID uuid = new java.util.UUID(msb, lsb);
        java.io.StringWriter w = new java.io.StringWriter();
        jakarta.json.stream.JsonGenerator g = JsonText.GENERATORS.createGenerator(w);
        JsonText t = new JsonText(16); // small: the buffer grows on the way
        g.writeStartObject();
        for (int i = 0; i < texts.size(); i++) {
            String name = texts.get(i) + "#" + i; // unique names: a parse compares member by member
            t.add(name, texts.get(i));
            g.write(name, texts.get(i));
        }
        String s = texts.isEmpty() ? "" : texts.get(0);
        JsonText spliced = new JsonText(8);
        spliced.open(s).add("n", number).addArray(s, texts).end();
        t.add("n", number).add("flag", flag).addUuid("uid", uuid).raw(spliced.member())
                .openArray("objects").openElement().add(s, s).end().openElement().end().end()
                .add("built", Json.createObjectBuilder().add(s + "=", s).add("a", Json.createArrayBuilder().add(number)
                        .add(JsonValue.NULL).add(flag).add(1.5)).build());
        g.write("n", number).write("flag", flag).write("uid", uuid.toString());
        g.writeStartObject(s).write("n", number).writeStartArray(s);
        texts.forEach(g::write);
        g.writeEnd().writeEnd();
        g.writeStartArray("objects").writeStartObject().write(s, s).writeEnd().writeStartObject().writeEnd()
                .writeEnd();
        g.writeStartObject("built").write(s + "=", s).writeStartArray("a").write(number).writeNull().write(flag)
                .write(new java.math.BigDecimal("1.5")).writeEnd().writeEnd();
        g.writeEnd();
        g.close();
        byte[] expected = (w + "\n").getBytes(StandardCharsets.UTF_8);
        byte[] written = JsonLine.encode(t.build());
        assertEquals(new String(expected, StandardCharsets.ISO_8859_1), new String(written, StandardCharsets.ISO_8859_1));
        assertEquals(parse(expected), parse(written));
    }
}
