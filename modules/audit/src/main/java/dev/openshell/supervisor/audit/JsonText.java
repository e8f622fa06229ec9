package dev.openshell.supervisor.audit;

import jakarta.json.JsonObject;
import jakarta.json.spi.JsonProvider;
import jakarta.json.stream.JsonGenerator;
import jakarta.json.stream.JsonGeneratorFactory;
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

    /**
     * Room for an event with its {@code actor} (1.4-1.5 KB) without the builder growing (a copy) on the way; one
     * without (about 0.9 KB) wastes a little.
     */
    private static final int CAPACITY = 1600;

    private final TextBuffer out = new TextBuffer(CAPACITY);
    private final JsonGenerator g = GENERATORS.createGenerator(out);

    /**
     * The text the generator writes, in a {@link StringBuilder}: {@link java.io.StringWriter} appends to a
     * synchronized {@link StringBuffer}, a lock per write call that one event never shares.
     */
    private static final class TextBuffer extends java.io.Writer {
        private final StringBuilder text;

        TextBuffer(int capacity) {
            text = new StringBuilder(capacity);
        }

        @Override
        public void write(char[] c, int off, int len) {
            text.append(c, off, len);
        }

        @Override
        public void write(String str, int off, int len) {
            text.append(str, off, off + len);
        }

        @Override
        public void write(int c) {
            text.append((char) c);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }

        @Override
        public String toString() {
            return text.toString();
        }
    }

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

    /** {@return this} Adds an array member built before. @param name the name @param value the array */
    JsonText add(String name, jakarta.json.JsonArray value) {
        g.write(name, value);
        return this;
    }

    /** {@return this} Opens an array member; close it with {@link #end()}. @param name the name */
    JsonText openArray(String name) {
        g.writeStartArray(name);
        return this;
    }

    /** {@return this} Opens an object inside the innermost open array; close it with {@link #end()}. */
    JsonText openElement() {
        g.writeStartObject();
        return this;
    }

    /** {@return this} Opens an object member; close it with {@link #end()}. @param name the name */
    JsonText open(String name) {
        g.writeStartObject(name);
        return this;
    }

    /** {@return this} Closes the innermost open object or array. */
    JsonText end() {
        g.writeEnd();
        return this;
    }

    /**
     * {@return this} Writes a member rendered earlier by {@link #member}, as it is: a block that repeats across
     * events (the process behind a connection) is rendered once. Never the first member of an object: the comma is
     * written here, and the generator, which has written a member of this object already, writes the next one.
     *
     * @param member the member's text, {@code "name":value}
     */
    JsonText raw(String member) {
        g.flush(); // the generator's own buffer first: the text stays in order
        out.text.append(',').append(member);
        return this;
    }

    /**
     * {@return the text of the only member of this object, {@code "name":value}, to be written with {@link #raw}}
     * Closes the object; call after writing exactly one member.
     */
    String member() {
        g.writeEnd();
        g.close();
        return out.text.substring(1, out.text.length() - 1);
    }

    /** {@return the event: closes the outermost object} */
    RenderedEvent build() {
        g.writeEnd();
        g.close();
        return new RenderedEvent(out.text); // encoded from the builder: no String copy of the text in between
    }
}
