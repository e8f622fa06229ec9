package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.MiddlewareException;
import jakarta.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * {@link ContentTypes} remembers the last {@code Content-Type} value's reading, and a remembered reading is only ever
 * the reading of that exact value: in any order of values (a refused one, an accepted one differing in one byte, case
 * or a charset name), each reads as a fresh reader reads it.
 */
class ContentTypesTest {
    private static final List<String> VALUES = List.of("text/plain; charset=utf-8", "text/plain; charset=utf-7",
            "text/plain; x-charset=utf-7", "text/plain; x-charset=utf-8", "text/html", "TEXT/HTML",
            "text/plain; charſet=utf-7", "application/json", "not a media type", "text/plain;charset=\"utf-8\"");

    @Provide
    Arbitrary<List<String>> sequences() {
        return Arbitraries.of(VALUES).list().ofMinSize(1).ofMaxSize(30);
    }

    @Property(tries = 300)
    void aRememberedReadingIsTheReadingOfThatValue(@ForAll("sequences") List<String> values) {
        ContentTypes remembered = new ContentTypes();
        for (String v : values) {
            ContentTypes.Reading r = remembered.read(v);
            ContentTypes.Reading fresh = new ContentTypes().read(v);
            assertEquals(fresh, r, v);
        }
    }

    @Test
    void aRefusedValueAfterAnAcceptedOneIsRefusedAndTheOtherWayRound() {
        ContentTypes c = new ContentTypes();
        assertNull(c.read("text/plain; x-charset=utf-8").refusal());
        assertEquals("Content-Type names in another parameter a charset the scan cannot read",
                c.read("text/plain; x-charset=utf-7").refusal());
        assertNull(c.read("text/plain; x-charset=utf-8").refusal());
        assertNull(c.read("not a media type").type());
    }

    @Test
    void theProviderRefusesEachRequestByItsOwnValue() {
        RegexProvider provider = new RegexProvider();
        byte[] body = "hello".getBytes(StandardCharsets.US_ASCII);
        for (int round = 0; round < 3; round++) {
            assertEquals(Decision.ALLOW, DecodedBodyTest.evaluate(provider, JsonObject.EMPTY_JSON_OBJECT, body,
                    "content-type", "text/plain; x-charset=utf-8").decision());
            MiddlewareException e = assertThrows(MiddlewareException.class, () -> DecodedBodyTest.evaluate(provider,
                    JsonObject.EMPTY_JSON_OBJECT, body, "content-type", "text/plain; x-charset=utf-7"));
            assertEquals("body_undecodable", e.code());
        }
    }
}
