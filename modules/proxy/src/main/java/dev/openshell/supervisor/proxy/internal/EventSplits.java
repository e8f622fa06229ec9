package dev.openshell.supervisor.proxy.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Scrubs a value split across the events of a {@code text/event-stream} body (WHATWG HTML, "Server-sent events"), as
 * a client that reassembles the stream's text would read it ({@link EventText}: the {@code data} values joined, and
 * for JSON data the unescaped contents of its string values, joined per field path). The parts in earlier events are
 * removed and the part in the event where the value completes becomes the placeholder, so the join reads the
 * placeholder.
 *
 * <p>Sits between the body scrubber ({@link SecretScrubber.Scrubbing}, which already replaced every whole value) and
 * the client. Events are held while the end of a joined text is a prefix (of at least one byte) of a searched form,
 * together with every later event (a comment, {@code retry:}, {@code id:}), and released when the text can no longer
 * complete a value, when a value completed and was replaced, or at the end of the body; any other event goes on at
 * once. Bounded: at most {@value #MAX_HELD} bytes and {@value #MAX_HELD_EVENTS} events are held; past the bound the
 * stream is closed ({@link IOException}) rather than deliver what could be part of a value. An event longer than
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

    /** The stream went past the bound while its held events could still complete a value: it is closed. */
    static final class HeldTooLong extends IOException {
        private static final long serialVersionUID = 1L;

        HeldTooLong() {
            super("event stream closed: past 64 KiB or 4096 held events, the held text could still complete a value");
        }
    }

    private final SecretScrubber scrubber;
    private final OutputStream sink;
    /** Whether the bounds apply (a streamed body) or not (a whole body, already in memory). */
    private final boolean bounded;
    /** The searched forms and their replacements, as ISO-8859-1 strings of their bytes. */
    private final String[] forms;
    private final String[] replacements;
    private final int longest;
    /** The bytes of the event being read (after the last event boundary). */
    private final ByteArrayOutputStream current = new ByteArrayOutputStream();
    /** Events held, oldest first; the first is number {@link #base}. */
    private final ArrayDeque<byte[]> held = new ArrayDeque<>();
    private long base;
    private int heldBytes;
    /** The pieces of the held events' text, by channel. */
    private final Map<String, List<EventText.Piece>> channels = new LinkedHashMap<>();
    /** Whether the event being read grew over {@link #MAX_EVENT}: its bytes pass through until its end. */
    private boolean passing;
    /** The last byte seen, for line ends split across writes ({@code \r\n}). */
    private int last = -1;
    /** Whether the bytes since the last line end are empty (a line end now ends the event). */
    private boolean lineEmpty = true;

    EventSplits(SecretScrubber scrubber, OutputStream sink) {
        this(scrubber, sink, true);
    }

    private EventSplits(SecretScrubber scrubber, OutputStream sink, boolean bounded) {
        this.scrubber = Objects.requireNonNull(scrubber, "scrubber");
        this.sink = Objects.requireNonNull(sink, "sink");
        this.bounded = bounded;
        forms = new String[scrubber.forms.length];
        replacements = new String[forms.length];
        int max = 0;
        for (int f = 0; f < forms.length; f++) {
            forms[f] = new String(scrubber.forms[f], StandardCharsets.ISO_8859_1);
            replacements[f] = new String(scrubber.replacements[f], StandardCharsets.ISO_8859_1);
            max = Math.max(max, forms[f].length());
        }
        longest = max;
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
            passing = false;
            return;
        }
        byte[] event = current.toByteArray();
        current.reset();
        List<EventText.Piece> pieces = EventText.pieces(event, base + held.size());
        if (held.isEmpty()) {
            if (pieces.isEmpty()) {
                sink.write(event);
                return;
            }
        }
        held.add(event);
        heldBytes += event.length;
        for (EventText.Piece p : pieces) {
            channels.computeIfAbsent(p.channel, k -> new ArrayList<>()).add(p);
        }
        long keepFrom = base + held.size();
        for (List<EventText.Piece> channel : channels.values()) {
            replaceWhole(channel, base + held.size() - 1);
            keepFrom = Math.min(keepFrom, openFrom(channel));
        }
        release(keepFrom);
        if (bounded && (heldBytes > MAX_HELD || held.size() > MAX_HELD_EVENTS)) {
            throw new HeldTooLong();
        }
    }

    /** {@return the text of a channel's pieces joined} */
    private static String text(List<EventText.Piece> channel) {
        StringBuilder t = new StringBuilder();
        for (EventText.Piece p : channel) {
            t.append(p.text);
        }
        return t.toString();
    }

    /**
     * Replaces (and counts) every whole form in the joined text of a channel that ends in the pieces of event
     * {@code newest} (the text before them was searched when it arrived).
     */
    private void replaceWhole(List<EventText.Piece> channel, long newest) {
        int added = 0;
        for (EventText.Piece p : channel) {
            added += p.event == newest ? p.text.length() : 0;
        }
        int from = Math.max(0, text(channel).length() - added - longest + 1);
        while (true) {
            String t = text(channel);
            int at = -1;
            int form = -1;
            for (int f = 0; f < forms.length; f++) {
                int i = t.indexOf(forms[f], from);
                if (i >= 0 && (at < 0 || i < at || i == at && forms[f].length() > forms[form].length())) {
                    at = i;
                    form = f;
                }
            }
            if (at < 0) {
                return;
            }
            edit(channel, at, at + forms[form].length(), replacements[form]);
            scrubber.count(scrubber.owner[form]);
            from = at + replacements[form].length();
        }
    }

    /** Removes {@code [s, e)} of a channel's text, the placeholder in the piece where it ends. */
    private static void edit(List<EventText.Piece> channel, int s, int e, String placeholder) {
        int off = 0;
        EventText.Piece lastPart = null;
        for (EventText.Piece p : channel) {
            if (Math.max(s, off) < Math.min(e, off + p.text.length())) {
                lastPart = p;
            }
            off += p.text.length();
        }
        off = 0;
        for (EventText.Piece p : channel) {
            int len = p.text.length();
            int a = Math.max(s, off);
            int b = Math.min(e, off + len);
            if (a < b) {
                p.text = p.text.substring(0, a - off) + (p == lastPart ? placeholder : "") + p.text.substring(b - off);
                p.dirty = true;
            }
            off += len;
        }
    }

    /**
     * {@return the number of the event where the longest end of a channel's text that starts a form begins;
     * {@link Long#MAX_VALUE} when no end of it starts one}
     */
    private long openFrom(List<EventText.Piece> channel) {
        String t = text(channel);
        for (int p = Math.max(0, t.length() - longest + 1); p < t.length(); p++) {
            String end = t.substring(p);
            for (String f : forms) {
                if (f.length() > end.length() && f.startsWith(end)) {
                    int off = 0;
                    for (EventText.Piece piece : channel) {
                        off += piece.text.length();
                        if (p < off) {
                            return piece.event;
                        }
                    }
                }
            }
        }
        return Long.MAX_VALUE;
    }

    /** Writes the held events numbered before {@code keepFrom}, with their replaced pieces. */
    private void release(long keepFrom) throws IOException {
        while (!held.isEmpty() && base < keepFrom) {
            byte[] event = held.removeFirst();
            heldBytes -= event.length;
            List<EventText.Piece> edited = new ArrayList<>();
            for (List<EventText.Piece> channel : channels.values()) {
                for (EventText.Piece p : channel) {
                    if (p.event == base && p.dirty) {
                        edited.add(p);
                    }
                }
            }
            edited.sort((x, y) -> Integer.compare(y.start, x.start));
            for (EventText.Piece p : edited) {
                event = splice(event, p.start, p.end, p.bytes());
            }
            sink.write(event);
            base++;
        }
        if (held.isEmpty()) {
            channels.clear();
            return;
        }
        channels.values().forEach(c -> c.removeIf(p -> p.event < base));
        channels.values().removeIf(List::isEmpty);
    }

    @Override
    public void flush() throws IOException {
        sink.flush();
    }

    /** Writes what is held and the unfinished event (the end of the body). Does not close the sink. */
    void finish() throws IOException {
        release(Long.MAX_VALUE);
        current.writeTo(sink);
        current.reset();
    }

    /** {@return {@code text} with {@code [from, to)} replaced by {@code part}} */
    private static byte[] splice(byte[] text, int from, int to, byte[] part) {
        byte[] out = new byte[text.length - (to - from) + part.length];
        System.arraycopy(text, 0, out, 0, from);
        System.arraycopy(part, 0, out, from, part.length);
        System.arraycopy(text, to, out, from + part.length, text.length - to);
        return out;
    }
}
