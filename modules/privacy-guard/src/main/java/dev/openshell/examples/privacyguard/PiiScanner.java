package dev.openshell.examples.privacyguard;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds e-mail addresses and phone numbers in text, counts them, and optionally replaces each with a placeholder.
 * Best effort, like any pattern matcher: it is not a complete PII detector.
 *
 * <p>Both scans run in time linear in the text: e-mail addresses are found from each {@code @} with bounded scans
 * to each side, and the phone pattern (bounded repetition only) is tried only where a number can start, never inside a
 * run of letters or digits. A 4 MiB adversarial body cannot make them backtrack.
 *
 * <ul>
 *   <li>E-mail: a local part of 1 to 64 characters of {@code A-Z a-z 0-9 . _ % + -}, {@code @}, then domain labels
 *       separated by dots whose last label is 2 to 63 letters.</li>
 *   <li>Phone: an optional {@code +} country code of 1 to 3 digits, an optional area code in parentheses, then 2 to 5
 *       groups of digits separated by one space, dot or hyphen (the last group 3 to 8 digits); 7 to 15 digits in all;
 *       groups separated only by dots need a {@code +} or parentheses (otherwise they are versions or addresses).</li>
 * </ul>
 */
final class PiiScanner {
    static final String EMAIL_PLACEHOLDER = "[email]";
    static final String PHONE_PLACEHOLDER = "[phone]";

    private static final Pattern PHONE = Pattern.compile(
            "(?:\\+\\d{1,3}[ .\\-]?)?(?:\\(\\d{1,4}\\)[ .\\-]?)?\\d{1,4}(?:[ .\\-]\\d{2,4}){0,3}"
                    + "[ .\\-]\\d{3,8}(?![\\w]|[ .\\-]\\d)");
    private static final int MAX_LOCAL = 64;

    /** The outcome of one scan. */
    record Result(String text, int emails, int phones) {
        boolean found() {
            return emails > 0 || phones > 0;
        }
    }

    private PiiScanner() {
    }

    /**
     * Scans one text.
     *
     * @param text the text; never {@code null}
     * @param redact whether to replace matches with {@link #EMAIL_PLACEHOLDER} and {@link #PHONE_PLACEHOLDER}
     * @return the (possibly redacted) text and the counts
     */
    static Result scan(String text, boolean redact) {
        Spans emails = emails(text);
        String afterEmail = redact ? emails.replace(text, EMAIL_PLACEHOLDER) : text;
        Spans phones = phones(afterEmail);
        String afterPhone = redact ? phones.replace(afterEmail, PHONE_PLACEHOLDER) : afterEmail;
        return new Result(afterPhone, emails.count, phones.count);
    }

    /** Start and end offsets of accepted matches, in order, not overlapping. */
    private static final class Spans {
        private int[] offsets = new int[16];
        private int count;

        void add(int start, int end) {
            if (2 * count + 2 > offsets.length) {
                offsets = java.util.Arrays.copyOf(offsets, offsets.length * 2);
            }
            offsets[2 * count] = start;
            offsets[2 * count + 1] = end;
            count++;
        }

        String replace(String text, String placeholder) {
            if (count == 0) {
                return text;
            }
            StringBuilder out = new StringBuilder(text.length());
            int last = 0;
            for (int i = 0; i < count; i++) {
                out.append(text, last, offsets[2 * i]).append(placeholder);
                last = offsets[2 * i + 1];
            }
            return out.append(text, last, text.length()).toString();
        }
    }

    /**
     * E-mail addresses, found from each {@code @}: scanning back over the local part and forward over the domain.
     * Each character is visited a bounded number of times.
     */
    private static Spans emails(String text) {
        Spans spans = new Spans();
        int from = 0;
        int at;
        while ((at = text.indexOf('@', from)) >= 0) {
            int start = at;
            while (start > 0 && at - start < MAX_LOCAL + 1 && isLocal(text.charAt(start - 1))) {
                start--;
            }
            boolean localOk = start < at && at - start <= MAX_LOCAL && (start == 0 || !isLocal(text.charAt(start - 1)));
            int end = at + 1;
            int lastDot = -1;
            while (end < text.length()) {
                char c = text.charAt(end);
                if (isLabel(c)) {
                    end++;
                } else if (c == '.' && end + 1 < text.length() && isLabel(text.charAt(end + 1))
                        && text.charAt(end - 1) != '@' && text.charAt(end - 1) != '.') {
                    lastDot = end;
                    end++;
                } else {
                    break;
                }
            }
            if (localOk && lastDot > at && isEmail(text.substring(lastDot, end))) {
                spans.add(start, end);
                from = end;
            } else {
                from = at + 1;
            }
        }
        return spans;
    }

    /** Phone numbers: the pattern is tried only where a number can start (a digit, {@code +} or {@code (}). */
    private static Spans phones(String text) {
        Spans spans = new Spans();
        Matcher m = PHONE.matcher(text).useTransparentBounds(true).useAnchoringBounds(false);
        int i = 0;
        int n = text.length();
        while (i < n) {
            char c = text.charAt(i);
            boolean candidate = (c >= '0' && c <= '9') || c == '+' || c == '(';
            if (candidate && (i == 0 || !isWordOrPlus(text.charAt(i - 1)))) {
                m.region(i, n);
                if (m.lookingAt()) {
                    if (isPhone(m.group())) {
                        spans.add(m.start(), m.end());
                    }
                    i = m.end(); // a rejected match (too many digits, dots only) is consumed whole
                    continue;
                }
                // skip the rest of this run of digits: no number starts inside it
                i++;
                while (i < n && isWordOrPlus(text.charAt(i))) {
                    i++;
                }
                continue;
            }
            i++;
        }
        return spans;
    }

    private static boolean isLocal(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '.' || c == '_' || c == '%' || c == '+' || c == '-';
    }

    private static boolean isLabel(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    }

    private static boolean isWordOrPlus(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '+';
    }

    /** {@return whether the last label (with its leading dot) is a plausible top-level domain: 2 to 63 letters} */
    static boolean isEmail(String lastLabel) {
        String tld = lastLabel.substring(1);
        if (tld.length() < 2 || tld.length() > 63) {
            return false;
        }
        for (int i = 0; i < tld.length(); i++) {
            char c = tld.charAt(i);
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
                return false;
            }
        }
        return true;
    }

    static boolean isPhone(String match) {
        int digits = 0;
        boolean plusOrParen = false;
        boolean nonDotSeparator = false;
        for (int i = 0; i < match.length(); i++) {
            char c = match.charAt(i);
            if (c >= '0' && c <= '9') {
                digits++;
            } else if (c == '+' || c == '(') {
                plusOrParen = true;
            } else if (c == ' ' || c == '-') {
                nonDotSeparator = true;
            }
        }
        return digits >= 7 && digits <= 15 && (plusOrParen || nonDotSeparator);
    }
}
