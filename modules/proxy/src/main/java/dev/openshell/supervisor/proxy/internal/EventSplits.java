package dev.openshell.supervisor.proxy.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.Objects;

/**
 * Scrubs a value split across two events of a {@code text/event-stream} body (WHATWG HTML, "Server-sent events"),
 * as a client that joins the data of successive events (a token stream) would read it: the end of one event's last
 * {@code data} value and the start of the next event's first {@code data} value. The part in the first event is
 * removed and the part in the second becomes the placeholder ({@link SecretScrubber#scrubOrderedSplit}), so their join
 * reads the placeholder.
 *
 * <p>Sits between the body scrubber ({@link SecretScrubber.Scrubbing}, which already replaced every whole value) and
 * the client. Complete events go on at once, except an event whose last {@code data} value ends with the start of a
 * searched form: that one event is held until the next event is complete (or the body ends), so a stream that pauses
 * is delayed only when its last event could start a value. Bounded: at most one held event and one event being read,
 * each at most {@value #MAX_EVENT} bytes; a longer event is written as it arrives and never joined.
 *
 * <p>Not thread-safe: one body, one thread.
 */
final class EventSplits extends OutputStream {
    /** The longest event held or joined, in bytes. */
    static final int MAX_EVENT = 64 * 1024;

    private final SecretScrubber scrubber;
    private final OutputStream sink;
    /** The bytes of the event being read (after the last event boundary). */
    private final ByteArrayOutputStream current = new ByteArrayOutputStream();
    /** A complete event whose last data value may start a value, not yet written; {@code null} when none. */
    private byte[] held;
    /** Whether the event being read grew over {@link #MAX_EVENT}: its bytes pass through until its end. */
    private boolean passing;
    /** The last byte seen, for line ends split across writes ({@code \r\n}). */
    private int last = -1;
    /** Whether the bytes since the last line end are empty (a line end now ends the event). */
    private boolean lineEmpty = true;

    EventSplits(SecretScrubber scrubber, OutputStream sink) {
        this.scrubber = Objects.requireNonNull(scrubber, "scrubber");
        this.sink = Objects.requireNonNull(sink, "sink");
    }

    /**
     * {@return a whole event-stream body, already scrubbed whole, with values split across two events replaced}
     *
     * @param scrubber the response's scrubber (its match count grows by each replacement)
     * @param body the body
     */
    static byte[] whole(SecretScrubber scrubber, byte[] body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(body.length + 64);
        try {
            EventSplits events = new EventSplits(scrubber, out);
            events.write(body, 0, body.length);
            events.finish();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return out.toByteArray();
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int n) throws IOException {
        Objects.checkFromIndexSize(off, n, b.length);
        int from = off;
        for (int i = off; i < off + n; i++) {
            int c = b[i] & 0xff;
            boolean lineEnd = c == '\n' && last != '\r' || c == '\r';
            boolean crlfTail = c == '\n' && last == '\r';
            last = c;
            if (crlfTail) {
                continue; // the LF of a CRLF: the CR already ended the line
            }
            if (!lineEnd) {
                lineEmpty = false;
                continue;
            }
            boolean eventEnd = lineEmpty;
            lineEmpty = true;
            if (eventEnd) {
                int end = i + 1 < off + n && c == '\r' && b[i + 1] == '\n' ? i + 2 : i + 1;
                append(b, from, end - from);
                from = end;
                i = end - 1;
                last = b[i] & 0xff;
                eventEnded();
            }
        }
        append(b, from, off + n - from);
    }

    /** Adds bytes to the event being read, or passes them when it is too long to join. */
    private void append(byte[] b, int off, int n) throws IOException {
        if (n == 0) {
            return;
        }
        if (!passing && current.size() + n > MAX_EVENT) {
            writeHeld();
            current.writeTo(sink);
            current.reset();
            passing = true;
        }
        if (passing) {
            sink.write(b, off, n);
        } else {
            current.write(b, off, n);
        }
    }

    private void eventEnded() throws IOException {
        if (passing) {
            passing = false;
            return;
        }
        byte[] event = current.toByteArray();
        current.reset();
        if (held != null) {
            byte[][] joined = join(held, event);
            held = null;
            sink.write(joined[0]);
            event = joined[1];
        }
        if (scrubber.mayStartValue(lastData(event))) {
            held = event;
        } else {
            sink.write(event);
        }
    }

    private void writeHeld() throws IOException {
        if (held != null) {
            sink.write(held);
            held = null;
        }
    }

    @Override
    public void flush() throws IOException {
        sink.flush();
    }

    /** Writes what is held and the unfinished event (the end of the body). Does not close the sink. */
    void finish() throws IOException {
        writeHeld();
        current.writeTo(sink);
        current.reset();
    }

    /**
     * {@return the two events, with a value split from the end of the first's last {@code data} value to the start
     * of the second's first replaced}
     */
    private byte[][] join(byte[] first, byte[] second) {
        int[] a = dataLine(first, true);
        int[] b = dataLine(second, false);
        if (a == null || b == null) {
            return new byte[][] {first, second};
        }
        byte[][] values = {Arrays.copyOfRange(first, a[0], a[1]), Arrays.copyOfRange(second, b[0], b[1])};
        long before = scrubber.matches();
        scrubber.scrubOrderedSplit(values);
        if (scrubber.matches() == before) {
            return new byte[][] {first, second};
        }
        return new byte[][] {splice(first, a, values[0]), splice(second, b, values[1])};
    }

    /** {@return {@code text} with {@code [at[0], at[1])} replaced by {@code part}} */
    private static byte[] splice(byte[] text, int[] at, byte[] part) {
        byte[] out = new byte[text.length - (at[1] - at[0]) + part.length];
        System.arraycopy(text, 0, out, 0, at[0]);
        System.arraycopy(part, 0, out, at[0], part.length);
        System.arraycopy(text, at[1], out, at[0] + part.length, text.length - at[1]);
        return out;
    }

    /** {@return the value of the last {@code data} line of {@code event}, empty when it has none} */
    static byte[] lastData(byte[] event) {
        int[] at = dataLine(event, true);
        return at == null ? new byte[0] : Arrays.copyOfRange(event, at[0], at[1]);
    }

    /**
     * {@return the start and end of the value of the first (or last) {@code data} line of an event, without the one
     * space the format drops after the colon; {@code null} when it has none}
     */
    static int[] dataLine(byte[] event, boolean lastOne) {
        int[] found = null;
        int start = 0;
        while (start < event.length) {
            int end = start;
            while (end < event.length && event[end] != '\n' && event[end] != '\r') {
                end++;
            }
            if (end - start >= 5 && event[start] == 'd' && event[start + 1] == 'a' && event[start + 2] == 't'
                    && event[start + 3] == 'a' && event[start + 4] == ':') {
                int v = start + 5 < end && event[start + 5] == ' ' ? start + 6 : start + 5;
                found = new int[] {v, end};
                if (!lastOne) {
                    return found;
                }
            }
            start = end + (end + 1 < event.length && event[end] == '\r' && event[end + 1] == '\n' ? 2 : 1);
        }
        return found;
    }
}
