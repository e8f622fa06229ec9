package dev.openshell.supervisor.proxy.internal;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * A buffered byte source with the strict line reading of RFC 9112 section 2.2: every line ends in CRLF; a bare LF or a
 * bare CR is a framing error, never silently accepted. Not thread-safe: one reader at a time.
 */
public final class HttpInput extends InputStream {
    private static final int BUFFER = 16 * 1024;
    private final InputStream source;
    private final byte[] buf = new byte[BUFFER];
    private int pos;
    private int limit;
    /** Bytes read from the source so far; read by the watchdog of a minimum data rate ({@link ReadDeadline}). */
    private volatile long received;

    /** What a read that must wait for the source does first, while set ({@link #silence}); {@code null}: nothing. */
    private Silence silence;
    /** Whether the source's read timeout is the {@link #silence}'s wait (set once when holding starts). */
    private boolean waiting;

    /** Whether this is an upstream's response stream: its failures are then {@link UpstreamIOException}s. */
    private final boolean upstream;

    /**
     * Whether the reads are cut off ({@link #cutOff}): every read then fails, and only {@link #discard} reads the
     * source.
     */
    private volatile boolean cut;
    /** Whether a read of the source met the end of the stream. */
    private volatile boolean atEnd;
    /** Held by every read of the source: a {@link #discard} on another thread waits for the read in progress. */
    private final java.util.concurrent.locks.ReentrantLock sourceLock = new java.util.concurrent.locks.ReentrantLock();

    /** @param source the raw stream; reads block */
    public HttpInput(InputStream source) {
        this(source, false);
    }

    /**
     * @param source the raw stream; reads block
     * @param upstream whether it is an upstream's response stream: a message that ends early, or a chunked body that
     *     breaks its framing, is then an {@link UpstreamIOException} ({@link #ended}, {@link #malformed})
     */
    public HttpInput(InputStream source, boolean upstream) {
        this.source = source;
        this.upstream = upstream;
    }

    /**
     * {@return the failure of a stream that ended inside a message}: an {@link EOFException}, or for an upstream's
     * stream an {@link UpstreamIOException#ended} (the session then tells it from the client's failures)
     *
     * @param where where it ended, in the proxy's words
     */
    public IOException ended(String where) {
        return upstream ? UpstreamIOException.ended(where) : new EOFException(where);
    }

    /**
     * {@return the failure of a message body that broke its framing (a chunked body): for an upstream's stream an
     * {@link UpstreamIOException#invalidResponse} naming the rule, else an {@link IOException} whose cause is
     * {@code e}}
     */
    public IOException malformed(FramingException e) {
        return upstream ? UpstreamIOException.invalidResponse("the upstream's chunked body is malformed: "
                + e.getMessage()) : new IOException("malformed chunked body", e);
    }

    /**
     * A scrubbed response's release of held text when its upstream is silent (attacker pass finding 12): while it
     * holds something, a read that must wait for the source waits at most {@link #holdMillis()}; when that passes
     * without a byte, {@link #silent()} releases the held text and the read goes on waiting as usual. The read's
     * state is kept: a timed-out socket read consumes nothing (a TLS socket keeps a partial record). The source's
     * timeout is set once when holding starts and restored once when it ends (or the silence is unset), not around
     * every read.
     */
    interface Silence {
        /** {@return how long a read may wait before {@link #silent()}, in milliseconds; 0 while nothing is held} */
        int holdMillis();

        /**
         * Sets the source's read timeout.
         *
         * @param millis the timeout in milliseconds; 0 for the usual one
         */
        void waitAtMost(int millis) throws IOException;

        /** The source was silent for {@link #holdMillis()}: releases what is held. */
        void silent() throws IOException;
    }

    /**
     * Sets or unsets the silence; the source's usual read timeout comes back first if the one before had set its wait.
     * A source that cannot take it back is closed (a socket's timeout fails only then) and is read no more.
     *
     * @param s what a read that must wait does first, or {@code null} for nothing
     */
    void silence(Silence s) {
        if (waiting) {
            try {
                stopWaiting();
            } catch (IOException closed) {
                waiting = false; // closed already: never read again
            }
        }
        silence = s;
    }

    /** Gives the source its usual read timeout back, once, after a hold. */
    private void stopWaiting() throws IOException {
        waiting = false;
        silence.waitAtMost(0);
    }

    /**
     * Reads from the source, counting what it brought ({@link #received}); while the {@link Silence} holds something,
     * a read waits at most its time (the timeout set when holding started), and when that passes the held text is
     * released and the read waits as usual. Fails once the reads are {@link #cutOff cut off}, before and after the
     * read (the bytes a read brought then are counted and dropped).
     */
    private int readSource(byte[] b, int off, int len) throws IOException {
        sourceLock.lock();
        try {
            checkCut();
            int n = readSilenced(b, off, len);
            if (n > 0) {
                received += n; // under the lock: the reading thread, or a discard after a cut
            } else if (n < 0) {
                atEnd = true;
            }
            checkCut();
            return n;
        } finally {
            sourceLock.unlock();
        }
    }

    private int readSilenced(byte[] b, int off, int len) throws IOException {
        Silence s = silence;
        int millis = s == null ? 0 : s.holdMillis();
        if (millis <= 0) {
            if (waiting) {
                stopWaiting(); // nothing held any more
            }
            return source.read(b, off, len);
        }
        if (!waiting) {
            s.waitAtMost(millis);
            waiting = true;
        }
        try {
            return source.read(b, off, len);
        } catch (IOException e) {
            if (!UpstreamPool.isTimeout(e)) {
                throw e;
            }
        }
        stopWaiting();
        s.silent();
        return source.read(b, off, len);
    }

    /** Fails when the reads are cut off. */
    private void checkCut() throws IOException {
        if (cut) {
            throw new IOException("the reads of this connection were cut off (the proxy answered and closes it)");
        }
    }

    /**
     * Cuts the reads off: every read from now on fails, and a read in progress fails when it returns. Called from
     * another thread (the read watchdog, {@link ReadDeadline}) when the proxy answered and closes while the reading
     * thread may be blocked in a read: what the client still sends is then only {@link #discard discarded}
     * ({@link LingeringClose}), never read as the request.
     */
    void cutOff() {
        cut = true;
    }

    /**
     * Reads up to {@code len} bytes from the source into {@code b} to be dropped, cut off or not ({@link
     * LingeringClose}); waits for a read of the source in progress on another thread. Bytes already buffered are
     * left alone (they are read, and a close does not reset the connection over them).
     *
     * @return the bytes read, or -1 at the end of the stream
     */
    int discard(byte[] b, int len) throws IOException {
        sourceLock.lock();
        try {
            int n = source.read(b, 0, len);
            if (n > 0) {
                received += n;
            }
            return n;
        } finally {
            sourceLock.unlock();
        }
    }

    private boolean fill() throws IOException {
        if (pos < limit) {
            checkCut();
            return true;
        }
        int n = readSource(buf, 0, buf.length);
        if (n <= 0) {
            return false;
        }
        pos = 0;
        limit = n;
        return true;
    }

    /** {@return whether a read met the end of the source's stream (the peer ended it); safe from any thread} */
    boolean atEnd() {
        return atEnd;
    }

    /** {@return the bytes read from the source so far (buffered ones included); safe from any thread} */
    public long received() {
        return received;
    }

    /** {@return whether at least one byte can be read, blocking until one arrives or the stream ends} */
    public boolean awaitData() throws IOException {
        return fill();
    }

    /** {@return the next byte without consuming it, or -1 at end of stream} */
    public int peek() throws IOException {
        return fill() ? buf[pos] & 0xff : -1;
    }

    /** {@return how many bytes are buffered and readable without blocking} */
    public int buffered() {
        return limit - pos;
    }

    /** {@return whether the buffered bytes begin with {@code prefix} (all of it buffered)} @param prefix bytes */
    public boolean bufferedStartsWith(byte[] prefix) {
        if (limit - pos < prefix.length) {
            return false;
        }
        for (int i = 0; i < prefix.length; i++) {
            if (buf[pos + i] != prefix[i]) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@return whether a whole request head is buffered: the buffered bytes start with a byte that is neither CR nor
     * LF and hold a CRLF CRLF} Then reading the head cannot block: the strict line reader ends it at the first empty
     * line or fails on a broken rule before it, without reading the source again.
     */
    public boolean headBuffered() {
        if (pos >= limit || buf[pos] == '\r' || buf[pos] == '\n') {
            return false;
        }
        for (int i = pos + 1, end = limit - 3; i < end; i++) {
            if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n') {
                return true;
            }
        }
        return false;
    }

    @Override
    public int read() throws IOException {
        return fill() ? buf[pos++] & 0xff : -1;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        if (pos < limit) {
            checkCut();
            int n = Math.min(len, limit - pos);
            System.arraycopy(buf, pos, b, off, n);
            pos += n;
            return n;
        }
        if (len >= BUFFER) {
            return readSource(b, off, len);
        }
        if (!fill()) {
            return -1;
        }
        return read(b, off, len);
    }

    @Override
    public int available() throws IOException {
        return (limit - pos) + source.available();
    }

    /**
     * Reads exactly {@code len} bytes.
     *
     * @throws EOFException if the stream ends first ({@link #ended}: for an upstream an {@link UpstreamIOException})
     */
    public void readFully(byte[] b, int off, int len) throws IOException {
        while (len > 0) {
            int n = read(b, off, len);
            if (n < 0) {
                throw ended("stream ended inside a message body");
            }
            off += n;
            len -= n;
        }
    }

    /**
     * Copies exactly {@code count} bytes to {@code out}.
     *
     * @throws EOFException if the stream ends first ({@link #ended}: for an upstream an {@link UpstreamIOException})
     */
    public void transferExactly(long count, OutputStream out) throws IOException {
        transferExactly(count, out, false);
    }

    /**
     * Copies exactly {@code count} bytes to {@code out}.
     *
     * @param count the number of bytes
     * @param out the destination
     * @param flushEach flush after every read, so a slowly produced body reaches the recipient as it arrives
     * @throws EOFException if the stream ends first ({@link #ended}: for an upstream an {@link UpstreamIOException})
     */
    public void transferExactly(long count, OutputStream out, boolean flushEach) throws IOException {
        while (count > 0) {
            if (!fill()) {
                throw ended("stream ended inside a message body");
            }
            int n = (int) Math.min(count, limit - pos);
            out.write(buf, pos, n);
            pos += n;
            count -= n;
            if (flushEach && count > 0) {
                out.flush();
            }
        }
    }

    /**
     * Copies everything until the end of the stream to {@code out}, flushing after each read.
     *
     * @return the number of bytes copied
     */
    public long transferToEnd(OutputStream out) throws IOException {
        long total = 0;
        while (fill()) {
            int n = limit - pos;
            out.write(buf, pos, n);
            pos = limit;
            total += n;
            out.flush();
        }
        return total;
    }

    /**
     * Reads one line ended by CRLF (RFC 9112 section 2.2).
     *
     * @param maxBytes the longest line accepted, without the CRLF
     * @param tooLong the error to throw when the line is longer
     * @return the line bytes without CRLF, decoded as ISO-8859-1 (one char per byte); {@code null} when the stream
     *     ends before the first byte
     * @throws FramingException on a bare LF, a bare CR, or a line over {@code maxBytes}
     * @throws EOFException if the stream ends inside the line ({@link #ended})
     */
    public String readLine(int maxBytes, FramingException tooLong) throws IOException, FramingException {
        if (fill()) {
            // fast path: the whole line and its CRLF are already buffered (nearly always); one bulk decode
            int end = Math.min(limit - 1, pos + maxBytes);
            for (int i = pos; i < end; i++) {
                byte c = buf[i];
                if (c == '\r' || c == '\n') {
                    if (c == '\r' && buf[i + 1] == '\n') {
                        String line = new String(buf, pos, i - pos, StandardCharsets.ISO_8859_1);
                        pos = i + 2;
                        return line;
                    }
                    break; // a bare CR or LF: the general loop reports it
                }
            }
        }
        StringBuilder line = null;
        while (true) {
            if (!fill()) {
                if (line == null) {
                    return null;
                }
                throw ended("stream ended inside a line");
            }
            if (line == null) {
                line = new StringBuilder(64);
            }
            while (pos < limit) {
                byte c = buf[pos++];
                if (c == '\n') {
                    throw FramingException.badRequest("bare_lf",
                            "a line ends in a bare LF without CR (RFC 9112 section 2.2)");
                }
                if (c == '\r') {
                    int next = peek();
                    if (next == '\n') {
                        pos++;
                        return line.toString();
                    }
                    if (next < 0) {
                        throw ended("stream ended inside a line");
                    }
                    throw FramingException.badRequest("bare_cr",
                            "a CR is not followed by LF (RFC 9112 section 2.2)");
                }
                if (line.length() >= maxBytes) {
                    throw tooLong;
                }
                line.append((char) (c & 0xff));
            }
        }
    }
}
