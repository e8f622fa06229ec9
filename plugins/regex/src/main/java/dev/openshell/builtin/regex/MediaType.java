package dev.openshell.builtin.regex;

import dev.openshell.middleware.spi.internal.ExtendedCharset;
import java.util.Locale;

/**
 * A parsed {@code Content-Type} value (RFC 9110 section 8.3.1: {@code type "/" subtype *( OWS ";" OWS parameter )},
 * parameter values a token or a quoted-string). Type, subtype and parameter names are lowercased.
 *
 * @param type the top-level type, for example {@code application}
 * @param subtype the subtype, for example {@code json} or {@code vnd.api+json}
 * @param charset the {@code charset} parameter, else the one its RFC 2231 extended form gives ({@code charset*},
 *     {@code charset*0}, ...: {@link ExtendedCharset}), or {@code null}
 * @param boundary the {@code boundary} parameter, or {@code null}
 * @param unclear why the body's reading is unknown, or {@code null}: some parameter name (ASCII case ignored) is
 *     given more than once, which RFC 6838 section 4.3 forbids (readers disagree on which one counts: the first, the
 *     last, or an error), and so is a {@code charset} whose extended form names another charset (ASCII case
 *     ignored); or the extended form cannot be decoded. {@link BodyDecoder#content} refuses such a body
 */
record MediaType(String type, String subtype, String charset, String boundary, String unclear) {
    /** Why a media type that repeats a parameter is refused. */
    static final String REPEATED = "media type repeats a parameter (RFC 6838 section 4.3)";

    /**
     * {@return the media type, or {@code null} when the value is not one (no slash, an empty type or subtype)}
     *
     * @param value a field value
     */
    static MediaType parse(String value) {
        int semi = indexOutsideQuotes(value, 0);
        String essence = value.substring(0, semi).strip().toLowerCase(Locale.ROOT);
        int slash = essence.indexOf('/');
        if (slash <= 0 || slash == essence.length() - 1) {
            return null;
        }
        String charset = null;
        String boundary = null;
        java.util.Set<String> names = new java.util.HashSet<>();
        java.util.List<String[]> extended = new java.util.ArrayList<>();
        boolean repeated = false;
        int at = semi;
        while (at < value.length()) {
            int next = indexOutsideQuotes(value, at + 1);
            String param = value.substring(at + 1, next).strip();
            int eq = param.indexOf('=');
            if (eq > 0) {
                String name = param.substring(0, eq).strip().toLowerCase(Locale.ROOT);
                String v = unquote(param.substring(eq + 1).strip());
                repeated |= !names.add(name);
                if (name.startsWith("charset*")) {
                    extended.add(new String[] {name, v});
                } else if (name.equals("charset") && charset == null) {
                    charset = v;
                } else if (name.equals("boundary") && boundary == null) {
                    boundary = v;
                }
            }
            at = next;
        }
        String unclear = repeated ? REPEATED : null;
        if (!extended.isEmpty() && !repeated) {
            try {
                String named = ExtendedCharset.decode(extended);
                unclear = charset != null && !charset.strip().equalsIgnoreCase(named) ? REPEATED : unclear;
                charset = charset == null ? named : charset;
            } catch (IllegalArgumentException e) {
                unclear = "media type's " + e.getMessage();
            }
        }
        return new MediaType(essence.substring(0, slash).strip(), essence.substring(slash + 1).strip(), charset,
                boundary, unclear);
    }

    /** {@return whether the body is JSON: {@code application/json} or any {@code +json} subtype} */
    boolean isJson() {
        return subtype.equals("json") || subtype.endsWith("+json");
    }

    /** {@return whether the body is a sequence of JSON texts: NDJSON, JSON Lines, JSON text sequences} */
    boolean isJsonSequence() {
        return subtype.equals("x-ndjson") || subtype.equals("ndjson") || subtype.equals("jsonl")
                || subtype.equals("x-jsonlines") || subtype.equals("json-seq") || subtype.endsWith("+json-seq");
    }

    /** {@return whether the body is {@code application/x-www-form-urlencoded}} */
    boolean isForm() {
        return type.equals("application") && subtype.equals("x-www-form-urlencoded");
    }

    /** {@return whether the body is XML: any {@code xml} or {@code +xml} subtype (RFC 7303)} */
    boolean isXml() {
        return subtype.equals("xml") || subtype.endsWith("+xml");
    }

    /** {@return whether the body is HTML ({@code text/html})} */
    boolean isHtml() {
        return type.equals("text") && subtype.equals("html");
    }

    /**
     * {@return whether the body is read by HTML readers too: {@code text/html}, and XHTML ({@code application/xhtml+xml},
     * XML that is HTML, which a scraper parses with an HTML parser as often as with an XML one: attacker pass 25,
     * P31-1)}
     */
    boolean readAsHtml() {
        return isHtml() || subtype.equals("xhtml+xml");
    }

    /** {@return whether the body is YAML: {@code yaml}, {@code x-yaml} or any {@code +yaml} subtype (RFC 9512)} */
    boolean isYaml() {
        return subtype.equals("yaml") || subtype.equals("x-yaml") || subtype.endsWith("+yaml");
    }

    /** {@return whether the body is {@code multipart/form-data} (RFC 7578)} */
    boolean isFormData() {
        return type.equals("multipart") && subtype.equals("form-data");
    }

    /**
     * {@return whether the body is a {@code message/*} entity ({@code message/rfc822}, {@code message/global}, RFC
     * 6532; {@code message/partial}, ...): Python's {@code email} parses every {@code message/*} entity as a message}
     */
    boolean isMessage() {
        return type.equals("message");
    }

    /** {@return whether the body is {@code application/mbox} (RFC 4155)} */
    boolean isMbox() {
        return type.equals("application") && subtype.equals("mbox");
    }

    /** {@return whether the body is {@code multipart/*}} */
    boolean isMultipart() {
        return type.equals("multipart");
    }

    private static int indexOutsideQuotes(String s, int from) {
        boolean quoted = false;
        for (int i = from; i < s.length(); i++) {
            char c = s.charAt(i);
            if (quoted && c == '\\') {
                i++;
            } else if (c == '"') {
                quoted = !quoted;
            } else if (c == ';' && !quoted) {
                return i;
            }
        }
        return s.length();
    }

    private static String unquote(String v) {
        if (v.length() < 2 || v.charAt(0) != '"' || v.charAt(v.length() - 1) != '"') {
            return v;
        }
        StringBuilder b = new StringBuilder(v.length());
        for (int i = 1; i < v.length() - 1; i++) {
            char c = v.charAt(i);
            if (c == '\\' && i + 1 < v.length() - 1) {
                c = v.charAt(++i);
            }
            b.append(c);
        }
        return b.toString();
    }
}
