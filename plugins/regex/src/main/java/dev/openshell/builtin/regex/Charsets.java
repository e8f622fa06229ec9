package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.Set;

/**
 * The charset layer: turns a body's bytes into the text the scanner reads, the way the reader of its media type will
 * ({@link Marks}): a JSON body by its byte order mark, its declared {@code charset}, or the NUL pattern of UTF-16 and
 * UTF-32 text (RFC 4627 section 3), in that order; an XML body without a declared {@code charset} as XML 1.0 Appendix
 * F detects it (byte order mark, else the first bytes of {@code <?xm} in UTF-16 or UTF-32, else UTF-8); any other
 * body by its declared {@code charset} (UTF-8 without one),
 * where a byte order mark that would change that reading makes it undecodable.
 *
 * <ul>
 *   <li>UTF-8 (the default): must be well-formed ({@link Utf8}); a UTF-8 byte order mark is skipped. The text is the
 *       input itself.</li>
 *   <li>US-ASCII, ISO-8859-1 to -16 and windows-1250 to -1258: ASCII-compatible single-byte charsets, where every
 *       byte below 0x80 is that ASCII character and every other byte is a non-ASCII one, so the bytes are read as they
 *       are (nothing to check).</li>
 *   <li>UTF-16LE/BE and UTF-32LE/BE (and UTF-16, UTF-32 by byte order mark, big-endian without one, RFC 2781): strictly
 *       transcoded to UTF-8 (a truncated code unit, an unpaired surrogate or a code point above U+10FFFF is
 *       undecodable). Not ASCII-compatible: {@link BodyDecoder} scans the bytes as they are too
 *       ({@link TwoReadings}). UTF-16 and UTF-32 declared without a byte order and without a mark are also read in
 *       the little-endian order, leniently ({@link Transcoded#otherOrder}): decoders disagree on their order.</li>
 *   <li>Any other charset (Shift_JIS, GBK, ISO-2022-JP, UTF-7, ...): undecodable, because their bytes below 0x80
 *       are not always ASCII characters and a byte scan would misjudge where tokens start.</li>
 * </ul>
 */
final class Charsets {
    /** How the input encodes text. */
    enum Encoding {
        UTF_8(1, false), SINGLE_BYTE(1, false), UTF_16LE(2, false), UTF_16BE(2, true), UTF_32LE(4, false),
        UTF_32BE(4, true);

        final int unit;
        final boolean bigEndian;

        Encoding(int unit, boolean bigEndian) {
            this.unit = unit;
            this.bigEndian = bigEndian;
        }
    }

    private static final Set<String> UTF_8_NAMES = Set.of("utf-8", "utf8", "unicode-1-1-utf-8");
    private static final Set<String> ASCII_NAMES = Set.of("us-ascii", "ascii", "iso646-us", "ansi_x3.4-1968",
            "us", "latin1", "l1", "iso-8859-1", "iso8859-1", "iso_8859-1", "cp819", "ibm819");

    private Charsets() {
    }

    /**
     * {@return the encoding a declared {@code charset} names}
     *
     * @param declared the parameter value
     * @throws Undecodable for any charset outside the supported set
     */
    static Encoding named(String declared) throws Undecodable {
        String n = declared.strip().toLowerCase(Locale.ROOT);
        if (UTF_8_NAMES.contains(n)) {
            return Encoding.UTF_8;
        }
        if (ASCII_NAMES.contains(n) || isIso8859(n) || isWindows125x(n) || n.equals("iso8859") || n.equals("8859")
                || n.equals("latin")) { // Python's aliases of ISO-8859-1 (P15-5)
            return Encoding.SINGLE_BYTE;
        }
        return switch (n) {
            case "utf-16le", "utf16le" -> Encoding.UTF_16LE;
            case "utf-16be", "utf16be", "utf-16", "utf16" -> Encoding.UTF_16BE;
            case "utf-32le", "utf32le" -> Encoding.UTF_32LE;
            case "utf-32be", "utf32be", "utf-32", "utf32" -> Encoding.UTF_32BE;
            default -> throw Undecodable.because("request body charset is not supported (supported: UTF-8, UTF-16, "
                    + "UTF-32, US-ASCII, ISO-8859-*, windows-125*)");
        };
    }

    private static boolean isIso8859(String n) {
        for (String prefix : new String[] {"iso-8859-", "iso8859-", "iso_8859-"}) {
            if (n.startsWith(prefix)) {
                String part = n.substring(prefix.length());
                return part.matches("[1-9]|1[0-13-6]");
            }
        }
        return false;
    }

    private static boolean isWindows125x(String n) {
        return n.matches("(?:windows-|cp)125[0-8]");
    }

    /** Which rule a body's byte order mark and NUL pattern follow: its reader's, by the declared media type. */
    enum Marks {
        /**
         * JSON (RFC 8259 section 8.1, RFC 4627 section 3; what JSON parsers such as Jackson detect): the byte order
         * mark first, then the declared {@code charset}, then the NUL pattern of UTF-16/UTF-32 text.
         */
        JSON,
        /**
         * XML ({@code xml}, {@code +xml}) without a declared {@code charset} (XML 1.0 Appendix F, RFC 7303 section
         * 3): the byte order mark, else the first four bytes of {@code <?xm} in UTF-16LE/BE ({@code 3C 00 3F 00},
         * {@code 00 3C 00 3F}) or of {@code <} in UTF-32LE/BE ({@code 3C 00 00 00}, {@code 00 00 00 3C}), else
         * UTF-8. The UCS-4 octet orders 2143 and 3412, EBCDIC ({@code 4C 6F A7 94}) and any other NUL pattern of
         * UTF-16/UTF-32 text (not XML in UTF-8: a reader may detect it) are undecodable. With a declared
         * {@code charset}, as {@link #DECLARED}, and a body whose first bytes show UTF-16 or UTF-32 must be in it.
         */
        XML,
        /**
         * Any other declared media type: the declared {@code charset} (UTF-8 without one). A byte order mark counts
         * only where that charset defines it ({@code UTF-16} and {@code UTF-32} without a byte order in the name,
         * RFC 2781 section 3.3) or where it is the mark of that same encoding (skipped: the reading is the same);
         * any other mark would change the reading, so the body is undecodable.
         */
        DECLARED,
        /**
         * No media type: as {@link #DECLARED} with UTF-8, and text that shows the NUL pattern of UTF-16/UTF-32 is
         * undecodable too, as its reader may detect that encoding (as JSON parsers do) or read the bytes as they are.
         */
        UNLABELLED
    }

    /**
     * {@return the view of {@code input} as text}
     *
     * @param input the bytes from 0 to the limit
     * @param declared the declared {@code charset}, or {@code null}
     * @param marks the byte order mark rule of the body's media type
     * @throws Undecodable if the charset is not supported, the bytes are not text in it, or a byte order mark (or
     *     the NUL pattern of a body without a media type) would change the reading
     */
    static TextView view(ByteBuffer input, String declared, Marks marks) throws Undecodable {
        int n = input.limit();
        int b0 = n > 0 ? input.get(0) & 0xff : -1;
        int b1 = n > 1 ? input.get(1) & 0xff : -1;
        int b2 = n > 2 ? input.get(2) & 0xff : -1;
        int b3 = n > 3 ? input.get(3) & 0xff : -1;
        Encoding mark = mark(b0, b1, b2, b3);
        int bom = mark == null ? 0 : mark == Encoding.UTF_8 ? 3 : mark.unit;
        Encoding e;
        if (marks == Marks.JSON) {
            e = mark != null ? mark : declared != null ? named(declared) : sniff(b0, b1, b2, b3, n);
        } else if (marks == Marks.XML && declared == null) {
            e = mark != null ? xmlMark(input, mark, bom, b2, b3) : xml(b0, b1, b2, b3, n);
        } else {
            e = declaredReading(declared, marks, mark, b0, b1, b2, b3, n);
        }
        return switch (e) {
            case SINGLE_BYTE -> TextView.identity(input);
            case UTF_8 -> {
                ByteBuffer text = bom == 0 ? input : input.slice(bom, n - bom);
                int check = Utf8.check(text);
                if (check == Utf8.MALFORMED) {
                    throw new Undecodable(Undecodable.NOT_UTF8, "request body is not well-formed UTF-8");
                }
                boolean shiftFree = check == Utf8.NO_SHIFTS;
                yield bom == 0 ? TextView.identity(input, shiftFree) : new Skipped(text, bom, shiftFree);
            }
            default -> Transcoded.of(input, bom, e);
        };
    }

    /**
     * {@return the encoding of content read by its declared {@code charset} (UTF-8 without one)}
     *
     * @throws Undecodable if a byte order mark would change that reading, or (without a media type) the text shows
     *     the NUL pattern of UTF-16 or UTF-32, or (XML) its first bytes show another encoding
     */
    private static Encoding declaredReading(String declared, Marks marks, Encoding mark, int b0, int b1, int b2,
            int b3, int n) throws Undecodable {
        Encoding reading = declared == null ? Encoding.UTF_8 : named(declared);
        if (mark == null) {
            if (marks == Marks.UNLABELLED && sniff(b0, b1, b2, b3, n) != Encoding.UTF_8) {
                throw Undecodable.because("request body without a media type has the NUL pattern of UTF-16 or "
                        + "UTF-32 text: its reader may decode it or not");
            }
            if (marks == Marks.XML) {
                Encoding shown = xml(b0, b1, b2, b3, n);
                if (shown.unit != 1 && shown != reading) {
                    throw Undecodable.because("request body is XML whose first bytes show another encoding than its "
                            + "declared charset");
                }
            }
            return reading;
        }
        if (mark == reading || (declared != null && unmarkedOrder(declared) && mark.unit == reading.unit)) {
            return mark;
        }
        throw Undecodable.because("request body starts with a byte order mark that its media type's reader "
                + "does not honour");
    }

    /**
     * {@return the encoding of XML that starts with the byte order mark of {@code mark} (XML 1.0 Appendix F.1)}
     *
     * @throws Undecodable for the marks of UCS-4 in an unusual octet order ({@code FE FF 00 00}), and when the first
     *     character after a UTF-16 or UTF-32 mark is neither {@code <} nor white space (XML 1.0 section 2.1: a document starts with
     *     markup or white space; text that does not is not XML in that encoding, and a reader that ignores the mark
     *     reads other text: ASCII bytes after a UTF-16 mark)
     */
    private static Encoding xmlMark(ByteBuffer input, Encoding mark, int bom, int b2, int b3) throws Undecodable {
        if (mark == Encoding.UTF_16BE && b2 == 0 && b3 == 0) {
            throw Undecodable.because("request body is XML in UCS-4 of an unusual octet order");
        }
        if (mark.unit > 1 && input.limit() >= bom + mark.unit) { // after a UTF-8 mark, UTF-8 text reads the same
            int first = 0;
            for (int k = 0; k < mark.unit; k++) {
                int b = input.get(bom + (mark.bigEndian ? k : mark.unit - 1 - k)) & 0xff;
                first = first << 8 | b;
            }
            if (first != '<' && first != ' ' && first != '\t' && first != '\n' && first != '\r') {
                throw Undecodable.because("request body is XML whose first character after its byte order mark is"
                        + " neither markup nor white space");
            }
        }
        return mark;
    }

    /**
     * {@return the encoding of XML without a byte order mark or a declared charset, by its first four bytes (XML 1.0
     * Appendix F.1): UTF-32 ({@code <}), UTF-16 ({@code <?}), else UTF-8}
     *
     * @throws Undecodable for UCS-4 in an unusual octet order ({@code 00 00 3C 00}, {@code 00 3C 00 00}, and the
     *     mark {@code 00 00 FF FE}), EBCDIC ({@code <?xm} as {@code 4C 6F A7 94}) and any other NUL pattern of
     *     UTF-16 or UTF-32 text
     */
    private static Encoding xml(int b0, int b1, int b2, int b3, int n) throws Undecodable {
        if (n >= 4) {
            if (b0 == 0 && b1 == 0 && b2 == 0 && b3 == 0x3c) {
                return Encoding.UTF_32BE;
            }
            if (b0 == 0x3c && b1 == 0 && b2 == 0 && b3 == 0) {
                return Encoding.UTF_32LE;
            }
            if (b0 == 0 && b1 == 0x3c && b2 == 0 && b3 == 0x3f) {
                return Encoding.UTF_16BE;
            }
            if (b0 == 0x3c && b1 == 0 && b2 == 0x3f && b3 == 0) {
                return Encoding.UTF_16LE;
            }
            if (b0 == 0x4c && b1 == 0x6f && b2 == 0xa7 && b3 == 0x94) {
                throw Undecodable.because("request body is XML in EBCDIC");
            }
        }
        if ((b0 == 0 && b1 == 0) || (b0 == 0 && b2 == 0 && b3 == 0) || sniff(b0, b1, b2, b3, n) != Encoding.UTF_8) {
            throw Undecodable.because("request body is XML with the NUL pattern of UTF-16 or UTF-32 text in an order "
                    + "its reader may detect or not");
        }
        return Encoding.UTF_8;
    }

    /** {@return the encoding whose byte order mark starts the input (the longest that fits), or {@code null}} */
    private static Encoding mark(int b0, int b1, int b2, int b3) {
        if (b0 == 0xef && b1 == 0xbb && b2 == 0xbf) {
            return Encoding.UTF_8;
        }
        if (b0 == 0 && b1 == 0 && b2 == 0xfe && b3 == 0xff) {
            return Encoding.UTF_32BE;
        }
        if (b0 == 0xff && b1 == 0xfe && b2 == 0 && b3 == 0) {
            return Encoding.UTF_32LE;
        }
        if (b0 == 0xfe && b1 == 0xff) {
            return Encoding.UTF_16BE;
        }
        if (b0 == 0xff && b1 == 0xfe) {
            return Encoding.UTF_16LE;
        }
        return null;
    }

    /** {@return whether a declared charset leaves the byte order to a mark: {@code UTF-16}, {@code UTF-32}} */
    private static boolean unmarkedOrder(String declared) {
        String n = declared.strip().toLowerCase(Locale.ROOT);
        return n.equals("utf-16") || n.equals("utf16") || n.equals("utf-32") || n.equals("utf32");
    }

    /**
     * The encoding of text without a byte order mark or a declared charset: UTF-16 or UTF-32 when its first bytes
     * show the NUL pattern of ASCII text in them (RFC 4627 section 3; what JSON parsers such as Jackson detect), else
     * UTF-8.
     */
    private static Encoding sniff(int b0, int b1, int b2, int b3, int n) {
        if (n >= 4) {
            if (b0 == 0 && b1 == 0 && b2 == 0 && b3 != 0) {
                return Encoding.UTF_32BE;
            }
            if (b0 != 0 && b1 == 0 && b2 == 0 && b3 == 0) {
                return Encoding.UTF_32LE;
            }
            if (b0 == 0 && b1 != 0 && b2 == 0 && b3 != 0) {
                return Encoding.UTF_16BE;
            }
            if (b0 != 0 && b1 == 0 && b2 != 0 && b3 == 0) {
                return Encoding.UTF_16LE;
            }
        } else if (n == 2) {
            if (b0 == 0 && b1 != 0) {
                return Encoding.UTF_16BE;
            }
            if (b0 != 0 && b1 == 0) {
                return Encoding.UTF_16LE;
            }
        }
        return Encoding.UTF_8;
    }

    /** UTF-8 after a byte order mark: the text is the rest of the input. */
    private static final class Skipped extends TextView {
        private final ByteBuffer text;
        private final int skipped;
        private final boolean shiftFree;

        Skipped(ByteBuffer text, int skipped, boolean shiftFree) {
            this.text = text;
            this.skipped = skipped;
            this.shiftFree = shiftFree;
        }

        @Override
        boolean shiftFree() {
            return shiftFree;
        }

        @Override
        ByteBuffer text() {
            return text;
        }

        @Override
        java.util.List<Edit> toInput(java.util.List<Edit> edits) {
            return edits.stream().map(e -> new Edit(e.start() + skipped, e.end() + skipped, e.replacement())).toList();
        }
    }

    /**
     * UTF-16 or UTF-32 text transcoded to UTF-8: strictly (the content's reading), or leniently (the other byte order
     * of a body declared {@code UTF-16} or {@code UTF-32} without a mark, {@link #otherOrder}): a code unit that is no
     * Unicode scalar value (an unpaired surrogate, above U+10FFFF) reads as U+FFFD and a truncated last unit as
     * nothing, as decoders that replace errors (.NET's, Python's {@code errors="replace"}) read it.
     */
    static final class Transcoded extends TextView.Units {
        private static final int REPLACEMENT = 0xfffd;
        private final Encoding encoding;
        private final ByteBuffer text;

        private Transcoded(ByteBuffer input, int first, Encoding encoding, ByteBuffer text) {
            super(input, first);
            this.encoding = encoding;
            this.text = text;
        }

        static Transcoded of(ByteBuffer input, int bom, Encoding e) throws Undecodable {
            return of(input, bom, e, false);
        }

        /**
         * {@return the text of {@code input} from {@code bom} in {@code e}}
         *
         * @throws Undecodable (strict only) for a truncated unit, an unpaired surrogate or a code unit above U+10FFFF
         */
        private static Transcoded of(ByteBuffer input, int bom, Encoding e, boolean lenient) throws Undecodable {
            int n = input.limit();
            if ((n - bom) % e.unit != 0) {
                if (!lenient) {
                    throw Undecodable.because("request body is truncated " + e.name().replace('_', '-') + " text");
                }
                n -= (n - bom) % e.unit;
            }
            byte[] out = new byte[(n - bom) / e.unit * 3 + 4];
            int o = 0;
            for (int i = bom; i < n; ) {
                long u = scalar(input, i, n, e);
                int cp = (int) u;
                if (cp < 0 && !lenient) {
                    throw Undecodable.because(e.unit == 2 ? "request body holds an unpaired UTF-16 surrogate"
                            : "request body holds a code point that is not a Unicode scalar value");
                }
                i += (int) (u >>> 32);
                if (o + 4 > out.length) {
                    out = java.util.Arrays.copyOf(out, out.length * 2);
                }
                o = putUtf8(out, o, cp < 0 ? REPLACEMENT : cp);
            }
            return new Transcoded(input, bom, e, ByteBuffer.wrap(out, 0, o).slice());
        }

        /**
         * {@return the scalar value at {@code i}: its input length times 2^32 plus the code point, or plus -1 (as an
         * int) for a unit that is no Unicode scalar value (an unpaired surrogate, above U+10FFFF), one unit long}
         */
        private static long scalar(ByteBuffer input, int i, int n, Encoding e) {
            int cp = read(input, i, e);
            if (e.unit == 2 && cp >= 0xd800 && cp <= 0xdbff) {
                int low = i + 2 < n ? read(input, i + 2, e) : -1;
                if (low >= 0xdc00 && low <= 0xdfff) {
                    return (4L << 32) | (0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00));
                }
            }
            boolean valid = cp >= 0 && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
            return ((long) e.unit << 32) | (valid ? cp : 0xffff_ffffL);
        }

        /**
         * {@return the reading of a body declared {@code UTF-16} or {@code UTF-32} without a byte order mark in the
         * other byte order, leniently; or {@code null} when {@code text} is no such reading} RFC 2781 section 4.3 reads
         * such text big-endian, but Python's and .NET's {@code utf-16} decoders read it little-endian: both
         * readings are scanned.
         *
         * @param input the content
         * @param declared the declared {@code charset}, or {@code null}
         * @param text the content's reading
         */
        static Transcoded otherOrder(ByteBuffer input, String declared, TextView text) {
            if (declared == null || !unmarkedOrder(declared) || !(text instanceof Transcoded t) || t.first != 0) {
                return null;
            }
            Encoding other = t.encoding.unit == 2 ? (t.encoding.bigEndian ? Encoding.UTF_16LE : Encoding.UTF_16BE)
                    : (t.encoding.bigEndian ? Encoding.UTF_32LE : Encoding.UTF_32BE);
            try {
                return of(input, 0, other, true);
            } catch (Undecodable e) {
                throw new IllegalStateException(e); // lenient: nothing is undecodable
            }
        }

        private static int read(ByteBuffer b, int i, Encoding e) {
            if (e.unit == 2) {
                int x = b.get(i) & 0xff;
                int y = b.get(i + 1) & 0xff;
                return e.bigEndian ? (x << 8) | y : (y << 8) | x;
            }
            long v = 0;
            for (int k = 0; k < 4; k++) {
                int x = b.get(i + (e.bigEndian ? k : 3 - k)) & 0xff;
                v = (v << 8) | x;
            }
            return v > 0x10ffff ? -1 : (int) v;
        }

        /** {@return the index after {@code cp} written as UTF-8 into {@code out} at {@code o}} */
        static int putUtf8(byte[] out, int o, int cp) {
            if (cp < 0x80) {
                out[o++] = (byte) cp;
            } else if (cp < 0x800) {
                out[o++] = (byte) (0xc0 | (cp >> 6));
                out[o++] = (byte) (0x80 | (cp & 0x3f));
            } else if (cp < 0x10000) {
                out[o++] = (byte) (0xe0 | (cp >> 12));
                out[o++] = (byte) (0x80 | ((cp >> 6) & 0x3f));
                out[o++] = (byte) (0x80 | (cp & 0x3f));
            } else {
                out[o++] = (byte) (0xf0 | (cp >> 18));
                out[o++] = (byte) (0x80 | ((cp >> 12) & 0x3f));
                out[o++] = (byte) (0x80 | ((cp >> 6) & 0x3f));
                out[o++] = (byte) (0x80 | (cp & 0x3f));
            }
            return o;
        }

        /**
         * Checks that an XML declaration at the start of the text names an encoding of the one the text is read in
         * ({@code UTF-16} or {@code UTF-32} without a byte order, or the same one): XML 1.0 section 4.3.3 makes any
         * other an error, and a reader may follow the declaration instead.
         *
         * @throws Undecodable if it names another encoding, or one outside the supported set
         */
        void checkXmlDeclaration() throws Undecodable {
            String declared = XmlDeclarations.declaredEncoding(text);
            if (declared == null) {
                return;
            }
            Encoding named;
            try {
                named = named(declared);
            } catch (Undecodable e) {
                throw Undecodable.because("request body's XML declaration names a charset the scan cannot read");
            }
            if (named != encoding && !(unmarkedOrder(declared) && named.unit == encoding.unit)) {
                throw Undecodable.because("request body's XML declaration names another encoding than the one it "
                        + "is in");
            }
        }

        /** {@return the code unit in bytes: 2 for UTF-16, 4 for UTF-32} */
        int codeUnit() {
            return encoding.unit;
        }

        @Override
        ByteBuffer text() {
            return text;
        }

        @Override
        long unit(int i) {
            long u = scalar(input, i, input.limit(), encoding);
            int cp = (int) u < 0 ? REPLACEMENT : (int) u;
            return unit((int) (u >>> 32), cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4);
        }

        @Override
        byte[] encode(byte[] ascii) {
            byte[] out = new byte[ascii.length * encoding.unit];
            for (int k = 0; k < ascii.length; k++) {
                int at = k * encoding.unit + (encoding.bigEndian ? encoding.unit - 1 : 0);
                out[at] = ascii[k];
            }
            return out;
        }
    }
}
