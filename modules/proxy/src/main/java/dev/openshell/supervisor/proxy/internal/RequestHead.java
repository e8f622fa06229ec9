package dev.openshell.supervisor.proxy.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A parsed request line and header section (RFC 9112 sections 3 and 5), exactly as received.
 *
 * @param method the method token, case kept
 * @param target the request-target as received
 * @param version {@code HTTP/1.1} or {@code HTTP/1.0}
 * @param fields the field lines in wire order, duplicates kept
 */
public record RequestHead(String method, String target, String version, List<HeaderField> fields) {
    /** Copies the field list. */
    public RequestHead {
        fields = List.copyOf(fields);
    }

    /** {@return this head with {@code field} added after its field lines} @param field the field line to add */
    public RequestHead withField(HeaderField field) {
        List<HeaderField> more = new ArrayList<>(fields);
        more.add(field);
        return new RequestHead(method, target, version, more);
    }

    /** {@return whether the version is HTTP/1.0} */
    public boolean isHttp10() {
        return "HTTP/1.0".equals(version);
    }

    /** {@return every field named {@code name}, compared ignoring ASCII case} @param name the name */
    public List<HeaderField> all(String name) {
        List<HeaderField> out = new ArrayList<>(2);
        for (HeaderField f : fields) {
            if (f.is(name)) {
                out.add(f);
            }
        }
        return out;
    }

    /**
     * {@return the comma-separated list elements of every field named {@code name}, trimmed, lowercased, empty
     * elements dropped (RFC 9110 section 5.6.1)}
     *
     * @param name the field name
     */
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
