package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Decision;
import jakarta.json.JsonObject;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CancellationException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The scan stops when its thread is interrupted (the supervisor interrupts a stage at its deadline): every reading of
 * the body and the scanner check the interrupt status, so a body of any type fails with {@link CancellationException}
 * instead of being scanned to the end; an uninterrupted thread scans it as before.
 */
class InterruptedScanTest {
    private final RegexProvider provider = new RegexProvider();

    @AfterEach
    void clear() {
        Thread.interrupted();
    }

    private static byte[] body(String unit) {
        return unit.repeat(256 * 1024 / unit.length()).getBytes(StandardCharsets.UTF_8);
    }

    @ParameterizedTest
    @ValueSource(strings = {"text/html", "application/xml", "text/plain", "application/json",
        "application/x-www-form-urlencoded", "application/octet-stream"})
    void anInterruptedScanFailsWhateverTheType(String type) {
        byte[] bytes = type.endsWith("json")
                ? ("[" + "\"&a;\\u0001<!---->x\",".repeat(16 * 1024) + "1]").getBytes(StandardCharsets.UTF_8)
                : body("&a;\u0001<!---->x ");
        assertEquals(Decision.ALLOW, DecodedBodyTest.evaluate(provider, JsonObject.EMPTY_JSON_OBJECT, bytes,
                "content-type", type).decision(), "uninterrupted, the body is read to its end");
        Thread.currentThread().interrupt();
        CancellationException e = assertThrows(CancellationException.class, () -> DecodedBodyTest.evaluate(
                provider, JsonObject.EMPTY_JSON_OBJECT, bytes, "content-type", type));
        assertTrue(e.getMessage().contains("deadline"), e.getMessage());
        assertTrue(Thread.currentThread().isInterrupted(), "the status is left to whoever interrupted");
    }

    @ParameterizedTest
    @ValueSource(strings = {"scanner", "markup", "dropped"})
    void eachReadingChecksOnItsOwn(String reading) throws Exception {
        Selection all = RegexConfig.parse(JsonObject.EMPTY_JSON_OBJECT).selection();
        ByteBuffer text = ByteBuffer.wrap(body("&#1;<!---->ab\u001b(B "));
        Thread.currentThread().interrupt();
        assertThrows(CancellationException.class, () -> {
            switch (reading) {
                case "scanner" -> SecretScanner.scan(text, all, false);
                case "markup" -> XmlText.view(text);
                default -> DroppedText.view(text);
            }
        });
    }
}
