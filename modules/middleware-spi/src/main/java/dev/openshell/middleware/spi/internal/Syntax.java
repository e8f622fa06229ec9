package dev.openshell.middleware.spi.internal;

import static org.apiguardian.api.API.Status.INTERNAL;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareException;
import java.util.Locale;
import java.util.Objects;
import org.apiguardian.api.API;

/**
 * The small grammars of the contract, in one place: every supervisor module and every stage that needs one of them
 * calls this class, so a rule cannot drift between copies.
 *
 * <ul>
 *   <li><b>Token</b> (RFC 9110, section 5.6.2): one or more {@code tchar}, that is ALPHA, DIGIT and
 *       {@code ! # $ % & ' * + - . ^ _ ` | ~}. Field names and methods are tokens.</li>
 *   <li><b>Code</b>: {@code [a-z][a-z0-9_]*}, 1 to {@value #MAX_CODE_LENGTH} characters; the shape of reason codes
 *       ({@link HttpRequestResult#reasonCode()}), {@link MiddlewareException#code()} and platform codes. Codes are
 *       safe to log and to show to clients. {@link #safeCode(String)} is the one sanitizer: text that is not a code
 *       becomes {@value #INVALID_CODE}.</li>
 *   <li><b>Registration name</b> (RFC 0009, "Registration and delivery": the diagnostic name of a registered
 *       service; the rule is OpenShell's, so registrations written for OpenShell load unchanged): 1 to
 *       {@value #MAX_REGISTRATION_NAME_BYTES} bytes of {@code A-Z a-z 0-9 . _ / -}, not starting with the reserved
 *       {@code openshell/} prefix ({@link BindingId#RESERVED_PREFIX}).</li>
 *   <li><b>Quoted text</b>: how untrusted text appears in a problem message ({@link #quote(String)}): in single
 *       quotes, control and format characters escaped as {@code \\uXXXX}, cut after {@value #MAX_QUOTED}
 *       characters, so a message never carries terminal escapes or a whole file.</li>
 * </ul>
 */
@API(status = INTERNAL, since = "0.1")
public final class Syntax {
    /** Longest code, in characters: 64. */
    public static final int MAX_CODE_LENGTH = 64;
    /** What {@link #safeCode(String)} gives for text that is not a code. */
    public static final String INVALID_CODE = "invalid_code";
    /** Longest registration name, in bytes (all its characters are ASCII): 128. */
    public static final int MAX_REGISTRATION_NAME_BYTES = 128;
    /** The registration-name rule in words, for diagnostics. */
    public static final String REGISTRATION_NAME_RULE =
            "1 to 128 letters, digits, '.', '_', '-' or '/', not starting with openshell/";

    /** Longest text {@link #quote(String)} shows, in characters, before it cuts with {@code ...}. */
    public static final int MAX_QUOTED = 80;

    private static final boolean[] TCHAR = new boolean[128];

    static {
        for (char c = '0'; c <= '9'; c++) {
            TCHAR[c] = true;
        }
        for (char c = 'a'; c <= 'z'; c++) {
            TCHAR[c] = true;
            TCHAR[c - 32] = true;
        }
        for (char c : "!#$%&'*+-.^_`|~".toCharArray()) {
            TCHAR[c] = true;
        }
    }

    private Syntax() {
    }

    /**
     * {@return the UTF-8 length of {@code s}, bytes} as the wire encodes it: an unpaired surrogate, which has no
     * UTF-8 encoding, counts one byte (the replacement {@code ?} Java's encoder writes).
     *
     * @param s the text; never {@code null}
     */
    public static long utf8Length(String s) {
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n += 1;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < s.length()
                    && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else if (Character.isSurrogate(c)) {
                n += 1;
            } else {
                n += 3;
            }
        }
        return n;
    }

    /** {@return whether {@code c} is an RFC 9110 {@code tchar}} @param c a char */
    public static boolean isTchar(char c) {
        return c < 128 && TCHAR[c];
    }

    /**
     * {@return whether {@code s} is a non-empty RFC 9110 token (section 5.6.2)}
     *
     * @param s a candidate; never {@code null}
     */
    public static boolean isToken(CharSequence s) {
        int n = s.length();
        if (n == 0) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            if (!isTchar(s.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@return whether {@code c} may appear in a field value or a reason phrase}: HTAB, SP, visible ASCII and
     * {@code obs-text} (RFC 9110, section 5.5: {@code field-vchar / SP / HTAB}); never NUL, CR, LF, another C0
     * control or DEL. One rule for request and response heads, trailers, chunk extensions and header mutations.
     *
     * @param c a char or an octet ({@code 0..0xFF} when read as bytes)
     */
    public static boolean isFieldValueChar(int c) {
        return c == '\t' || (c >= 0x20 && c != 0x7f);
    }

    /**
     * {@return {@code raw} percent-encoded (RFC 3986, section 2.1)}: ASCII letters, digits and {@code -._~} (the
     * unreserved set) are kept, and so is every ASCII character in {@code keep}; every other octet becomes
     * {@code %XX}, in upper- or lower-case hexadecimal. The one percent-encoder: credential injection into query
     * parameters and the scrubber's encoded forms of a secret both call it.
     *
     * @param raw the octets, usually UTF-8
     * @param upper whether the hexadecimal digits are upper case (RFC 3986 recommends it)
     * @param keep further ASCII characters to keep as they are; {@code ""} for none
     */
    public static String percentEncode(byte[] raw, boolean upper, String keep) {
        StringBuilder b = new StringBuilder(raw.length * 3);
        for (byte x : raw) {
            int c = x & 0xff;
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
                    || c == '_' || c == '~' || (c < 0x80 && keep.indexOf(c) >= 0)) {
                b.append((char) c);
            } else {
                appendPercentOctet(b, c, upper);
            }
        }
        return b.toString();
    }

    /**
     * Appends one octet as {@code %XX}.
     *
     * @param b where to append
     * @param octet the octet, {@code 0..0xFF}
     * @param upper whether the hexadecimal digits are upper case
     */
    public static void appendPercentOctet(StringBuilder b, int octet, boolean upper) {
        String hex = upper ? "0123456789ABCDEF" : "0123456789abcdef";
        b.append('%').append(hex.charAt(octet >> 4 & 0xf)).append(hex.charAt(octet & 0xf));
    }

    /**
     * {@return the value of {@code c} as an ASCII hexadecimal digit (RFC 5234 {@code HEXDIG}, either case), 0 to 15,
     * or -1 when it is not one}: never a digit of another script, which {@link Character#digit(char, int)} accepts.
     *
     * @param c a char
     */
    public static int hexDigit(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }

    /**
     * {@return whether {@code s} is a code: {@code [a-z][a-z0-9_]*}, 1 to {@value #MAX_CODE_LENGTH} characters}
     *
     * @param s a candidate; never {@code null}
     */
    public static boolean isCode(String s) {
        int n = s.length();
        if (n == 0 || n > MAX_CODE_LENGTH || s.charAt(0) < 'a' || s.charAt(0) > 'z') {
            return false;
        }
        for (int i = 1; i < n; i++) {
            char c = s.charAt(i);
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@return {@code s} when it is a code, else {@value #INVALID_CODE}}: the one way untrusted text becomes a code
     * that may be logged or shown. It never changes case or trims: {@code Secret} is not the code {@code secret}.
     *
     * @param s a candidate; never {@code null}
     */
    public static String safeCode(String s) {
        return isCode(s) ? s : INVALID_CODE;
    }

    /**
     * {@return {@code null} when {@code name} is a valid registration name, else the rule it breaks, in words}
     *
     * @param name a candidate; never {@code null}
     */
    public static String registrationNameProblem(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isEmpty()) {
            return "it is empty";
        }
        for (int i = 0; i < name.length(); i++) {
            if (!isNameChar(name.charAt(i))) {
                return "only letters, digits, '.', '_', '-' and '/' are allowed";
            }
        }
        if (name.length() > MAX_REGISTRATION_NAME_BYTES) {
            return "it is longer than " + MAX_REGISTRATION_NAME_BYTES + " bytes";
        }
        if (name.startsWith(BindingId.RESERVED_PREFIX)) {
            return "the prefix " + BindingId.RESERVED_PREFIX + " is reserved for built-ins";
        }
        return null;
    }

    /**
     * {@return whether {@code c} may appear in a registration name or a binding ID: {@code A-Z a-z 0-9 . _ - /}}
     *
     * @param c a char
     */
    public static boolean isNameChar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '.' || c == '_' || c == '-' || c == '/';
    }

    /**
     * {@return whether {@code name} is a valid registration name} @param name a candidate; never {@code null}
     */
    public static boolean isRegistrationName(String name) {
        return registrationNameProblem(name) == null;
    }

    /**
     * {@return {@code value} in single quotes, with control and format characters escaped as {@code \\uXXXX} and cut
     * after {@value #MAX_QUOTED} characters}
     *
     * @param value any text; never {@code null}
     */
    public static String quote(String value) {
        return "'" + printable(value) + "'";
    }

    /**
     * {@return {@code value} with control and format characters escaped as {@code \\uXXXX} and cut after
     * {@value #MAX_QUOTED} characters}
     *
     * @param value any text; never {@code null}
     */
    public static String printable(String value) {
        return printable(value, MAX_QUOTED);
    }

    /**
     * {@return {@code value} with control and format characters escaped as {@code \\uXXXX} and cut after {@code max}
     * characters (code points) with {@code ...}}: the one way untrusted text enters a message, a log line or an
     * exception; the callers differ only in how much they keep.
     *
     * @param value any text; never {@code null}
     * @param max how many characters to keep, at least 1
     */
    public static String printable(String value, int max) {
        StringBuilder b = new StringBuilder(Math.min(value.length(), max) + 8);
        int shown = 0;
        for (int i = 0; i < value.length(); ) {
            int cp = value.codePointAt(i);
            i += Character.charCount(cp);
            if (shown == max) {
                b.append("...");
                break;
            }
            if (isUnsafe(cp)) {
                b.append(String.format(Locale.ROOT, "\\u%04X", cp));
            } else {
                b.appendCodePoint(cp);
            }
            shown++;
        }
        return b.toString();
    }

    /**
     * {@return whether {@code cp} must not appear as is in a message: controls, format characters, surrogates,
     * private-use and unassigned code points, line and paragraph separators}
     *
     * @param cp a code point
     */
    public static boolean isUnsafe(int cp) {
        int type = Character.getType(cp);
        return Character.isISOControl(cp) || type == Character.FORMAT || type == Character.SURROGATE
                || type == Character.PRIVATE_USE || type == Character.UNASSIGNED
                || type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR;
    }
}
