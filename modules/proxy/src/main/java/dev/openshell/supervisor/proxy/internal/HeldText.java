package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.internal.DroppedSequences;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The units of a response a client joins into one text (the events of a {@code text/event-stream},
 * {@link EventSplits}; the server messages of a scrubbed WebSocket upgrade, {@link ScrubbedMessages}), held on a
 * schedule that does not depend on any secret's value, and scrubbed across them: the parts of a value in earlier
 * units are removed and the part in the unit where the value completes becomes the placeholder, so the join reads the
 * placeholder. Each unit's text comes as pieces by channel ({@link EventText.Piece}: the text of one channel joins
 * across units, other channels do not come between).
 *
 * <p>Release rule (attacker pass finding 12: a hold that depended on whether the text could start a value told the
 * client, by what arrived before a pause, whether its reflected text was a prefix of the secret): the last
 * {@link #window()} characters of each channel's joined text are always held, {@code W} being the longest searched
 * form's length minus one (a constant of the credential set). The oldest held unit is released, with the units
 * before it already gone, once every channel it has text in has received at least {@code W} characters after its
 * text, or once at least {@code afterUnits} units or {@code afterBytes} bytes are held after it (a channel that stops,
 * such as a {@code role} field sent once, does not hold a stream), or at {@link #releaseAll} (the end of the response,
 * or the upstream silent for {@link ResponseScrub#SILENCE_MILLIS}, decided by the caller). Every one of these
 * depends on lengths, counts and time only. A value whose parts are further apart than that is not joined.
 *
 * <p>Linear: each channel keeps only the text of held units; a unit costs work in proportion to its own text and the
 * longest form ({@link #work}), plus the edit of a replaced value. Bounded by the caller: it checks
 * {@link #heldBytes()} and {@link #heldUnits()}.
 *
 * <p>Not thread-safe: one response, one thread.
 */
final class HeldText {
    /**
     * One held unit: its bytes, its pieces (their {@code dirty} text replaces their bytes on release), and for each
     * channel it has text in, that channel's count of characters received when its text ended.
     */
    private record Unit(byte[] bytes, List<EventText.Piece> pieces, Map<String, Long> ends) {
    }

    /** The joined text of one channel's held pieces. */
    private static final class Channel {
        /** The pieces of held units, oldest first, each with text. */
        final ArrayDeque<EventText.Piece> pieces = new ArrayDeque<>();
        /** Their texts joined, from {@link #start}. */
        final StringBuilder text = new StringBuilder();
        /** Where the held pieces' text starts in {@link #text} (the text before it was released). */
        int start;
        /**
         * The characters received in this channel that are not ISO 2022 / HZ sequences ({@link DroppedSequences}),
         * as received (before replacements): the release rule counts these, whatever they spell (P11-3, P11-11).
         */
        long total;
        /** The end of the received text that may still become a sequence (at most 4 characters). */
        String pending = "";
        /** How far before the text's end the first spelling with sequences still undecided starts; -1 for none. */
        int openBack = -1;
    }

    private final SecretScrubber scrubber;
    /** The searched forms and their replacements, as ISO-8859-1 strings of their bytes. */
    private final String[] forms;
    private final String[] replacements;
    private final int longest;
    private final int afterUnits;
    private final long afterBytes;
    private final ArrayDeque<Unit> held = new ArrayDeque<>();
    /** The number of the first held unit. */
    private long base;
    private long heldBytes;
    /** The channels with text in held units. */
    private final Map<String, Channel> channels = new HashMap<>();
    /** Characters copied into or searched in the joined texts: the work done, for tests of its bound. */
    long work;

    /**
     * @param scrubber the response's scrubber: its forms are searched, its match count grows by each replacement
     * @param afterUnits the oldest unit goes once this many units are held after it
     * @param afterBytes the oldest unit goes once this many bytes are held after it
     */
    HeldText(SecretScrubber scrubber, int afterUnits, long afterBytes) {
        this.scrubber = Objects.requireNonNull(scrubber, "scrubber");
        this.afterUnits = afterUnits;
        this.afterBytes = afterBytes;
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

    /** {@return the characters always held at the end of each channel: the longest form's length minus one} */
    int window() {
        return Math.max(0, longest - 1);
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
    long heldBytes() {
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
        Map<String, List<EventText.Piece>> byChannel = new LinkedHashMap<>();
        for (EventText.Piece p : pieces) {
            if (!p.text.isEmpty()) {
                byChannel.computeIfAbsent(p.channel, k -> new ArrayList<>()).add(p);
            }
        }
        if (held.isEmpty() && byChannel.isEmpty()) {
            return List.of(unit);
        }
        Map<String, Long> ends = new HashMap<>();
        for (Map.Entry<String, List<EventText.Piece>> e : byChannel.entrySet()) {
            Channel c = channels.computeIfAbsent(e.getKey(), k -> new Channel());
            int before = c.text.length();
            for (EventText.Piece p : e.getValue()) {
                c.pieces.add(p);
                c.text.append(p.text);
                c.total += visible(c, p.text);
                work += p.text.length();
            }
            ends.put(e.getKey(), c.total);
            int back = c.text.length() - before + Math.max(0, c.openBack); // where the search resumes, from the end
            boolean edited = replaceWhole(c, Math.max(c.start, before - longest + 1));
            replaceDropped(c, edited ? c.start : Math.max(c.start, c.text.length() - back));
        }
        held.add(new Unit(unit, pieces, ends));
        heldBytes += unit.length;
        return release(false);
    }

    /** {@return every held unit, released (the end of the response, or the upstream silent)} */
    List<byte[]> releaseAll() {
        return release(true);
    }

    /** {@return whether the oldest held unit may go: see the class description} */
    private boolean releasable(Unit u) {
        if (held.size() - 1 >= afterUnits || heldBytes - u.bytes().length >= afterBytes) {
            return true;
        }
        for (Map.Entry<String, Long> e : u.ends().entrySet()) {
            if (channels.get(e.getKey()).total - e.getValue() < window()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Replaces (and counts) every whole form in a channel's text that starts at or after {@code from}; {@return
     * whether it replaced one}
     */
    private boolean replaceWhole(Channel c, int from) {
        boolean edited = false;
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
                return edited;
            }
            edited = true;
            int at0 = at - c.start; // edit rebuilds the text from the held pieces: positions from there
            edit(c, at0, at0 + forms[form].length(), replacements[form]);
            scrubber.count(scrubber.owner[form]);
            from = at0 + replacements[form].length();
        }
    }

    /** {@return the characters of {@code text} that are not sequences, the channel's pending end carried over} */
    private static long visible(Channel c, String text) {
        byte[] b = (c.pending + text).getBytes(StandardCharsets.ISO_8859_1);
        int p = 0;
        long v = 0;
        while (p < b.length) {
            int s = DroppedSpelling.skippable(b, p, b.length);
            if (s < 0) {
                break; // the next text may complete it
            }
            v += s == 0 ? 1 : 0;
            p += Math.max(1, s);
        }
        c.pending = new String(b, p, b.length - p, StandardCharsets.ISO_8859_1);
        return v;
    }

    /**
     * Replaces (and counts) every spelling of a secret with ISO 2022 / HZ sequences between its bytes
     * ({@link DroppedSpelling}, as a client sniffing the joined text's charset drops them; attacker pass 9, P11-3)
     * that starts at or after {@code from} in a channel's text, and remembers the first start the text so far leaves
     * undecided (the search resumes there when more text comes: a start decided as none stays none).
     */
    private void replaceDropped(Channel c, int from) {
        while (true) {
            byte[] b = c.text.substring(from).getBytes(StandardCharsets.ISO_8859_1);
            work += b.length;
            int open = -1;
            for (int i = 0; i < b.length; i++) {
                for (int s = 0; s < scrubber.secrets(); s++) {
                    int m = scrubber.iso2022(s).match(b, i, b.length);
                    if (m > 0) {
                        int at0 = from + i - c.start;
                        String placeholder = new String(scrubber.placeholder(s), StandardCharsets.ISO_8859_1);
                        edit(c, at0, at0 + m, placeholder);
                        scrubber.count(s);
                        from = at0 + placeholder.length();
                        open = -2;
                        break;
                    }
                    open = m < 0 && open == -1 ? i : open;
                }
                if (open == -2) {
                    break;
                }
            }
            if (open != -2) {
                c.openBack = open < 0 ? -1 : b.length - open;
                return;
            }
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
        c.start = 0;
        for (EventText.Piece p : c.pieces) {
            c.text.append(p.text);
        }
        work += c.text.length();
    }

    /** {@return the releasable held units (all when {@code all}), removed, with their replaced pieces spliced in} */
    private List<byte[]> release(boolean all) {
        List<byte[]> out = new ArrayList<>();
        while (!held.isEmpty() && (all || releasable(held.peekFirst()))) {
            Unit u = held.removeFirst();
            heldBytes -= u.bytes().length;
            for (String name : u.ends().keySet()) {
                drop(name, base);
            }
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
        return out;
    }

    /** Drops the pieces of unit {@code number} from the front of a channel; a channel left empty goes. */
    private void drop(String name, long number) {
        Channel c = channels.get(name);
        while (!c.pieces.isEmpty() && c.pieces.peekFirst().event == number) {
            c.start += c.pieces.removeFirst().text.length();
        }
        if (c.pieces.isEmpty()) {
            channels.remove(name);
        } else if (c.start > c.text.length() / 2) {
            work += c.text.length() - c.start;
            c.text.delete(0, c.start);
            c.start = 0;
        }
    }

    /** {@return {@code text} with {@code [from, to)} replaced by {@code part}} */
    static byte[] splice(byte[] text, int from, int to, byte[] part) {
        byte[] out = new byte[text.length - (to - from) + part.length];
        System.arraycopy(text, 0, out, 0, from);
        System.arraycopy(part, 0, out, from, part.length);
        System.arraycopy(text, to, out, from + part.length, text.length - to);
        return out;
    }
}
