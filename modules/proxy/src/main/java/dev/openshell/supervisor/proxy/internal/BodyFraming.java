package dev.openshell.supervisor.proxy.internal;

import java.util.List;

/**
 * How a message body is delimited (RFC 9112 section 6).
 *
 * @param kind the delimiting kind
 * @param length the length in bytes for {@link Kind#LENGTH}, else -1
 */
public record BodyFraming(Kind kind, long length) {
    /** The three ways a body can be delimited. */
    public enum Kind {
        /** No body. */
        NONE,
        /** Exactly {@code length} bytes (Content-Length). */
        LENGTH,
        /** The chunked transfer coding. */
        CHUNKED,
        /** Until the connection closes (responses only). */
        UNTIL_CLOSE
    }

    /** No body. */
    public static final BodyFraming NONE = new BodyFraming(Kind.NONE, -1);
    /** Chunked. */
    public static final BodyFraming CHUNKED = new BodyFraming(Kind.CHUNKED, -1);
    /** Close-delimited. */
    public static final BodyFraming UNTIL_CLOSE = new BodyFraming(Kind.UNTIL_CLOSE, -1);
    /** The most decimal digits accepted in a Content-Length (keeps the value inside a {@code long}). */
    public static final int MAX_LENGTH_DIGITS = 18;

    /** {@return a fixed-length framing} @param length the length in bytes, 0 or more */
    public static BodyFraming length(long length) {
        return length == 0 ? new BodyFraming(Kind.LENGTH, 0) : new BodyFraming(Kind.LENGTH, length);
    }

    /** {@return whether a body follows the head (a zero Content-Length counts as no body)} */
    public boolean hasBody() {
        return kind == Kind.CHUNKED || kind == Kind.UNTIL_CLOSE || (kind == Kind.LENGTH && length > 0);
    }

    /**
     * Decides a request's framing (RFC 9112 section 6.1 to 6.3), rejecting every ambiguous combination.
     *
     * @param head the request head
     * @return the framing
     * @throws FramingException 400 for Transfer-Encoding in HTTP/1.0, Content-Length together with
     *     Transfer-Encoding, chunked not final or repeated, more than one Content-Length field line (even with equal
     *     values, RFC 9110 section 8.6 allows rejecting), a Content-Length that is not 1*DIGIT or has more than
     *     {@value #MAX_LENGTH_DIGITS} digits; 501 for a transfer coding other than chunked
     */
    public static BodyFraming forRequest(RequestHead head) throws FramingException {
        List<HeaderField> te = head.all("transfer-encoding");
        List<HeaderField> cl = head.all("content-length");
        if (!te.isEmpty()) {
            if (head.isHttp10()) {
                throw FramingException.badRequest("transfer_encoding_in_http10",
                        "Transfer-Encoding in an HTTP/1.0 request (RFC 9112 section 6.1)");
            }
            if (!cl.isEmpty()) {
                throw FramingException.badRequest("content_length_with_transfer_encoding",
                        "both Content-Length and Transfer-Encoding (RFC 9112 section 6.1)");
            }
            List<String> codings = head.listElements("transfer-encoding");
            checkCodings(codings);
            return CHUNKED;
        }
        if (cl.isEmpty()) {
            return NONE;
        }
        if (cl.size() > 1) {
            throw FramingException.badRequest("conflicting_content_length",
                    "more than one Content-Length field line (RFC 9110 section 8.6)");
        }
        return length(parseContentLength(cl.get(0).value()));
    }

    private static void checkCodings(List<String> codings) throws FramingException {
        if (codings.isEmpty() || !codings.get(codings.size() - 1).equals("chunked")) {
            throw FramingException.badRequest("chunked_not_final",
                    "Transfer-Encoding whose final coding is not chunked (RFC 9112 section 6.1)");
        }
        for (int i = 0; i < codings.size() - 1; i++) {
            if (codings.get(i).equals("chunked")) {
                throw FramingException.badRequest("chunked_twice",
                        "chunked applied more than once (RFC 9112 section 6.1)");
            }
            throw new FramingException(501, "unsupported_transfer_coding",
                    "only the chunked transfer coding is supported (RFC 9112 section 6.1)");
        }
    }

    /**
     * Parses a Content-Length value (RFC 9110 section 8.6): {@code 1*DIGIT}, at most {@value #MAX_LENGTH_DIGITS}
     * digits; lists such as {@code 5, 5} are rejected.
     *
     * @param value the trimmed field value
     * @return the length in bytes
     * @throws FramingException 400 when malformed
     */
    public static long parseContentLength(String value) throws FramingException {
        if (value.isEmpty() || value.length() > MAX_LENGTH_DIGITS) {
            throw FramingException.badRequest("invalid_content_length",
                    "Content-Length is not 1 to " + MAX_LENGTH_DIGITS + " digits (RFC 9110 section 8.6)");
        }
        long n = 0;
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < '0' || c > '9') {
                throw FramingException.badRequest("invalid_content_length",
                        "Content-Length is not 1*DIGIT (RFC 9110 section 8.6)");
            }
            n = n * 10 + (c - '0');
        }
        return n;
    }

    /**
     * Decides a response's framing (RFC 9112 section 6.3).
     *
     * @param head the response head
     * @param requestMethod the method of the request it answers
     * @return the framing
     * @throws FramingException when Content-Length is invalid or conflicting, Transfer-Encoding is anything but
     *     {@code chunked}, or an HTTP/1.0 response carries Transfer-Encoding at all (RFC 9112 section 6.1: its framing
     *     is faulty, even with a Content-Length and whatever the status or method) — an unrecoverable upstream error
     */
    public static BodyFraming forResponse(ResponseHead head, String requestMethod) throws FramingException {
        if (head.isHttp10() && !head.all("transfer-encoding").isEmpty()) {
            throw FramingException.badRequest("transfer_encoding_in_http10",
                    "the upstream sent Transfer-Encoding in an HTTP/1.0 response (RFC 9112 section 6.1)");
        }
        int status = head.status();
        if (requestMethod.equals("HEAD") || status < 200 || status == 204 || status == 304) {
            return NONE;
        }
        if (!head.all("transfer-encoding").isEmpty()) {
            // the proxy never offers a transfer coding (it drops the client's TE), so chunked is the only one an
            // upstream may send (RFC 9110 section 10.1.4, RFC 9112 section 6.1). Any other would reach the client
            // without being inspected or scrubbed (its label is dropped with the re-framing), so it is refused.
            List<String> codings = head.listElements("transfer-encoding");
            if (codings.size() == 1 && codings.get(0).equals("chunked")) {
                return CHUNKED;
            }
            throw FramingException.badRequest("unsupported_transfer_coding",
                    "the upstream sent a transfer coding other than chunked, which the proxy never accepts");
        }
        List<HeaderField> cl = head.all("content-length");
        if (cl.isEmpty()) {
            return UNTIL_CLOSE;
        }
        long first = parseContentLength(cl.get(0).value());
        for (HeaderField f : cl) {
            if (parseContentLength(f.value()) != first) {
                throw FramingException.badRequest("conflicting_content_length",
                        "the upstream sent conflicting Content-Length values");
            }
        }
        return length(first);
    }
}
