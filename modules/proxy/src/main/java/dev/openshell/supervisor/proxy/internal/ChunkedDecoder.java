package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.internal.Syntax;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;

/**
 * A strict, streaming decoder of the chunked transfer coding (RFC 9112 section 7.1).
 *
 * <ul>
 *   <li>chunk-size is {@code 1*HEXDIG}, at most {@value #MAX_SIZE_DIGITS} significant digits; any other byte before
 *       the optional chunk extension or the CRLF is rejected, and so is a bare LF (section 7.1);</li>
 *   <li>chunk extensions must match {@code *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] )} (section 7.1.1) and
 *       are dropped;</li>
 *   <li>chunk data must be followed by exactly CRLF;</li>
 *   <li>the trailer section is parsed with the same field-line rules as a header section and then discarded: trailer
 *       fields never add to or override header fields (section 7.1.2).</li>
 * </ul>
 * Errors are {@link FramingException}s with status 400; the caller decides what they mean for an upstream.
 */
public final class ChunkedDecoder {
    /** Most significant hex digits in a chunk size (a chunk is smaller than 2^60 bytes). */
    public static final int MAX_SIZE_DIGITS = 15;
    /** Longest chunk-size line, extensions included, in bytes. */
    public static final int MAX_SIZE_LINE = 4096;

    private final HttpInput in;
    /** The last chunk without extensions or trailers, as relayed. */
    private static final byte[] LAST_CHUNK = {'0', '\r', '\n', '\r', '\n'};
    private long remaining;
    private boolean done;

    /** @param in the input positioned at the first chunk-size line */
    public ChunkedDecoder(HttpInput in) {
        this.in = in;
    }

    /** {@return whether the last chunk and the trailer section have been read} */
    public boolean isDone() {
        return done;
    }

    /** Thrown only past the limit; made once (no stack trace, no suppression: safe to share). */
    private static final FramingException TRAILER_SECTION_TOO_LARGE = FramingException.badRequest(
            "trailer_section_too_large", "the trailer section is too large");
    private static final FramingException SIZE_LINE_TOO_LONG = FramingException.badRequest("chunk_size_line_too_long",
            "a chunk-size line is longer than " + MAX_SIZE_LINE + " bytes");

    /**
     * Reads the next chunk's size line, or finishes the message.
     *
     * @return the size of the next chunk in bytes, or 0 when the message ended (last chunk and trailers consumed)
     * @throws FramingException when a rule in the class description is broken
     * @throws EOFException when the stream ends inside the body
     */
    public long nextChunk() throws IOException, FramingException {
        if (done) {
            return 0;
        }
        String line = in.readLine(MAX_SIZE_LINE, SIZE_LINE_TOO_LONG);
        if (line == null) {
            throw in.ended("stream ended before a chunk");
        }
        long size = parseSizeLine(line);
        if (size == 0) {
            try {
                HeadParser.readFields(in, HeadParser.MAX_TRAILER_BYTES, 64, TRAILER_SECTION_TOO_LARGE);
            } catch (EOFException e) {
                throw in.ended("stream ended inside the trailer section");
            }
            done = true;
        }
        remaining = size;
        return size;
    }

    /**
     * Decodes the whole body into {@code out}, chunk data only.
     *
     * @param out where decoded bytes go
     * @param maxBytes the largest decoded size accepted
     * @return the decoded size, or -1 when it would exceed {@code maxBytes} (bytes were consumed: the stream cannot
     *     be resumed)
     */
    public long decodeTo(OutputStream out, long maxBytes) throws IOException, FramingException {
        long total = 0;
        long size;
        while ((size = nextChunk()) > 0) {
            if (total + size > maxBytes) {
                return -1;
            }
            in.transferExactly(size, out);
            total += size;
            endChunk();
        }
        return total;
    }

    /**
     * Relays the body re-encoded canonically: each chunk keeps its size and data, extensions and trailers are
     * dropped, and the message ends with {@code 0 CRLF CRLF}.
     *
     * @param out the next hop
     * @param dechunk write the data only (for an HTTP/1.0 recipient) instead of re-encoding
     * @return the decoded size
     */
    public long relay(OutputStream out, boolean dechunk) throws IOException, FramingException {
        long total = 0;
        long size;
        while ((size = nextChunk()) > 0) {
            if (!dechunk) {
                out.write((Long.toHexString(size) + "\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            }
            in.transferExactly(size, out);
            endChunk();
            if (!dechunk) {
                out.write('\r');
                out.write('\n');
            }
            if (!in.bufferedStartsWith(LAST_CHUNK)) {
                // the chunk goes now (a stream's event is not held for the next one); when the last chunk arrived
                // with it, chunk and end leave in one write below
                out.flush();
            }
            total += size;
        }
        if (!dechunk) {
            out.write(LAST_CHUNK);
        }
        out.flush();
        return total;
    }

    /**
     * {@return the decoded chunk data as a stream} It ends after the last chunk and the trailer section (trailers
     * are discarded); a framing error surfaces as {@link HttpInput#malformed} (for an upstream's stream an
     * {@link UpstreamIOException} naming the rule), with the read that brought the chunk's data when its CRLF is
     * buffered already. Closing it does nothing.
     */
    public java.io.InputStream dataStream() {
        return new java.io.InputStream() {
            private long left;
            private boolean inChunk;

            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                if (len == 0) {
                    return 0;
                }
                try {
                    while (left == 0) {
                        if (done) {
                            return -1;
                        }
                        if (inChunk) {
                            endChunk();
                            inChunk = false;
                        }
                        long size = nextChunk();
                        if (size == 0) {
                            return -1;
                        }
                        left = size;
                        inChunk = true;
                    }
                } catch (FramingException e) {
                    throw in.malformed(e);
                }
                int n = in.read(b, off, (int) Math.min(len, left));
                if (n < 0) {
                    throw in.ended("stream ended inside a chunk");
                }
                left -= n;
                if (left == 0 && in.buffered() >= 2) {
                    // the chunk's CRLF is here already: a framing error surfaces with this read, so a body broken
                    // right after its first chunk is refused before any of it is relayed (ResponseFailure)
                    try {
                        endChunk();
                    } catch (FramingException e) {
                        throw in.malformed(e);
                    }
                    inChunk = false;
                }
                return n;
            }
        };
    }

    private void endChunk() throws IOException, FramingException {
        int cr = in.read();
        int lf = in.read();
        if (cr < 0 || lf < 0) {
            throw in.ended("stream ended inside a chunk");
        }
        if (cr != '\r' || lf != '\n') {
            throw FramingException.badRequest("chunk_missing_crlf",
                    "chunk data is not followed by CRLF (RFC 9112 section 7.1)");
        }
        remaining = 0;
    }

    /**
     * Parses a chunk-size line (without its CRLF).
     *
     * @param line the line
     * @return the chunk size in bytes
     * @throws FramingException when malformed
     */
    public static long parseSizeLine(String line) throws FramingException {
        int i = 0;
        int n = line.length();
        long size = 0;
        int significant = 0;
        int digit;
        while (i < n && (digit = Syntax.hexDigit(line.charAt(i))) >= 0) {
            // Count digits, not value: the limit is checked before the digit is added, so the size never wraps
            // (16 or 17 hex digits would otherwise read as -1 or 0, the last chunk).
            if ((significant > 0 || digit != 0) && ++significant > MAX_SIZE_DIGITS) {
                throw invalidSize();
            }
            size = size * 16 + digit;
            i++;
        }
        if (i == 0) {
            throw invalidSize();
        }
        // chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
        while (i < n) {
            i = skipWs(line, i);
            if (i >= n || line.charAt(i) != ';') {
                throw invalidSize();
            }
            i = skipWs(line, i + 1);
            int start = i;
            while (i < n && Syntax.isTchar(line.charAt(i))) {
                i++;
            }
            if (i == start) {
                throw invalidSize();
            }
            int afterName = skipWs(line, i);
            if (afterName < n && line.charAt(afterName) == '=') {
                i = skipWs(line, afterName + 1);
                if (i < n && line.charAt(i) == '"') {
                    i = skipQuoted(line, i);
                } else {
                    start = i;
                    while (i < n && Syntax.isTchar(line.charAt(i))) {
                        i++;
                    }
                    if (i == start) {
                        throw invalidSize();
                    }
                }
            } else {
                i = afterName;
            }
        }
        return size;
    }

    private static int skipQuoted(String s, int i) throws FramingException {
        i++;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c == '"') {
                return i + 1;
            }
            if (c == '\\') {
                i++;
                if (i >= s.length()) {
                    throw invalidSize();
                }
                c = s.charAt(i);
                if (!Syntax.isFieldValueChar(c)) {
                    throw invalidSize();
                }
            } else if (!Syntax.isFieldValueChar(c)) {
                throw invalidSize();
            }
            i++;
        }
        throw invalidSize();
    }

    private static int skipWs(String s, int i) {
        while (i < s.length() && (s.charAt(i) == ' ' || s.charAt(i) == '\t')) {
            i++;
        }
        return i;
    }

    private static FramingException invalidSize() {
        return FramingException.badRequest("invalid_chunk_size",
                "a chunk-size line is not 1*HEXDIG with valid extensions (RFC 9112 section 7.1)");
    }
}
