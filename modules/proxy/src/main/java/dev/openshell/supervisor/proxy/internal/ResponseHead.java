package dev.openshell.supervisor.proxy.internal;

import java.util.List;

/**
 * A parsed status line and header section from an upstream (RFC 9112 section 4); its fields are read through
 * {@link MessageHead}.
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
public record ResponseHead(String statusLine, String version, int status, List<HeaderField> fields)
        implements MessageHead {
    /** The version of every status line the proxy sends (RFC 9110 section 2.5). */
    public static final String RELAYED_VERSION = "HTTP/1.1";

    /** Copies the field list and puts the proxy's version in the status line. */
    public ResponseHead {
        fields = List.copyOf(fields);
        if (statusLine.startsWith("HTTP/1.") && statusLine.length() >= RELAYED_VERSION.length()) {
            statusLine = RELAYED_VERSION + statusLine.substring(RELAYED_VERSION.length());
        }
    }
}
