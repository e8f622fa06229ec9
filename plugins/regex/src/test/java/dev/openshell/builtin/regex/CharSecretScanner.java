package dev.openshell.builtin.regex;

import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The scanner as it was before it ran over bytes: over decoded text, one char at a time. Kept in the tests as the
 * reference the byte scanner must agree with ({@link SecretScannerPropertyTest}).
 *
 * <p>Finds {@link SecretKind}s in text in one left-to-right pass, and optionally redacts them.
 *
 * <p>Each kind starts with a fixed literal ({@code -----BEGIN }, {@code sk-}, {@code AKIA}, {@code ASIA},
 * {@code AIza}, {@code gh}, {@code github_pat_}, {@code xox}). The scan walks the text once; only where such a literal
 * starts, and the character before it does not continue a token, does it run that kind's own pattern, anchored there.
 * At one position the kinds are tried in {@link SecretKind} order and the first match wins; the scan resumes after
 * it. The patterns use possessive repetition over character classes only (no backtracking, no recursion in
 * {@link Pattern}), and PEM blocks are extended by a plain character loop rather than a reluctant {@code .*?}, so the
 * run time is linear even for hostile bodies (for example, one made only of BEGIN lines). Thread-safe.
 */
final class CharSecretScanner {
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

    /**
     * The result of a scan.
     *
     * @param counts matches per enabled kind (kinds without matches absent), in {@link SecretKind} order
     * @param text the redacted text when redacting and something matched; else the input itself
     */
    record Scan(Map<SecretKind, Integer> counts, String text) {
        int total() {
            return counts.values().stream().mapToInt(Integer::intValue).sum();
        }
    }

    /** Per-scan matchers, made on first use. */
    private static final class Matchers {
        private final String text;
        private final Matcher[] byPattern = new Matcher[8];

        Matchers(String text) {
            this.text = text;
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

    private CharSecretScanner() {
    }

    /** {@return every kind} */
    static Set<SecretKind> all() {
        return EnumSet.allOf(SecretKind.class);
    }

    /**
     * Scans {@code text}.
     *
     * @param text the body as text
     * @param enabled the kinds to count (and redact); matches of other kinds are left as they are
     * @param redact whether to build the redacted text
     * @return the counts and, when redacting, the new text
     */
    static Scan scan(String text, Set<SecretKind> enabled, boolean redact) {
        EnumMap<SecretKind, Integer> counts = new EnumMap<>(SecretKind.class);
        Matchers matchers = new Matchers(text);
        StringBuilder out = null;
        int copied = 0;
        int n = text.length();
        int i = 0;
        while (i < n) {
            char c = text.charAt(i);
            SecretKind kind = null;
            int end = -1;
            switch (c) {
                case '-' -> {
                    if (text.startsWith("-----BEGIN ", i) && (end = matchers.match(0, PEM_BEGIN, i)) >= 0) {
                        kind = SecretKind.PRIVATE_KEY;
                        end = pemEnd(text, end, matchers);
                    }
                }
                case 's' -> {
                    if (text.startsWith("sk-", i) && !continues(text, i, "_-")) {
                        if ((end = matchers.match(1, ANTHROPIC, i)) >= 0) {
                            kind = SecretKind.ANTHROPIC_API_KEY;
                        } else if ((end = matchers.match(2, OPENAI, i)) >= 0) {
                            kind = SecretKind.OPENAI_API_KEY;
                        }
                    }
                }
                case 'A' -> {
                    if ((text.startsWith("AKIA", i) || text.startsWith("ASIA", i)) && !continues(text, i, "")) {
                        if ((end = matchers.match(3, AWS, i)) >= 0) {
                            kind = SecretKind.AWS_ACCESS_KEY_ID;
                        }
                    } else if (text.startsWith("AIza", i) && !continues(text, i, "_-")
                            && (end = matchers.match(6, GOOGLE, i)) >= 0) {
                        kind = SecretKind.GOOGLE_API_KEY;
                    }
                }
                case 'g' -> {
                    if (text.startsWith("gh", i) || text.startsWith("github_pat_", i)) {
                        if (!continues(text, i, "_") && (end = matchers.match(4, GITHUB, i)) >= 0) {
                            kind = SecretKind.GITHUB_TOKEN;
                        }
                    }
                }
                case 'x' -> {
                    if (text.startsWith("xox", i) && !continues(text, i, "-")
                            && (end = matchers.match(5, SLACK, i)) >= 0) {
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
                    if (out == null) {
                        out = new StringBuilder(n + 64);
                    }
                    out.append(text, copied, i).append(kind.placeholder());
                    copied = end;
                }
            }
            i = end;
        }
        if (out == null) {
            return new Scan(counts, text);
        }
        out.append(text, copied, n);
        return new Scan(counts, out.toString());
    }

    /** {@return whether the character before {@code at} is a letter, a digit or one of {@code extra}} */
    private static boolean continues(String text, int at, String extra) {
        if (at == 0) {
            return false;
        }
        char c = text.charAt(at - 1);
        if (at >= 2 && text.charAt(at - 2) == '\\' && "nrtbfv".indexOf(c) >= 0) {
            return false; // the letter of an escape such as a literal backslash-n ends the previous token
        }
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || extra.indexOf(c) >= 0;
    }

    /**
     * Extends a PEM block from the end of its BEGIN line over the key data (base64, PEM header lines such as
     * {@code Proc-Type: 4,ENCRYPTED}, whitespace, and JSON or shell escapes such as a literal backslash-n) up to and
     * including a matching END line when one follows; otherwise up to the end of the key data. Trailing whitespace and
     * backslashes are left in place, so an escape sequence in the surrounding syntax is never cut in half.
     */
    private static int pemEnd(String text, int from, Matchers matchers) {
        int n = text.length();
        int j = from;
        while (j < n) {
            char c = text.charAt(j);
            if (c == '-') {
                if (text.startsWith("-----", j)) {
                    break;
                }
                j++;
            } else if (isKeyData(c)) {
                j++;
            } else {
                break;
            }
        }
        if (text.startsWith("-----END ", j)) {
            int end = matchers.match(7, PEM_END, j);
            if (end >= 0) {
                return end;
            }
        }
        while (j > from && (Character.isWhitespace(text.charAt(j - 1)) || text.charAt(j - 1) == '\\')) {
            j--;
        }
        return j;
    }

    private static boolean isKeyData(char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/'
                || c == '=' || c == ':' || c == ',' || c == '.' || c == '\\' || c == ' ' || c == '\t' || c == '\r'
                || c == '\n';
    }
}
