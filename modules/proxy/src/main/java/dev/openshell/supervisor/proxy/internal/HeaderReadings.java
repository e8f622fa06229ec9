package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.internal.EncodedWords;
import dev.openshell.middleware.spi.internal.EncodedWords.Word;
import dev.openshell.middleware.spi.internal.HeaderParameters;
import dev.openshell.middleware.spi.internal.Syntax;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a response header field value the ways HTTP and mail clients decode its escapes, so that a value hidden by
 * them is scrubbed like one in the bytes ({@link ScrubbingRelay#scrubHead}; attacker pass 5, finding 4). Three
 * readings, each searched with the response's {@link SecretScrubber} for every form it searches in bytes:
 * <ul>
 *   <li>quoted-pairs (RFC 9110 section 5.6.4; comments, section 5.6.5): every {@code \x} read as {@code x}, wherever
 *       it stands, so a quoted-string's content is read as a client unquoting it reads it;</li>
 *   <li>RFC 2047 encoded words {@code =?charset?B|Q?text?=}, wherever they stand (found by {@link EncodedWords#find},
 *       as Python's {@code email} package finds them, with or without white space around), decoded in B (base64, non-alphabet characters skipped) and Q
 *       (section 4.2: {@code _} is a space, {@code =XX} a byte) to their bytes, which are searched as they are (a
 *       value in UTF-8, UTF-16, UTF-32 or IBM037, as the scrubber's forms have it), white space between two encoded
 *       words dropped (section 6.2) so adjacent words are read joined, other text read as it is;</li>
 *   <li>RFC 2231 parameters, found by {@link HeaderParameters#parse} (the one reading of header parameters):
 *       continuations ({@code name*0=}, {@code name*1*=}, {@code name*00=}, ...): the parts of each parameter in
 *       number order, joined, a quoted part unquoted, an extended part percent-decoded and the first one's
 *       {@code charset'language'} prefix dropped; and a single extended parameter ({@code name*=UTF-16LE''%6B%00...})
 *       read the same way on its own; the decoded octets searched as they are (a value in UTF-8, UTF-16, UTF-32 or
 *       IBM037 octets).</li>
 * </ul>
 *
 * <p>Last, every reading {@link HeaderParameters#readings} gives of the value's parameters, each decoded to text in
 * its declared charset (and in UTF-8), is searched: a value still found in one (a reading the three above cannot map
 * back to a position) drops the field ({@code null}), as a value left after {@value #ROUNDS} replacements does; so
 * does a parameter or RFC 2047 word (anywhere in the value) declared in a charset this runtime cannot decode ({@link
 * HeaderParameters.Readings#unreadable}, {@link EncodedWords.Decoded#unreadable}: UTF-7, {@code unicode_escape}, an
 * unknown name, octets the charset rejects such as ISO-2022-JP-2's {@code ESC . A}), whose reading by a client that
 * knows it is not known. The RFC 2047 words of the whole value are also read as text ({@link EncodedWords#decode},
 * the JDK's and Python's reading): a value found there drops the field too (attacker pass 8, P10-1: in a stateful
 * charset such as ISO-2022-JP, {@code k ESC ( B 9Q7z...}, escape sequences inside the octets hide a value the
 * decoded text holds).
 *
 * <p>A value found in a reading is replaced where it stands, as in the bytes, by the text the scrubber puts for it
 * (its placeholder), so that the reading reads the placeholder: between quoted-pairs by the placeholder quoted; in
 * encoded words by a Q-encoded word holding the decoded text before the value and the placeholder in the charset
 * of the word it started in, then one holding the text after it in its own word's (a value starting in plain text
 * gets the placeholder there as it is); across continuations the value's text in later parts is removed and the
 * part where it starts holds the placeholder (percent-encoded in an extended part, escaped in a quoted one). Each
 * replacement counts as a match of the head. The readings are built again after each replacement, at most
 * {@value #ROUNDS} times per value; a value still holding a value after that is dropped ({@code null}).
 *
 * <p>Each reading is linear in the value's length (a failed encoded-word candidate never rescans: a word missing its
 * {@code ?} or {@code ?=} means none can follow), so a value costs at most {@value #ROUNDS} + 1 scans of each
 * reading. Not thread-safe (the scrubber is not).
 */
final class HeaderReadings {
    /** Replacements per header value before the field is dropped instead. */
    static final int ROUNDS = 32;

    private HeaderReadings() {
    }

    /**
     * What the readings left of one header field value.
     *
     * @param value the value with every secret a reading finds replaced, or {@code null} when the field must go
     * @param unreadable whether it goes because a parameter or RFC 2047 word of it is declared in a charset this
     *     runtime cannot decode (so what a client reads there is not known); {@code false} when {@code value} is
     *     not {@code null}
     */
    record Read(String value, boolean unreadable) {
    }

    /** Why {@link #decodedReadingHolds} drops a field, if it does. */
    private enum Left { NOTHING, VALUE, UNREADABLE }

    /**
     * {@return {@code value} with every secret a reading finds replaced, or {@code null} when the field must go}
     * Returns {@code value} itself when no reading finds one ({@link #read}, without why a field goes).
     *
     * @param value a header field value as ISO-8859-1 text, already scrubbed as bytes
     * @param scrubber the response's scrubber; its count grows by one per replacement
     */
    static String scrub(String value, SecretScrubber scrubber) {
        return read(value, scrubber).value();
    }

    /**
     * {@return {@code value} with every secret a reading finds replaced, or a dropped value and whether it was
     * dropped as unreadable} The value is {@code value} itself when no reading finds one.
     *
     * @param value a header field value as ISO-8859-1 text, already scrubbed as bytes
     * @param scrubber the response's scrubber; its count grows by one per replacement
     */
    static Read read(String value, SecretScrubber scrubber) {
        if (value.indexOf('\\') < 0 && !value.contains("=?") && value.indexOf('*') < 0) {
            return new Read(value, false);
        }
        byte[] raw = value.getBytes(StandardCharsets.ISO_8859_1);
        for (int round = 0; ; round++) {
            byte[] next = replaceOne(raw, scrubber);
            if (next == null) {
                String out = round == 0 ? value : new String(scrubber.scrubAll(raw), StandardCharsets.ISO_8859_1);
                return switch (decodedReadingHolds(out, scrubber)) {
                    case NOTHING -> new Read(out, false);
                    case VALUE -> new Read(null, false);
                    case UNREADABLE -> new Read(null, true);
                };
            }
            if (round == ROUNDS) {
                return new Read(null, false);
            }
            raw = next;
        }
    }

    /**
     * {@return whether a reading of the value's parameters decoded in its declared charset ({@link
     * HeaderParameters#readings}: an RFC 2231 value in IBM037 or UTF-16, RFC 2047 words joined, ...) still holds a
     * value ({@code VALUE}), or a parameter or encoded word of the value is declared in a charset that cannot be read
     * ({@code UNREADABLE})} Such a reading has no position in the value to replace it at, and an unreadable one
     * cannot be searched, so the field goes.
     */
    private static Left decodedReadingHolds(String value, SecretScrubber s) {
        HeaderParameters.Readings all = HeaderParameters.readings(value, true);
        if (all.anyUnreadable()) {
            return Left.UNREADABLE; // a charset this runtime cannot decode (UTF-7, unicode_escape, ...): unknown
        }
        if (value.contains("=?")) {
            EncodedWords.Decoded d = EncodedWords.decode(value);
            if (d.unreadable()) {
                return Left.UNREADABLE;
            }
            if (holds(d.text(), s) || holds(d.pythonText(), s)) {
                return Left.VALUE; // a value in the words' text hidden from their octets (ISO-2022 escapes)
            }
        }
        for (List<String> readings : all.byName().values()) {
            for (String r : readings) {
                if (holds(r, s)) {
                    return Left.VALUE;
                }
            }
        }
        return Left.NOTHING;
    }

    /** {@return whether the scrubber finds a value in the text's UTF-8 octets} */
    private static boolean holds(String text, SecretScrubber s) {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        return s.nextMatch(b, 0, b.length) >= 0;
    }

    /** {@return {@code raw} with the first value one reading finds replaced, or null when none finds one} */
    private static byte[] replaceOne(byte[] raw, SecretScrubber s) {
        byte[] out = quotedPairs(raw, s);
        if (out == null) {
            out = encodedWords(raw, s);
        }
        if (out == null) {
            out = continuations(raw, s);
        }
        return out;
    }

    /** A decoded reading: byte {@code k} of {@code b} came from {@code a[k]} and {@code c[k]}, per reading. */
    private static final class Text {
        byte[] b;
        int[] a;
        int[] c;
        int n;

        Text(int capacity) {
            b = new byte[Math.max(8, capacity)];
            a = new int[b.length];
            c = new int[b.length];
        }

        void add(int value, int x, int y) {
            if (n == b.length) {
                b = Arrays.copyOf(b, n * 2);
                a = Arrays.copyOf(a, n * 2);
                c = Arrays.copyOf(c, n * 2);
            }
            b[n] = (byte) value;
            a[n] = x;
            c[n++] = y;
        }

        /** {@return the first match as (start << 32 | length), -1 for none} */
        long match(SecretScrubber s) {
            return s.nextMatch(b, 0, n);
        }

        /** {@return what the scrubber puts for the match, counting it} */
        byte[] replacement(SecretScrubber s, long m) {
            int start = (int) (m >>> 32);
            return s.scrubAll(Arrays.copyOfRange(b, start, start + (int) m));
        }
    }

    // ---- quoted-pairs ----------------------------------------------------------------------------------------------

    private static byte[] quotedPairs(byte[] raw, SecretScrubber s) {
        if (indexOf(raw, (byte) '\\') < 0) {
            return null;
        }
        Text t = new Text(raw.length); // a: raw start, c: raw end
        for (int i = 0; i < raw.length; i++) {
            if (raw[i] == '\\' && i + 1 < raw.length) {
                t.add(raw[i + 1], i, i + 2);
                i++;
            } else {
                t.add(raw[i], i, i + 1);
            }
        }
        long m = t.match(s);
        if (m < 0) {
            return null;
        }
        int first = (int) (m >>> 32);
        int last = first + (int) m - 1;
        ByteArrayOutputStream put = new ByteArrayOutputStream();
        for (byte x : t.replacement(s, m)) {
            if (x == '"' || x == '\\') {
                put.write('\\');
            }
            put.write(x);
        }
        return HeldText.splice(raw, t.a[first], t.c[last], put.toByteArray());
    }

    // ---- RFC 2047 encoded words ------------------------------------------------------------------------------------

    private static byte[] encodedWords(byte[] raw, SecretScrubber s) {
        List<Word> words = EncodedWords.find(raw);
        if (words.isEmpty()) {
            return null;
        }
        Text t = new Text(raw.length); // a: word index, or -1 - raw index for other text; c: offset in the word
        int at = 0;
        for (int w = 0; w < words.size(); w++) {
            Word word = words.get(w);
            if (w == 0 || !blank(raw, at, word.start())) {
                for (int i = at; i < word.start(); i++) {
                    t.add(raw[i], -1 - i, 0);
                }
            }
            for (int k = 0; k < word.bytes().length; k++) {
                t.add(word.bytes()[k], w, k);
            }
            at = word.end();
        }
        for (int i = at; i < raw.length; i++) {
            t.add(raw[i], -1 - i, 0);
        }
        long m = t.match(s);
        return m < 0 ? null : replaceInWords(raw, words, t, m, t.replacement(s, m));
    }

    /** {@return the text with the match replaced: see the class comment} */
    private static byte[] replaceInWords(byte[] raw, List<Word> words, Text t, long m, byte[] put) {
        int first = (int) (m >>> 32);
        int last = first + (int) m - 1;
        ByteArrayOutputStream out = new ByteArrayOutputStream(raw.length + put.length + 32);
        boolean wordBefore;
        if (t.a[first] >= 0) {
            Word w = words.get(t.a[first]);
            out.write(raw, 0, w.start());
            byte[] text = Arrays.copyOf(w.bytes(), t.c[first] + put.length);
            System.arraycopy(put, 0, text, t.c[first], put.length);
            writeWord(out, w.charset(), text, 0, text.length);
            wordBefore = true;
        } else {
            out.write(raw, 0, -1 - t.a[first]);
            out.writeBytes(put);
            wordBefore = false;
        }
        if (t.a[last] >= 0) {
            Word w = words.get(t.a[last]);
            int from = t.c[last] + 1;
            if (from < w.bytes().length) {
                if (wordBefore) {
                    out.write(' ');
                }
                writeWord(out, w.charset(), w.bytes(), from, w.bytes().length);
            }
            out.write(raw, w.end(), raw.length - w.end());
        } else {
            int from = -1 - t.a[last] + 1;
            out.write(raw, from, raw.length - from);
        }
        return out.toByteArray();
    }

    /** Writes {@code =?charset?Q?...?=} holding {@code b[from, to)}: letters and digits as they are, others =XX. */
    private static void writeWord(ByteArrayOutputStream out, String charset, byte[] b, int from, int to) {
        out.writeBytes(("=?" + charset + "?Q?").getBytes(StandardCharsets.ISO_8859_1));
        for (int i = from; i < to; i++) {
            int x = b[i] & 0xff;
            if (x < 0x80 && Character.isLetterOrDigit(x)) {
                out.write(x);
            } else {
                out.writeBytes(String.format("=%02X", x).getBytes(StandardCharsets.ISO_8859_1));
            }
        }
        out.writeBytes("?=".getBytes(StandardCharsets.ISO_8859_1));
    }

    /** {@return the value of a hex digit byte, -1 for any other} */
    private static int hex(byte b) {
        return Syntax.hexDigit((char) (b & 0xff));
    }

    /** RFC 2047 section 4.2 Q text decoded ({@link EncodedWords#decodeQ}). */
    static byte[] decodeQ(byte[] raw, int from, int to) {
        return EncodedWords.decodeQ(raw, from, to);
    }

    // ---- RFC 2231 continuations ------------------------------------------------------------------------------------

    /** One part of a continued parameter: its number, raw value {@code [start, end)}, how it is written. */
    private record Part(int number, int start, int end, boolean extended, boolean quoted) {
    }

    private static byte[] continuations(byte[] raw, SecretScrubber s) {
        if (indexOf(raw, (byte) '*') < 0) {
            return null;
        }
        for (List<Part> parts : parameters(raw).values()) {
            parts.sort(Comparator.comparingInt(Part::number).thenComparingInt(Part::start));
            int size = 0;
            for (Part part : parts) {
                size += part.end() - part.start();
            }
            Text t = new Text(size); // a: raw start, c: part index; sized by the parts, so the groups stay linear
            for (int p = 0; p < parts.size(); p++) {
                read(raw, parts.get(p), p, p == 0, t);
            }
            long m = t.match(s);
            if (m >= 0) {
                return replaceInParts(raw, parts, t, m, t.replacement(s, m));
            }
        }
        return null;
    }

    /** Adds one part's decoded bytes to {@code t}. */
    private static void read(byte[] raw, Part part, int index, boolean first, Text t) {
        int i = part.start();
        int end = part.end();
        if (part.quoted()) {
            i++;
            end--;
        }
        if (part.extended() && first) {
            int from = HeaderParameters.prefixEnd(new String(raw, i, end - i, StandardCharsets.ISO_8859_1));
            i += Math.max(0, from); // charset'language'
        }
        for (; i < end; i++) {
            if (part.quoted() && raw[i] == '\\' && i + 1 < end) {
                t.add(raw[i + 1], i, index);
                i++;
            } else if (part.extended() && raw[i] == '%' && i + 2 < end && hex(raw[i + 1]) >= 0
                    && hex(raw[i + 2]) >= 0) {
                t.add(hex(raw[i + 1]) << 4 | hex(raw[i + 2]), i, index);
                i += 2;
            } else {
                t.add(raw[i], i, index);
            }
        }
    }

    /**
     * {@return the text with the match replaced: the matched bytes of each part removed, the replacement in the part
     * the match starts in (percent-encoded in an extended part, quoted-pair-escaped in a quoted one)}
     */
    private static byte[] replaceInParts(byte[] raw, List<Part> parts, Text t, long m, byte[] put) {
        int first = (int) (m >>> 32);
        int last = first + (int) m - 1;
        List<int[]> edits = new ArrayList<>(); // raw start, raw end, part index (the first one gets the replacement)
        for (int k = first; k <= last; k++) {
            int[] e = edits.isEmpty() ? null : edits.get(edits.size() - 1);
            int end = k + 1 < t.n && t.c[k + 1] == t.c[k] ? t.a[k + 1] : contentEnd(parts.get(t.c[k]));
            if (e != null && e[2] == t.c[k]) {
                e[1] = end;
            } else {
                edits.add(new int[] {t.a[k], end, t.c[k]});
            }
        }
        int startPart = edits.get(0)[2];
        edits.sort(Comparator.comparingInt((int[] e) -> e[0]).reversed());
        byte[] out = raw;
        for (int[] e : edits) {
            out = HeldText.splice(out, e[0], e[1], e[2] == startPart ? encodeFor(parts.get(e[2]), put) : new byte[0]);
        }
        return out;
    }

    /** {@return where a part's content ends in the raw text: before a closing quote} */
    private static int contentEnd(Part part) {
        return part.quoted() ? part.end() - 1 : part.end();
    }

    private static byte[] encodeFor(Part part, byte[] put) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(put.length * 3);
        for (byte x : put) {
            int v = x & 0xff;
            if (part.extended() && !(v < 0x80 && Character.isLetterOrDigit(v))) {
                out.writeBytes(String.format("%%%02X", v).getBytes(StandardCharsets.ISO_8859_1));
                continue;
            }
            if (part.quoted() && (v == '"' || v == '\\')) {
                out.write('\\');
            }
            out.write(v);
        }
        return out.toByteArray();
    }

    /**
     * {@return the RFC 2231 parameters of a value ({@link HeaderParameters#parse}, {@code ,} separating too), by
     * lower-case name, each with its parts} A single extended parameter {@code name*=charset'language'%XX} is a group
     * of its own (named {@code name*}, one extended part numbered 0), so its percent-decoded octets are searched in
     * whatever charset they are written (UTF-16, UTF-32, IBM037 forms included); continuations {@code name*N=} and
     * {@code name*N*=} of one name form one group.
     */
    private static Map<String, List<Part>> parameters(byte[] raw) {
        Map<String, List<Part>> out = new LinkedHashMap<>();
        for (HeaderParameters.Parameter p : HeaderParameters.parse(new String(raw, StandardCharsets.ISO_8859_1),
                true)) {
            if (p.section() >= 0) {
                out.computeIfAbsent(p.name(), k -> new ArrayList<>())
                        .add(new Part(p.section(), p.start(), p.end(), p.extended(), p.quoted()));
            } else if (p.extended()) {
                out.computeIfAbsent(p.name() + "*", k -> new ArrayList<>())
                        .add(new Part(0, p.start(), p.end(), true, p.quoted()));
            }
        }
        return out;
    }

    // ---- bytes -----------------------------------------------------------------------------------------------------

    private static boolean blank(byte[] raw, int from, int to) {
        for (int i = from; i < to; i++) {
            if (raw[i] != ' ' && raw[i] != '\t' && raw[i] != '\r' && raw[i] != '\n') {
                return false;
            }
        }
        return true;
    }

    private static int indexOf(byte[] raw, byte b) {
        return indexOf(raw, b, 0);
    }

    private static int indexOf(byte[] raw, byte b, int from) {
        for (int i = from; i < raw.length; i++) {
            if (raw[i] == b) {
                return i;
            }
        }
        return -1;
    }
}
