package dev.openshell.middleware.spi.internal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * The {@code charset} assignments of every HTML {@code <meta>} tag of a body, read as its bytes arrive, wherever the
 * tag starts and however the bytes are split ({@link BodyCharsets}'s third kind of declaration). A state machine over
 * the bytes: each byte is looked at a bounded number of times, whatever the chunking; the only text kept across
 * calls is the name being read ({@link CharsetName}: at most {@value CharsetName#MAX} bytes as a codec lookup reads it).
 *
 * <p>A tag is {@code <}, optional ASCII white space and {@code meta} in any case, up to the first {@code >} outside
 * single or double quotes (the body's end if none; comments and scripts are not skipped). Inside it, character
 * references are read as the characters they stand for ({@link CharacterReference}: {@code ch&#97;rset}, as an HTML
 * parser reads an attribute value), and every {@code charset} in any case followed by optional white space,
 * {@code =}, optional white space and an optional quote gives a name: the characters up to white space, {@code /},
 * {@code ;}, a quote, {@code >}, {@code ?} or the body's end. White space is WHATWG's and VT (Python's {@code \\s}). BeautifulSoup's {@code <\s*meta[^>]+charset\s*=\s*["']?([^>]*?)[ /;'">]}, lxml's HTML parser and a WHATWG
 * prescan take their name from such a tag, so this finds every declaration they find, and may find more.
 */
final class MetaCharsets {
    private static final long LT = 0x3c3c3c3c3c3c3c3cL;
    private static final long LOW = 0x0101010101010101L;
    private static final long HIGH = 0x8080808080808080L;

    private enum State { TEXT, OPEN, TAG }

    /** Where a name stands inside a tag: after {@code charset}, after {@code =}, after a quote, in the name. */
    private enum Value { NONE, EQUALS, START, QUOTED, NAME }

    private State state = State.TEXT;
    /** In {@link State#OPEN}: how many letters of {@code meta} were read. */
    private int meta;
    /** In a tag: the open quote, or 0. */
    private byte quote;
    /** In a tag: how many letters of {@code charset} end at the last byte. */
    private int charset;
    private Value value = Value.NONE;
    /** The name as BeautifulSoup reads it. */
    private final CharsetName whole = new CharsetName();
    /** The name cut also at other white space and {@code ?}. */
    private final CharsetName cut = new CharsetName();
    private boolean cutEnded;
    /** In a tag: the character reference being read. */
    private final CharacterReference reference = new CharacterReference();

    /**
     * Reads {@code b[off, off + len)} (absolute indices; position, limit and byte order are not used), the next bytes
     * of the body, adding the names whose end they hold to {@code out}.
     */
    void read(ByteBuffer bytes, int off, int len, List<BodyCharsets.Declaration> out) {
        ByteBuffer b = bytes.order() == ByteOrder.LITTLE_ENDIAN ? bytes
                : bytes.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int end = off + len;
        int i = off;
        while (i < end) {
            if (state == State.TEXT) {
                i = indexOfLt(b, i, end);
                if (i < 0) {
                    return;
                }
                if (i + 1 < end && (b.get(i + 1) | 0x20) != 'm' && !space(b.get(i + 1))) {
                    i++; // the common tag (<p, </a, <!): not <meta, read on as text without a state change
                    continue;
                }
                state = State.OPEN;
                meta = 0;
                i++;
                continue;
            }
            byte c = b.get(i);
            if (state == State.OPEN) {
                if (!open(c)) {
                    continue; // not a <meta: the byte is read again as text (it may be '<')
                }
            } else {
                tag(c, out);
            }
            i++;
        }
    }

    /** The body ended: a reference and a name being read end with it. */
    void end(List<BodyCharsets.Declaration> out) {
        if (state == State.TAG && reference.length > 0) {
            reference.end(false, this, out);
        }
        if (value == Value.NAME) {
            emit(out);
        }
        state = State.TEXT;
        value = Value.NONE;
    }

    /** {@return whether {@code c} was taken as part of {@code <} white space {@code meta}} */
    private boolean open(byte c) {
        if (meta == 0 && space(c)) {
            return true;
        }
        if (lower(c) != "meta".charAt(meta)) {
            state = State.TEXT;
            return false;
        }
        if (++meta == 4) {
            state = State.TAG;
            quote = 0;
            charset = 0;
            value = Value.NONE;
        }
        return true;
    }

    /**
     * One byte inside a tag. A character reference ({@code &#97;}, {@code &#x63;}, {@code &equals;}) is read as the
     * character it stands for, as an HTML parser reads an attribute value (libxml2 then takes {@code ch&#97;rset=}
     * in an {@code http-equiv} content as {@code charset=}); every other byte as itself. The tag ends at a raw
     * {@code >} outside quotes.
     */
    private void tag(byte c, List<BodyCharsets.Declaration> out) {
        if (reference.length > 0) {
            if (reference.takes(c)) {
                return;
            }
            reference.end(c == ';', this, out);
            if (c == ';') {
                return;
            }
        }
        if (c == '&') {
            reference.start();
            return;
        }
        text(c, out);
        if (quote != 0) {
            quote = c == quote ? 0 : quote;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '>') {
            state = State.TEXT;
            value = Value.NONE;
        }
    }

    /** One character of a tag's text (a byte, or what a reference stands for): the name, the next {@code charset}. */
    void text(byte c, List<BodyCharsets.Declaration> out) {
        value(c, out);
        int l = lower(c);
        if (l == "charset".charAt(charset)) {
            if (++charset == 7) {
                if (value == Value.NAME) {
                    emit(out); // a name that holds "charset" ends there; the new assignment is read too
                }
                value = Value.EQUALS;
                charset = 0;
            }
        } else {
            charset = l == 'c' ? 1 : 0;
        }
    }

    /**
     * Advances the name being read after a {@code charset} by one byte of the tag. Two readings of it are kept: as
     * BeautifulSoup's expression reads it (after an optional quote, up to a space, {@code /}, {@code ;}, a quote or
     * {@code >}: a TAB, LF or {@code ?} is part of it, {@code "\tutf-7"}), and cut also at any other white space or
     * {@code ?} (as a WHATWG or libxml2 reader ends an unquoted value); each is kept as a codec lookup reads it
     * ({@link CharsetName}), and both are given when they differ.
     */
    private void value(byte c, List<BodyCharsets.Declaration> out) {
        switch (value) {
            case NONE -> { }
            case EQUALS -> value = space(c) ? Value.EQUALS : c == '=' ? Value.START : Value.NONE;
            case START, QUOTED -> {
                if (value == Value.START && space(c)) {
                    return;
                }
                if (value == Value.START && (c == '"' || c == '\'')) {
                    value = Value.QUOTED;
                } else if (ends(c)) {
                    value = Value.NONE; // an empty name
                } else {
                    whole.clear();
                    cut.clear();
                    cutEnded = false;
                    add(c);
                    value = Value.NAME;
                }
            }
            case NAME -> {
                if (ends(c)) {
                    emit(out);
                } else {
                    add(c);
                }
            }
        }
    }

    private void add(byte c) {
        whole.add(c);
        cutEnded |= space(c) || c == '?';
        if (!cutEnded) {
            cut.add(c);
        }
    }

    private void emit(List<BodyCharsets.Declaration> out) {
        if (!cut.isEmpty()) {
            BodyCharsets.declare(out, cut.toString(), BodyCharsets.Source.META);
        }
        if (!whole.isEmpty() && !whole.toString().equals(cut.toString())) {
            BodyCharsets.declare(out, whole.toString(), BodyCharsets.Source.META);
        }
        value = Value.NONE;
    }

    /** {@return whether {@code c} ends a name as BeautifulSoup's expression reads it: {@code [ /;'">]}} */
    private static boolean ends(byte c) {
        return c == ' ' || c == '/' || c == ';' || c == '"' || c == '\'' || c == '>';
    }

    /** {@return the index of the first {@code <} in little-endian {@code b[from, to)}, or -1}: eight bytes per step. */
    static int indexOfLt(ByteBuffer b, int from, int to) {
        int i = from;
        for (; i + 8 <= to; i += 8) {
            long w = b.getLong(i) ^ LT; // little-endian: the first byte lowest
            long zero = (w - LOW) & ~w & HIGH; // has-zero-byte: a byte above the first '<' may be flagged falsely, none below it
            if (zero != 0) {
                return i + (Long.numberOfTrailingZeros(zero) >>> 3);
            }
        }
        for (; i < to; i++) {
            if (b.get(i) == '<') {
                return i;
            }
        }
        return -1;
    }

    private static int lower(byte c) {
        return c >= 'A' && c <= 'Z' ? c + 32 : c & 0xff;
    }

    /**
     * {@return whether {@code c} is ASCII white space: WHATWG's TAB, LF, FF, CR, SPACE, and VT, which Python's
     * {@code \\s} (BeautifulSoup's expression) also matches}
     */
    static boolean space(byte c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == 0x0b;
    }
}
