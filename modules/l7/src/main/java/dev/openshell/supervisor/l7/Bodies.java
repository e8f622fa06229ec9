package dev.openshell.supervisor.l7;

import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;

import jakarta.json.Json;
import jakarta.json.JsonConfig;
import jakarta.json.JsonException;
import jakarta.json.JsonReader;
import jakarta.json.JsonReaderFactory;
import jakarta.json.JsonValue;

/**
 * Strict decoding of request bodies for policy: UTF-8 without replacement, and JSON where a duplicate object key is an
 * error (two readers of one body must never see different methods or operations).
 */
final class Bodies {
    private static final JsonReaderFactory STRICT = Json.createReaderFactory(
            Map.of(JsonConfig.KEY_STRATEGY, JsonConfig.KeyStrategy.NONE));

    private Bodies() {
    }

    static Optional<String> utf8(byte[] body) {
        try {
            return Optional.of(StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(body)).toString());
        } catch (CharacterCodingException e) {
            return Optional.empty();
        }
    }

    /** {@return the JSON value of {@code text}, or empty when it is not exactly one JSON value} */
    static Optional<JsonValue> json(String text) {
        try (JsonReader r = STRICT.createReader(new StringReader(text))) {
            return Optional.of(r.readValue());
        } catch (JsonException | IllegalStateException | NumberFormatException e) {
            return Optional.empty();
        }
    }
}
