package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds {@link SecretKind}s in a UTF-8 body in one left-to-right pass over its bytes, and optionally redacts them.
 *
 * <p>Each kind starts with a fixed ASCII literal ({@code -----BEGIN }, {@code sk-}, {@code AKIA}, {@code ASIA},
 * {@code AIza}, {@code gh}, {@code github_pat_}, {@code xox}). The scan walks the bytes once; only where such a
 * literal starts, and the character before it does not continue a token, does it run that kind's own pattern,
 * anchored there. At one position the kinds are tried in {@link SecretKind} order and the first match wins; the scan
 * resumes after it. The patterns use possessive repetition over character classes only (no backtracking, no recursion
 * in {@link Pattern}), and PEM blocks are extended by a plain loop rather than a reluctant {@code .*?}, so the run time
 * is linear even for hostile bodies (for example, one made only of BEGIN lines). Thread-safe.
 *
 * <h2>Why bytes, and why that equals scanning the text</h2>
 * Every literal and every character class of the patterns is ASCII. In well-formed UTF-8 (the caller checks it with
 * {@link Utf8}) an ASCII byte is always that ASCII character, and every byte of a multi-byte sequence is 0x80 or more,
 * which no class contains, exactly as the decoded non-ASCII character would not be. So matching over the bytes read as
 * ISO-8859-1 finds the same matches at the same characters as matching over the decoded text, and a redaction that
 * replaces ASCII ranges by ASCII placeholders keeps every other byte, so the result is well-formed UTF-8 again. This
 * skips the decode into a {@code String}, the copy into a {@code StringBuilder} and the encode back: a 1 MiB body is
 * scanned in place, and only a redacted copy is allocated.
 */
final class SecretScanner {
    private static final Pattern PEM_BEGIN = Pattern.compile("-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----");
    private static final Pattern PEM_END = Pattern.compile("-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----");
    private static final Pattern ANTHROPIC = Pattern.compile("sk-ant-[A-Za-z0-9_-]{20,}+");
    private static final Pattern OPENAI = Pattern.compile(
            "sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}+|[A-Za-z0-9]{32,}+(?![A-Za-z0-9_-]))");
    private static final Pattern AWS = Pattern.compile("(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])");
    private static final Pattern GOOGLE = Pattern.compile("AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])");
    private static final Pattern GITHUB = Pattern.compile(
            "(?:(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}+|github_pat_[A-Za-z0-9_]{22,}+)");
    private static final Pattern SLACK = Pattern.compile("xox[abposr]-[A-Za-z0-9-]{10,}+");

    private static final byte[] BEGIN = ascii("-----BEGIN ");
    private static final byte[] END = ascii("-----END ");
    private static final byte[] DASHES = ascii("-----");
    private static final byte[] SK = ascii("sk-");
    private static final byte[] AKIA = ascii("AKIA");
    private static final byte[] ASIA = ascii("ASIA");
    private static final byte[] AIZA = ascii("AIza");
    private static final byte[] GH = ascii("gh");
    private static final byte[] GITHUB_PAT = ascii("github_pat_");
    private static final byte[] XOX = ascii("xox");
    /** The first bytes of the literals: every other byte is skipped with one table look-up. */
    private static final boolean[] TRIGGER = new boolean[256];
    private static final byte[][] PLACEHOLDERS = new byte[SecretKind.values().length][];
    private static final int[] NO_SPANS = new int[0];

    static {
        for (char c : new char[] {'-', 's', 'A', 'g', 'x'}) {
            TRIGGER[c] = true;
        }
        for (SecretKind k : SecretKind.values()) {
            PLACEHOLDERS[k.ordinal()] = ascii(k.placeholder());
        }
    }

    /**
     * The result of a scan.
     *
     * @param counts matches per enabled kind (kinds without matches absent), in {@link SecretKind} order
     * @param spans the matches of enabled kinds as triples (start, end exclusive, {@link SecretKind} ordinal), in
     *     increasing order and never overlapping; only filled when the scan was asked to redact
     * @param spanInts how many ints of {@code spans} are used (three per match)
     */
    record Scan(Map<SecretKind, Integer> counts, int[] spans, int spanInts) {
        int total() {
            return counts.values().stream().mapToInt(Integer::intValue).sum();
        }

        /** {@return the redactions as edits of the scanned text: each match replaced by its placeholder} */
        java.util.List<Edit> edits() {
            java.util.List<Edit> edits = new java.util.ArrayList<>(spanInts / 3);
            for (int s = 0; s < spanInts; s += 3) {
                edits.add(new Edit(spans[s], spans[s + 1], PLACEHOLDERS[spans[s + 2]]));
            }
            return edits;
        }

        /** {@return the scanned text with each match replaced by its placeholder, or {@code null} if none matched}
         * @param text the text that was scanned */
        byte[] redacted(ByteBuffer text) {
            return spanInts == 0 ? null : Edit.apply(text, edits());
        }
    }

    /** The body's bytes as ISO-8859-1 characters (one char per byte), for anchored matching without a copy. */
    private static final class Latin1 implements CharSequence {
        private final ByteBuffer bytes;
        private final int length;

        Latin1(ByteBuffer bytes) {
            this.bytes = bytes;
            this.length = bytes.limit();
        }

        @Override
        public int length() {
            return length;
        }

        @Override
        public char charAt(int index) {
            return (char) (bytes.get(index) & 0xff);
        }

        @Override
        public CharSequence subSequence(int start, int end) {
            byte[] b = new byte[end - start];
            bytes.get(start, b);
            return new String(b, StandardCharsets.ISO_8859_1);
        }

        @Override
        public String toString() {
            return subSequence(0, length).toString();
        }
    }

    /** Per-scan matchers, made on first use. */
    private static final class Matchers {
        private final Latin1 text;
        private final Matcher[] byPattern = new Matcher[8];

        Matchers(ByteBuffer body) {
            this.text = new Latin1(body);
        }

        /** {@return the end of a match of {@code p} anchored at {@code at}, or -1} */
        int match(int slot, Pattern p, int at) {
            Matcher m = byPattern[slot];
            if (m == null) {
                m = p.matcher(text);
                byPattern[slot] = m;
            }
            m.region(at, text.length());
            return m.lookingAt() ? m.end() : -1;
        }
    }

    private SecretScanner() {
    }

    /** {@return every kind} */
    static Set<SecretKind> all() {
        return EnumSet.allOf(SecretKind.class);
    }

    /**
     * Scans a body.
     *
     * @param body well-formed UTF-8 ({@link Utf8#isWellFormed}), from position 0 to its limit; not modified
     * @param enabled the kinds to count (and redact); matches of other kinds are left as they are
     * @param redact whether to record the matches' spans (for {@link Scan#edits})
     * @return the counts and, when redacting, the spans
     */
    static Scan scan(ByteBuffer body, Set<SecretKind> enabled, boolean redact) {
        EnumMap<SecretKind, Integer> counts = new EnumMap<>(SecretKind.class);
        Matchers matchers = null;
        int[] spans = NO_SPANS;
        int used = 0;
        int n = body.limit();
        int i = 0;
        while (i < n) {
            int c = body.get(i) & 0xff;
            if (!TRIGGER[c]) {
                i++;
                continue;
            }
            SecretKind kind = null;
            int end = -1;
            switch (c) {
                case '-' -> {
                    if (startsWith(body, i, BEGIN)
                            && (end = (matchers = matchers(matchers, body)).match(0, PEM_BEGIN, i)) >= 0) {
                        kind = SecretKind.PRIVATE_KEY;
                        end = pemEnd(body, end, matchers);
                    }
                }
                case 's' -> {
                    if (startsWith(body, i, SK) && !continues(body, i, "_-")) {
                        matchers = matchers(matchers, body);
                        if ((end = matchers.match(1, ANTHROPIC, i)) >= 0) {
                            kind = SecretKind.ANTHROPIC_API_KEY;
                        } else if ((end = matchers.match(2, OPENAI, i)) >= 0) {
                            kind = SecretKind.OPENAI_API_KEY;
                        }
                    }
                }
                case 'A' -> {
                    if ((startsWith(body, i, AKIA) || startsWith(body, i, ASIA)) && !continues(body, i, "")) {
                        if ((end = (matchers = matchers(matchers, body)).match(3, AWS, i)) >= 0) {
                            kind = SecretKind.AWS_ACCESS_KEY_ID;
                        }
                    } else if (startsWith(body, i, AIZA) && !continues(body, i, "_-")
                            && (end = (matchers = matchers(matchers, body)).match(6, GOOGLE, i)) >= 0) {
                        kind = SecretKind.GOOGLE_API_KEY;
                    }
                }
                case 'g' -> {
                    if (startsWith(body, i, GH) || startsWith(body, i, GITHUB_PAT)) {
                        if (!continues(body, i, "_")
                                && (end = (matchers = matchers(matchers, body)).match(4, GITHUB, i)) >= 0) {
                            kind = SecretKind.GITHUB_TOKEN;
                        }
                    }
                }
                case 'x' -> {
                    if (startsWith(body, i, XOX) && !continues(body, i, "-")
                            && (end = (matchers = matchers(matchers, body)).match(5, SLACK, i)) >= 0) {
                        kind = SecretKind.SLACK_TOKEN;
                    }
                }
                default -> { }
            }
            if (kind == null) {
                i++;
                continue;
            }
            if (enabled.contains(kind)) {
                counts.merge(kind, 1, Integer::sum);
                if (redact) {
                    if (used + 3 > spans.length) {
                        spans = java.util.Arrays.copyOf(spans, Math.max(24, spans.length * 2));
                    }
                    spans[used++] = i;
                    spans[used++] = end;
                    spans[used++] = kind.ordinal();
                }
            }
            i = end;
        }
        return new Scan(counts, spans, used);
    }

    private static Matchers matchers(Matchers m, ByteBuffer body) {
        return m != null ? m : new Matchers(body);
    }

    private static boolean startsWith(ByteBuffer b, int at, byte[] literal) {
        if (at + literal.length > b.limit()) {
            return false;
        }
        for (int k = 0; k < literal.length; k++) {
            if (b.get(at + k) != literal[k]) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@return whether the character before {@code at} is an ASCII letter, a digit or one of {@code extra}} A letter
     * that ends a backslash escape ({@code \n}, {@code \r}, {@code \t}, {@code \b}, {@code \f},
     * {@code \v}) does not continue a token: text that still holds escapes (plain text quoting JSON or shell, a
     * JSON string holding an escaped backslash) breaks lines there for its reader.
     */
    private static boolean continues(ByteBuffer b, int at, String extra) {
        if (at == 0) {
            return false;
        }
        int c = b.get(at - 1) & 0xff;
        if (at >= 2 && b.get(at - 2) == '\\' && ESCAPE_LETTERS.indexOf(c) >= 0) {
            return false;
        }
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || (c < 0x80 && extra.indexOf(c) >= 0);
    }

    /** The letters of the C, JSON and shell escapes that stand for white space. */
    private static final String ESCAPE_LETTERS = "nrtbfv";

    /**
     * Extends a PEM block from the end of its BEGIN line over the key data (base64, PEM header lines such as
     * {@code Proc-Type: 4,ENCRYPTED}, whitespace, and JSON or shell escapes such as a literal backslash-n) up to and
     * including a matching END line when one follows; otherwise up to the end of the key data. Trailing whitespace and
     * backslashes are left in place, so an escape sequence in the surrounding syntax is never cut in half.
     */
    private static int pemEnd(ByteBuffer b, int from, Matchers matchers) {
        int n = b.limit();
        int j = from;
        while (j < n) {
            int c = b.get(j) & 0xff;
            if (c == '-') {
                if (startsWith(b, j, DASHES)) {
                    break;
                }
                j++;
            } else if (isKeyData(c)) {
                j++;
            } else {
                break;
            }
        }
        if (startsWith(b, j, END)) {
            int end = matchers.match(7, PEM_END, j);
            if (end >= 0) {
                return end;
            }
        }
        while (j > from && (isWhitespace(b.get(j - 1) & 0xff) || b.get(j - 1) == '\\')) {
            j--;
        }
        return j;
    }

    /** {@link Character#isWhitespace} for the ASCII range (the key data holds nothing else). */
    private static boolean isWhitespace(int c) {
        return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
    }

    private static boolean isKeyData(int c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/'
                || c == '=' || c == ':' || c == ',' || c == '.' || c == '\\' || c == ' ' || c == '\t' || c == '\r'
                || c == '\n';
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
