package dev.openshell.supervisor.proxy.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A parsed status line and header section from an upstream (RFC 9112 section 4).
 *
 * @param statusLine the status line as received, without CRLF
 * @param version {@code HTTP/1.1} or {@code HTTP/1.0}
 * @param status the status code, 100 to 599
 * @param fields the field lines in wire order
 */
public record ResponseHead(String statusLine, String version, int status, List<HeaderField> fields) {
    /** Copies the field list. */
    public ResponseHead {
        fields = List.copyOf(fields);
    }

    /** {@return every field named {@code name}} @param name the name, any case */
    public List<HeaderField> all(String name) {
        List<HeaderField> out = new ArrayList<>(2);
        for (HeaderField f : fields) {
            if (f.is(name)) {
                out.add(f);
            }
        }
        return out;
    }

    /** {@return the trimmed, lowercased, non-empty list elements of every field named {@code name}} @param name the
     * name */
    public List<String> listElements(String name) {
        List<String> out = new ArrayList<>(4);
        for (HeaderField f : all(name)) {
            for (String part : f.value().split(",", -1)) {
                String t = HeadParser.trimOws(part).toLowerCase(Locale.ROOT);
                if (!t.isEmpty()) {
                    out.add(t);
                }
            }
        }
        return out;
    }
}
