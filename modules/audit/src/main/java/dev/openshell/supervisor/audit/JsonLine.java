package dev.openshell.supervisor.audit;

import jakarta.json.JsonValue;
import jakarta.json.stream.JsonGenerator;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;

/**
 * One JSONL record (RFC 8259 text, then a newline, UTF-8): what the sink writes per event. Events made by
 * {@link OcsfEvents} are already text ({@link RenderedEvent}); any other value is written by Parsson's streaming
 * generator. Compact output never holds a raw newline, so a record is always one line.
 */
final class JsonLine {
    private JsonLine() {
    }

    /** {@return the JSON text of {@code value} and a newline, UTF-8 encoded} @param value the value */
    static byte[] encode(JsonValue value) {
        if (value instanceof RenderedEvent r) {
            return r.line();
        }
        StringWriter out = new StringWriter(1024);
        try (JsonGenerator g = JsonText.GENERATORS.createGenerator(out)) {
            g.write(value);
        }
        out.write('\n');
        return out.toString().getBytes(StandardCharsets.UTF_8);
    }
}
