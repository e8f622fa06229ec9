package dev.openshell.supervisor.audit;

/**
 * Writes one compact JSON object (RFC 8259) straight into text, members in call order: the audit events' hot path,
 * which would otherwise build a {@link jakarta.json.JsonObject} tree only to serialise it again. Strings are escaped
 * as {@link JsonLine} does. Not validating: callers write each member name once and close what they open.
 */
final class JsonText {
    private final StringBuilder b = new StringBuilder(1024);
    /** Whether the next member of the innermost open object is its first. */
    private boolean first = true;

    JsonText() {
        b.append('{');
    }

    private StringBuilder name(String name) {
        if (!first) {
            b.append(',');
        }
        first = false;
        JsonLine.string(name, b);
        return b.append(':');
    }

    /** {@return this} Adds a string member. @param name the name @param value the value, escaped here */
    JsonText add(String name, String value) {
        JsonLine.string(value, name(name));
        return this;
    }

    /** {@return this} Adds a number member. @param name the name @param value the value */
    JsonText add(String name, long value) {
        name(name).append(value);
        return this;
    }

    /** {@return this} Adds a boolean member. @param name the name @param value the value */
    JsonText add(String name, boolean value) {
        name(name).append(value);
        return this;
    }

    /** {@return this} Adds a member whose value is an array of one string. @param name the name @param value it */
    JsonText addSingletonArray(String name, String value) {
        JsonLine.string(value, name(name).append('['));
        b.append(']');
        return this;
    }

    /** {@return this} Adds a member whose value is an array of strings. @param name the name @param values them */
    JsonText addArray(String name, Iterable<String> values) {
        name(name).append('[');
        boolean firstItem = true;
        for (String v : values) {
            if (!firstItem) {
                b.append(',');
            }
            firstItem = false;
            JsonLine.string(v, b);
        }
        b.append(']');
        return this;
    }

    /** {@return this} Adds a member whose value is pre-rendered JSON text. @param name the name @param json text */
    JsonText addRaw(String name, String json) {
        name(name).append(json);
        return this;
    }

    /** {@return this} Opens an object member; close it with {@link #end()}. @param name the name */
    JsonText open(String name) {
        name(name).append('{');
        first = true;
        return this;
    }

    /** {@return this} Closes the innermost open object. */
    JsonText end() {
        b.append('}');
        first = false;
        return this;
    }

    /** {@return the event: closes the outermost object} */
    RenderedEvent build() {
        b.append('}');
        return new RenderedEvent(b.toString());
    }
}
