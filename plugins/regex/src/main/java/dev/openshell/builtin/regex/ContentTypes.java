package dev.openshell.builtin.regex;

import dev.openshell.middleware.spi.internal.BodyCharsets;

/**
 * What {@link BodyDecoder} reads from a {@code Content-Type} field value, remembered for the last value read: its
 * media type ({@link MediaType#parse}) and whether a {@code charset=} anywhere in it names a charset the scan cannot
 * read ({@link BodyCharsets#namesInHeader}: every client library's reading of the value). A client sends the same
 * value with every request, and reading it costs about a microsecond, a sixth of a 2 KiB text body's whole
 * evaluation; a value seen again is compared whole ({@link String#equals}), so a remembered reading is only ever the
 * reading of that exact value. One per provider instance; thread-safe (the last reading is one immutable record
 * behind a volatile reference; two threads reading different values at once only read both).
 */
final class ContentTypes {
    /**
     * The reading of one value.
     *
     * @param value the field value
     * @param type its media type, or {@code null} when it is none
     * @param refusal why a body of this type is undecodable (a {@code charset=} the scan cannot read), or
     *     {@code null}
     */
    record Reading(String value, MediaType type, String refusal) {
    }

    private volatile Reading last;

    /** {@return the reading of {@code value}, the remembered one when it is the last value read} @param value a value */
    Reading read(String value) {
        Reading r = last;
        if (r != null && r.value().equals(value)) {
            return r;
        }
        r = new Reading(value, MediaType.parse(value), refusal(value));
        last = r;
        return r;
    }

    /**
     * {@return why a body is undecodable when another {@code charset=} of its {@code Content-Type} names a charset the
     * scan cannot read ({@code x-charset=utf-7}, which w3lib and node-fetch take; attacker pass 12, P14-4), else
     * {@code null}}
     */
    private static String refusal(String value) {
        for (String name : BodyCharsets.namesInHeader(value)) {
            try {
                Charsets.named(name);
            } catch (Undecodable e) {
                return "Content-Type names in another parameter a charset the scan cannot read";
            }
        }
        return null;
    }
}
