package dev.openshell.supervisor.audit;

import jakarta.json.JsonArray;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import jakarta.json.spi.JsonProvider;
import jakarta.json.stream.JsonGeneratorFactory;
import java.util.Arrays;
import java.util.Map;

/**
 * Writes one compact JSON object (RFC 8259) straight into its JSONL record, UTF-8 bytes, members in call order: the
 * audit events' path, which the sink writes as it is (no text, no {@link String} of the event, no encoder pass). The
 * bytes are exactly those Parsson's generator writes for the same calls, encoded as {@link String#getBytes} with
 * UTF-8 encodes them: {@code "} and {@code \} escaped with a backslash; {@code \b \t \n \f \r} as such; any other
 * character below U+0020 as {@code \}{@code u00xx} (lower-case hex); every other character as itself, a surrogate
 * pair as its one four-byte sequence and a lone surrogate as {@code ?}. {@code JsonLinePropertyTest} holds the two
 * equal byte for byte for any strings. Not validating: callers write each member name once, close what they open
 * and nest at most {@value #MAX_DEPTH} levels.
 */
final class JsonText {
    /** The JSON provider (Parsson), looked up once: {@code Json.createX} would look it up on every call. */
    private static final JsonProvider PROVIDER = JsonProvider.provider();
    /** Compact generators, for values other than the events ({@link JsonLine}). */
    static final JsonGeneratorFactory GENERATORS = PROVIDER.createGeneratorFactory(Map.of());

    /**
     * Room for an event without its {@code actor} (0.9-1.1 KB): {@link OcsfEvents} adds the length of the actor
     * member it splices in, so that the buffer rarely grows (a copy) on the way and wastes little, since it becomes
     * the record as it is.
     */
    static final int CAPACITY = 1152;
    /** The deepest nesting of objects and arrays, the outermost object included. */
    static final int MAX_DEPTH = 63;
    private static final byte[] HEX = "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] TRUE = {'t', 'r', 'u', 'e'};
    private static final byte[] FALSE = {'f', 'a', 'l', 's', 'e'};
    private static final byte[] NULL = {'n', 'u', 'l', 'l'};

    private byte[] buf;
    private int len;
    /** Nesting depth: 1 inside the outermost object. */
    private int depth;
    /** Bit {@code d} set: the container at depth {@code d} holds a member or element already (a comma comes next). */
    private long filled;
    /** Bit {@code d} set: the container at depth {@code d} is an array (closed by {@code ]}), else an object. */
    private long kinds;

    /** {@return the JSON provider, looked up once} */
    static JsonProvider json() {
        return PROVIDER;
    }

    JsonText() {
        this(CAPACITY);
    }

    /** @param capacity the first buffer size, in bytes */
    JsonText(int capacity) {
        buf = new byte[capacity];
        buf[len++] = '{';
        depth = 1;
    }

    /** {@return this} Adds a string member. @param name the name @param value the value */
    JsonText add(String name, String value) {
        name(name);
        string(value);
        return this;
    }

    /** {@return this} Adds a number member. @param name the name @param value the value */
    JsonText add(String name, long value) {
        name(name);
        number(value);
        return this;
    }

    /**
     * {@return this} Adds a UUID member, written as {@link java.util.UUID#toString()} writes it (lower-case hex,
     * 8-4-4-4-12). @param name the name @param uuid the UUID
     */
    JsonText addUuid(String name, java.util.UUID uuid) {
        name(name);
        long msb = uuid.getMostSignificantBits();
        long lsb = uuid.getLeastSignificantBits();
        room(38);
        buf[len++] = '"';
        hex(msb >>> 32, 8);
        buf[len++] = '-';
        hex(msb >>> 16, 4);
        buf[len++] = '-';
        hex(msb, 4);
        buf[len++] = '-';
        hex(lsb >>> 48, 4);
        buf[len++] = '-';
        hex(lsb, 12);
        buf[len++] = '"';
        return this;
    }

    /** {@return this} Adds a boolean member. @param name the name @param value the value */
    JsonText add(String name, boolean value) {
        name(name);
        bytes(value ? TRUE : FALSE);
        return this;
    }

    /** {@return this} Adds a member whose value is an array of one string. @param name the name @param value it */
    JsonText addSingletonArray(String name, String value) {
        return openArray(name).element(value).end();
    }

    /** {@return this} Adds a member whose value is an array of strings. @param name the name @param values them */
    JsonText addArray(String name, Iterable<String> values) {
        openArray(name);
        for (String v : values) {
            element(v);
        }
        return end();
    }

    /** {@return this} Adds an object member built before. @param name the name @param value the object */
    JsonText add(String name, JsonObject value) {
        name(name);
        value(value);
        return this;
    }

    /** {@return this} Adds an array member built before. @param name the name @param value the array */
    JsonText add(String name, JsonArray value) {
        name(name);
        value(value);
        return this;
    }

    /** {@return this} Opens an array member; close it with {@link #end()}. @param name the name */
    JsonText openArray(String name) {
        name(name);
        return push('[');
    }

    /** {@return this} Opens an object inside the innermost open array; close it with {@link #end()}. */
    JsonText openElement() {
        comma();
        return push('{');
    }

    /** {@return this} Opens an object member; close it with {@link #end()}. @param name the name */
    JsonText open(String name) {
        name(name);
        return push('{');
    }

    /** {@return this} Closes the innermost open object or array. */
    JsonText end() {
        int d = depth--;
        filled &= ~(1L << d);
        byte open = closer(d);
        room(1);
        buf[len++] = open;
        return this;
    }

    /**
     * {@return this} Writes members rendered earlier by {@link #member}, as they are: a block that repeats across
     * events (the process behind a connection, the class and severity members) is rendered once.
     *
     * @param member the members' UTF-8 bytes, {@code "name":value}, separated by commas; read, not kept
     */
    JsonText raw(byte[] member) {
        comma();
        bytes(member);
        return this;
    }

    /**
     * {@return the bytes of the members of this object, {@code "name":value} (separated by commas), to be written with
     * {@link #raw}} Closes the object; call after writing at least one member.
     */
    byte[] member() {
        end();
        return Arrays.copyOfRange(buf, 1, len - 1);
    }

    /**
     * {@return the event: closes the outermost object and ends the record with a newline} The buffer becomes the
     * event's record: nothing may be written after this.
     */
    RenderedEvent build() {
        end();
        room(1);
        buf[len++] = '\n';
        return new RenderedEvent(new JsonLine.Line(buf, len)); // the buffer as it is: no copy

    }

    /** {@return the closing bracket of the container at depth {@code d}} @param d the depth */
    private byte closer(int d) {
        return (kinds & (1L << d)) != 0 ? (byte) ']' : (byte) '}';
    }

    private JsonText push(char open) {
        if (depth >= MAX_DEPTH) {
            throw new IllegalStateException("JSON nesting deeper than " + MAX_DEPTH);
        }
        room(1);
        buf[len++] = (byte) open;
        depth++;
        if (open == '[') {
            kinds |= 1L << depth;
        } else {
            kinds &= ~(1L << depth);
        }
        return this;
    }

    private JsonText element(String value) {
        comma();
        string(value);
        return this;
    }

    private void comma() {
        long bit = 1L << depth;
        if ((filled & bit) != 0) {
            room(1);
            buf[len++] = ',';
        } else {
            filled |= bit;
        }
    }

    private void name(String name) {
        comma();
        string(name);
        room(1);
        buf[len++] = ':';
    }

    /** Writes any value a {@link JsonObject} may hold, as Parsson's generator writes it. */
    private void value(JsonValue v) {
        switch (v.getValueType()) {
            case STRING -> string(((JsonString) v).getString());
            case NUMBER -> ascii(((JsonNumber) v).toString());
            case TRUE -> bytes(TRUE);
            case FALSE -> bytes(FALSE);
            case NULL -> bytes(NULL);
            case OBJECT -> {
                push('{');
                for (Map.Entry<String, JsonValue> m : v.asJsonObject().entrySet()) {
                    name(m.getKey());
                    value(m.getValue());
                }
                end();
            }
            case ARRAY -> {
                push('[');
                for (JsonValue element : v.asJsonArray()) {
                    comma();
                    value(element);
                }
                end();
            }
        }
    }

    /** Writes the low {@code digits} hex digits of {@code v} (room is made by the caller). */
    private void hex(long v, int digits) {
        for (int i = digits - 1; i >= 0; i--) {
            buf[len + i] = HEX[(int) (v & 0xF)];
            v >>>= 4;
        }
        len += digits;
    }

    /** Writes {@code v} in decimal, as {@link Long#toString(long)} does. */
    private void number(long v) {
        if (v == Long.MIN_VALUE) {
            ascii(Long.toString(v));
            return;
        }
        room(20);
        if (v < 0) {
            buf[len++] = '-';
            v = -v;
        }
        int digits = 1;
        for (long t = v; t >= 10; t /= 10) {
            digits++;
        }
        int p = len + digits;
        len = p;
        do {
            buf[--p] = (byte) ('0' + v % 10);
            v /= 10;
        } while (v != 0);
    }

    /** Writes {@code s}, known to be ASCII without anything to escape (a number), as it is. */
    private void ascii(String s) {
        int n = s.length();
        room(n);
        for (int i = 0; i < n; i++) {
            buf[len++] = (byte) s.charAt(i);
        }
    }

    private void bytes(byte[] b) {
        room(b.length);
        System.arraycopy(b, 0, buf, len, b.length);
        len += b.length;
    }

    /**
     * Writes {@code s} as a JSON string, quoted and escaped, UTF-8. Printable ASCII, nearly all an event holds, is
     * copied in one pass; the rest takes {@link #escape}.
     */
    private void string(String s) {
        int n = s.length();
        room(n + 2);
        byte[] b = buf;
        int p = len;
        b[p++] = '"';
        int i = 0;
        for (; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') {
                break;
            }
            b[p++] = (byte) c;
        }
        len = p;
        if (i < n) {
            escape(s, i);
        }
        room(1);
        buf[len++] = '"';
    }

    /** Writes {@code s} from {@code i} on, escaped, UTF-8 encoded (what {@link #string} leaves). */
    private void escape(String s, int i) {
        int n = s.length();
        for (; i < n; i++) {
            char c = s.charAt(i);
            room(6);
            byte[] b = buf;
            if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
                b[len++] = (byte) c;
            } else if (c < 0x20 || c == '"' || c == '\\') {
                escapeAscii(c);
            } else if (c < 0x800) {
                b[len++] = (byte) (0xC0 | (c >> 6));
                b[len++] = (byte) (0x80 | (c & 0x3F));
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                int cp = Character.toCodePoint(c, s.charAt(++i));
                b[len++] = (byte) (0xF0 | (cp >> 18));
                b[len++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
                b[len++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
                b[len++] = (byte) (0x80 | (cp & 0x3F));
            } else if (Character.isSurrogate(c)) {
                b[len++] = '?'; // a lone surrogate: what the UTF-8 encoder of String writes for it
            } else {
                b[len++] = (byte) (0xE0 | (c >> 12));
                b[len++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                b[len++] = (byte) (0x80 | (c & 0x3F));
            }
        }
    }

    /** Writes the escape of {@code c}, a control character, a quote or a backslash (room for 6 bytes is made). */
    private void escapeAscii(char c) {
        byte[] b = buf;
        b[len++] = '\\';
        switch (c) {
            case '"' -> b[len++] = '"';
            case '\\' -> b[len++] = '\\';
            case '\b' -> b[len++] = 'b';
            case '\t' -> b[len++] = 't';
            case '\n' -> b[len++] = 'n';
            case '\f' -> b[len++] = 'f';
            case '\r' -> b[len++] = 'r';
            default -> {
                b[len++] = 'u';
                b[len++] = '0';
                b[len++] = '0';
                b[len++] = HEX[c >> 4];
                b[len++] = HEX[c & 0xF];
            }
        }
    }

    /** Makes room for {@code n} more bytes: the buffer at least doubles when it grows. */
    private void room(int n) {
        if (len + n > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
        }
    }
}
