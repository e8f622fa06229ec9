package dev.openshell.supervisor.audit;

import jakarta.json.JsonObject;
import jakarta.json.spi.JsonProvider;
import jakarta.json.stream.JsonGenerator;
import jakarta.json.stream.JsonGeneratorFactory;
import java.io.StringWriter;
import java.util.Map;

/**
 * Writes one compact JSON object (RFC 8259) straight into text with Parsson's streaming {@link JsonGenerator},
 * members in call order: the audit events' path, which would otherwise build a {@link JsonObject} tree only to
 * serialise it again. Escaping is the generator's. Not validating: callers write each member name once and close
 * what they open.
 */
final class JsonText {
    /** The JSON provider (Parsson), looked up once: {@code Json.createX} would look it up on every call. */
    private static final JsonProvider PROVIDER = JsonProvider.provider();
    /** Compact generators. */
    static final JsonGeneratorFactory GENERATORS = PROVIDER.createGeneratorFactory(Map.of());

    private final StringWriter out = new StringWriter(1024);
    private final JsonGenerator g = GENERATORS.createGenerator(out);

    /** {@return the JSON provider, looked up once} */
    static JsonProvider json() {
        return PROVIDER;
    }

    JsonText() {
        g.writeStartObject();
    }

    /** {@return this} Adds a string member. @param name the name @param value the value */
    JsonText add(String name, String value) {
        g.write(name, value);
        return this;
    }

    /** {@return this} Adds a number member. @param name the name @param value the value */
    JsonText add(String name, long value) {
        g.write(name, value);
        return this;
    }

    /** {@return this} Adds a boolean member. @param name the name @param value the value */
    JsonText add(String name, boolean value) {
        g.write(name, value);
        return this;
    }

    /** {@return this} Adds a member whose value is an array of one string. @param name the name @param value it */
    JsonText addSingletonArray(String name, String value) {
        g.writeStartArray(name).write(value).writeEnd();
        return this;
    }

    /** {@return this} Adds a member whose value is an array of strings. @param name the name @param values them */
    JsonText addArray(String name, Iterable<String> values) {
        g.writeStartArray(name);
        for (String v : values) {
            g.write(v);
        }
        g.writeEnd();
        return this;
    }

    /** {@return this} Adds an object member written before. @param name the name @param value the object */
    JsonText add(String name, JsonObject value) {
        g.write(name, value);
        return this;
    }

    /** {@return this} Opens an object member; close it with {@link #end()}. @param name the name */
    JsonText open(String name) {
        g.writeStartObject(name);
        return this;
    }

    /** {@return this} Closes the innermost open object. */
    JsonText end() {
        g.writeEnd();
        return this;
    }

    /** {@return the event: closes the outermost object} */
    RenderedEvent build() {
        g.writeEnd();
        g.close();
        return new RenderedEvent(out.toString());
    }
}
