package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.internal.Syntax;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The text a client reassembles from one server-sent event (WHATWG HTML, "Server-sent events"), as pieces that map
 * back to the event's bytes: each {@code data} value, or, when the event's {@code data} values joined with LF are a JSON
 * text (RFC 8259) whose value is an object, an array or a string, the unescaped content of each of its string values.
 * A piece belongs to a channel: raw {@code data}
 * values all share one; a JSON string value's channel is its path of keys and array indices (e.g.
 * {@code choices.0.delta.content}), so the strings a token stream delivers in one field join across events while
 * other fields ({@code id}, {@code model}) do not come between them. Keys are compared without regard to case
 * ({@link #fold}): a Go client reads {@code content} and {@code Content} as one field. A key that repeats within one
 * object (in any case) is read as a client's JSON parser reads it, the last occurrence being the member
 * ({@link JsonStrings}). Piece text is held as ISO-8859-1 of the UTF-8 bytes, so string positions are byte
 * positions; a key is decoded from those bytes before it is folded ({@link #foldKey}). A UTF-8 byte order mark that
 * starts the data is skipped before it is read as JSON ({@link #bom}), as Gson skips it. Data that is not strict JSON but starts like JSON (a bracket or a quote, after white space and comments)
 * is read as lenient readers read it ({@link LenientJson}: its string values on their paths, the bytes between them
 * raw); other data (and a number,
 * {@code true}, {@code false} or {@code null} alone) is taken as raw values.
 */
final class EventText {
    /** The raw {@code data} channel. */
    static final String RAW = "";

    private EventText() {
    }

    /** One piece of reassembled text: {@code [start, end)} of event {@code event} shows {@code text}. */
    static final class Piece {
        final long event;
        final int start;
        final int end;
        final boolean json;
        final String channel;
        /**
         * The quote a JSON piece's string token is in: {@code "}, or {@code '} as lenient readers take it; 0 for an
         * unquoted value read as a string ({@link LenientJson}), whose replaced text is written quoted.
         */
        final byte quote;
        String text;
        boolean dirty;

        Piece(long event, int start, int end, boolean json, String channel, String text) {
            this(event, start, end, json, channel, text, (byte) '"');
        }

        Piece(long event, int start, int end, boolean json, String channel, String text, byte quote) {
            this.event = event;
            this.start = start;
            this.end = end;
            this.json = json;
            this.channel = channel;
            this.text = text;
            this.quote = quote;
        }

        /** {@return the bytes that stand for {@link #text} in the event: the text, JSON-escaped for a JSON piece} */
        byte[] bytes() {
            byte[] raw = text.getBytes(StandardCharsets.ISO_8859_1);
            if (!json) {
                return raw;
            }
            String s = new String(raw, StandardCharsets.UTF_8);
            StringBuilder out = new StringBuilder(s.length() + 8);
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c == '"' || c == '\\' || quote != 0 && c == quote) {
                    out.append('\\').append(c);
                } else if (c < 0x20) {
                    out.append(String.format("\\u%04x", (int) c));
                } else {
                    out.append(c);
                }
            }
            return (quote == 0 ? "\"" + out + "\"" : out.toString()).getBytes(StandardCharsets.UTF_8);
        }
    }

    /**
     * {@return the pieces of one WebSocket message (sequence number {@code seq}), in order}: the unescaped content of
     * each string value when the whole message is a JSON object, array or string, else the whole message as one raw
     * piece
     */
    static List<Piece> message(byte[] message, long seq) {
        List<Piece> json = json(message, 0, message.length, seq);
        if (json != null) {
            return json;
        }
        if (LenientJson.applies(message, 0, message.length)) {
            return LenientJson.pieces(message, 0, message.length, seq);
        }
        return message.length == 0 ? List.of() : List.of(new Piece(seq, 0, message.length, false, RAW,
                new String(message, StandardCharsets.ISO_8859_1)));
    }

    /** How the first bytes of a body read as an event stream ({@link #start}). */
    enum Start {
        /** An event stream: a known field line or a comment first, after an optional byte order mark. */
        EVENTS,
        /** Not one. */
        OTHER,
        /** The bytes so far start a known field name or the byte order mark: more are needed. */
        UNDECIDED
    }

    /** The field names a stream is recognised by (WHATWG HTML, "Server-sent events", interpreting an event stream). */
    private static final byte[][] FIELDS = {
        "data".getBytes(StandardCharsets.US_ASCII), "event".getBytes(StandardCharsets.US_ASCII),
        "id".getBytes(StandardCharsets.US_ASCII), "retry".getBytes(StandardCharsets.US_ASCII)};

    /** The UTF-8 byte order mark, U+FEFF. */
    private static final byte[] BOM = {(byte) 0xef, (byte) 0xbb, (byte) 0xbf};

    /**
     * {@return how {@code b[0, n)}, the first bytes of a body, read as an event stream} A body is one when, after one
     * optional UTF-8 byte order mark, its first line is a comment ({@code :}) or a {@code data}, {@code event},
     * {@code id} or {@code retry} field (the name followed by {@code :} or a line end), whatever its media type: a
     * client's stream reader that does not check the type reads such a body as events. At most 9 bytes are needed.
     */
    static Start start(byte[] b, int n) {
        int i = 0;
        if (n > 0 && b[0] == BOM[0]) {
            if (!Arrays.equals(b, 0, Math.min(n, 3), BOM, 0, Math.min(n, 3))) {
                return Start.OTHER;
            }
            if (n < 3) {
                return Start.UNDECIDED;
            }
            i = 3;
        }
        if (i == n) {
            return Start.UNDECIDED;
        }
        if (b[i] == ':') {
            return Start.EVENTS;
        }
        for (byte[] f : FIELDS) {
            int k = Math.min(n - i, f.length);
            if (Arrays.equals(b, i, i + k, f, 0, k)) {
                if (n - i <= f.length) {
                    return Start.UNDECIDED;
                }
                byte next = b[i + f.length];
                if (next == ':' || next == '\r' || next == '\n') {
                    return Start.EVENTS;
                }
            }
        }
        return Start.OTHER;
    }

    /**
     * {@return the pieces of {@code event} (sequence number {@code seq}), in order}, read as WHATWG HTML ("Server-sent
     * events", parsing an event stream) reads it: lines end at CRLF, LF or CR; one U+FEFF at the start of the stream
     * is dropped; a line starting with {@code :} is a comment; a field's name runs to the first colon (the whole line
     * when it has none, with an empty value) and one space after the colon is removed; an empty line dispatches. The
     * {@code data} values of one dispatched event joined with LF are read as JSON when they are a JSON text (RFC 8259)
     * that is an object, an array or a string; otherwise each {@code data} value is a raw piece.
     *
     * @param event the bytes of one event as {@link EventSplits} cuts it (an empty line within is a dispatch too)
     * @param seq its sequence number
     * @param streamStart whether it is the first event of the stream (a leading U+FEFF is not part of its text)
     */
    static List<Piece> pieces(byte[] event, long seq, boolean streamStart) {
        List<Piece> out = new ArrayList<>();
        List<int[]> data = new ArrayList<>();
        int start = streamStart && Arrays.equals(event, 0, Math.min(3, event.length), BOM, 0, 3) ? 3 : 0;
        while (start < event.length) {
            int end = start;
            while (end < event.length && event[end] != '\n' && event[end] != '\r') {
                end++;
            }
            if (end == start) {
                dispatch(event, data, seq, out);
            } else if (event[start] != ':') {
                int colon = start;
                while (colon < end && event[colon] != ':') {
                    colon++;
                }
                if (colon - start == 4 && event[start] == 'd' && event[start + 1] == 'a' && event[start + 2] == 't'
                        && event[start + 3] == 'a') {
                    int v = colon == end ? end : colon + 1 < end && event[colon + 1] == ' ' ? colon + 2 : colon + 1;
                    data.add(new int[] {v, end});
                }
            }
            start = end + (end + 1 < event.length && event[end] == '\r' && event[end + 1] == '\n' ? 2 : 1);
        }
        dispatch(event, data, seq, out);
        return out;
    }

    /** Adds the pieces of one dispatched event's {@code data} values ({@code [from, to)} each) and clears them. */
    private static void dispatch(byte[] event, List<int[]> data, long seq, List<Piece> out) {
        if (data.isEmpty()) {
            return;
        }
        List<Piece> json = joinedJson(event, data, seq);
        if (json != null) {
            out.addAll(json);
        } else {
            for (int[] v : data) {
                if (v[0] < v[1]) {
                    out.add(new Piece(seq, v[0], v[1], false, RAW,
                            new String(event, v[0], v[1] - v[0], StandardCharsets.ISO_8859_1)));
                }
            }
        }
        data.clear();
    }

    /**
     * {@return the pieces of the event's {@code data} values joined with LF, at their places in the event}: the JSON
     * pieces of a strict JSON text, else, when the text starts like JSON, its lenient reading ({@link LenientJson});
     * {@code null} when neither. A string token holds no line end, so each JSON piece lies in one value; a raw piece
     * of the lenient reading is cut at the values' ends (the LF joining them is not in the event).
     */
    private static List<Piece> joinedJson(byte[] event, List<int[]> data, long seq) {
        if (data.size() == 1) {
            int from = data.get(0)[0];
            int to = data.get(0)[1];
            List<Piece> json = json(event, from, to, seq);
            return json != null || !LenientJson.applies(event, from, to) ? json
                    : LenientJson.pieces(event, from, to, seq);
        }
        ByteArrayOutputStream joined = new ByteArrayOutputStream();
        int[] at = new int[data.size()];
        for (int k = 0; k < data.size(); k++) {
            if (k > 0) {
                joined.write('\n');
            }
            at[k] = joined.size();
            joined.write(event, data.get(k)[0], data.get(k)[1] - data.get(k)[0]);
        }
        byte[] text = joined.toByteArray();
        List<Piece> json = json(text, 0, text.length, seq);
        if (json == null && LenientJson.applies(text, 0, text.length)) {
            json = LenientJson.pieces(text, 0, text.length, seq);
        }
        if (json == null) {
            return null;
        }
        List<Piece> out = new ArrayList<>(json.size());
        for (Piece p : json) {
            for (int k = 0; k < data.size(); k++) {
                int a = Math.max(p.start, at[k]);
                int b = Math.min(p.end, at[k] + data.get(k)[1] - data.get(k)[0]);
                if (a < b) {
                    int shift = data.get(k)[0] - at[k];
                    out.add(new Piece(seq, a + shift, b + shift, p.json, p.channel,
                            p.json ? p.text : new String(text, a, b - a, StandardCharsets.ISO_8859_1), p.quote));
                }
            }
        }
        return out;
    }

    /**
     * {@return the string-value pieces of the JSON text in {@code [from, to)}; {@code null} when it is not a JSON text
     * (RFC 8259) whose value is an object, an array or a string} A string's channel is its path of keys and indices.
     */
    private static List<Piece> json(byte[] e, int from, int to, long seq) {
        int i = ws(e, bom(e, from, to), to);
        if (i == to || e[i] != '{' && e[i] != '[' && e[i] != '"') {
            return null;
        }
        JsonStrings r = new JsonStrings(e, to);
        if (!r.read(i)) {
            return null;
        }
        List<Piece> out = new ArrayList<>(r.found.size());
        JsonPaths paths = new JsonPaths();
        for (JsonStrings.Found f : r.found) {
            out.add(new Piece(seq, f.start(), f.end(), true, paths.channel(f.step()), f.text()));
        }
        return out;
    }

    /**
     * The string values of one JSON text (RFC 8259), each with its path of keys and indices, as a client's JSON parser
     * reads them: within one object a key that repeats (after unescaping) is read as JavaScript's {@code JSON.parse},
     * Python's {@code json} and most SDKs read it, the last occurrence being the member; the strings under an earlier
     * occurrence are given a path of their own ({@code name}, U+0000, their occurrence's number from 0), so they
     * neither join the member's text nor come between its parts, at every nesting level.
     */
    private static final class JsonStrings {
        /** A string value's content {@code [start, end)}, unescaped {@code text}, and path's last step. */
        record Found(int start, int end, String text, JsonPaths.Step step) {
        }

        /** One open object or array: its members by key (objects), and the current member's or element's step. */
        private static final class Level {
            final JsonPaths.Step parent;
            final Map<String, JsonPaths.Step> members;
            JsonPaths.Step at;
            int index;

            Level(JsonPaths.Step parent, boolean object) {
                this.parent = parent;
                this.members = object ? new HashMap<>() : null;
            }
        }

        private final byte[] e;
        private final int to;
        final List<Found> found = new ArrayList<>();
        private final ArrayDeque<Level> open = new ArrayDeque<>();

        JsonStrings(byte[] e, int to) {
            this.e = e;
            this.to = to;
        }

        /** {@return whether {@code [i, to)} is one JSON value and white space; its strings are in {@link #found}} */
        boolean read(int i) {
            boolean after = false; // a value ended: a comma, a close or the end follows
            while (true) {
                i = ws(e, i, to);
                Level top = open.peekLast();
                if (after) {
                    if (top == null) {
                        return i == to;
                    }
                    if (i == to) {
                        return false;
                    }
                    byte c = e[i++];
                    if (c == ',') {
                        after = false;
                        i = top.members != null ? member(top, i) : element(top, i);
                    } else if (c == (top.members != null ? '}' : ']')) {
                        open.removeLast();
                    } else {
                        return false;
                    }
                } else if (i == to) {
                    return false;
                } else if (e[i] == '{' || e[i] == '[') {
                    Level level = new Level(top == null ? null : top.at, e[i] == '{');
                    i = ws(e, i + 1, to);
                    if (i < to && e[i] == (level.members != null ? '}' : ']')) {
                        i++;
                        after = true;
                    } else {
                        open.addLast(level);
                        i = level.members != null ? member(level, i) : element(level, i);
                    }
                } else if (e[i] == '"') {
                    int close = stringEnd(e, i + 1, to);
                    String text = close < 0 ? null : unescape(e, i + 1, close);
                    if (text == null) {
                        return false;
                    }
                    found.add(new Found(i + 1, close, text, top == null ? null : top.at));
                    i = close + 1;
                    after = true;
                } else {
                    i = literal(e, i, to);
                    after = true;
                }
                if (i < 0) {
                    return false;
                }
            }
        }

        /** {@return {@code i}, the next element of an array having begun} */
        private int element(Level level, int i) {
            level.at = new JsonPaths.Step(level.parent, String.valueOf(level.index++));
            return i;
        }

        /**
         * {@return the index after the colon of the object member whose key is at {@code i}; -1 if none} An earlier
         * member of the same key is given a path of its own.
         */
        private int member(Level level, int i) {
            String[] name = new String[1];
            i = key(e, i, to, name);
            if (i < 0) {
                return -1;
            }
            level.at = JsonPaths.member(level.members, level.parent, foldKey(name[0]));
            return i;
        }
    }

    /**
     * {@return a key folded as a case-insensitive JSON reader matches it to a field}: every code point mapped to the
     * upper case of its lower case (Unicode simple case mappings), so {@code content}, {@code Content} and
     * {@code CONTENT} are one step of a path. Go's {@code encoding/json} (go-openai and other Go clients) fills one
     * field from each spelling, the last in an object winning; two names equal under Go's folding ({@code U+017F}
     * with the letter s, {@code U+212A} with the letter k) fold to the same text here. The same folding as the L7 JSON
     * readers' ({@code docs/policy-reference.md}, "JSON bodies").
     */
    static String fold(String key) {
        StringBuilder b = null;
        for (int i = 0; i < key.length(); ) {
            int cp = key.codePointAt(i);
            int f = cp < 0x80 ? (cp >= 'a' && cp <= 'z' ? cp - ('a' - 'A') : cp)
                    : Character.toUpperCase(Character.toLowerCase(cp));
            if (f != cp && b == null) {
                b = new StringBuilder(key.length()).append(key, 0, i);
            }
            if (b != null) {
                b.appendCodePoint(f);
            }
            i += Character.charCount(cp);
        }
        return b == null ? key : b.toString();
    }

    /**
     * {@return a key held as piece text is (ISO-8859-1 of its UTF-8 bytes) folded as {@link #fold} folds its code
     * points} The bytes are decoded first, so {@code U+017F} ({@code C5 BF}) and {@code U+212A} ({@code E2 84 AA})
     * fold with {@code s} and {@code k} whether written raw or escaped.
     */
    static String foldKey(String latin1OfUtf8) {
        for (int i = 0; i < latin1OfUtf8.length(); i++) {
            if (latin1OfUtf8.charAt(i) >= 0x80) {
                return fold(new String(latin1OfUtf8.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8));
            }
        }
        return fold(latin1OfUtf8);
    }

    /** {@return {@code from + 3} when a UTF-8 byte order mark starts {@code [from, to)}, which lenient readers skip} */
    static int bom(byte[] e, int from, int to) {
        return to - from >= 3 && Arrays.equals(e, from, from + 3, BOM, 0, 3) ? from + 3 : from;
    }

    /** {@return the index after the colon of an object member's key at {@code i} (its name set as {@code name[0]})} */
    private static int key(byte[] e, int i, int to, String[] name) {
        i = ws(e, i, to);
        if (i == to || e[i] != '"') {
            return -1;
        }
        int close = stringEnd(e, i + 1, to);
        name[0] = close < 0 ? null : unescape(e, i + 1, close);
        if (name[0] == null) {
            return -1;
        }
        i = ws(e, close + 1, to);
        return i < to && e[i] == ':' ? i + 1 : -1;
    }

    /** {@return the index after the number, {@code true}, {@code false} or {@code null} at {@code i}; -1 if none} */
    private static int literal(byte[] e, int i, int to) {
        for (String word : new String[] {"true", "false", "null"}) {
            if (to - i >= word.length() && new String(e, i, word.length(), StandardCharsets.ISO_8859_1).equals(word)) {
                return i + word.length();
            }
        }
        int s = i < to && e[i] == '-' ? i + 1 : i;
        int d = digits(e, s, to);
        if (d == s || e[s] == '0' && d > s + 1) {
            return -1;
        }
        i = d;
        if (i < to && e[i] == '.') {
            d = digits(e, i + 1, to);
            if (d == i + 1) {
                return -1;
            }
            i = d;
        }
        if (i < to && (e[i] == 'e' || e[i] == 'E')) {
            s = i + 1 < to && (e[i + 1] == '+' || e[i + 1] == '-') ? i + 2 : i + 1;
            d = digits(e, s, to);
            if (d == s) {
                return -1;
            }
            i = d;
        }
        return i;
    }

    private static int digits(byte[] e, int i, int to) {
        while (i < to && e[i] >= '0' && e[i] <= '9') {
            i++;
        }
        return i;
    }

    /** {@return the index of the first byte at or after {@code i} that is not JSON white space} */
    private static int ws(byte[] e, int i, int to) {
        while (i < to && (e[i] == ' ' || e[i] == '\t' || e[i] == '\n' || e[i] == '\r')) {
            i++;
        }
        return i;
    }

    /**
     * {@return the index of the quote closing a string whose content starts at {@code i}}; -1 when none, or when a
     * control character (below U+0020, a line end among them) comes first: not a JSON string
     */
    private static int stringEnd(byte[] e, int i, int to) {
        for (; i < to; i++) {
            if (e[i] >= 0 && e[i] < 0x20) {
                return -1;
            }
            if (e[i] == '\\') {
                i++;
            } else if (e[i] == '"') {
                return i;
            }
        }
        return -1;
    }

    /** {@return the unescaped content of a JSON string, as ISO-8859-1 of its UTF-8; {@code null} when malformed} */
    private static String unescape(byte[] e, int from, int to) {
        String s = new String(e, from, to - from, StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (++i >= s.length()) {
                return null;
            }
            char x = s.charAt(i);
            switch (x) {
                case '"', '\\', '/' -> out.append(x);
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'u' -> {
                    int u = 0;
                    for (int h = i + 1; h <= i + 4; h++) {
                        int d = h < s.length() ? Syntax.hexDigit(s.charAt(h)) : -1;
                        if (d < 0) {
                            return null;
                        }
                        u = u * 16 + d;
                    }
                    out.append((char) u);
                    i += 4;
                }
                default -> {
                    return null;
                }
            }
        }
        return new String(out.toString().getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
    }
}
