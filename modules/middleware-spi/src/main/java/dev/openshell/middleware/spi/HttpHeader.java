package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.STABLE;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apiguardian.api.API;

/**
 * One header line handed to a stage (RFC 0009, "The middleware contract": {@code HttpHeader}). Names are lowercased
 * by the host; values are trimmed of surrounding whitespace. Lists of headers keep wire order and duplicates.
 *
 * @param name the field name, an RFC 9110 token, lowercase
 * @param value the field value, without CR, LF or NUL
 */
@API(status = STABLE, since = "0.1")
public record HttpHeader(String name, String value) {
    /** @throws NullPointerException if either part is {@code null} */
    @API(status = STABLE, since = "0.1")
    public HttpHeader {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(value, "value");
    }

    /**
     * {@return the values of every field named {@code name} (compared case-insensitively), in order}
     *
     * @param headers field lines
     * @param name the field name
     */
    @API(status = STABLE, since = "0.1")
    public static List<String> valuesOf(List<HttpHeader> headers, String name) {
        List<String> out = new ArrayList<>(1);
        for (HttpHeader h : headers) {
            if (h.name().equalsIgnoreCase(name)) {
                out.add(h.value());
            }
        }
        return out;
    }

    /** {@return the name and the value's length only: header values never appear in logs} */
    @Override
    public String toString() {
        return "HttpHeader[" + name + ", " + value.length() + " chars]";
    }
}
