package dev.openshell.supervisor.proxy.internal;

import java.util.Locale;

/**
 * One field line as received (RFC 9112 section 5).
 *
 * @param name the field name as sent (case kept)
 * @param value the field value with leading and trailing whitespace (SP, HTAB) removed; ISO-8859-1, one char per
 *     byte, so obs-text survives unchanged
 * @param rawLine the whole line as received, without CRLF, for byte-identical forwarding
 */
public record HeaderField(String name, String value, String rawLine) {
    /**
     * {@return a field line the proxy adds itself}
     *
     * @param name a token
     * @param value a value without control characters or surrounding whitespace
     */
    public static HeaderField of(String name, String value) {
        return new HeaderField(name, value, name + ": " + value);
    }

    /** {@return the name in ASCII lowercase} */
    public String lowerName() {
        return name.toLowerCase(Locale.ROOT);
    }

    /** {@return whether the name equals {@code other}, ignoring ASCII case} @param other a lowercase name */
    public boolean is(String other) {
        return name.equalsIgnoreCase(other);
    }

    /** {@return the name and the value's length only: header values never appear in logs} */
    @Override
    public String toString() {
        return "HeaderField[" + name + ", " + value.length() + " chars]";
    }
}
