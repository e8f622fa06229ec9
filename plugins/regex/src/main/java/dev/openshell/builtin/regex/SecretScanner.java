package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Finds the secrets a {@link Selection} looks for in a text, in one left-to-right pass over its bytes, and optionally
 * records where they are for redaction. The one entry point of the catalog: it knows nothing of HTTP, so a request
 * body, a WebSocket message or a response body is scanned the same way once decoded into a {@link TextView}.
 *
 * <h2>The pass</h2>
 * The scan reads each byte once and looks it up in a 256-entry table of flags ({@link Prefilter}): most bytes are
 * neither a prefix's anchor (its least common character) nor the start of an assignment operator, and cost that
 * look-up only. At an anchor whose neighbouring byte and the byte one further fit, it compares the prefixes anchored
 * there, in catalog order, and tries each enabled entry's match where its prefix starts: the {@link Shape} after the
 * prefix, whole-token boundaries on both sides and, where the format has one, its checksum; or the PEM block. At an operator after which
 * a long enough value may follow, it looks for the enabled keyword entries' keywords in the key name before it and
 * tries their assignment grammar and value (a prefix entry matching the value wins over the keyword entry). The first
 * entry that matches wins, and the scan resumes after the match, so matches never overlap. The work per byte does not
 * grow with the number of entries, and every shape is matched possessively over character classes, so the whole pass
 * is linear in the text, even for hostile texts. Operator patterns run afterwards (RE2/J, linear too) and count only
 * where they overlap no earlier match.
 *
 * <h2>Why bytes, and why that equals scanning the text</h2>
 * Every literal and every class of the catalog is ASCII. In well-formed UTF-8 (the caller checks it) an ASCII byte is
 * always that ASCII character and every byte of a multi-byte sequence is 0x80 or more, which no class contains, as
 * the decoded character would not be. So matching over the bytes finds the same matches as matching over the decoded
 * text, and replacing ASCII ranges by ASCII placeholders keeps the rest well-formed.
 *
 * <p>Thread-safe: all state is per call.
 */
final class SecretScanner {
    /** The literal that starts a PEM block. */
    static final String PEM_BEGIN_LITERAL = "-----BEGIN ";
    /** The letters of the C, JSON and shell escapes that stand for white space. */
    private static final String ESCAPE_LETTERS = "nrtbfv";
    private static final Catalog CATALOG = Catalog.get();
    private static final int[] NO_SPANS = new int[0];
    /** The types found by a scan that found nothing (zero length, so never written). */
    private static final int[] NO_COUNTS = new int[0];
    private static final int NO_MATCH = -1;
    /** {@link Prefilter#flags} of every byte, as a constant table for the scan's inner loop. */
    private static final byte[] FLAGS = new byte[256];

    static {
        for (int c = 0; c < 256; c++) {
            FLAGS[c] = (byte) CATALOG.prefilter().flags(c);
        }
    }

    /** Collects matches during one scan. */
    private static final class Found {
        /** The types found so far, as {@link Scan#kinds} holds them. */
        int[] kinds = NO_COUNTS;
        int kindInts;
        final boolean keepSpans;
        int[] spans = NO_SPANS;
        int used;
        /** Where the last match ends: no later match starts before it. */
        int resume;

        Found(boolean keepSpans) {
            this.keepSpans = keepSpans;
        }

        /** Counts one match of {@code type}, as one that failed its checksum unless {@code verifiedOrNoChecksum}. */
        void count(int type, boolean verifiedOrNoChecksum) {
            int k = 0;
            while (k < kindInts && kinds[k] < type) {
                k += 3;
            }
            if (k == kindInts || kinds[k] != type) { // a new type, kept in type order
                if (kindInts + 3 > kinds.length) {
                    kinds = Arrays.copyOf(kinds, Math.max(12, kinds.length * 2));
                }
                System.arraycopy(kinds, k, kinds, k + 3, kindInts - k);
                kinds[k] = type;
                kinds[k + 1] = 0;
                kinds[k + 2] = 0;
                kindInts += 3;
            }
            kinds[k + 1]++;
            if (!verifiedOrNoChecksum) {
                kinds[k + 2]++;
            }
        }

        void add(int type, int start, int end, boolean verifiedOrNoChecksum) {
            count(type, verifiedOrNoChecksum);
            if (keepSpans) {
                if (used + 3 > spans.length) {
                    spans = Arrays.copyOf(spans, Math.max(48, spans.length * 2));
                }
                spans[used++] = start;
                spans[used++] = end;
                spans[used++] = type;
            }
        }
    }

    private SecretScanner() {
    }

    /**
     * Scans a text.
     *
     * @param text well-formed UTF-8, or bytes in which every byte below 0x80 is that ASCII character, from position 0
     *     to its limit; not modified
     * @param selection what to look for
     * @param redact whether to record the matches' spans (for {@link Scan#edits})
     * @return the counts and, when redacting, the spans
     */
    static Scan scan(ByteBuffer text, Selection selection, boolean redact) {
        return scan(text, selection, redact, false);
    }

    /**
     * Scans a text reading every byte the exact way, without {@link RunGate}: the reference {@link #scan} must equal
     * (a test compares the two).
     *
     * @param text as for {@link #scan}
     * @param selection what to look for
     * @return the counts and spans
     */
    static Scan scanEveryByte(ByteBuffer text, Selection selection) {
        return scan(text, selection, true, true);
    }

    private static Scan scan(ByteBuffer text, Selection selection, boolean redact, boolean everyByte) {
        boolean custom = !selection.custom().isEmpty();
        Found found = new Found(redact || custom);
        RunGate gate = selection.gate();
        ByteBuffer words = RunGate.littleEndian(text);
        int n = text.limit();
        int i = 0;
        int k = 0;
        int check = 0;
        while (k < n) {
            if (k >= check) {
                check = Interrupts.checkAt(k);
            }
            long run = everyByte ? n : gate.nextRun(words, k);
            if (run < 0) {
                break;
            }
            int runEnd = (int) run;
            int runStart = (int) (run >>> 32);
            int from = everyByte ? i : gate.windowStart(words, runStart, i);
            int to = (int) Math.min(n, (long) runEnd + gate.after());
            i = scanRange(text, from, to, selection, found);
            k = i > to ? i : runEnd; // after a match beyond the range, no later match starts before its end
        }
        if (custom) {
            scanCustom(text, selection, found);
        }
        if (found.kindInts == 0 || !redact) {
            return new Scan(selection, found.kinds, found.kindInts, NO_SPANS, 0);
        }
        return new Scan(selection, found.kinds, found.kindInts, found.spans, found.used);
    }

    /**
     * Reads the positions {@code from} (inclusive) to {@code to} (exclusive) the exact way: at each byte one
     * branch-free test ({@link Prefilter#mayStop}: a prefix anchored there next to the byte before or after it, or an
     * operator), and where it passes the entries that may match there. The ranges read are runs of token characters
     * (paths, identifiers), dense with anchor bytes whose neighbours rule them out: one test per byte costs less than a
     * branch per anchor byte.
     *
     * @return where the next range may start: {@code to}, or the end of a match that reaches beyond it
     */
    private static int scanRange(ByteBuffer text, int from, int to, Selection selection, Found found) {
        Prefilter prefilter = CATALOG.prefilter();
        byte[] flagsOf = FLAGS;
        int n = text.limit();
        int i = from;
        int previous = i > 0 ? text.get(i - 1) & 0xff : 0;
        while (i < to) {
            int c = text.get(i) & 0xff;
            if (!prefilter.mayStop(c, previous, i + 1 < n ? text.get(i + 1) & 0xff : 0)) {
                previous = c;
                i++;
                continue;
            }
            int flags = flagsOf[c];
            int resume = found.resume;
            int end = NO_MATCH;
            if ((flags & Prefilter.ANCHOR) != 0) {
                Prefilter.Literal[] list = prefilter.anchored(false, c, previous);
                if (list != null && prefilter.admits(false, c, previous, i > 1 ? text.get(i - 2) & 0xff : -1)) {
                    end = tryAnchored(text, i, list, selection, found, resume);
                }
            }
            if (end == NO_MATCH && (flags & Prefilter.HEAD) != 0 && i + 1 < n) {
                int next = text.get(i + 1) & 0xff;
                Prefilter.Literal[] list = prefilter.anchored(true, c, next);
                if (list != null && prefilter.admits(true, c, next, i + 2 < n ? text.get(i + 2) & 0xff : -1)) {
                    end = tryAnchored(text, i, list, selection, found, resume);
                }
            }
            if (end == NO_MATCH && (flags & Prefilter.OPERATOR) != 0 && !Assignment.operatorByte((byte) previous)) {
                end = tryKeywords(text, i, selection, found, resume);
            }
            if (end != NO_MATCH) {
                found.resume = end;
                i = end;
                previous = text.get(i - 1) & 0xff;
            } else {
                previous = c;
                i++;
            }
        }
        return i;
    }

    /** {@return the end of the match recorded for a prefix anchored at {@code i}, or {@link #NO_MATCH}} */
    private static int tryAnchored(ByteBuffer text, int i, Prefilter.Literal[] literals, Selection selection,
                                   Found found, int resume) {
        for (Prefilter.Literal l : literals) {
            int p = i - l.anchor();
            Rule rule = l.rule();
            if (p < resume || !selection.on(rule.index()) || !l.at(text, p)) {
                continue;
            }
            Match m = rule.kind() == Rule.Kind.PEM ? span(rule, p, PemBlock.match(text, p))
                    : prefixMatch(text, p, l, selection);
            if (record(text, m, found, resume)) {
                return m.end();
            }
        }
        return NO_MATCH;
    }

    /** The longest key name searched for a keyword before an operator. */
    private static final int MAX_KEY_SCAN = Assignment.MAX_KEY_BEFORE + 40 + Assignment.MAX_KEY_REST;

    /** {@return the end of the match recorded for a keyword in the key before the operator at {@code op}, or -1} */
    private static int tryKeywords(ByteBuffer text, int op, Selection selection, Found found, int resume) {
        if (selection.shortestKeywordValue() == Integer.MAX_VALUE
                || !Assignment.valueMayFollow(text, op, selection.shortestKeywordValue())) {
            return NO_MATCH;
        }
        long key = Assignment.keyBefore(text, op, MAX_KEY_SCAN);
        if (key < 0) {
            return NO_MATCH;
        }
        Prefilter prefilter = CATALOG.prefilter();
        int keyEnd = (int) key;
        int keyStart = (int) (key >>> 32);
        int gram = Prefilter.fold(text.get(keyStart)) << 8 | Prefilter.fold(text.get(keyStart + 1));
        for (int p = keyStart; p + Prefilter.GRAM <= keyEnd; p++) {
            gram = (gram << 8 | Prefilter.fold(text.get(p + 2))) & 0xFF_FFFF; // Prefilter.gramAt(text, p), rolled
            Prefilter.Literal[] literals = prefilter.mayStartKeyword(gram) ? prefilter.candidates(gram) : null;
            if (literals == null) {
                continue;
            }
            for (Prefilter.Literal l : literals) {
                if (l.ignoreCase() && selection.on(l.rule().index()) && l.at(text, p)) {
                    Match m = keywordMatch(text, p, l, selection);
                    if (record(text, m, found, resume)) {
                        return m.end();
                    }
                }
            }
        }
        return NO_MATCH;
    }

    /** Records a match unless there is none or it starts before {@code resume}; {@return whether it recorded} */
    private static boolean record(ByteBuffer text, Match m, Found found, int resume) {
        if (m == null || m.start() < resume) {
            return false;
        }
        found.add(m.type(), m.start(), m.end(), verified(text, m.type(), m.start(), m.end()));
        return true;
    }

    /**
     * A match: its type ({@link Selection} numbering) and its span of the text, {@code start} inclusive, {@code end}
     * exclusive. Positions are whole ints: the text a scan reads joins every reading of a body (each up to 4 MiB, and
     * a body has a dozen readings or more), so positions pass 2^24 (attacker pass 19, P25-4: packed in 24 bits, a
     * match past 16 MiB wrapped to an earlier end and the scan went back over the same text for ever).
     */
    private record Match(int type, int start, int end) {
    }

    /** {@return a match of {@code rule}, or {@code null} when {@code end} is negative (none)} */
    private static Match span(Rule rule, int start, int end) {
        return end < 0 ? null : new Match(rule.index(), start, end);
    }

    private static Match prefixMatch(ByteBuffer text, int p, Prefilter.Literal l, Selection selection) {
        Rule.Form form = l.rule().forms().get(l.form());
        int start = p;
        if (form.lead() != null) {
            start = p - form.lead().fixedLength();
            if (start < 0 || form.lead().match(text, start) != p) {
                return null;
            }
        }
        if (continuesToken(text, start, form, true)) {
            return null;
        }
        int bodyStart = p + l.bytes().length;
        int end = form.shape() == null ? bodyStart : form.shape().match(text, bodyStart);
        if (end < 0 || (end < text.limit() && continuesToken(text, end, form, false))) {
            return null;
        }
        if (l.rule().entropy() > 0 && TokenChecks.entropy(text, bodyStart, end) < l.rule().entropy()
                || TokenChecks.placeholder(text, bodyStart, end)) {
            return null;
        }
        return span(l.rule(), start, end);
    }

    /**
     * {@return whether the character before {@code at} (when {@code before}) or at {@code at} continues the token}
     * Before: an ASCII letter or digit, a character of the form's edge, or a {@code _} or {@code -} that the token's
     * classes hold. After: an ASCII letter or digit, a character of the edge or of the token's classes. A letter that
     * ends a backslash escape ({@code \n}, {@code \t} ...) still present in the text does not continue a token:
     * text quoting JSON or a shell script breaks lines there for its reader.
     */
    private static boolean continuesToken(ByteBuffer text, int at, Rule.Form form, boolean before) {
        int i = before ? at - 1 : at;
        if (i < 0 || i >= text.limit()) {
            return false;
        }
        int c = text.get(i) & 0xff;
        if (before && i >= 1 && text.get(i - 1) == '\\' && ESCAPE_LETTERS.indexOf(c) >= 0) {
            return false;
        }
        if (c >= 0x80) {
            return false;
        }
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || form.edge().indexOf(c) >= 0) {
            return true;
        }
        return before ? (c == '_' || c == '-') && form.inAlphabet(c) : form.inAlphabet(c);
    }

    private static Match keywordMatch(ByteBuffer text, int p, Prefilter.Literal l, Selection selection) {
        int valueStart = Assignment.valueStart(text, p + l.bytes().length);
        if (valueStart < 0 || (!l.rule().bareKey() && !Assignment.namesACredential(text, p, p + l.bytes().length))) {
            return null;
        }
        Match prefixed = prefixAt(text, valueStart, selection);
        if (prefixed != null) {
            return prefixed;
        }
        Rule.Form form = l.rule().forms().get(l.form());
        int end = form.shape().match(text, valueStart);
        if (end < 0 || (end < text.limit() && continuesToken(text, end, form, false))) {
            return null;
        }
        if (TokenChecks.entropy(text, valueStart, end) < l.rule().entropy()
                || TokenChecks.placeholder(text, valueStart, end)) {
            return null;
        }
        return span(l.rule(), valueStart, end);
    }

    /** {@return a match of an enabled prefix entry starting exactly at {@code at}, or {@code null}} */
    private static Match prefixAt(ByteBuffer text, int at, Selection selection) {
        int gram = Prefilter.gramAt(text, at);
        Prefilter.Literal[] literals = gram < 0 ? null : CATALOG.prefilter().candidates(gram);
        if (literals == null) {
            return null;
        }
        for (Prefilter.Literal l : literals) {
            if (l.rule().kind() == Rule.Kind.PREFIX && selection.on(l.rule().index()) && l.at(text, at)) {
                Match m = prefixMatch(text, at, l, selection);
                if (m != null) {
                    return m;
                }
            }
        }
        return null;
    }

    /** {@return true unless the type's format has a checksum that this match fails} */
    private static boolean verified(ByteBuffer text, int type, int start, int end) {
        Rule rule = CATALOG.rules().get(type);
        if (rule.checksum() == null) {
            return true;
        }
        for (Rule.Form f : rule.forms()) {
            for (String prefix : f.literals()) {
                if (Prefilter.literalAt(text, start, prefix)) {
                    return TokenChecks.valid(rule.checksum(), text, start + prefix.length(), end);
                }
            }
        }
        return false;
    }

    /** Runs the operator patterns and adds the matches that overlap no earlier one. */
    private static void scanCustom(ByteBuffer text, Selection selection, Found found) {
        TreeMap<Integer, int[]> taken = new TreeMap<>();
        for (int s = 0; s < found.used; s += 3) {
            taken.put(found.spans[s], new int[] {found.spans[s + 1], found.spans[s + 2]});
        }
        int base = selection.enabled().length;
        List<CustomPattern> custom = selection.custom();
        int n = text.limit();
        for (int c = 0; c < custom.size(); c++) {
            CustomPattern cp = custom.get(c);
            int type = base + c;
            CustomPattern.Sink sink = (start, end) -> {
                Map.Entry<Integer, int[]> before = taken.floorEntry(start);
                Map.Entry<Integer, int[]> after = taken.ceilingEntry(start);
                boolean overlaps = (before != null && before.getValue()[0] > start)
                        || (after != null && after.getKey() < end);
                if (!overlaps) {
                    taken.put(start, new int[] {end, type});
                    found.count(type, true);
                }
            };
            if (cp.keyword() == null) {
                cp.matches(text, 0, n, sink);
                continue;
            }
            int windowEnd = 0;
            for (int i = 0; i < n; i++) {
                if (i >= windowEnd && cp.keywordAt(text, i)) {
                    windowEnd = Math.min(n, i + CustomPattern.KEYWORD_WINDOW);
                    cp.matches(text, i, windowEnd, sink);
                }
            }
        }
        int used = 0;
        int[] spans = new int[taken.size() * 3];
        for (Map.Entry<Integer, int[]> e : taken.entrySet()) {
            int[] v = e.getValue();
            spans[used++] = e.getKey();
            spans[used++] = v[0];
            spans[used++] = v[1];
        }
        found.spans = spans;
        found.used = used;
    }
}
