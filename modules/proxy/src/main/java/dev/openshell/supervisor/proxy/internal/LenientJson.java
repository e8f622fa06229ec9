package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.internal.Syntax;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The string values of event or message data that is not a strict JSON text (RFC 8259) but that lenient JSON readers
 * accept (attacker pass 3, finding R1): {@code NaN} and {@code Infinity} (Python's {@code json}, Gson), a value
 * followed by anything (Jackson's defaults and Go's {@code json.Decoder} read the first value, the decoder reads the
 * next ones too), single-quoted strings, {@code //}, {@code /*} and {@code #} comments, unquoted names, trailing
 * commas, {@code ;} and {@code =} separators (Gson's lenient mode, JSON5).
 *
 * <p>A tolerant tokenizer that never fails: each string token closed on its line is a value (its unescaped content a
 * JSON piece, {@link EventText.Piece#quote} its quote) or a member name; an unquoted run of other characters is, where
 * a name is expected, a name, else a literal when it is {@code true}, {@code false}, {@code null} (in any case) or a
 * JSON number, else a string value as Gson's lenient reader takes it (attacker pass 4, R1b: {@code "content":k9Q}; a
 * run that ends the data stays raw, as no reader completes that value); a UTF-8 byte order mark that starts the data
 * is skipped (Gson skips it); brackets open and close levels ({@code }} and {@code ]} close the
 * innermost whichever it is, one with nothing open is ignored). A string value's channel is its path of names and
 * indices as {@link EventText} gives a strict text's (so a field's text joins across strict and lenient events); a
 * name repeated within one object is read last-wins, an earlier occurrence's strings on a path of their own. Every
 * top-level value after the first starts at the root again (a reader of a stream of values reads each into the same
 * type). The bytes outside string values (names, literals, syntax, a string left open at its line's end) are raw
 * pieces, so a client joining the raw {@code data} values still has its join searched; a value's part inside a string
 * token and another outside it are joined in neither reading (a value holding a quote character; see
 * docs/credentials.md).
 *
 * <p>Linear in the data's length. Not thread-safe; static methods only.
 */
final class LenientJson {
    private LenientJson() {
    }

    /** {@return whether {@code [from, to)} starts, after white space and comments, with a bracket or a quote} */
    static boolean applies(byte[] e, int from, int to) {
        int i = skip(e, EventText.bom(e, from, to), to);
        return i < to && (e[i] == '{' || e[i] == '[' || e[i] == '"' || e[i] == '\'');
    }

    /** One open object or array. */
    private static final class Level {
        final JsonPaths.Step parent;
        final Map<String, JsonPaths.Step> members;
        JsonPaths.Step at;
        int index;
        boolean name;

        Level(JsonPaths.Step parent, boolean object) {
            this.parent = parent;
            this.members = object ? new HashMap<>() : null;
            this.name = object;
            if (!object) {
                at = new JsonPaths.Step(parent, "0");
                index = 1;
            }
        }
    }

    /**
     * {@return the pieces of {@code [from, to)}, in order: the string values (JSON pieces on their paths) and the raw
     * bytes between them (raw pieces); positions are in {@code e}}
     *
     * @param seq the unit's sequence number
     */
    static List<EventText.Piece> pieces(byte[] e, int from, int to, long seq) {
        List<EventText.Piece> out = new ArrayList<>();
        List<JsonPaths.Step> nodes = new ArrayList<>(); // each string value's node, in order
        ArrayDeque<Level> open = new ArrayDeque<>();
        int raw = from;
        int i = EventText.bom(e, from, to);
        while (i < to) {
            int s = skip(e, i, to);
            if (s > i) {
                i = s;
                continue;
            }
            byte c = e[i];
            Level top = open.peekLast();
            if (c == '{' || c == '[') {
                open.addLast(new Level(top == null ? null : top.at, c == '{'));
                i++;
            } else if (c == '}' || c == ']') {
                open.pollLast();
                i++;
            } else if (c == ',' || c == ';') {
                if (top != null && top.members != null) {
                    top.name = true;
                } else if (top != null) {
                    top.at = new JsonPaths.Step(top.parent, String.valueOf(top.index++));
                }
                i++;
            } else if (c == ':' || c == '=') {
                if (top != null) {
                    top.name = false;
                }
                i += c == '=' && i + 1 < to && e[i + 1] == '>' ? 2 : 1;
            } else if (c == '"' || c == '\'') {
                int close = close(e, i + 1, to, c);
                if (close < 0) {
                    i = to; // open to its line's end: raw
                } else if (top != null && top.name) {
                    member(top, unescape(e, i + 1, close));
                    i = close + 1;
                } else {
                    addRaw(out, e, raw, i + 1, seq);
                    out.add(new EventText.Piece(seq, i + 1, close, true, null, unescape(e, i + 1, close), c));
                    nodes.add(top == null ? null : top.at);
                    raw = close;
                    i = close + 1;
                }
            } else {
                int end = i;
                while (end < to && !delimiter(e[end])) {
                    end++;
                }
                end = Math.max(end, i + 1);
                if (top != null && top.name) {
                    member(top, new String(e, i, end - i, StandardCharsets.ISO_8859_1));
                } else if (skip(e, end, to) < to && !literal(e, i, end)) {
                    addRaw(out, e, raw, i, seq);
                    out.add(new EventText.Piece(seq, i, end, true, null,
                            new String(e, i, end - i, StandardCharsets.ISO_8859_1), (byte) 0));
                    nodes.add(top == null ? null : top.at);
                    raw = end;
                }
                i = end;
            }
        }
        addRaw(out, e, raw, to, seq);
        return channels(out, nodes);
    }

    /**
     * {@return the pieces with each string value's channel set from its node}, once the data is read: a name repeated
     * later in its object renamed the earlier occurrence's node after its strings were found
     */
    private static List<EventText.Piece> channels(List<EventText.Piece> pieces, List<JsonPaths.Step> nodes) {
        List<EventText.Piece> out = new ArrayList<>(pieces.size());
        JsonPaths paths = new JsonPaths();
        int k = 0;
        for (EventText.Piece p : pieces) {
            out.add(!p.json ? p : new EventText.Piece(p.event, p.start, p.end, true, paths.channel(nodes.get(k++)),
                    p.text, p.quote));
        }
        return out;
    }

    private static void addRaw(List<EventText.Piece> out, byte[] e, int from, int to, long seq) {
        if (from < to) {
            out.add(new EventText.Piece(seq, from, to, false, EventText.RAW,
                    new String(e, from, to - from, StandardCharsets.ISO_8859_1)));
        }
    }

    /** Names the current member of an object, its name folded as strict data's are ({@link EventText#fold}). */
    private static void member(Level level, String name) {
        level.at = JsonPaths.member(level.members, level.parent, EventText.foldKey(name));
    }

    /** The keywords lenient readers take as literals, in any case (Gson's {@code JsonReader}). */
    private static final String[] KEYWORDS = {"true", "false", "null"};
    /** A JSON number (RFC 8259, section 6). */
    private static final Pattern NUMBER = Pattern.compile("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?");

    /**
     * {@return whether the unquoted token {@code [from, to)} is a literal}: {@code true}, {@code false} or
     * {@code null} in any case, or a JSON number (RFC 8259, section 6); any other unquoted value is read as a string
     */
    private static boolean literal(byte[] e, int from, int to) {
        String t = new String(e, from, to - from, StandardCharsets.ISO_8859_1);
        for (String k : KEYWORDS) {
            if (t.equalsIgnoreCase(k)) {
                return true;
            }
        }
        return NUMBER.matcher(t).matches();
    }

    /** {@return whether {@code b} ends an unquoted name or literal} */
    private static boolean delimiter(byte b) {
        return switch (b) {
            case ' ', '\t', '\n', '\r', '\f', '{', '}', '[', ']', ',', ';', ':', '=', '"', '\'', '/', '#' -> true;
            default -> false;
        };
    }

    /** {@return the index after the white space and comments at {@code i}} A comment left open runs to the end. */
    static int skip(byte[] e, int i, int to) {
        while (i < to) {
            byte b = e[i];
            if (b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f') {
                i++;
            } else if (b == '#' || b == '/' && i + 1 < to && e[i + 1] == '/') {
                while (i < to && e[i] != '\n' && e[i] != '\r') {
                    i++;
                }
            } else if (b == '/' && i + 1 < to && e[i + 1] == '*') {
                int k = i + 2;
                while (k + 1 < to && !(e[k] == '*' && e[k + 1] == '/')) {
                    k++;
                }
                i = k + 1 < to ? k + 2 : to;
            } else {
                return i;
            }
        }
        return i;
    }

    /** {@return the index of {@code quote} closing a string whose content starts at {@code i}; -1 if its line ends} */
    private static int close(byte[] e, int i, int to, byte quote) {
        for (; i < to; i++) {
            if (e[i] == '\n' || e[i] == '\r') {
                return -1;
            }
            if (e[i] == '\\') {
                i++;
            } else if (e[i] == quote) {
                return i;
            }
        }
        return -1;
    }

    /**
     * {@return the content of a string token, unescaped as lenient readers do, as ISO-8859-1 of its UTF-8}: the JSON
     * escapes, {@code \'}, {@code \xHH} (JSON5); any other escaped character stands for itself
     */
    private static String unescape(byte[] e, int from, int to) {
        String s = new String(e, from, to - from, StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '\\' || i + 1 >= s.length()) {
                out.append(c);
                continue;
            }
            char x = s.charAt(++i);
            int hex = x == 'u' ? 4 : x == 'x' ? 2 : 0;
            int u = hex > 0 ? hex(s, i + 1, hex) : -1;
            if (u >= 0) {
                out.append((char) u);
                i += hex;
            } else {
                out.append(switch (x) {
                    case 'b' -> '\b';
                    case 'f' -> '\f';
                    case 'n' -> '\n';
                    case 'r' -> '\r';
                    case 't' -> '\t';
                    default -> x;
                });
            }
        }
        return new String(out.toString().getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
    }

    /** {@return the value of {@code n} hex digits at {@code i}; -1 if they are not} */
    private static int hex(String s, int i, int n) {
        if (i + n > s.length()) {
            return -1;
        }
        int u = 0;
        for (int h = i; h < i + n; h++) {
            int d = Syntax.hexDigit(s.charAt(h));
            if (d < 0) {
                return -1;
            }
            u = u * 16 + d;
        }
        return u;
    }
}
