package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import jakarta.json.Json;
import jakarta.json.JsonException;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonStructure;
import jakarta.json.JsonValue;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The OCSF JSONL audit log a run wrote: every line must be one JSON object whose {@code class_uid} is one the
 * supervisor emits (4002 HTTP Activity, 2004 Detection Finding, 5019 Device Config State Change). The full schema
 * check of each event kind is {@code modules/audit}'s; this is the check of a real run's output.
 */
final class AuditLog {
    static final Set<Integer> CLASSES = Set.of(4002, 2004, 5019);

    private AuditLog() {
    }

    /** {@return every event of the log, each line checked to be a JSON object with a known class_uid} */
    static List<JsonObject> read(Path file) throws IOException {
        List<JsonObject> events = new ArrayList<>();
        int n = 0;
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            n++;
            JsonStructure s;
            try (JsonReader r = Json.createReader(new StringReader(line))) {
                s = r.read();
            } catch (JsonException e) {
                fail(file + ":" + n + " is not one JSON value: " + e.getMessage());
                return List.of();
            }
            assertEquals(JsonValue.ValueType.OBJECT, s.getValueType(), file + ":" + n + " is not a JSON object");
            JsonObject o = s.asJsonObject();
            assertTrue(o.containsKey("class_uid") && o.get("class_uid").getValueType() == JsonValue.ValueType.NUMBER,
                    file + ":" + n + " has no numeric class_uid");
            assertTrue(CLASSES.contains(o.getInt("class_uid")), file + ":" + n + " class_uid " + o.get("class_uid"));
            events.add(o);
        }
        return events;
    }

    /** {@return {@code unmapped.openshell} of an event, or an empty object} */
    static JsonObject openshell(JsonObject event) {
        JsonObject unmapped = event.getJsonObject("unmapped");
        if (unmapped == null || !unmapped.containsKey("openshell")) {
            return JsonValue.EMPTY_JSON_OBJECT;
        }
        return unmapped.getJsonObject("openshell");
    }
}
