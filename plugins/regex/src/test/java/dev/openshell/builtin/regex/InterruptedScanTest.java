package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpHeader;
import jakarta.json.JsonObject;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CancellationException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The scan stops when its thread is interrupted (the supervisor interrupts a stage at its deadline): every reading of
 * the body and the scanner check the interrupt status, so a body of any type fails with {@link CancellationException}
 * instead of being scanned to the end; an uninterrupted thread scans it as before. So does the way back from the
 * matches to the input that redaction takes (a walk over the input per reading).
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

    @ParameterizedTest
    @ValueSource(strings = {"text/html", "text/plain; charset=utf-16le"})
    void theWayBackToTheInputChecksToo(String type) throws Exception {
        String unit = "ghp_R8xq2LmT5vW9zK3nB7cF1hJ4pD6sG0aYeU2i&#32;";
        byte[] bytes = unit.repeat(256 * 1024 / unit.length()).getBytes(
                type.contains("16") ? StandardCharsets.UTF_16LE : StandardCharsets.UTF_8);
        TextView view = BodyDecoder.decode(List.of(new HttpHeader("content-type", type)), ByteBuffer.wrap(bytes));
        Scan scan = SecretScanner.scan(view.text(), RegexConfig.parse(JsonObject.EMPTY_JSON_OBJECT).selection(), true);
        assertTrue(scan.edits().size() > 1000, "a match per unit: " + scan.edits().size());
        int units = bytes.length / unit.length() / (type.contains("16") ? 2 : 1);
        assertEquals(units, view.toInput(scan.edits()).size(), "uninterrupted, one input edit per token");
        Thread.currentThread().interrupt();
        assertThrows(CancellationException.class, () -> view.toInput(scan.edits()));
    }
}
