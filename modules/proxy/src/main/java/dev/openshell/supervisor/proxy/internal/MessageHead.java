package dev.openshell.supervisor.proxy.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The readings a request head ({@link RequestHead}) and a response head ({@link ResponseHead}) share: the version,
 * the field lines of one name, and their list elements (RFC 9110 section 5.6.1). One home for both.
 */
public sealed interface MessageHead permits RequestHead, ResponseHead {
    /** {@return the version as received, {@code HTTP/1.1} or {@code HTTP/1.0}: for a response, the upstream's} */
    String version();

    /** {@return the field lines in wire order, duplicates kept} */
    List<HeaderField> fields();

    /** {@return whether the version is HTTP/1.0: for a response, whether the upstream answered with HTTP/1.0} */
    default boolean isHttp10() {
        return "HTTP/1.0".equals(version());
    }

    /**
     * {@return every field named {@code name}, in wire order, compared ignoring ASCII case}
     *
     * @param name the name in lowercase (compared with each field's lowercase name, {@link HeaderField#is})
     */
    default List<HeaderField> all(String name) {
        List<HeaderField> out = new ArrayList<>(2);
        for (HeaderField f : fields()) {
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
     * @param name the field name in lowercase
     */
    default List<String> listElements(String name) {
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
