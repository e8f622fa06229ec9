package dev.openshell.supervisor.proxy.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * A parsed request line and header section (RFC 9112 sections 3 and 5), exactly as received; its fields are read
 * through {@link MessageHead}.
 *
 * @param method the method token, case kept
 * @param target the request-target as received
 * @param version {@code HTTP/1.1} or {@code HTTP/1.0}
 * @param fields the field lines in wire order, duplicates kept
 */
public record RequestHead(String method, String target, String version, List<HeaderField> fields)
        implements MessageHead {
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
}
