package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.internal.Syntax;
import java.io.EOFException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The strict HTTP/1.1 message-head parser (RFC 9112 sections 2 to 5). Every rule the RFC lets a recipient enforce is
 * enforced; anything ambiguous is rejected rather than repaired:
 * <ul>
 *   <li>lines end in CRLF; a bare LF or bare CR is rejected (section 2.2);</li>
 *   <li>the request line is {@code method SP request-target SP HTTP-version} with single spaces (section 3);</li>
 *   <li>field names are tokens; whitespace between name and colon is rejected (section 5.1);</li>
 *   <li>a line starting with SP or HTAB (obs-fold) is rejected (section 5.2);</li>
 *   <li>field values may hold HTAB, SP, VCHAR and obs-text only; NUL, other controls and DEL are rejected (RFC 9110
 *       section 5.5).</li>
 * </ul>
 */
public final class HeadParser {
    /** Longest request line or status line, in bytes. */
    public static final int MAX_START_LINE = 8 * 1024;
    /** Largest header section (all field lines, without CRLFs), in bytes. */
    public static final int MAX_HEADER_BYTES = 64 * 1024;
    /** Most field lines in one header section. */
    public static final int MAX_FIELDS = 256;
    /** Largest trailer section, in bytes. */
    public static final int MAX_TRAILER_BYTES = 16 * 1024;
    /** Most empty lines ignored before a request line (RFC 9112 section 2.2: "at least one"). */
    public static final int MAX_LEADING_EMPTY_LINES = 4;

    private HeadParser() {
    }

    /**
     * {@return whether {@code s} is a non-empty RFC 9110 token}: kept for the callers of the old spot;
     * the rule is {@link Syntax#isToken(CharSequence)}.
     *
     * @param s a string
     */
    public static boolean isToken(String s) {
        return Syntax.isToken(s);
    }

    /** {@return {@code s} without leading and trailing SP and HTAB (OWS)} @param s a string */
    public static String trimOws(String s) {
        int start = 0;
        int end = s.length();
        while (start < end && (s.charAt(start) == ' ' || s.charAt(start) == '\t')) {
            start++;
        }
        while (end > start && (s.charAt(end - 1) == ' ' || s.charAt(end - 1) == '\t')) {
            end--;
        }
        return s.substring(start, end);
    }

    /*
     * Errors thrown only when a limit is passed, made once: a FramingException has no stack trace and no suppressed
     * exceptions, so one instance can be thrown by any thread. Building them per line cost an allocation and a
     * string concatenation on every request.
     */
    private static final FramingException REQUEST_LINE_TOO_LONG = new FramingException(414, "request_line_too_long",
            "the request line is longer than " + MAX_START_LINE + " bytes");
    private static final FramingException HEADER_SECTION_TOO_LARGE = new FramingException(431,
            "header_section_too_large",
            "the header section exceeds " + MAX_HEADER_BYTES + " bytes or " + MAX_FIELDS + " fields");
    private static final FramingException UPSTREAM_HEADER_SECTION_TOO_LARGE = FramingException.badRequest(
            "header_section_too_large", "the upstream header section is too large");
    private static final FramingException STATUS_LINE_TOO_LONG = FramingException.badRequest("status_line_too_long",
            "the upstream status line is too long");

    /**
     * Reads a request head.
     *
     * @param in the connection's input
     * @return the head, or {@code null} when the stream ends cleanly before a request starts
     * @throws FramingException when a rule above is broken (400), the request line is too long (414), the header
     *     section is too large (431), or the version is not HTTP/1.x (505)
     * @throws EOFException when the stream ends inside the head
     */
    public static RequestHead readRequestHead(HttpInput in) throws IOException, FramingException {
        FramingException tooLong = REQUEST_LINE_TOO_LONG;
        String line = in.readLine(MAX_START_LINE, tooLong);
        int empty = 0;
        while (line != null && line.isEmpty()) {
            if (++empty > MAX_LEADING_EMPTY_LINES) {
                throw FramingException.badRequest("empty_lines", "too many empty lines before the request line");
            }
            line = in.readLine(MAX_START_LINE, tooLong);
        }
        if (line == null) {
            return null;
        }
        int sp1 = line.indexOf(' ');
        int sp2 = sp1 < 0 ? -1 : line.indexOf(' ', sp1 + 1);
        if (sp1 <= 0 || sp2 < 0 || line.indexOf(' ', sp2 + 1) >= 0) {
            throw FramingException.badRequest("invalid_request_line",
                    "the request line must be 'method SP request-target SP HTTP-version' (RFC 9112 section 3)");
        }
        String method = line.substring(0, sp1);
        String target = line.substring(sp1 + 1, sp2);
        String version = line.substring(sp2 + 1);
        if (!Syntax.isToken(method)) {
            throw FramingException.badRequest("invalid_method", "the method is not a token (RFC 9112 section 3.1)");
        }
        if (target.isEmpty()) {
            throw FramingException.badRequest("invalid_request_target", "the request-target is empty");
        }
        for (int i = 0; i < target.length(); i++) {
            char c = target.charAt(i);
            if (c <= 0x20 || c >= 0x7f) {
                throw FramingException.badRequest("invalid_request_target",
                        "the request-target holds a control, space or non-ASCII byte (RFC 9112 section 3.2)");
            }
        }
        checkVersion(version);
        List<HeaderField> fields = readFields(in, MAX_HEADER_BYTES, MAX_FIELDS, HEADER_SECTION_TOO_LARGE);
        return new RequestHead(method, target, version, fields);
    }

    private static void checkVersion(String version) throws FramingException {
        if (version.equals("HTTP/1.1") || version.equals("HTTP/1.0")) {
            return;
        }
        if (version.length() == 8 && version.startsWith("HTTP/") && Character.isDigit(version.charAt(5))
                && version.charAt(6) == '.' && Character.isDigit(version.charAt(7))) {
            throw new FramingException(505, "http_version_not_supported", "only HTTP/1.1 and HTTP/1.0 are served");
        }
        throw FramingException.badRequest("invalid_http_version",
                "the HTTP-version is malformed (RFC 9112 section 2.3)");
    }

    /**
     * Reads field lines up to and including the empty line that ends them (RFC 9112 section 5; also used for the
     * trailer section of a chunked body, section 7.1.2).
     *
     * @param in the input
     * @param maxBytes the largest total of field-line bytes
     * @param maxFields the most field lines
     * @param tooLarge the error thrown past either limit
     * @return the fields in wire order
     * @throws FramingException on obs-fold, a missing colon, whitespace before the colon, a non-token name, an
     *     invalid value byte, or a limit
     * @throws EOFException if the stream ends first
     */
    public static List<HeaderField> readFields(HttpInput in, int maxBytes, int maxFields, FramingException tooLarge)
            throws IOException, FramingException {
        List<HeaderField> fields = new ArrayList<>(16);
        int budget = maxBytes;
        while (true) {
            String line = in.readLine(Math.max(budget, 0), tooLarge);
            if (line == null) {
                throw new EOFException("stream ended inside a header section");
            }
            if (line.isEmpty()) {
                return fields;
            }
            budget -= line.length();
            if (fields.size() >= maxFields) {
                throw tooLarge;
            }
            fields.add(parseField(line));
        }
    }

    /**
     * Parses one field line.
     *
     * @param line the line without CRLF
     * @return the field
     * @throws FramingException when the line breaks RFC 9112 section 5 or RFC 9110 section 5.5
     */
    public static HeaderField parseField(String line) throws FramingException {
        if (line.isEmpty()) {
            throw FramingException.badRequest("invalid_field_line", "a field line is empty (RFC 9112 section 5)");
        }
        char first = line.charAt(0);
        if (first == ' ' || first == '\t') {
            throw FramingException.badRequest("obs_fold",
                    "a field line starts with whitespace (obs-fold, RFC 9112 section 5.2)");
        }
        int colon = line.indexOf(':');
        if (colon < 0) {
            throw FramingException.badRequest("invalid_field_line", "a field line has no colon (RFC 9112 section 5)");
        }
        String name = line.substring(0, colon);
        if (name.isEmpty()) {
            throw FramingException.badRequest("invalid_field_name", "a field name is empty (RFC 9112 section 5)");
        }
        char last = name.charAt(name.length() - 1);
        if (last == ' ' || last == '\t') {
            throw FramingException.badRequest("whitespace_before_colon",
                    "whitespace between a field name and the colon (RFC 9112 section 5.1)");
        }
        if (!Syntax.isToken(name)) {
            throw FramingException.badRequest("invalid_field_name",
                    "a field name is not a token (RFC 9110 section 5.1)");
        }
        String value = trimOws(line.substring(colon + 1));
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (!Syntax.isFieldValueChar(c)) {
                throw FramingException.badRequest("invalid_field_value",
                        "a field value holds a control character (RFC 9110 section 5.5)");
            }
        }
        return new HeaderField(name, value, line);
    }

    /**
     * Reads a response head (RFC 9112 section 4).
     *
     * @param in the upstream input
     * @return the head
     * @throws FramingException when the status line or a field line is malformed
     * @throws EOFException if the stream ends before or inside the head
     */
    public static ResponseHead readResponseHead(HttpInput in) throws IOException, FramingException {
        String line = in.readLine(MAX_START_LINE, STATUS_LINE_TOO_LONG);
        if (line == null) {
            throw new EOFException("upstream closed before a response");
        }
        if (line.length() < 12 || !line.startsWith("HTTP/1.") || line.charAt(8) != ' '
                || (line.length() > 12 && line.charAt(12) != ' ')) {
            throw FramingException.badRequest("invalid_status_line", "the upstream status line is malformed");
        }
        String version = line.substring(0, 8);
        if (!version.equals("HTTP/1.1") && !version.equals("HTTP/1.0")) {
            throw FramingException.badRequest("invalid_status_line", "the upstream HTTP version is not 1.0 or 1.1");
        }
        int status = 0;
        for (int i = 9; i < 12; i++) {
            char c = line.charAt(i);
            if (c < '0' || c > '9') {
                throw FramingException.badRequest("invalid_status_line", "the upstream status code is malformed");
            }
            status = status * 10 + (c - '0');
        }
        if (status < 100 || status > 599) {
            throw FramingException.badRequest("invalid_status_line", "the upstream status code is out of range");
        }
        for (int i = 13; i < line.length(); i++) {
            char c = line.charAt(i);
            if (!Syntax.isFieldValueChar(c)) {
                throw FramingException.badRequest("invalid_status_line", "the upstream reason phrase holds a control");
            }
        }
        List<HeaderField> fields = readFields(in, MAX_HEADER_BYTES, MAX_FIELDS, UPSTREAM_HEADER_SECTION_TOO_LARGE);
        return new ResponseHead(line, version, status, fields);
    }
}
