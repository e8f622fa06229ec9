package dev.openshell.middleware.spi;

import java.util.Objects;

/**
 * One header change a stage asks for (RFC 0009, "The middleware contract": {@code HeaderMutation}).
 *
 * <p>The host validates and applies a stage's mutations atomically: if any is invalid, none is applied and the stage
 * follows its {@code on_error}. Writes may only target {@code x-openshell-middleware-*}; removals may target any
 * header visible to the stage; credential-bearing, routing, framing, hop-by-hop and Connection-nominated headers are
 * protected from both. Names are compared case-insensitively; values must not hold CR, LF, NUL or other controls.
 */
public sealed interface HeaderMutation {
    /** {@return the header name as the stage wrote it} */
    String name();

    /**
     * Adds or replaces a {@code x-openshell-middleware-*} header.
     *
     * @param name the header name
     * @param value the header value
     * @param onExisting what to do when the header exists
     */
    record WriteHeader(String name, String value, ExistingHeaderAction onExisting) implements HeaderMutation {
        /** @throws NullPointerException if any part is {@code null} */
        public WriteHeader {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(value, "value");
            Objects.requireNonNull(onExisting, "onExisting");
        }

        /** {@return the name, the action and the value's length only} */
        @Override
        public String toString() {
            return "WriteHeader[" + name + ", " + onExisting + ", " + value.length() + " chars]";
        }
    }

    /**
     * Removes every line of a header, compared case-insensitively; removing an absent header is not an error.
     *
     * @param name the header name
     */
    record RemoveHeader(String name) implements HeaderMutation {
        /** @throws NullPointerException if {@code name} is {@code null} */
        public RemoveHeader {
            Objects.requireNonNull(name, "name");
        }
    }

    /** {@return a write} @param name the name @param value the value @param onExisting the action */
    static HeaderMutation write(String name, String value, ExistingHeaderAction onExisting) {
        return new WriteHeader(name, value, onExisting);
    }

    /** {@return a removal} @param name the name */
    static HeaderMutation remove(String name) {
        return new RemoveHeader(name);
    }
}
