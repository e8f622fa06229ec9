package dev.openshell.supervisor.proxy.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The units of a response a client joins into one text (the events of a {@code text/event-stream},
 * {@link EventSplits}; the server messages of a scrubbed WebSocket upgrade, {@link ScrubbedMessages}), held while the
 * joined text could still complete a searched form of a secret, and scrubbed across them: the parts of a value in
 * earlier units are removed and the part in the unit where the value completes becomes the placeholder, so the join
 * reads the placeholder. Each unit's text comes as pieces by channel ({@link EventText.Piece}: the text of one channel
 * joins across units, other channels do not come between).
 *
 * <p>A unit is held while the end of a channel's joined text is a proper prefix (at least one byte) of a searched
 * form, together with every later unit, and released when no channel's end can complete a form any more. Linear: each
 * channel keeps only the joined text from where its open end starts (shorter than the longest form, plus the newest
 * unit's text), so a unit costs work in proportion to its own text and the longest form ({@link #work}), however many
 * units are held. Unbounded: the caller bounds {@link #heldBytes()} and {@link #heldUnits()}.
 *
 * <p>Not thread-safe: one response, one thread.
 */
final class HeldText {
    /** One held unit: its bytes and its pieces (their {@code dirty} text replaces their bytes on release). */
    private record Unit(byte[] bytes, List<EventText.Piece> pieces) {
    }

    /** The joined text of one channel, from where its open end starts. */
    private static final class Channel {
        /** The pieces from the one where the open end starts, each with text. */
        final ArrayDeque<EventText.Piece> pieces = new ArrayDeque<>();
        /** Their texts joined, without the first {@link #skip} characters of the first piece. */
        final StringBuilder text = new StringBuilder();
        int skip;
        /** The unit where the open end starts. */
        long open = Long.MAX_VALUE;
    }

    private final SecretScrubber scrubber;
    /** The searched forms and their replacements, as ISO-8859-1 strings of their bytes. */
    private final String[] forms;
    private final String[] replacements;
    private final int longest;
    private final ArrayDeque<Unit> held = new ArrayDeque<>();
    /** The number of the first held unit. */
    private long base;
    private int heldBytes;
    /** The channels whose end is open. */
    private final Map<String, Channel> channels = new HashMap<>();
    /** How many open channels start at each unit number. */
    private final TreeMap<Long, Integer> opens = new TreeMap<>();
    /** Characters copied into or searched in the joined texts: the work done, for tests of its bound. */
    long work;

    /** @param scrubber the response's scrubber: its forms are searched, its match count grows by each replacement */
    HeldText(SecretScrubber scrubber) {
        this.scrubber = Objects.requireNonNull(scrubber, "scrubber");
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

    /** {@return the number the next unit gets (for {@link EventText#pieces})} */
    long next() {
        return base + held.size();
    }

    /** {@return whether no unit is held} */
    boolean isEmpty() {
        return held.isEmpty();
    }

    /** {@return the bytes of the held units} */
    int heldBytes() {
        return heldBytes;
    }

    /** {@return the number of held units} */
    int heldUnits() {
        return held.size();
    }

    /**
     * Adds the next unit.
     *
     * @param unit its bytes
     * @param pieces its pieces, numbered {@link #next()}
     * @return the units released by it, oldest first, each with its replaced pieces spliced in (the array given to
     *     {@link #add} itself when none of its pieces changed)
     */
    List<byte[]> add(byte[] unit, List<EventText.Piece> pieces) {
        if (held.isEmpty() && pieces.isEmpty()) {
            return List.of(unit);
        }
        long number = next();
        held.add(new Unit(unit, pieces));
        heldBytes += unit.length;
        Map<String, List<EventText.Piece>> byChannel = new LinkedHashMap<>();
        for (EventText.Piece p : pieces) {
            if (!p.text.isEmpty()) {
                byChannel.computeIfAbsent(p.channel, k -> new ArrayList<>()).add(p);
            }
        }
        for (Map.Entry<String, List<EventText.Piece>> e : byChannel.entrySet()) {
            Channel c = channels.computeIfAbsent(e.getKey(), k -> new Channel());
            int before = c.text.length();
            for (EventText.Piece p : e.getValue()) {
                c.pieces.add(p);
                c.text.append(p.text);
                work += p.text.length();
            }
            replaceWhole(c, Math.max(0, before - longest + 1));
            reopen(e.getKey(), c, number);
        }
        return release(opens.isEmpty() ? Long.MAX_VALUE : opens.firstKey());
    }

    /** {@return every held unit, released (the end of the response)} */
    List<byte[]> releaseAll() {
        return release(Long.MAX_VALUE);
    }

    /** Replaces (and counts) every whole form in a channel's text that starts at or after {@code from}. */
    private void replaceWhole(Channel c, int from) {
        while (true) {
            int at = -1;
            int form = -1;
            for (int f = 0; f < forms.length; f++) {
                int i = c.text.indexOf(forms[f], from);
                if (i >= 0 && (at < 0 || i < at || i == at && forms[f].length() > forms[form].length())) {
                    at = i;
                    form = f;
                }
            }
            work += c.text.length() - from;
            if (at < 0) {
                return;
            }
            edit(c, c.skip + at, c.skip + at + forms[form].length(), replacements[form]);
            scrubber.count(scrubber.owner[form]);
            from = at + replacements[form].length();
        }
    }

    /** Removes {@code [s, e)} of the channel's pieces' joined text, the placeholder in the piece where it ends. */
    private void edit(Channel c, int s, int e, String placeholder) {
        int off = 0;
        EventText.Piece lastPart = null;
        for (EventText.Piece p : c.pieces) {
            if (Math.max(s, off) < Math.min(e, off + p.text.length())) {
                lastPart = p;
            }
            off += p.text.length();
        }
        off = 0;
        for (EventText.Piece p : c.pieces) {
            int len = p.text.length();
            int a = Math.max(s, off);
            int b = Math.min(e, off + len);
            if (a < b) {
                p.text = p.text.substring(0, a - off) + (p == lastPart ? placeholder : "") + p.text.substring(b - off);
                p.dirty = true;
            }
            off += len;
        }
        c.text.setLength(0);
        boolean first = true;
        for (EventText.Piece p : c.pieces) {
            c.text.append(p.text, first ? c.skip : 0, p.text.length());
            first = false;
        }
        work += c.text.length();
    }

    /**
     * Finds where the channel's open end starts (the longest end of its text that is a proper prefix of a form), keeps
     * its text from there, and records the unit where it starts; a channel without an open end is dropped.
     */
    private void reopen(String name, Channel c, long number) {
        int start = -1;
        int len = c.text.length();
        for (int p = Math.max(0, len - longest + 1); p < len && start < 0; p++) {
            for (String f : forms) {
                if (f.length() > len - p && startsWith(f, c.text, p)) {
                    start = p;
                    break;
                }
            }
        }
        work += Math.min(len, longest);
        if (c.open != Long.MAX_VALUE) {
            opens.computeIfPresent(c.open, (k, n) -> n == 1 ? null : n - 1);
        }
        if (start < 0) {
            channels.remove(name);
            return;
        }
        // the piece holding position start: walk back from the end (every piece after it is shorter than a form)
        int fromEnd = len - start;
        int tail = 0;
        Iterator<EventText.Piece> back = c.pieces.descendingIterator();
        EventText.Piece at = null;
        while (back.hasNext()) {
            at = back.next();
            int visible = at == c.pieces.peekFirst() ? at.text.length() - c.skip : at.text.length();
            if (tail + visible >= fromEnd) {
                break;
            }
            tail += visible;
        }
        while (c.pieces.peekFirst() != at) {
            c.pieces.removeFirst();
            c.skip = 0;
        }
        c.skip = at.text.length() - (fromEnd - tail);
        c.text.delete(0, start);
        work += c.text.length();
        c.open = at.event;
        opens.merge(c.open, 1, Integer::sum);
    }

    private static boolean startsWith(String form, CharSequence text, int from) {
        for (int i = from; i < text.length(); i++) {
            if (form.charAt(i - from) != text.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** {@return the held units numbered before {@code keepFrom}, removed, with their replaced pieces spliced in} */
    private List<byte[]> release(long keepFrom) {
        List<byte[]> out = new ArrayList<>();
        while (!held.isEmpty() && base < keepFrom) {
            Unit u = held.removeFirst();
            heldBytes -= u.bytes().length;
            byte[] bytes = u.bytes();
            List<EventText.Piece> edited = new ArrayList<>();
            for (EventText.Piece p : u.pieces()) {
                if (p.dirty) {
                    edited.add(p);
                }
            }
            edited.sort((x, y) -> Integer.compare(y.start, x.start));
            for (EventText.Piece p : edited) {
                bytes = splice(bytes, p.start, p.end, p.bytes());
            }
            out.add(bytes);
            base++;
        }
        if (held.isEmpty()) {
            channels.clear();
            opens.clear();
        }
        return out;
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
