package dev.openshell.supervisor.audit;

import jakarta.json.JsonValue;
import jakarta.json.stream.JsonGenerator;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One JSONL record (RFC 8259 text, then a newline, UTF-8): what the sink writes per event. Events made by
 * {@link OcsfEvents} are already records ({@link RenderedEvent}); any other value is written by Parsson's streaming
 * generator. Compact output never holds a raw newline, so a record is always one line.
 */
final class JsonLine {
    private JsonLine() {
    }

    /**
     * A record as the sink queues it: the first {@code length} bytes of {@code bytes}, which may be longer (the
     * event writer's buffer, handed over without a copy). Never modified once made. The sink's bound on queued bytes
     * counts the records' lengths: the unused room after them (typically a few hundred bytes, at most about the
     * record's length when the buffer grew) is held besides until the line is written.
     *
     * @param bytes the record's bytes, and possibly unused room after them
     * @param length the record's length in bytes, its newline included
     */
    record Line(byte[] bytes, int length) {
    }

    /** {@return the record of {@code value}, without a copy for an event made by {@link OcsfEvents}} @param value it */
    static Line line(JsonValue value) {
        if (value instanceof RenderedEvent r) {
            return r.record();
        }
        byte[] b = encodeValue(value);
        return new Line(b, b.length);
    }

    /** {@return the JSON text of {@code value} and a newline, UTF-8 encoded, in an array of its own} @param value it */
    static byte[] encode(JsonValue value) {
        if (value instanceof RenderedEvent r) {
            Line l = r.record();
            return Arrays.copyOf(l.bytes(), l.length());
        }
        return encodeValue(value);
    }

    private static byte[] encodeValue(JsonValue value) {
        StringWriter out = new StringWriter(1024);
        try (JsonGenerator g = JsonText.GENERATORS.createGenerator(out)) {
            g.write(value);
        }
        out.write('\n');
        return out.toString().getBytes(StandardCharsets.UTF_8);
    }
}
