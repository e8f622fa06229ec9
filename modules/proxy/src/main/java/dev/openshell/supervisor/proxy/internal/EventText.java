package dev.openshell.supervisor.proxy.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The text a client reassembles from one server-sent event (WHATWG HTML, "Server-sent events"), as pieces that map
 * back to the event's bytes: each {@code data} value, or, when the value is JSON (RFC 8259: starts with {@code {} or
 * {@code [}), the unescaped content of each of its string values. A piece belongs to a channel: raw {@code data}
 * values all share one; a JSON string value's channel is its path of keys and array indices (e.g.
 * {@code choices.0.delta.content}), so the strings a token stream delivers in one field join across events while
 * other fields ({@code id}, {@code model}) do not come between them. Piece text is held as ISO-8859-1 of the UTF-8
 * bytes, so string positions are byte positions. Malformed JSON is taken as a raw value.
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
        String text;
        boolean dirty;

        Piece(long event, int start, int end, boolean json, String channel, String text) {
            this.event = event;
            this.start = start;
            this.end = end;
            this.json = json;
            this.channel = channel;
            this.text = text;
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
                if (c == '"' || c == '\\') {
                    out.append('\\').append(c);
                } else if (c < 0x20) {
                    out.append(String.format("\\u%04x", (int) c));
                } else {
                    out.append(c);
                }
            }
            return out.toString().getBytes(StandardCharsets.UTF_8);
        }
    }

    /**
     * {@return the pieces of one WebSocket message (sequence number {@code seq}), in order}: the unescaped content of
     * each string value when the whole message is JSON, else the whole message as one raw piece
     */
    static List<Piece> message(byte[] message, long seq) {
        List<Piece> json = json(message, 0, message.length, seq);
        if (json != null) {
            return json;
        }
        return message.length == 0 ? List.of() : List.of(new Piece(seq, 0, message.length, false, RAW,
                new String(message, StandardCharsets.ISO_8859_1)));
    }

    /** {@return the pieces of {@code event} (sequence number {@code seq}), in order} */
    static List<Piece> pieces(byte[] event, long seq) {
        List<Piece> out = new ArrayList<>();
        int start = 0;
        while (start < event.length) {
            int end = start;
            while (end < event.length && event[end] != '\n' && event[end] != '\r') {
                end++;
            }
            if (end - start >= 5 && event[start] == 'd' && event[start + 1] == 'a' && event[start + 2] == 't'
                    && event[start + 3] == 'a' && event[start + 4] == ':') {
                int v = start + 5 < end && event[start + 5] == ' ' ? start + 6 : start + 5;
                List<Piece> json = json(event, v, end, seq);
                if (json != null) {
                    out.addAll(json);
                } else if (v < end) {
                    out.add(new Piece(seq, v, end, false, RAW,
                            new String(event, v, end - v, StandardCharsets.ISO_8859_1)));
                }
            }
            start = end + (end + 1 < event.length && event[end] == '\r' && event[end + 1] == '\n' ? 2 : 1);
        }
        return out;
    }

    /** {@return the string-value pieces of the JSON text in {@code [from, to)}; {@code null} when not JSON} */
    private static List<Piece> json(byte[] e, int from, int to, long seq) {
        int i = from;
        while (i < to && (e[i] == ' ' || e[i] == '\t')) {
            i++;
        }
        if (i == to || e[i] != '{' && e[i] != '[') {
            return null;
        }
        List<Piece> out = new ArrayList<>();
        List<String> path = new ArrayList<>();
        List<Boolean> object = new ArrayList<>();
        boolean key = false;
        for (; i < to; i++) {
            byte c = e[i];
            int top = object.size() - 1;
            if (c == '{' || c == '[') {
                object.add(c == '{');
                path.add(c == '{' ? "" : "0");
                key = c == '{';
            } else if (c == '}' || c == ']') {
                if (top < 0 || object.get(top) != (c == '}')) {
                    return null;
                }
                object.remove(top);
                path.remove(top);
                key = false;
            } else if (c == ',') {
                if (top < 0) {
                    return null;
                }
                if (object.get(top)) {
                    key = true;
                } else {
                    path.set(top, String.valueOf(Integer.parseInt(path.get(top)) + 1));
                }
            } else if (c == ':') {
                key = false;
            } else if (c == '"') {
                int close = stringEnd(e, i + 1, to);
                String text = close < 0 ? null : unescape(e, i + 1, close);
                if (text == null || top < 0) {
                    return null;
                }
                if (key && object.get(top)) {
                    path.set(top, text);
                } else {
                    out.add(new Piece(seq, i + 1, close, true, String.join(".", path) + "\u0000json", text));
                }
                i = close;
            }
        }
        return object.isEmpty() ? out : null;
    }

    /** {@return the index of the quote closing a string whose content starts at {@code i}; -1 when none} */
    private static int stringEnd(byte[] e, int i, int to) {
        for (; i < to; i++) {
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
                    if (i + 4 >= s.length()) {
                        return null;
                    }
                    try {
                        out.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
                    } catch (NumberFormatException bad) {
                        return null;
                    }
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
