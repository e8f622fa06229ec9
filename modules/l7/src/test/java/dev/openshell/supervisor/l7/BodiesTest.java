package dev.openshell.supervisor.l7;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import jakarta.json.JsonArray;
import jakarta.json.JsonObject;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/** {@link Bodies#json}: one JSON value, whitespace after it, bounded depth and numbers, no duplicate keys. */
class BodiesTest {
    private static String code(String text) {
        return assertThrows(Bodies.Malformed.class, () -> Bodies.json(text)).code();
    }

    @Test
    void oneValueWithWhitespaceAroundIsRead() throws Exception {
        assertEquals(1, ((JsonObject) Bodies.json(" \t\r\n{\"a\":1} \r\n\t ")).getInt("a"));
        assertEquals(2, ((JsonArray) Bodies.json("[1,2]\n")).size());
    }

    @Test
    void anythingAfterTheValueIsTrailingData() {
        assertEquals("json_trailing_data", code("{\"a\":1}{\"b\":2}"));
        assertEquals("json_trailing_data", code("{\"a\":1}\n{\"b\":2}"));
        assertEquals("json_trailing_data", code("[1] [2]"));
        assertEquals("json_trailing_data", code("{\"a\":1} x"));
        assertEquals("json_trailing_data", code("{\"a\":1}\u0000"));
        assertEquals("json_trailing_data", code("{\"a\":1}\f"), "form feed is not JSON whitespace (RFC 8259)");
        assertEquals("json_trailing_data", code("{\"a\":1}\u00a0"));
        assertEquals("json_trailing_data", code("1 2"));
    }

    @Test
    void syntaxErrorsAndDuplicateKeysHaveTheirOwnCodes() {
        assertEquals("json_invalid", code(""));
        assertEquals("json_invalid", code("   "));
        assertEquals("json_invalid", code("{\"a\":"));
        assertEquals("json_invalid", code("\ufeff{}"), "a byte-order mark is not JSON");
        assertEquals("json_invalid", code("{'a':1}"));
        assertEquals("json_duplicate_key", code("{\"a\":1,\"a\":2}"));
        assertEquals("json_duplicate_key", code("[{\"m\":{\"x\":1,\"x\":1}}]"));
    }

    @Test
    void theReportsInputsAreRefusedWithTheirCodes() {
        assertEquals("json_number_too_long", code("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":" + "1".repeat(5_000)
                + "}"));
        assertEquals("json_too_deep", code("{\"params\":" + "[".repeat(3_000) + "]".repeat(3_000) + "}"));
        assertEquals("json_too_deep", code("[".repeat(100_000)), "an unclosed deep body stops at the limit");
        assertEquals("json_number_too_long", code("[0." + "1".repeat(200) + "]"));
        assertEquals("json_number_too_long", code("[1e" + "9".repeat(200) + "]"));
    }

    @Test
    void theLimitsAreInclusive() throws Exception {
        Bodies.json("[".repeat(Bodies.MAX_DEPTH) + "]".repeat(Bodies.MAX_DEPTH));
        assertEquals("json_too_deep", code("[".repeat(Bodies.MAX_DEPTH + 1) + "]".repeat(Bodies.MAX_DEPTH + 1)));
        Bodies.json("[" + "1".repeat(Bodies.MAX_NUMBER_CHARS) + "]");
        assertEquals("json_number_too_long", code("[" + "1".repeat(Bodies.MAX_NUMBER_CHARS + 1) + "]"));
        Bodies.json("[1e999999999, -0.5E-999999999]");
    }

    @Property
    void aValueFollowedByAnotherIsNeverRead(@ForAll("values") String first, @ForAll("values") String second,
                                            @ForAll("blanks") String gap) {
        Assume.that(!(first.equals("1") && second.equals("1") && gap.isEmpty())); // "11" is one number
        assertEquals("json_trailing_data", code(first + gap + second));
    }

    @Property
    void nestingIsReadUpToTheLimitAndRefusedBeyond(@ForAll @IntRange(min = 1, max = 400) int depth,
                                                   @ForAll boolean objects) throws Exception {
        String open = objects ? "{\"k\":" : "[";
        String close = objects ? "}" : "]";
        String text = open.repeat(depth - 1) + (objects ? "{}" : "[]") + close.repeat(depth - 1);
        if (depth <= Bodies.MAX_DEPTH) {
            Bodies.json(text);
        } else {
            assertEquals("json_too_deep", code(text));
        }
    }

    @Provide
    Arbitrary<String> values() {
        return Arbitraries.of("{}", "[]", "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":2}", "[{\"a\":[1,2]}]", "1",
                "\"s\"", "null", "true");
    }

    @Provide
    Arbitrary<String> blanks() {
        return Arbitraries.strings().withChars(' ', '\t', '\r', '\n').ofMaxLength(4);
    }
}
