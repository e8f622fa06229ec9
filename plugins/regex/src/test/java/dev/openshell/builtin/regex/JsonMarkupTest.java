package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpRequestResult;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A markup body ({@code text/html}, XML) that is also valid JSON is read both ways (attacker pass 19, P25-1): as
 * markup, its references and comments inside a key are read as an HTML or XML reader reads them; as JSON, its string
 * escapes. Before, a body that sniffed as JSON was read as JSON only, and {@code ["ghp_...&#76;..."]} sent as
 * {@code text/html} passed, though every HTML reader reads the key whole.
 */
class JsonMarkupTest {
    private static final String KEY = DecodedBodyTest.OPENAI; // sk-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7cF0iL
    private static final JsonObject DENY = Json.createObjectBuilder().add("mode", "deny").build();
    private final RegexProvider provider = new RegexProvider();

    private HttpRequestResult run(JsonObject config, String body, String type) {
        return DecodedBodyTest.evaluate(provider, config, body.getBytes(StandardCharsets.UTF_8), "content-type", type);
    }

    @ParameterizedTest
    @ValueSource(strings = {"[\"sk-proj-Ab3dE&#54;gH9jK2mN5pQ8sT1vW4yZ7cF0iL\"]",
        "{\"k\":\"sk-proj-Ab3dE6gH<!-- x -->9jK2mN5pQ8sT1vW4yZ7cF0iL\"}",
        "[\"sk-proj-Ab3dE6gH&#x39;jK2mN5pQ8sT1vW4yZ7cF0iL\", 1]",
        "{\"k\":\"sk-proj-Ab3dE6gH9jK2mN5p<?x?>Q8sT1vW4yZ7cF0iL\"}"})
    void aKeyAnHtmlReaderReadsWholeInsideJsonIsDeniedAndRedacted(String body) {
        for (String type : new String[] {"text/html", "application/xhtml+xml"}) {
            assertEquals(Decision.DENY, run(DENY, body, type).decision(), type + " " + body);
            HttpRequestResult r = run(JsonObject.EMPTY_JSON_OBJECT, body, type);
            String out = new String(r.body().orElseThrow(() -> new AssertionError("nothing redacted: " + body))
                    .toByteArray(), StandardCharsets.UTF_8);
            assertFalse(out.contains("Ab3dE"), out);
            assertFalse(out.contains("yZ7cF0iL"), out);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"text/html", "application/xml"})
    void jsonEscapesOfAMarkupBodyAreStillRead(String type) {
        String body = "[\"\\u0073k-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7cF0iL\"]";
        assertEquals(Decision.DENY, run(DENY, body, type).decision());
    }

    @ParameterizedTest
    @ValueSource(strings = {"text/html", "application/xml"})
    void aNearMissStaysUntouched(String type) {
        String body = "[\"xsk-proj-Ab3dE&#54;gH9jK2mN5pQ8sT1vW4yZ7cF0iL\", \"" + KEY.substring(0, 20) + "\"]";
        assertEquals(Decision.ALLOW, run(DENY, body, type).decision(), "inside a longer word, and a prefix alone");
    }
}
