package dev.openshell.supervisor.proxy.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Objects;

/**
 * Scrubs a value split across the events of a {@code text/event-stream} body (WHATWG HTML, "Server-sent events"), as
 * a client that reassembles the stream's text would read it ({@link EventText}: the {@code data} values joined, and
 * for JSON data the unescaped contents of its string values, joined per field path). The parts in earlier events are
 * removed and the part in the event where the value completes becomes the placeholder, so the join reads the
 * placeholder.
 *
 * <p>Sits between the body scrubber ({@link SecretScrubber.Scrubbing}, which already replaced every whole value) and
 * the client; the joined text and the holding are {@link HeldText}'s (linear in the stream's text). Events are held
 * on a schedule that does not depend on any secret's value ({@link HeldText}: the last characters of each joined
 * text, a form's length minus one, are always held; an event goes once enough text of its fields follows it, or
 * {@value #AFTER_EVENTS} events or {@value #AFTER_BYTES} bytes follow it), together with every earlier one; at the
 * end of the body, and when the upstream has been silent for {@link ResponseScrub#SILENCE_MILLIS} ms
 * ({@link #release}), every complete event goes. Bounded: at most {@value #MAX_HELD} bytes and
 * {@value #MAX_HELD_EVENTS} events are held; past the bound (events larger than the schedule expects) the stream is
 * closed ({@link IOException}) rather than deliver what could be part of a value. An event longer than
 * {@value #MAX_EVENT} bytes while nothing is held is written as it arrives and never joined.
 *
 * <p>Not thread-safe: one body, one thread.
 */
final class EventSplits extends OutputStream {
    /** The longest event joined, in bytes. */
    static final int MAX_EVENT = 64 * 1024;
    /** The most bytes of events held. */
    static final int MAX_HELD = 64 * 1024;
    /** The most events held. */
    static final int MAX_HELD_EVENTS = 4096;
    /** The oldest held event goes once this many events follow it. */
    static final int AFTER_EVENTS = 256;
    /** The oldest held event goes once this many bytes of events follow it. */
    static final int AFTER_BYTES = MAX_HELD / 2;

    /**
     * The stream went past a bound of what the scrub may hold while a value could be split there (held events, or more
     * bytes of ISO 2022 / HZ sequences held than {@link VisibleWindow#tooLong} allows, whatever they spell): it is closed, and audited as uninspectable.
     */
    static final class HeldTooLong extends IOException {
        private static final long serialVersionUID = 1L;

        HeldTooLong() {
            this("event stream closed: past 64 KiB or 4096 held events, the held text could be part of a value");
        }

        /** @param message what went past which bound (no content) */
        HeldTooLong(String message) {
            super(message);
        }
    }

    private final OutputStream sink;
    /** Whether the bounds apply (a streamed body) or not (a whole body, already in memory). */
    private final boolean bounded;
    /** The held events and their joined text. */
    final HeldText held;
    /** The bytes of the event being read (after the last event boundary). */
    private final ByteArrayOutputStream current = new ByteArrayOutputStream();
    /** Whether the event being read grew over {@link #MAX_EVENT}: its bytes pass through until its end. */
    private boolean passing;
    /** The last byte seen, for line ends split across writes ({@code \r\n}). */
    private int last = -1;
    /** Whether the bytes since the last line end are empty (a line end now ends the event). */
    private boolean lineEmpty = true;
    /** Whether an event ended already (a byte order mark is read only before the first). */
    private boolean started;
    /** Whether the body's first bytes still decide whether it is an event stream ({@link #sniffing}). */
    private boolean undecided;
    /** Whether the body turned out not to be an event stream: its bytes pass unchanged. */
    private boolean plain;

    EventSplits(SecretScrubber scrubber, OutputStream sink) {
        this(scrubber, sink, true);
    }

    private EventSplits(SecretScrubber scrubber, OutputStream sink, boolean bounded) {
        this.held = bounded ? new HeldText(scrubber, AFTER_EVENTS, AFTER_BYTES)
                : new HeldText(scrubber, Integer.MAX_VALUE, Long.MAX_VALUE); // a whole body: nothing is observable
        this.sink = Objects.requireNonNull(sink, "sink");
        this.bounded = bounded;
    }

    /**
     * {@return a whole event-stream body, already scrubbed whole, with values split across its events replaced}
     *
     * @param scrubber the response's scrubber (its match count grows by each replacement)
     * @param body the body
     */
    static byte[] whole(SecretScrubber scrubber, byte[] body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(body.length + 64);
        try {
            EventSplits events = new EventSplits(scrubber, out, false);
            events.write(body, 0, body.length);
            events.finish();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e); // unbounded, into a ByteArrayOutputStream: does not fail
        }
        return out.toByteArray();
    }

    /**
     * {@return this splitter, reading the body as an event stream only when its first bytes are one}
     * ({@link EventText#start}: a field line or a comment, whatever the media type says); other bodies pass unchanged.
     * The first bytes (at most 9) wait until they decide.
     */
    EventSplits sniffing() {
        undecided = true;
        return this;
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int n) throws IOException {
        Objects.checkFromIndexSize(off, n, b.length);
        if (undecided) {
            current.write(b, off, n);
            b = current.toByteArray();
            EventText.Start start = EventText.start(b, b.length);
            if (start == EventText.Start.UNDECIDED) {
                return;
            }
            undecided = false;
            plain = start == EventText.Start.OTHER;
            current.reset();
            off = 0;
            n = b.length; // from the first byte, as an event stream or not
        }
        if (plain) {
            sink.write(b, off, n);
            return;
        }
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
        if (bounded && !passing && current.size() + n > MAX_EVENT) {
            if (!held.isEmpty()) {
                throw new HeldTooLong();
            }
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
            started = true;
            passing = false;
            return;
        }
        boolean first = !started;
        started = true;
        byte[] event = current.toByteArray();
        current.reset();
        for (byte[] out : held.add(event, EventText.pieces(event, held.next(), first))) {
            sink.write(out);
        }
        if (bounded && (held.heldBytes() > MAX_HELD || held.heldUnits() > MAX_HELD_EVENTS)) {
            throw new HeldTooLong();
        }
    }

    @Override
    public void flush() throws IOException {
        sink.flush();
    }

    /**
     * Writes every held complete event (the upstream went silent); the unfinished event stays until its end.
     * Does not flush.
     */
    void release() throws IOException {
        for (byte[] out : held.releaseAll()) {
            sink.write(out);
        }
    }

    /**
     * Writes what is held and the unfinished event (the end of the body), joined as if it had ended: WHATWG clients
     * drop it, readers that dispatch at the end of the stream read it. Does not close the sink.
     */
    void finish() throws IOException {
        if (!passing && !plain && !undecided && current.size() > 0) {
            byte[] event = current.toByteArray();
            current.reset();
            for (byte[] out : held.add(event, EventText.pieces(event, held.next(), !started))) {
                sink.write(out);
            }
        }
        for (byte[] out : held.releaseAll()) {
            sink.write(out);
        }
        current.writeTo(sink);
        current.reset();
    }
}
