package dev.openshell.supervisor.proxy.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A parsed status line and header section from an upstream (RFC 9112 section 4).
 *
 * <p>The status line is the one the proxy relays: an intermediary sends its own HTTP-version in the messages it
 * forwards (RFC 9110 section 2.5, RFC 9112 section 2.3), so whatever version the upstream answered with, every head
 * built from this one (plain, scrubbed, re-framed by response stages, interim, {@code 101}) starts with
 * {@value #RELAYED_VERSION}; the upstream's own version stays in {@link #version()}, for the rules that depend on it
 * (framing, 1xx, connection reuse). A chunked re-framing of an HTTP/1.0 upstream's close-delimited body is thus
 * never labelled HTTP/1.0.
 *
 * @param statusLine the status line without CRLF: {@value #RELAYED_VERSION}, then the status code and reason phrase
 *     as received
 * @param version the upstream's version, {@code HTTP/1.1} or {@code HTTP/1.0}
 * @param status the status code, 100 to 599
 * @param fields the field lines in wire order
 */
public record ResponseHead(String statusLine, String version, int status, List<HeaderField> fields) {
    /** The version of every status line the proxy sends (RFC 9110 section 2.5). */
    public static final String RELAYED_VERSION = "HTTP/1.1";

    /** Copies the field list and puts the proxy's version in the status line. */
    public ResponseHead {
        fields = List.copyOf(fields);
        if (statusLine.startsWith("HTTP/1.") && statusLine.length() >= RELAYED_VERSION.length()) {
            statusLine = RELAYED_VERSION + statusLine.substring(RELAYED_VERSION.length());
        }
    }

    /** {@return whether the upstream answered with HTTP/1.0} */
    public boolean isHttp10() {
        return "HTTP/1.0".equals(version);
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
