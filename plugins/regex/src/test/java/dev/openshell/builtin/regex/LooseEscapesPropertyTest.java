package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpRequestResult;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Text that is not a JSON document but holds JSON string escapes (a lenient reader's JSON: {@code NaN}, a trailing
 * comma, a comment; or prose quoting an escaped string): for any key of the seven legacy kinds with any of its
 * characters written as {@code \}{@code uXXXX} escapes, inside any of those shapes, deny mode denies the body and
 * redact mode leaves neither the key nor its escaped form.
 */
class LooseEscapesPropertyTest {
    private static final JsonObject DENY = Json.createObjectBuilder().add("mode", "deny").build();
    private final RegexProvider provider = new RegexProvider();

    @Provide
    Arbitrary<String> keys() {
        return Samples.oneLineLegacyKeys();
    }

    @Provide
    Arbitrary<String> shapes() {
        return Arbitraries.of("{\"a\":\"%s\",\"b\":NaN}", "[\"%s\",]", "/* c */ {\"k\": \"%s\"}", "say \"%s\" now",
                "{'k': '%s'}");
    }

    @Property(tries = 300)
    void anEscapedKeyInLooseJsonIsAlwaysFound(@ForAll("keys") String key, @ForAll("shapes") String shape,
                                              @ForAll long seed) {
        Random r = new Random(seed);
        StringBuilder escaped = new StringBuilder();
        for (char c : key.toCharArray()) {
            escaped.append(r.nextInt(3) == 0 ? String.format(r.nextBoolean() ? "\\u%04x" : "\\u%04X", (int) c)
                    : String.valueOf(c));
        }
        byte[] body = shape.formatted(escaped).getBytes(StandardCharsets.UTF_8);
        for (String type : new String[] {"text/plain", null}) {
            String[] headers = type == null ? new String[0] : new String[] {"content-type", type};
            HttpRequestResult denied = DecodedBodyTest.evaluate(provider, DENY, body, headers);
            assertEquals(Decision.DENY, denied.decision(), shape.formatted(escaped));
            HttpRequestResult redacted = DecodedBodyTest.evaluate(provider, JsonObject.EMPTY_JSON_OBJECT, body,
                    headers);
            String out = new String(redacted.body().orElseThrow().toByteArray(), StandardCharsets.UTF_8);
            assertFalse(out.contains(key.substring(4)), out);
            assertFalse(out.contains(escaped.substring(Math.min(4, escaped.length() - 1))), out);
        }
    }
}
