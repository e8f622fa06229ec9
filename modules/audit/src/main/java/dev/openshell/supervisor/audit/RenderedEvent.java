package dev.openshell.supervisor.audit;

import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.AbstractMap;
import java.util.Set;

/**
 * An event already written as its JSONL record (UTF-8) by {@link JsonText}. The audit sink writes the record as it
 * is; reading it as text or as a {@link JsonObject} (tests, in-process consumers) decodes and parses it once, on first
 * use, so the object and the written line can never disagree. Equal to any {@link JsonObject} with the same members
 * ({@link AbstractMap} equality).
 */
final class RenderedEvent extends AbstractMap<String, JsonValue> implements JsonObject {
    /** The JSON text and a newline, UTF-8 encoded: the JSONL record (the writer's buffer, not copied). */
    private final JsonLine.Line line;
    private volatile String text;
    private volatile JsonObject parsed;

    /** @param line the JSON text and a newline, UTF-8 encoded, as {@link JsonText} wrote it; kept, not copied */
    RenderedEvent(JsonLine.Line line) {
        this.line = line;
    }

    /** {@return the JSON text and a newline, UTF-8 encoded: one JSONL record; shared, never to be modified} */
    JsonLine.Line record() {
        return line;
    }

    /** {@return the JSON text, decoded from the record on first use} */
    private String text() {
        String t = text;
        if (t == null) {
            t = new String(line.bytes(), 0, line.length() - 1, StandardCharsets.UTF_8);
            text = t;
        }
        return t;
    }

    private JsonObject object() {
        JsonObject o = parsed;
        if (o == null) {
            try (JsonReader r = Json.createReader(new StringReader(text()))) {
                o = r.readObject();
            }
            parsed = o;
        }
        return o;
    }

    @Override
    public Set<Entry<String, JsonValue>> entrySet() {
        return object().entrySet();
    }

    @Override
    public JsonValue get(Object key) {
        return object().get(key);
    }

    @Override
    public boolean containsKey(Object key) {
        return object().containsKey(key);
    }

    @Override
    public JsonArray getJsonArray(String name) {
        return object().getJsonArray(name);
    }

    @Override
    public JsonObject getJsonObject(String name) {
        return object().getJsonObject(name);
    }

    @Override
    public JsonNumber getJsonNumber(String name) {
        return object().getJsonNumber(name);
    }

    @Override
    public JsonString getJsonString(String name) {
        return object().getJsonString(name);
    }

    @Override
    public String getString(String name) {
        return object().getString(name);
    }

    @Override
    public String getString(String name, String defaultValue) {
        return object().getString(name, defaultValue);
    }

    @Override
    public int getInt(String name) {
        return object().getInt(name);
    }

    @Override
    public int getInt(String name, int defaultValue) {
        return object().getInt(name, defaultValue);
    }

    @Override
    public boolean getBoolean(String name) {
        return object().getBoolean(name);
    }

    @Override
    public boolean getBoolean(String name, boolean defaultValue) {
        return object().getBoolean(name, defaultValue);
    }

    @Override
    public boolean isNull(String name) {
        return object().isNull(name);
    }

    @Override
    public ValueType getValueType() {
        return ValueType.OBJECT;
    }

    @Override
    public String toString() {
        return text();
    }
}
