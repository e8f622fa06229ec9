package dev.openshell.middleware.spi.internal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * The {@code charset} and {@code encoding} assignments a body's markup makes, read as its bytes arrive, wherever they
 * stand and however the bytes are split ({@link BodyCharsets}'s third kind of declaration). A state machine over the
 * bytes: each byte is looked at a bounded number of times, whatever the chunking; the only text kept across calls is
 * the value being read ({@link CharsetValue}: a few {@link CharsetName}s of at most {@value CharsetName#MAX} bytes).
 *
 * <p>A tag is {@code <}, optional white space and {@code meta} or {@code ?xml} in any case (an XML declaration
 * anywhere, as w3lib and node-fetch read one), or at the body's start (after a UTF-8 byte order mark and white space,
 * in its first {@value BodyCharsets#WINDOW} bytes) {@code <?} and any processing instruction, whose values are
 * {@link BodyCharsets.Source#XML} ({@link #reach}), up to the first {@code >} outside single or double quotes (the
 * body's end if none; comments and scripts are not skipped). Inside it, character references are read as the characters they
 * stand for ({@link CharacterReference}: {@code ch&#97;rset}, as an HTML parser reads an attribute value), and the tag
 * is read as written too ({@link Assignments}: BeautifulSoup and node-fetch read {@code utf&#7;} as UTF-7). After the
 * tag, up to the end of its line, the text is read too, as written (requests', readability's and node-fetch's
 * {@code <meta.*?charset=} cross a {@code >}), and a tag in it is read as a tag as well. In both, every {@code charset} or {@code encoding} in any case
 * followed by optional white space, {@code =}, optional white space and an optional quote starts a value, read as
 * {@link CharsetValue} reads it. White space is WHATWG's and VT (Python's {@code \s}). So this finds what
 * BeautifulSoup's {@code <\s*meta[^>]+charset\s*=}, lxml's HTML parser, a WHATWG prescan, requests'
 * {@code get_encodings_from_content}, w3lib, node-fetch and jsoup find, and may find more.
 */
final class MetaCharsets {
    private static final long LT = 0x3c3c3c3c3c3c3c3cL;
    private static final long LOW = 0x0101010101010101L;
    private static final long HIGH = 0x8080808080808080L;
    private static final String META = "meta";
    private static final String XML = "?xml";
    /** Up to where a tag's reading runs on across lines: w3lib reads the first 4096 bytes. */
    private static final int LINES_TO = 4096;

    private enum State { TEXT, OPEN, TAG }

    private State state = State.TEXT;
    /** In {@link State#OPEN}: how many letters of {@code meta} and of {@code ?xml} were read (-1: not that one). */
    private int meta;
    private int xml;
    /** In a tag: the open quote, or 0. */
    private byte quote;
    /** The assignments of a tag, its references read as what they stand for. */
    private Assignments decoded = new Assignments();
    /** The assignments of the rest of a tag's line, as written: the tag's reader, read on (swapped at its end). */
    private Assignments line = new Assignments();
    /** Whether a tag's line is being read ({@link #line}), also through the tags it holds. */
    private boolean lineOn;
    /** The first byte not yet given to {@link #line} and {@link #reach}. */
    private long fed;
    /** The assignments of a tag as written (references as their bytes). */
    private final Assignments raw = new Assignments();
    /** The names the tag being read gave. */
    private final Assignments.Recent recent = new Assignments.Recent();
    /** Bytes read so far, to {@link #LINES_TO}. */
    private long position;
    /** In a tag: the character reference being read. */
    private final CharacterReference reference = new CharacterReference();
    private static final int[] BOM = {0xef, 0xbb, 0xbf};
    /** Whether nothing but a UTF-8 byte order mark and white space came so far. */
    private boolean atStart = true;
    /** How many bytes of a UTF-8 byte order mark the body starts with. */
    private int bom;
    /** Whether the next {@code <} opens the body, in its first {@value BodyCharsets#WINDOW} bytes. */
    private boolean first;
    /** In {@link State#OPEN}: whether its {@code <} opened the body (a processing instruction may follow). */
    private boolean opensBody;
    /** In a tag and its line: whether a processing instruction at the start reaches on ({@link #reach}). */
    private boolean xmlReach;
    private boolean piClosed;
    private boolean lineEnded;
    private byte last;

    /**
     * Reads {@code b[off, off + len)} (absolute indices; position, limit and byte order are not used), the next bytes
     * of the body, adding the names whose end they hold to {@code out}.
     */
    void read(ByteBuffer bytes, int off, int len, List<BodyCharsets.Declaration> out) {
        ByteBuffer b = bytes.order() == ByteOrder.LITTLE_ENDIAN ? bytes
                : bytes.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int end = off + len;
        int i = off;
        long base = position - off;
        position += len;
        while (i < end) {
            long at = base + i;
            if (at >= fed && (lineOn || state == State.TAG)) { // each byte once, also when read again as text
                fed = at + 1;
                reach(b.get(i), at);
                if (lineOn) {
                    line(b.get(i), at, out);
                }
            }
            if (state == State.TEXT) {
                if (lineOn) { // every byte goes to the line: no skipping to the next '<'
                    i = b.get(i) == '<' ? lt(b, i, end) : i + 1;
                    continue;
                }
                i = atStart ? start(b, i, end, base) : i;
                i = i < end ? indexOfLt(b, i, end) : -1;
                if (i < 0) {
                    return;
                }
                i = lt(b, i, end);
                continue;
            }
            byte c = b.get(i);
            if (state == State.OPEN) {
                if (!open(c)) {
                    continue; // not a <meta or <?xml: the byte is read again as text (it may be '<')
                }
            } else {
                tag(c, out);
            }
            i++;
        }
    }

    /** {@return where to read on after the {@code <} at {@code i}}: a tag may open there */
    private int lt(ByteBuffer b, int i, int end) {
        opensBody = first;
        first = false;
        byte next = i + 1 < end ? b.get(i + 1) : (byte) 'm';
        if ((next | 0x20) != 'm' && next != '?' && !space(next)) {
            return i + 1; // the common tag (<p, </a, <!): read on as text without a state change
        }
        state = State.OPEN;
        meta = 0;
        xml = 0;
        return i + 1;
    }

    /** The body ended: a reference and a value being read end with it. */
    void end(List<BodyCharsets.Declaration> out) {
        if (state == State.TAG && reference.length > 0) {
            reference.end(false, this, out);
        }
        raw.end(out, recent);
        decoded.end(out, recent);
        line.end(out, recent);
        lineOn = false;
        state = State.TEXT;
    }

    /** {@return whether {@code c} was taken as part of {@code <} white space {@code meta} or {@code ?xml}} */
    private boolean open(byte c) {
        if (opensBody) {
            opensBody = false;
            if (c == '?') {
                enter(true); // a processing instruction at the start: an XML declaration, read as one
                return true;
            }
        }
        if (meta == 0 && xml == 0 && space(c)) {
            return true;
        }
        int l = lower(c);
        meta = meta >= 0 && l == META.charAt(meta) ? meta + 1 : -1;
        xml = xml >= 0 && l == XML.charAt(xml) ? xml + 1 : -1;
        if (meta < 0 && xml < 0) {
            state = State.TEXT;
            return false;
        }
        if (meta == META.length() || xml == XML.length()) {
            enter(false);
        }
        return true;
    }

    /** Starts reading a tag; {@code pi}: a processing instruction at the start ({@link BodyCharsets.Source#XML}). */
    private void enter(boolean pi) {
        state = State.TAG;
        quote = 0;
        BodyCharsets.Source at = pi ? BodyCharsets.Source.XML : BodyCharsets.Source.META;
        decoded.reset(at);
        raw.reset(at);
        if (!lineOn) {
            recent.clear(); // a tag inside a line: the line may give its names too
        }
        xmlReach = pi;
        piClosed = false;
        lineEnded = false;
        last = 0;
    }

    /**
     * Skips a UTF-8 byte order mark and white space at the body's start; {@return where they end in {@code b[i, end)}}
     * Whether the byte there is a {@code <} that opens the body is {@link #first}.
     */
    private int start(ByteBuffer b, int i, int end, long base) {
        for (; i < end; i++) {
            long at = base + i;
            int c = b.get(i) & 0xff;
            if (at < BOM.length && bom == at && c == BOM[(int) at]) {
                bom++;
            } else if (bom % BOM.length != 0 || !space((byte) c)) {
                atStart = false; // a byte order mark cut short opens nothing (BeautifulSoup's ^\s*<\?)
                first = c == '<' && bom % BOM.length == 0 && at < BodyCharsets.WINDOW;
                return i;
            }
        }
        return i;
    }

    /**
     * Follows a processing instruction at the start: a value that starts before the later of its first {@code ?>}
     * and the end of its first line (LF), in the first {@value BodyCharsets#WINDOW} bytes, is an XML declaration's
     * (BeautifulSoup's {@code ^\s*<\?.*encoding=}; lxml's declaration); one after it a {@code <meta>}'s.
     */
    private void reach(byte c, long at) {
        if (!xmlReach) {
            return;
        }
        piClosed |= last == '?' && c == '>';
        lineEnded |= c == '\n';
        last = c;
        if (piClosed && lineEnded || at >= BodyCharsets.WINDOW) {
            xmlReach = false;
            decoded.at(BodyCharsets.Source.META);
            raw.at(BodyCharsets.Source.META);
            line.at(BodyCharsets.Source.META);
        }
    }

    /**
     * One byte inside a tag. A character reference ({@code &#97;}, {@code &#x63;}, {@code &equals;}) is read as the
     * character it stands for, as an HTML parser reads an attribute value (libxml2 then takes {@code ch&#97;rset=}
     * in an {@code http-equiv} content as {@code charset=}); every other byte as itself. The tag ends at a raw
     * {@code >} outside quotes; its line is read on.
     */
    private void tag(byte c, List<BodyCharsets.Declaration> out) {
        raw.text(c, out, recent);
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
            raw.end(out, recent);
            state = State.TEXT;
            if (lineOn) {
                decoded.end(out, recent); // a tag inside a line: the line read its bytes as written
            } else { // its line is read on by the reader of the tag, a value it holds going on
                Assignments t = line;
                line = decoded;
                decoded = t;
                lineOn = true;
            }
        }
    }

    /**
     * One byte of the rest of a tag's line: read as in the tag, without references; the line ends at LF, but not in
     * the first {@value #LINES_TO} bytes (w3lib's {@code content=...[^;]+;\s*charset=} runs across lines there).
     */
    private void line(byte c, long at, List<BodyCharsets.Declaration> out) {
        if (c == '\n' && at >= LINES_TO) {
            line.end(out, recent);
            lineOn = false;
            return;
        }
        line.text(c, out, recent);
    }

    /** One character of a tag or its line (a byte, or what a reference stands for), as an HTML parser reads it. */
    void text(byte c, List<BodyCharsets.Declaration> out) {
        decoded.text(c, out, recent);
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
