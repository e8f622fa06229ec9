package dev.openshell.middleware.spi.internal;

import static org.apiguardian.api.API.Status.INTERNAL;

import java.nio.ByteBuffer;
import java.util.Arrays;
import org.apiguardian.api.API;

/**
 * The sequences a decoder of a stateful encoding (ISO-2022-JP/-KR/-CN, HZ) or an HTML or XML parser drops from the
 * text it reads, so that the text around them reads as one run: the one rule
 * of the response scrub ({@code DroppedSpelling}: a secret with such sequences between its bytes) and of the
 * {@code openshell/regex} body reading without them ({@code DroppedText}; attacker pass 8, P10-4 and P10-6):
 * <ul>
 *   <li>an ECMA-35 / ISO 2022 escape sequence: ESC (0x1B), one to {@value #MAX_INTERMEDIATES} intermediate bytes
 *       0x20-0x2F, one final byte 0x30-0x7E (designations such as {@code ESC ( B}, {@code ESC $ B},
 *       {@code ESC $ ) C}, {@code ESC & @}); {@code ESC F} alone (the single shifts {@code ESC N} / {@code ESC O},
 *       ...) is not dropped, it changes the next character;</li>
 *   <li>SO (0x0E) and SI (0x0F), the ISO-2022-KR shifts;</li>
 *   <li>the HZ shifts <code>~&#123;</code> and <code>~&#125;</code> and the HZ line continuation {@code ~} LF
 *       (RFC 1843). ({@code ~~}, HZ's spelling of a {@code ~}, is not dropped: it reads as one {@code ~}; a caller
 *       matching a {@code ~} handles it.)</li>
 *   <li>every other C0 control but NUL, TAB, LF and CR (0x01-0x08, 0x0B, 0x0C, 0x10-0x1F), and an ESC that starts
 *       no escape sequence ({@code ESC F} included): libxml2's HTML parser drops them from the text it reads (Debian's
 *       2.9, so its python3-lxml, xmllint, PHP's DOM; attacker pass 15c, P17c-1), so a secret with one between its
 *       bytes reads whole there;</li>
 *   <li>a numeric character reference ({@code &#1;}, {@code &#x7f;}, {@code &#xffff;}; leading zeros, the
 *       semicolon optional, as HTML parsers read them: {@link #reference}) to a code point a reader drops
 *       ({@link #droppedCodePoint}: Python's {@code html.parser} and {@code html.unescape} drop C0 controls, DEL and
 *       the noncharacters, libxml2 also NUL, U+000C, surrogates and values above U+10FFFF; attacker pass 16, P18-1),
 *       at most {@value #MAX_REFERENCE} bytes long;</li>
 *   <li>{@code &#} or {@code &#x} without digits (libxml2 reads a reference to nothing, P19-1) and a named reference
 *       other than XML's five predefined entities ({@code &a;}, {@code &nbsp;}: libxml2's recovering XML parser
 *       drops an entity no DTD declares, P19-3), at most {@value #MAX_REFERENCE} bytes;</li>
 *   <li>a run of at most {@value #MAX_NUL_RUN} NUL bytes (libxml2 2.14's recovering XML parser drops NUL, P19-2);</li>
 *   <li>the UTF-8 bytes of U+FFFE and U+FFFF ({@code EF BF BE}, {@code EF BF BF}), of a UTF-16 surrogate
 *       ({@code ED A0-BF 80-BF}) and of a value above U+10FFFF ({@code F4 90-BF 80-BF 80-BF}): libxml2 reads each as
 *       a character that is not an XML {@code Char} and drops it (P18-2).</li>
 * </ul>
 * Dropping every such sequence is a superset of what a decoder drops (text shifted into a double-byte set is not
 * ASCII when decoded). Offsets are absolute indexes of the buffer, up to an exclusive end {@code n} (at most its
 * limit); the buffer's position and byte order are ignored and never changed. Static methods only; never throws for
 * offsets {@code 0 <= p < n <= limit}.
 */
@API(status = INTERNAL, since = "0.2")
public final class DroppedSequences {
    /** The most intermediate bytes of an escape sequence (ISO-2022 designations use one or two). */
    public static final int MAX_INTERMEDIATES = 3;
    /**
     * The longest escape sequence, in bytes: ESC, the intermediates, the final byte. What the response scrub's
     * held-back window is sized by; a dropped sequence may be longer ({@link #MAX_DROPPED}).
     */
    public static final int MAX_SEQUENCE = MAX_INTERMEDIATES + 2;
    /**
     * The longest character reference read as a dropped sequence, in bytes ({@code &#}, an optional {@code x}, the
     * digits with their leading zeros, an optional {@code ;}); a longer one is read as text (the scrub's documented
     * limit: character references).
     */
    public static final int MAX_REFERENCE = 32;
    /** The longest run of NUL bytes read as a dropped sequence; a longer one is text (a binary body's zeros). */
    public static final int MAX_NUL_RUN = 32;
    /** The longest dropped sequence, in bytes: a character reference, or a run of NULs. */
    public static final int MAX_DROPPED = Math.max(MAX_REFERENCE, MAX_NUL_RUN);
    /**
     * The value {@link #reference} gives {@code &#} or {@code &#x} without digits: libxml2 reads it as a reference to
     * nothing and drops it (attacker pass 17, P19-1); Python and WHATWG parsers read it as written.
     */
    public static final int NO_DIGITS = -1;
    /** XML's five predefined entities (XML 1.0 section 4.6): every other name needs a declaration. */
    private static final java.util.Set<String> PREDEFINED = java.util.Set.of("amp", "lt", "gt", "quot", "apos");
    private static final byte ESC = 0x1b;
    /** The code point a reference's value is clamped to: no Unicode scalar value, as parsers clamp it. */
    private static final int CLAMPED = 0x110000;
    /** The C0 controls an HTML parser keeps (NUL aside): TAB, LF and CR, one bit each by value. */
    private static final long KEPT_CONTROLS = 1L << '\t' | 1L << '\n' | 1L << '\r';
    private static final long TAB8 = 0x0909090909090909L;
    private static final long LF8 = 0x0a0a0a0a0a0a0a0aL;
    private static final long CR8 = 0x0d0d0d0d0d0d0d0dL;
    private static final long TILDE8 = 0x7e7e7e7e7e7e7e7eL;
    private static final long AMPERSAND8 = 0x2626262626262626L;
    private static final long ED8 = 0xededededededededL;
    private static final long EF8 = 0xefefefefefefefefL;
    private static final long F48 = 0xf4f4f4f4f4f4f4f4L;
    private static final long LOWS = 0x7f7f7f7f7f7f7f7fL;
    private static final long HIGHS = 0x8080808080808080L;
    /** Added to a byte's low seven bits: the sum's high bit is clear exactly when the byte is below 0x20. */
    private static final long BELOW_SPACE = 0x6060606060606060L;
    /** Added to a byte's low seven bits: the sum's high bit is set exactly when the byte is above 0x7d. */
    private static final long ABOVE_BRACE = 0x0202020202020202L;

    private DroppedSequences() {
    }

    /** {@return the bytes that may start a dropped sequence ({@link #mayStart}), in a new array} */
    public static int[] startBytes() {
        int[] out = new int[256];
        int k = 0;
        for (int c = 0; c < 256; c++) {
            if (mayStart((byte) c)) {
                out[k++] = c;
            }
        }
        return Arrays.copyOf(out, k);
    }

    /**
     * {@return whether {@code b} may start a dropped sequence: a C0 control but TAB, LF and CR (ESC, SO, SI and NUL
     * among them), {@code ~}, {@code &} (a character reference), or the UTF-8 lead bytes {@code ED}, {@code EF} and
     * {@code F4} (a surrogate, U+FFFE/U+FFFF, a value above U+10FFFF)}
     *
     * @param b a byte
     */
    public static boolean mayStart(byte b) {
        return b == '~' || b == '&' || b == 0 || b == (byte) 0xed || b == (byte) 0xef || b == (byte) 0xf4
                || droppedControl(b);
    }

    /**
     * {@return whether {@code b}, followed by {@code next}, may start a dropped sequence} As {@link #mayStart}, and a
     * {@code &} only before {@code #} or a name's first character (a character reference): the test a byte-at-a-time
     * reader of HTML, where {@code &} is common, makes before {@link #length}.
     *
     * @param b a byte
     * @param next the byte after it
     */
    public static boolean mayStart(byte b, byte next) {
        return b == '&' ? next == '#' || nameChar(next, true) : mayStart(b);
    }

    /**
     * {@return whether {@code b} is a C0 control an HTML parser drops alone: any but NUL, TAB, LF and CR (ESC, SO and
     * SI among them)} Each is a dropped sequence of one byte by itself ({@link #length}), an ESC too where it starts no
     * escape sequence; a reading that drops only these is libxml2's.
     *
     * @param b a byte
     */
    public static boolean droppedControl(byte b) {
        return b > 0 && b < ' ' && (KEPT_CONTROLS & 1L << b) == 0;
    }

    /**
     * {@return the length in bytes of the sequence a decoder drops at {@code p}: 0 for none, -1 when {@code n} comes
     * before the sequence can be told (a streamed text may go on)} At an ESC that starts an escape sequence, the whole
     * sequence (an HTML parser drops the ESC alone: {@link #shorter}).
     *
     * @param b the text
     * @param p where to look, {@code 0 <= p < n}
     * @param n the end of the text, at most {@code b.limit()}
     */
    public static int length(ByteBuffer b, int p, int n) {
        byte x = b.get(p);
        if (x == '~') {
            if (p + 1 >= n) {
                return -1;
            }
            byte c = b.get(p + 1);
            return c == '{' || c == '}' || c == '\n' ? 2 : 0;
        }
        if (x == '&') {
            return droppedReference(b, p, n);
        }
        if (x == 0) {
            return nulRun(b, p, n);
        }
        if (x < 0) {
            return droppedUtf8(b, p, n, x & 0xff);
        }
        if (x != ESC) {
            return droppedControl(x) ? 1 : 0; // SO, SI and the other C0 controls an HTML parser drops
        }
        for (int q = p + 1; q <= p + MAX_INTERMEDIATES + 1; q++) {
            if (q >= n) {
                return -1;
            }
            int c = b.get(q) & 0xff;
            if (c >= 0x30 && c <= 0x7e) {
                // ESC F (a single shift, ...): the ESC alone, as libxml2 drops it; a decoder's shifted next character
                // is not ASCII, so keeping F is a superset
                return q == p + 1 ? 1 : q + 1 - p;
            }
            if (c < 0x20 || c > 0x2f) {
                return 1; // the ESC alone
            }
        }
        return 1; // too many intermediates: the ESC alone
    }

    /**
     * {@return the other length of the sequence of {@code s} bytes dropped at {@code p}, where a reader drops less:
     * 1 for an escape sequence (libxml2's HTML parser drops its ESC alone and reads the rest as text), else {@code s}}
     *
     * @param b the text
     * @param p where the sequence starts
     * @param s its length ({@link #length}), positive
     */
    public static int shorter(ByteBuffer b, int p, int s) {
        return s > 1 && mayHaveShorter(b.get(p)) ? 1 : s;
    }

    /** {@return whether a sequence that starts with {@code b} may have a shorter reading ({@link #shorter}): an ESC} */
    public static boolean mayHaveShorter(byte b) {
        return b == ESC;
    }

    /**
     * {@return the length of the character reference at {@code p} (an {@code &}) that a reader drops, as length}: a
     * numeric one to a dropped code point or without digits, or a named one no DTD declares (libxml2's recovering XML
     * parser drops it: {@code &a;}, {@code &nbsp;}; attacker pass 17, P19-3), at most {@value #MAX_REFERENCE} bytes
     */
    private static int droppedReference(ByteBuffer b, int p, int n) {
        int end = Math.min(n, p + MAX_REFERENCE);
        if (p + 1 < end && b.get(p + 1) != '#') {
            return undeclaredEntity(b, p, n, end);
        }
        long r = reference(b, p, end, false);
        if (r < 0) {
            return end < n || end - p >= MAX_REFERENCE ? 0 : -1; // longer than the bound: text
        }
        return r != 0 && ((int) r == NO_DIGITS || droppedCodePoint((int) r)) ? (int) (r >>> 32) : 0;
    }

    /** {@return the length of {@code &name;} at {@code p} for a name other than the predefined five, as length} */
    private static int undeclaredEntity(ByteBuffer b, int p, int n, int end) {
        int j = p + 1;
        while (j < end && nameChar(b.get(j), j == p + 1)) {
            j++;
        }
        if (j >= end) {
            return end < n || end - p >= MAX_REFERENCE ? 0 : -1;
        }
        if (j == p + 1 || b.get(j) != ';') {
            return 0;
        }
        return predefined(b, p + 1, j) ? 0 : j + 1 - p;
    }

    /** {@return whether the name {@code [from, to)} of {@code b} is a predefined entity's}, without a string */
    private static boolean predefined(ByteBuffer b, int from, int to) {
        for (String name : PREDEFINED) {
            boolean same = name.length() == to - from;
            for (int k = 0; same && k < name.length(); k++) {
                same = b.get(from + k) == name.charAt(k);
            }
            if (same) {
                return true;
            }
        }
        return false;
    }

    /** {@return whether {@code c} continues an XML name (ASCII letters, digits, {@code _ : . -}; not first: digits, {@code . -})} */
    private static boolean nameChar(byte c, boolean first) {
        boolean start = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
        return start || !first && ((c >= '0' && c <= '9') || c == '.' || c == '-');
    }

    /** {@return whether {@code name} is one of XML's five predefined entities} @param name an entity name */
    public static boolean predefinedEntity(String name) {
        return PREDEFINED.contains(name);
    }

    /**
     * {@return the length of the run of NUL bytes at {@code p}, as length} libxml2's recovering XML parser (2.14,
     * lxml's wheels) drops a NUL (attacker pass 17, P19-2); a run longer than {@value #MAX_NUL_RUN} is text, so the
     * zeros of a binary body are never held as sequences.
     */
    private static int nulRun(ByteBuffer b, int p, int n) {
        int j = p;
        while (j < n && j - p <= MAX_NUL_RUN && b.get(j) == 0) {
            j++;
        }
        if (j - p > MAX_NUL_RUN) {
            return 0;
        }
        return j >= n ? -1 : j - p;
    }

    /**
     * {@return the length of the UTF-8 sequence at {@code p} (lead byte {@code c}) of a character libxml2 drops, as
     * length} U+FFFE and U+FFFF, a surrogate, a value above U+10FFFF.
     */
    private static int droppedUtf8(ByteBuffer b, int p, int n, int c) {
        int need = droppedUtf8Length(c);
        if (need == 0) {
            return 0;
        }
        for (int k = 1; k < need; k++) {
            if (p + k >= n) {
                return -1;
            }
            int d = b.get(p + k) & 0xff;
            boolean ok = k > 1 ? d >= 0x80 && d <= 0xbf
                    : c == 0xed ? d >= 0xa0 && d <= 0xbf : c == 0xf4 ? d >= 0x90 && d <= 0xbf : d == 0xbf;
            if (!ok) {
                return 0;
            }
        }
        return c != 0xef || (b.get(p + 2) & 0xff) >= 0xbe ? need : 0;
    }

    /**
     * {@return whether a reader drops the character {@code cp} when a character reference names it}: Python's
     * ({@link #droppedByPython}) or libxml2's ({@link #droppedByLibxml2}). TAB, LF, CR and U+0080-U+009F
     * (windows-1252 to Python and WHATWG) are kept by both.
     *
     * @param cp a code point, or a value above U+10FFFF
     */
    public static boolean droppedCodePoint(int cp) {
        return droppedByPython(cp) || droppedByLibxml2(cp);
    }

    /**
     * {@return whether Python's {@code html.unescape} (and {@code html.parser}) reads a reference to {@code cp} as
     * nothing}: U+0001-U+0008, U+000B, U+000E-U+001F, U+007F, U+FDD0-U+FDEF and U+nFFFE/U+nFFFF of every plane
     * ({@code html._invalid_codepoints})
     *
     * @param cp a code point, or a value above U+10FFFF
     */
    public static boolean droppedByPython(int cp) {
        return cp >= 0 && ((cp >= 1 && cp <= 8) || cp == 0xb || (cp >= 0xe && cp <= 0x1f) || cp == 0x7f
                || (cp >= 0xfdd0 && cp <= 0xfdef) || ((cp & 0xfffe) == 0xfffe && cp <= 0x10ffff));
    }

    /**
     * {@return whether libxml2 (Debian's 2.9: lxml, xmllint, PHP's DOM) reads a reference to {@code cp} as nothing}:
     * every value that is not an XML {@code Char} (XML 1.0 section 2.2): U+0000-U+0008, U+000B, U+000C,
     * U+000E-U+001F, the surrogates, U+FFFE, U+FFFF and values above U+10FFFF
     *
     * @param cp a code point, or a value above U+10FFFF
     */
    public static boolean droppedByLibxml2(int cp) {
        boolean xmlChar = cp == '\t' || cp == '\n' || cp == '\r' || (cp >= 0x20 && cp <= 0xd7ff)
                || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
        return !xmlChar;
    }

    /**
     * {@return the numeric character reference at {@code p}: its length in bytes times 2^32 plus its value (clamped
     * to 0x110000, as parsers clamp it), 0 for none, -1 when {@code n} comes before it can be told and the text may
     * go on} A reference is {@code &#} and decimal digits, or {@code &#x} / {@code &#X} and hex digits, at least one,
     * any number of them leading zeros, then an optional {@code ;} (HTML parsers read one without it, up to the first
     * byte that is no digit: WHATWG HTML "Numeric character reference state", Python's {@code html.unescape},
     * libxml2's {@code htmlParseCharRef}).
     *
     * @param b the text
     * @param p where to look
     * @param n the end of the text, at most {@code b.limit()}
     * @param complete whether the text ends at {@code n} (never -1 then)
     */
    public static long reference(ByteBuffer b, int p, int n, boolean complete) {
        if (b.get(p) != '&' || p + 1 < n && b.get(p + 1) != '#') {
            return 0;
        }
        int j = p + 2;
        boolean hex = j < n && (b.get(j) == 'x' || b.get(j) == 'X');
        if (hex) {
            j++;
        }
        int start = j;
        int cp = 0;
        int d;
        while (j < n && (d = digit(b.get(j), hex)) >= 0) {
            cp = Math.min(cp * (hex ? 16 : 10) + d, CLAMPED);
            j++;
        }
        if (j >= n && !complete) {
            return -1;
        }
        if (j == start) {
            cp = NO_DIGITS; // &# or &#x before no digit: libxml2 drops it (with its ;), others read it as written
        }
        if (j < n && b.get(j) == ';') {
            j++;
        }
        return (long) (j - p) << 32 | cp & 0xffff_ffffL;
    }

    private static int digit(byte c, boolean hex) {
        if (hex) {
            return c < 0 ? -1 : Syntax.hexDigit((char) c);
        }
        return c >= '0' && c <= '9' ? c - '0' : -1;
    }

    /**
     * {@return whether {@code x} may start a character that is not an XML {@code Char} ({@link #notXmlChar}): every
     * byte at which {@link #notXmlChar} may be above 0}
     *
     * @param x a byte of the text
     */
    public static boolean mayStartNotXmlChar(byte x) {
        return x >= 0 ? x == 0 || droppedControl(x) : droppedUtf8Length(x & 0xff) > 0;
    }

    /** {@return the length of the UTF-8 sequences whose lead byte {@code c} may start one dropped, 0 for none} */
    private static int droppedUtf8Length(int c) {
        return c == 0xf4 ? 4 : c == 0xed || c == 0xef ? 3 : 0; // above U+10FFFF; a surrogate; U+FFFE or U+FFFF
    }

    /**
     * {@return the length of the character at {@code p} that is not an XML {@code Char} (XML 1.0 section 2.2), 0 for
     * one that is} NUL, a C0 control but TAB, LF and CR, and the UTF-8 of U+FFFE, U+FFFF, a surrogate or a value above
     * U+10FFFF; the text is read as complete at {@code n}.
     *
     * @param b the text
     * @param p where to look, {@code 0 <= p < n}
     * @param n the end of the text, at most {@code b.limit()}
     */
    public static int notXmlChar(ByteBuffer b, int p, int n) {
        byte x = b.get(p);
        if (x >= 0) {
            return x == 0 || droppedControl(x) ? 1 : 0;
        }
        return Math.max(0, droppedUtf8(b, p, n, x & 0xff));
    }

    /** {@return the length of the sequence dropped at {@code p} of a complete text ending at {@code n}, 0 for none} */
    public static int lengthInComplete(ByteBuffer b, int p, int n) {
        return Math.max(0, length(b, p, n));
    }

    /**
     * {@return the index of the first sequence a decoder drops in the complete text {@code [0, n)}, {@code n} for
     * none} The common case holds none of the bytes that can start one ({@link #mayStart}): eight bytes are
     * read at a time and passed over by one coarse test ({@link #mayStartInWord} and {@link #referenceOrUtf8InWord}:
     * a byte below 0x20 or above 0x7d, {@code &}, a non-ASCII byte), then, for a word that passes it, the exact test
     * of its bytes ({@link #holdsStartInWord}); only a word that holds one is read byte by byte. One linear pass;
     * either byte order of the buffer.
     *
     * @param b the text
     * @param n its end, at most {@code b.limit()}
     */
    public static int first(ByteBuffer b, int n) {
        int i = 0;
        for (; i + Long.BYTES <= n; i += Long.BYTES) {
            long w = b.getLong(i);
            if ((mayStartInWord(w) | referenceOrUtf8InWord(w)) != 0 && holdsStartInWord(w) != 0) {
                for (int k = i; k < i + Long.BYTES; k++) {
                    if (mayStart(b.get(k)) && length(b, k, n) > 0) {
                        return k;
                    }
                }
            }
        }
        for (; i < n; i++) {
            if (mayStart(b.get(i)) && length(b, i, n) > 0) {
                return i;
            }
        }
        return n;
    }

    /**
     * {@return the high bit of each byte of {@code w} that is ASCII and below 0x20 or above 0x7d} A superset of the
     * ASCII bytes that start a dropped sequence other than a character reference (the controls, ESC, SO, SI,
     * {@code ~}): the one test a UTF-8 check of all-ASCII text pays per word, as text that holds {@code &#} is read by
     * a markup layer anyway. Exact per byte (no carry leaves a byte: its low seven bits plus 0x60 or 0x02 stay below
     * 0x100), so the byte order the word was read in does not matter.
     *
     * @param w eight bytes
     */
    public static long mayStartInWord(long w) {
        long x = w & LOWS;
        return (~(x + BELOW_SPACE) | (x + ABOVE_BRACE)) & ~w & HIGHS;
    }

    /**
     * {@return the high bit of each byte of {@code w} that is {@code &} or not ASCII} With {@link #mayStartInWord}, a
     * superset of the bytes that start a dropped sequence. Exact per byte.
     *
     * @param w eight bytes
     */
    public static long referenceOrUtf8InWord(long w) {
        return (equalLow(w & LOWS, AMPERSAND8) | w) & HIGHS;
    }

    /**
     * {@return nonzero when a byte of {@code w} may start a dropped sequence ({@link #mayStart}): the high bit of each
     * such byte, exact per byte} Below 0x20 but TAB, LF and CR, {@code ~}, {@code &}, {@code ED}, {@code EF},
     * {@code F4}.
     *
     * @param w eight bytes
     */
    public static long holdsStartInWord(long w) {
        long others = equalLow(w & LOWS, AMPERSAND8) & ~w | equal(w, ED8) | equal(w, EF8) | equal(w, F48);
        return holdsShiftInWord(w) | others & HIGHS;
    }

    /**
     * {@return nonzero when a byte of {@code w} is ASCII and may start a dropped sequence other than a character
     * reference: the high bit of each such byte, exact per byte} Below 0x20 but TAB, LF and CR, or {@code ~}: the
     * exact test after {@link #mayStartInWord}.
     *
     * @param w eight bytes
     */
    public static long holdsShiftInWord(long w) {
        long x = w & LOWS;
        long controls = ~(x + BELOW_SPACE) & ~(equalLow(x, TAB8) | equalLow(x, LF8) | equalLow(x, CR8));
        return (controls | equalLow(x, TILDE8)) & ~w & HIGHS;
    }

    /**
     * {@return the high bit of each byte of {@code x} (high bits clear) equal to the byte repeated in {@code c}},
     * exact per byte: no carry leaves a byte
     */
    private static long equalLow(long x, long c) {
        long t = x ^ c;
        return ~((t + LOWS) | t) & HIGHS;
    }

    /**
     * {@return the high bit of each byte of {@code w} equal to the byte repeated in {@code c}}, exact per byte: no
     * carry leaves a byte
     */
    private static long equal(long w, long c) {
        long t = w ^ c;
        return ~(((t & LOWS) + LOWS) | t) & HIGHS;
    }
}
