package dev.openshell.builtin.regex;

import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds {@link SecretKind}s in text in one left-to-right pass, and optionally redacts them.
 *
 * <p>Linear time on hostile input: one combined pattern whose alternatives each start with a literal, with
 * possessive repetition over character classes only (no backtracking, and no recursion in {@link Pattern}); PEM
 * blocks are extended by a plain character loop rather than by a reluctant {@code .*?}, which would be quadratic on a
 * body full of BEGIN lines without END. Thread-safe.
 */
final class SecretScanner {
    /** Alternatives in priority order: at one position the first that matches wins. */
    private static final Pattern SECRETS = Pattern.compile(String.join("|",
            "(?<pem>-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----)",
            "(?<anthropic>(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}+)",
            "(?<openai>(?<![A-Za-z0-9_-])sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}+"
                    + "|[A-Za-z0-9]{32,}+(?![A-Za-z0-9_-])))",
            "(?<aws>(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9]))",
            "(?<github>(?<![A-Za-z0-9_])(?:(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}+|github_pat_[A-Za-z0-9_]{22,}+))",
            "(?<slack>(?<![A-Za-z0-9-])xox[abposr]-[A-Za-z0-9-]{10,}+)",
            "(?<google>(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-]))"));
    private static final String[] GROUPS = {"pem", "anthropic", "openai", "aws", "github", "slack", "google"};
    private static final SecretKind[] KINDS = {SecretKind.PRIVATE_KEY, SecretKind.ANTHROPIC_API_KEY,
        SecretKind.OPENAI_API_KEY, SecretKind.AWS_ACCESS_KEY_ID, SecretKind.GITHUB_TOKEN, SecretKind.SLACK_TOKEN,
        SecretKind.GOOGLE_API_KEY};
    private static final Pattern PEM_END = Pattern.compile("-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----");

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

    private SecretScanner() {
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
        StringBuilder out = null;
        int copied = 0;
        Matcher m = SECRETS.matcher(text);
        int pos = 0;
        while (pos < text.length() && m.find(pos)) {
            SecretKind kind = kindOf(m);
            int start = m.start();
            int end = kind == SecretKind.PRIVATE_KEY ? pemEnd(text, m.end()) : m.end();
            if (enabled.contains(kind)) {
                counts.merge(kind, 1, Integer::sum);
                if (redact) {
                    if (out == null) {
                        out = new StringBuilder(text.length());
                    }
                    out.append(text, copied, start).append(kind.placeholder());
                    copied = end;
                }
            }
            pos = end;
        }
        if (out == null) {
            return new Scan(counts, text);
        }
        out.append(text, copied, text.length());
        return new Scan(counts, out.toString());
    }

    /** {@return every kind} */
    static Set<SecretKind> all() {
        return EnumSet.allOf(SecretKind.class);
    }

    private static SecretKind kindOf(Matcher m) {
        for (int i = 0; i < GROUPS.length; i++) {
            if (m.start(GROUPS[i]) >= 0) {
                return KINDS[i];
            }
        }
        throw new IllegalStateException("a match without a group");
    }

    /**
     * Extends a PEM block from the end of its BEGIN line over the key data (base64, PEM header lines such as
     * {@code Proc-Type: 4,ENCRYPTED}, whitespace, and JSON or shell escapes such as a literal backslash-n) up to and
     * including a matching END line when one follows; otherwise up to the end of the key data. Trailing whitespace and
     * backslashes are left in place, so an escape sequence in the surrounding syntax is never cut in half.
     */
    private static int pemEnd(String text, int from) {
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
            Matcher end = PEM_END.matcher(text).region(j, n);
            if (end.lookingAt()) {
                return end.end();
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
