package dev.openshell.supervisor.proxy.internal;

import java.util.Locale;

/**
 * One field line as received (RFC 9112 section 5).
 *
 * @param name the field name as sent (case kept)
 * @param value the field value with leading and trailing whitespace (SP, HTAB) removed; ISO-8859-1, one char per
 *     byte, so obs-text survives unchanged
 * @param rawLine the whole line as received, without CRLF, for byte-identical forwarding
 * @param lowerName the name in ASCII lowercase, made once per field (the policy steps, the hop-by-hop rules and the
 *     head builders each read it; made at each read it was a string per field per reader and request)
 */
public record HeaderField(String name, String value, String rawLine, String lowerName) {
    /**
     * A field line with its lowercase name derived from {@code name}.
     *
     * @param name the field name as sent (case kept)
     * @param value the field value, trimmed
     * @param rawLine the whole line as received, without CRLF
     */
    public HeaderField(String name, String value, String rawLine) {
        this(name, value, rawLine, name.toLowerCase(Locale.ROOT));
    }

    /** The lowercase name must be {@code name}'s (checked without making another string). */
    public HeaderField {
        boolean lower = lowerName.length() == name.length() && lowerName.equalsIgnoreCase(name);
        for (int i = 0; lower && i < lowerName.length(); i++) {
            char c = lowerName.charAt(i);
            lower = c < 'A' || c > 'Z';
        }
        if (!lower) {
            throw new IllegalArgumentException("lowerName is not the name in lowercase");
        }
    }

    /**
     * {@return a field line the proxy adds itself}
     *
     * @param name a token
     * @param value a value without control characters or surrounding whitespace
     */
    public static HeaderField of(String name, String value) {
        return new HeaderField(name, value, name + ": " + value);
    }

    /**
     * {@return whether the name equals {@code other}, ignoring ASCII case}: compared with the lowercase name made at
     * parsing, so {@code other} must be lowercase (every caller passes a lowercase literal)
     *
     * @param other a lowercase name
     */
    public boolean is(String other) {
        return lowerName.equals(other);
    }

    /** {@return the name and the value's length only: header values never appear in logs} */
    @Override
    public String toString() {
        return "HeaderField[" + name + ", " + value.length() + " chars]";
    }
}
