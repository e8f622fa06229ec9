package dev.openshell.middleware.spi.internal;

import static org.apiguardian.api.API.Status.INTERNAL;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apiguardian.api.API;

/**
 * The {@code charset} of a media type given as an RFC 2231 (RFC 8187) extended parameter: {@code charset*} (value
 * {@code charset'language'} then percent-encoded octets, RFC 2231 section 4) or continuations {@code charset*0},
 * {@code charset*1}, ... (section 3), each of which may be extended too ({@code charset*N*}: percent-encoded, the
 * {@code charset'language'} prefix on the first one only, section 4.1). Readers such as Python's {@code email} package
 * (httpx, requests) and Django read it as the {@code charset} parameter, so the response scrub (the proxy's
 * {@code ResponseCharsets}) and the regex plugin's request reading ({@code MediaType}) both take it from here.
 *
 * <p>A charset name is ASCII (RFC 2978 section 2.3), so the decoded value must be printable ASCII without white
 * space; anything else (a missing prefix, a bad percent escape, a continuation number missing or given twice, a name
 * such as {@code charset*x}, an empty value, a {@code charset'} prefix naming a charset {@link HeaderCharsets}
 * cannot read) cannot be decoded: its readers disagree. Static methods only.
 */
@API(status = INTERNAL, since = "0.2")
public final class ExtendedCharset {
    /** The highest continuation number read (RFC 2231 sets none; a charset name is short). */
    private static final int MAX_SEGMENTS = 64;

    private ExtendedCharset() {
    }

    /**
     * {@return the charset name the extended parameters give}
     *
     * @param parts the parameters whose lowercased name starts with {@code charset*}, each as {@code {name, value}}
     *     in the order given, the value unquoted; not empty
     * @throws IllegalArgumentException if they cannot be decoded (the message names no value)
     */
    public static String decode(List<String[]> parts) {
        if (parts.size() == 1 && parts.get(0)[0].equals("charset*")) {
            return ascii(extended(parts.get(0)[1], true));
        }
        if (parts.size() > MAX_SEGMENTS) {
            throw bad();
        }
        String[] segments = new String[parts.size()];
        boolean[] encoded = new boolean[parts.size()];
        for (String[] p : parts) {
            String suffix = p[0].substring("charset*".length());
            boolean enc = suffix.endsWith("*");
            String digits = enc ? suffix.substring(0, suffix.length() - 1) : suffix;
            if (!digits.matches("0|[1-9][0-9]?")) {
                throw bad();
            }
            int n = Integer.parseInt(digits);
            if (n >= segments.length || segments[n] != null) {
                throw bad();
            }
            segments[n] = p[1];
            encoded[n] = enc;
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < segments.length; i++) {
            b.append(encoded[i] ? extended(segments[i], i == 0) : segments[i]);
        }
        return ascii(b.toString());
    }

    /** {@return {@code v} percent-decoded (one char per octet), after its {@code charset'language'} prefix} */
    private static String extended(String v, boolean prefixed) {
        int from = prefixed ? HeaderParameters.prefixEnd(v) : 0;
        if (prefixed && HeaderParameters.prefixUnreadable(v)) {
            throw bad(); // declared in a charset that cannot be read (UTF-7, unicode_escape: HeaderCharsets)
        }
        byte[] octets = from < 0 ? null : HeaderParameters.percentDecode(v, from, v.length(), true);
        if (octets == null) {
            throw bad();
        }
        return new String(octets, StandardCharsets.ISO_8859_1);
    }

    /** {@return {@code s} when it is a non-empty run of printable ASCII without white space} */
    private static String ascii(String s) {
        if (s.isEmpty() || !s.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
            throw bad();
        }
        return s;
    }

    private static IllegalArgumentException bad() {
        return new IllegalArgumentException("RFC 2231 charset parameter cannot be decoded");
    }
}
