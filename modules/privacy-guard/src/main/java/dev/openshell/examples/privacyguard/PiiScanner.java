package dev.openshell.examples.privacyguard;

import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds e-mail addresses and phone numbers in text, counts them, and optionally replaces each with a placeholder.
 * Best effort, like any pattern matcher: it is not a complete PII detector.
 *
 * <p>Both patterns run in time linear in the text (possessive quantifiers, bounded repetition, and a look-behind that
 * rejects match starts inside a run), so a 4 MiB adversarial body cannot make them backtrack.
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

    private static final Pattern EMAIL = Pattern.compile(
            "(?<![A-Za-z0-9._%+\\-])[A-Za-z0-9._%+\\-]{1,64}+@[A-Za-z0-9\\-]++(?:\\.[A-Za-z0-9\\-]++)++");
    private static final Pattern PHONE = Pattern.compile(
            "(?<![\\w+])(?:\\+\\d{1,3}[ .\\-]?)?(?:\\(\\d{1,4}\\)[ .\\-]?)?\\d{1,4}(?:[ .\\-]\\d{2,4}){0,3}"
                    + "[ .\\-]\\d{3,8}(?![\\w]|[ .\\-]\\d)");

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
        int[] emails = new int[1];
        String afterEmail = replace(text, EMAIL, PiiScanner::isEmail, emails, redact, EMAIL_PLACEHOLDER);
        int[] phones = new int[1];
        String afterPhone = replace(afterEmail, PHONE, PiiScanner::isPhone, phones, redact, PHONE_PLACEHOLDER);
        return new Result(afterPhone, emails[0], phones[0]);
    }

    private static String replace(String text, Pattern pattern, Predicate<String> accept, int[] count,
                                  boolean redact, String placeholder) {
        Matcher m = pattern.matcher(text);
        StringBuilder out = null;
        int last = 0;
        while (m.find()) {
            if (!accept.test(m.group())) {
                continue;
            }
            count[0]++;
            if (redact) {
                if (out == null) {
                    out = new StringBuilder(text.length());
                }
                out.append(text, last, m.start()).append(placeholder);
                last = m.end();
            }
        }
        return out == null ? text : out.append(text, last, text.length()).toString();
    }

    static boolean isEmail(String match) {
        int dot = match.lastIndexOf('.');
        String tld = match.substring(dot + 1);
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
