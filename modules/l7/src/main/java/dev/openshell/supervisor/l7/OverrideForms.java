package dev.openshell.supervisor.l7;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.internal.HeaderParameters;
import dev.openshell.middleware.spi.internal.Syntax;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;

/**
 * Finds what a request asks the upstream's web framework to apply instead of its own method
 * ({@code docs/policy-reference.md}, "Method override"): the header fields {@code X-HTTP-Method-Override},
 * {@code X-HTTP-Method} and {@code X-Method-Override} (also written with {@code _}, as CGI-style servers read them),
 * and a {@code _method} parameter in the query (its pairs also split at {@code ;}, as Rack splits them), or in the
 * body of a {@code POST} that frameworks parse into parameters: {@code application/x-www-form-urlencoded} (also a
 * body without {@code Content-Type}, which Rack reads as a form), any {@code multipart/*} type (read as
 * {@code multipart/form-data}, header fields unfolded) and any JSON type (the subtype {@code json} or
 * {@code x-json} of any type, or a subtype with the suffix {@code +json}; parameters and case ignored). The media type
 * ends at the first {@code ;}, {@code ,} or white space, as Rack ({@code ;} or {@code ,}) and PHP (any of the three)
 * cut it. A body whose {@code Content-Type} holds {@code /json} or {@code +json} anywhere is also read as JSON
 * ({@link #laravelJson}); a multipart body is read under every boundary its {@code Content-Type} gives some parser
 * ({@link Multipart#boundaries}).
 *
 * <p>Parameter names are compared as the most liberal framework reads them: case-insensitively, after PHP's
 * normalisation (leading spaces dropped, {@code .} and space read as {@code _}, a {@code [} starting an array), so
 * {@code _METHOD}, {@code .method} and {@code _method[]} all count; a query, form or multipart name is also cut at a
 * NUL, as PHP cuts it ({@link QueryReadings#phpName}). A body that cannot be read for such a name (a
 * coding other than {@code identity}, a multipart body without its boundary or closing delimiter or with more than one
 * boundary reading and no {@code _method} part under any, a part name that is
 * percent- or RFC 2047-encoded or declared in a charset that cannot be decoded, a form body declared in a charset
 * other than UTF-8, US-ASCII or ISO-8859-1 (its {@code charset*} prefix in a charset that cannot be decoded too), a JSON
 * body declared in a charset other than UTF-8 or US-ASCII, not UTF-8, holding a
 * NUL byte (UTF-16 or UTF-32 without a byte order mark, RFC 4627 section 3), not parsing strictly while it could name
 * the parameter, or with a member name that reads as {@code _method} once its control characters are dropped) is
 * {@link Unreadable}: what the upstream would find in it is not known.
 */
final class OverrideForms {
    /** The most body bytes read for a {@code _method} parameter (the platform's body maximum, 4 MiB). */
    static final int MAX_BODY_BYTES = 4 * 1024 * 1024;
    private static final List<String> HEADERS = List.of("x-http-method-override", "x-http-method",
            "x-method-override");
    private static final String PARAMETER = "_method";

    /** A body that may carry a {@code _method} parameter and cannot be read for one. */
    static final class Unreadable extends Exception {
        private static final long serialVersionUID = 1L;

        Unreadable(String reason) {
            super(reason, null, false, false);
        }
    }

    /**
     * One override form found.
     *
     * @param where where it was found, without its value ({@code header X-HTTP-Method-Override}, {@code query
     *     _method}, {@code form _method}, {@code multipart _method}, {@code JSON _method})
     * @param value the method it names, as sent (compared after trimming, case-insensitively)
     */
    record Form(String where, String value) {
    }

    private OverrideForms() {
    }

    /**
     * {@return whether the body of a request with this head may carry a {@code _method} parameter}: a {@code POST}
     * with a body, declared a form, multipart form or JSON, or not declared at all.
     *
     * @param head the request (its body need not be present)
     */
    static boolean bodyMayCarry(L7Request head) {
        if (!head.method().equalsIgnoreCase("POST") || !hasBody(head)) {
            return false;
        }
        return head.header("Content-Type").map(t -> parsedType(t) || laravelJson(t)).orElse(true);
    }

    private static boolean hasBody(L7Request head) {
        if (head.header("Transfer-Encoding").isPresent()) {
            return true;
        }
        return head.header("Content-Length").map(v -> !v.trim().equals("0")).orElse(false);
    }

    private static boolean parsedType(String contentType) {
        String t = mediaType(contentType);
        return t.equals("application/x-www-form-urlencoded") || t.startsWith("multipart/") || json(t);
    }

    /** {@return whether a media type (lower case) is one JSON readers accept: any {@code json} subtype or suffix} */
    static boolean json(String mediaType) {
        return mediaType.endsWith("/json") || mediaType.endsWith("+json") || mediaType.endsWith("/x-json");
    }

    /**
     * {@return whether a {@code Content-Type} value names JSON as Laravel's {@code isJson()} reads it}: it holds
     * {@code /json} or {@code +json} anywhere, in any case ({@code text/plain, application/json}, {@code
     * application/jsonx}, {@code text/plain; x=/json})
     */
    static boolean laravelJson(String contentType) {
        String t = contentType.toLowerCase(Locale.ROOT);
        return t.contains("/json") || t.contains("+json");
    }

    /** {@return the media type, lower case: up to the first {@code ;}, {@code ,} or white space (Rack, PHP)} */
    private static String mediaType(String contentType) {
        String t = contentType.strip();
        int end = 0;
        while (end < t.length() && ";, \t".indexOf(t.charAt(end)) < 0) {
            end++;
        }
        return t.substring(0, end).toLowerCase(Locale.ROOT);
    }

    /**
     * {@return every override form of the request, in the order header fields, query, body}
     *
     * @param request the request; its body is read when present and {@link #bodyMayCarry} holds
     * @param query the readings of the query, its pairs split at {@code &} and also at {@code ;} (as Rack splits them)
     * @throws Unreadable if the body may carry a {@code _method} parameter and cannot be read for one
     */
    static List<Form> find(L7Request request, QueryReadings query) throws Unreadable {
        List<Form> found = new ArrayList<>();
        for (L7Request.Header h : request.headers()) {
            String name = h.name().replace('_', '-').toLowerCase(Locale.ROOT);
            if (HEADERS.contains(name)) {
                found.add(new Form("header " + h.name(), h.value()));
            }
        }
        query.values(OverrideForms::isFormParameter).forEach(v -> found.add(new Form("query _method", v)));
        if (request.body().isPresent() && bodyMayCarry(request)) {
            body(request, request.body().get(), found);
        }
        return found;
    }

    /** {@return whether a parameter name reads as {@code _method} to some framework} */
    static boolean isParameter(String name) {
        int i = 0;
        while (i < name.length() && name.charAt(i) == ' ') {
            i++;
        }
        int bracket = name.indexOf('[', i);
        String base = name.substring(i, bracket < 0 ? name.length() : bracket).replace(' ', '_').replace('.', '_');
        return base.equalsIgnoreCase(PARAMETER);
    }

    /**
     * {@return whether a query, form or multipart parameter name reads as {@code _method} to some framework}: as
     * {@link #isParameter} reads it, after PHP's reading of such names ({@link QueryReadings#phpName}), which also
     * cuts a name at a NUL ({@code _method%00x})
     */
    static boolean isFormParameter(String name) {
        return QueryReadings.phpName(name).equalsIgnoreCase(PARAMETER);
    }

    /** Reads the body for the forms its type gives: a form or multipart reading takes a copy, JSON reads in place. */
    private static void body(L7Request request, Body body, List<Form> found) throws Unreadable {
        Optional<String> coding = request.header("Content-Encoding");
        if (coding.isPresent() && !coding.get().trim().equalsIgnoreCase("identity")) {
            throw new Unreadable("the body has a content coding, so its parameters cannot be read");
        }
        Optional<String> type = request.header("Content-Type");
        String media = type.map(OverrideForms::mediaType).orElse("application/x-www-form-urlencoded");
        boolean asJson = json(media) || type.map(OverrideForms::laravelJson).orElse(false);
        if (media.startsWith("multipart/")) {
            Multipart.read(type.get(), body.toByteArray(), found);
        } else if (media.equals("application/x-www-form-urlencoded")) {
            if (type.isPresent()) {
                charset(type.get(), true, "form");
            }
            form(body.toByteArray(), found);
        }
        if (asJson) { // also under a form or multipart type that names JSON to Laravel: every reading is made
            charset(type.get(), false, "JSON");
            json(body, found);
        }
    }

    /** {@return whether every byte is ASCII (so the bytes are well-formed UTF-8)} */
    static boolean ascii(byte[] b) {
        return (TextBits.of(b, b.length) & TextBits.NOT_ASCII) == 0;
    }

    /** {@return whether any byte is 0} */
    static boolean hasNul(byte[] b) {
        return (TextBits.of(b, b.length) & TextBits.NUL) != 0;
    }

    /**
     * {@return whether UTF-8 text holds {@code method} in any case of its ASCII letters, or a backslash before
     * {@code u} or {@code U}} ({@link TextBits#METHOD})
     */
    static boolean mayNameMethod(byte[] b) {
        return (TextBits.of(b, b.length) & TextBits.METHOD) != 0;
    }

    /** {@code application/x-www-form-urlencoded}: names and values split at {@code &} and {@code ;}. */
    private static void form(byte[] body, List<Form> found) {
        int start = 0;
        for (int i = 0; i <= body.length; i++) {
            if (i == body.length || body[i] == '&' || body[i] == ';') {
                int eq = start;
                while (eq < i && body[eq] != '=') {
                    eq++;
                }
                if (isFormParameter(decode(body, start, eq, true))) {
                    found.add(new Form("form _method", eq < i ? decode(body, eq + 1, i, true) : ""));
                }
                start = i + 1;
            }
        }
    }

    /**
     * Percent-decoding as form parsers do it, leniently: a malformed escape stays as is.
     *
     * @param plusIsSpace whether {@code +} is a space (forms) or itself (RFC 8187 values)
     */
    static String decode(byte[] b, int from, int to, boolean plusIsSpace) {
        byte[] out = new byte[to - from];
        int n = 0;
        for (int i = from; i < to; i++) {
            byte c = b[i];
            if (c == '+' && plusIsSpace) {
                out[n++] = ' ';
            } else if (c == '%' && i + 2 < to && hex(b[i + 1]) >= 0 && hex(b[i + 2]) >= 0) {
                out[n++] = (byte) (hex(b[i + 1]) * 16 + hex(b[i + 2]));
                i += 2;
            } else {
                out[n++] = c;
            }
        }
        return new String(out, 0, n, StandardCharsets.ISO_8859_1);
    }

    private static int hex(byte c) {
        return Syntax.hexDigit((char) (c & 0xFF));
    }

    /**
     * JSON: a top-level member named {@code _method}. A body whose text holds neither {@code method} (in any case)
     * nor a {@code \\u} escape cannot name it to any reader and is not parsed; any other must parse strictly, since a
     * lenient reader could still find the member in it (duplicate keys, comments, too deep for this one). The bytes
     * are read in place ({@link TextBits#of(Body)}); only a body that may name the member is decoded.
     */
    private static void json(Body body, List<Form> found) throws Unreadable {
        int bits = TextBits.of(body); // one pass for the three tests, in place
        Optional<String> text = Optional.empty();
        if ((bits & TextBits.NOT_ASCII) != 0) {
            text = Bodies.utf8(body.asReadOnlyBuffer());
            if (text.isEmpty()) {
                throw new Unreadable("the JSON body is not UTF-8");
            }
        }
        if ((bits & TextBits.NUL) != 0) { // UTF-16 or UTF-32 without a byte order mark (RFC 4627 section 3), or NUL
            throw new Unreadable("the JSON body holds a NUL byte, so it may be UTF-16 or UTF-32");
        }
        if ((bits & TextBits.METHOD) == 0) {
            return; // no JSON reader finds a member named _method in it: not parsed at all
        }
        JsonValue v;
        try {
            v = Bodies.json(text.isPresent() ? text.get() : StandardCharsets.US_ASCII.decode(body.asReadOnlyBuffer())
                    .toString());
        } catch (Bodies.Malformed e) {
            throw new Unreadable("the JSON body cannot be read strictly (" + e.getMessage() + ") and may name"
                    + " a _method member");
        }
        if (v instanceof JsonObject o) {
            for (Map.Entry<String, JsonValue> m : o.entrySet()) {
                if (!isParameter(m.getKey()) && isParameter(withoutControls(m.getKey()))) {
                    throw new Unreadable("a JSON member name reads as _method without its control characters");
                }
                if (isParameter(m.getKey())) {
                    found.add(new Form("JSON _method", m.getValue() instanceof JsonString s ? s.getString()
                            : m.getValue().toString()));
                }
            }
        }
    }

    /**
     * A body declared in a charset this check cannot read byte for byte as it reads UTF-8 may be read in it upstream
     * (UTF-16 spells {@code _method} with NUL bytes between its letters): only UTF-8 and US-ASCII pass, and for a form
     * also ISO-8859-1, whose ASCII bytes (all a {@code _method} name and its escapes are made of) are the same
     * characters. A JSON reader decodes the whole text, so ISO-8859-1 is not read the same way there.
     *
     * @param contentType the {@code Content-Type} field value
     * @param latin1 whether ISO-8859-1 passes (forms)
     * @param what the body's kind, for the reason
     */
    private static void charset(String contentType, boolean latin1, String what) throws Unreadable {
        // the parameters after the media type, split at ; or , (Rack splits them at either); a loop, not
        // String.split with a character class, which compiles a pattern on every call
        List<String> declared = new ArrayList<>();
        int end = nextSeparator(contentType, 0);
        while (end < contentType.length()) {
            int start = end + 1;
            end = nextSeparator(contentType, start);
            String param = contentType.substring(start, end);
            int eq = param.indexOf('=');
            if (eq > 0 && param.substring(0, eq).trim().equalsIgnoreCase("charset")) {
                declared.add(param.substring(eq + 1).trim().replace("\"", ""));
            }
        }
        // and every reading of its RFC 2231 forms (charset*=utf-8''utf-16le, charset*0=...), as Python's email reads
        HeaderParameters.Readings rfc2231 = HeaderParameters.readings(contentType, true);
        if (rfc2231.unreadable().contains("charset")) {
            throw new Unreadable("the " + what + " body's charset parameter is in a charset that cannot be decoded");
        }
        declared.addAll(rfc2231.of("charset"));
        for (String d : declared) {
            String cs = d.strip().toLowerCase(Locale.ROOT);
            boolean readable = cs.equals("utf-8") || cs.equals("utf8") || cs.equals("us-ascii")
                    || latin1 && (cs.equals("iso-8859-1") || cs.equals("latin1"));
            if (!readable) {
                throw new Unreadable("the " + what + " body declares a charset other than UTF-8"
                        + (latin1 ? ", US-ASCII or ISO-8859-1" : " or US-ASCII"));
            }
        }
    }

    /** {@return the index of the first {@code ;} or {@code ,} at or after {@code from}, else the length} */
    private static int nextSeparator(String s, int from) {
        int i = from;
        while (i < s.length() && s.charAt(i) != ';' && s.charAt(i) != ',') {
            i++;
        }
        return i;
    }

    private static String withoutControls(String name) {
        StringBuilder b = new StringBuilder(name.length());
        name.chars().filter(c -> c >= 0x20 && c != 0x7f && !(c >= 0x80 && c < 0xa0))
                .forEach(c -> b.append((char) c));
        return b.toString();
    }
}
