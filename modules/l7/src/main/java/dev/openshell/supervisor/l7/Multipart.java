package dev.openshell.supervisor.l7;

import dev.openshell.middleware.spi.internal.HeaderParameters;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the part names of a {@code multipart/form-data} body, or of any other {@code multipart} type read the same
 * way (RFC 7578, RFC 2046 section 5.1.1), for {@link OverrideForms}: every part is delimited by {@code --boundary} at
 * the start of a line, has header fields up to an empty line, and the body ends with {@code --boundary--}. A part's
 * names are every {@code name} and {@code name*} parameter of every {@code Content-Disposition} field, read after
 * unfolding continuation lines (obs-fold), the disposition type optional (PHP reads a {@code name=} pair in the first
 * place too): every reading {@link HeaderParameters#readings} gives of {@code name} (RFC 2231 / RFC 8187 values in
 * any charset, continuations {@code name*0=}, {@code name*1*=}, {@code name*00=} or a lone {@code name*0} joined,
 * RFC 2047 words decoded, quoted-pairs unescaped, as Werkzeug and Python's {@code email} read them), once as RFC 7578
 * reads them and once as PHP's {@code rfc1867.c} does
 * (single quotes quote too, an unquoted value ends at white space, the last {@code name} wins): the part counts as
 * {@code _method} if any of them reads so. A plain name with an RFC 2047 encoded word, or one whose percent-decoding
 * reads as {@code _method}, is unreadable; so is a name (or {@code boundary*}) declared in a charset that cannot be
 * decoded ({@link HeaderParameters.Readings#unreadable}: UTF-7, {@code unicode_escape}, an unknown name). Anything else (no delimiter, a part without the empty line, no closing delimiter) is
 * {@link OverrideForms.Unreadable}: a lenient parser upstream might still find a part in it.
 */
final class Multipart {
    private static final byte[] CRLF = {'\r', '\n'};
    private static final byte[] HEAD_END = {'\r', '\n', '\r', '\n'};

    private Multipart() {
    }

    /** PHP's reading: the first {@code boundary} substring, any case ({@code rfc1867.c}). */
    private static final Pattern PHP = Pattern.compile("(?i)boundary");
    /** Rack's reading: the value after the last {@code boundary=} anywhere in the field ({@code Rack::Multipart}). */
    private static final Pattern RACK = Pattern.compile("(?is)\\Amultipart/.*boundary=\"?([^\";,]+)\"?.*");

    /**
     * Adds every part named {@code _method} to {@code found}, read under every boundary some parser takes from this
     * {@code Content-Type} ({@link #boundaries}): when there is more than one, a part found under any of them counts,
     * and a body in which none finds one is {@link OverrideForms.Unreadable} (which parts the upstream sees is not
     * known).
     *
     * @param contentType the {@code Content-Type} field value, a {@code multipart} type
     * @param body the body
     * @param found where the forms go
     * @throws OverrideForms.Unreadable if the body is not a complete multipart body under its {@code boundary}
     *     parameter, or the field admits more than one boundary and no reading finds a {@code _method} part, or its
     *     {@code boundary*} is declared in a charset that cannot be decoded ({@link HeaderParameters.Readings#unreadable})
     */
    static void read(String contentType, byte[] body, List<OverrideForms.Form> found)
            throws OverrideForms.Unreadable {
        if (HeaderParameters.readings(contentType, true).unreadable().contains("boundary")) {
            throw unreadable("its boundary parameter is in a charset that cannot be decoded");
        }
        List<String> readings = boundaries(contentType);
        if (readings.isEmpty()) {
            throw new OverrideForms.Unreadable("the multipart body has no boundary parameter");
        }
        if (readings.size() == 1) {
            parts(body, readings.get(0), found);
            return;
        }
        List<OverrideForms.Form> any = new ArrayList<>();
        for (String b : readings) {
            try {
                parts(body, b, any);
            } catch (OverrideForms.Unreadable e) {
                // this reading finds no complete body; the others are still read
            }
        }
        if (any.isEmpty()) {
            throw unreadable("its Content-Type admits more than one boundary");
        }
        found.addAll(any);
    }

    /**
     * {@return every boundary a parser takes from a multipart {@code Content-Type}, distinct, the {@code boundary}
     * parameter ({@link #boundary}) first; empty when there is no such parameter}: also PHP's (the value after the
     * first {@code boundary} substring, any case, up to {@code ,} or {@code ;}), Rack's (after the last {@code
     * boundary=} substring, {@link #RACK}) and Commons FileUpload's (the last {@code boundary} parameter, parameters
     * split at {@code ;} and {@code ,}; every such parameter is taken, not only the last), and every reading {@link
     * HeaderParameters#readings} gives of {@code boundary} (its RFC 2231 {@code boundary*} form as FileUpload reads
     * it, continuations {@code boundary*0=} joined as Python's {@code email} reads them). A value is unquoted and
     * stripped; an empty one is left out.
     *
     * @param contentType the {@code Content-Type} field value
     */
    static List<String> boundaries(String contentType) {
        Optional<String> first = boundary(contentType);
        if (first.isEmpty()) {
            return List.of();
        }
        LinkedHashSet<String> out = new LinkedHashSet<>();
        out.add(first.get());
        Matcher php = PHP.matcher(contentType);
        int eq = php.find() ? contentType.indexOf('=', php.start()) : -1;
        if (eq >= 0) {
            String v = contentType.substring(eq + 1);
            int end = v.startsWith("\"") ? v.indexOf('"', 1) : -1;
            v = end > 0 ? v.substring(1, end) : v.split("[,;]", 2)[0];
            out.add(v.strip());
        }
        Matcher rack = RACK.matcher(contentType);
        if (rack.matches()) {
            out.add(rack.group(1).strip());
        }
        for (String param : contentType.split("[;,]")) {
            int e = param.indexOf('=');
            String k = e > 0 ? param.substring(0, e).trim().toLowerCase(Locale.ROOT) : "";
            if (k.equals("boundary")) {
                out.add(unquoted(param.substring(e + 1).trim()).strip());
            }
        }
        for (String v : HeaderParameters.readings(contentType, true).of("boundary")) {
            out.add(v.strip()); // RFC 2231 boundary*0=..., as Python's email reads it
        }
        out.remove("");
        return List.copyOf(out);
    }

    private static String unquoted(String v) {
        return v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"") ? v.substring(1, v.length() - 1) : v;
    }

    /** {@return the {@code boundary} parameter of a multipart media type, unquoted} @param contentType the field */
    static Optional<String> boundary(String contentType) {
        for (String param : contentType.split(";")) {
            int eq = param.indexOf('=');
            if (eq > 0 && param.substring(0, eq).trim().equalsIgnoreCase("boundary")) {
                String v = param.substring(eq + 1).trim();
                if (v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"")) {
                    v = v.substring(1, v.length() - 1);
                }
                return v.isEmpty() || v.length() > 70 ? Optional.empty() : Optional.of(v);
            }
        }
        return Optional.empty();
    }

    /**
     * Adds every part named {@code _method} (as {@link OverrideForms#isParameter} reads names) to {@code found}.
     *
     * @param body the body
     * @param boundary the boundary
     * @param found where the forms go
     * @throws OverrideForms.Unreadable if the body is not a complete multipart body
     */
    static void parts(byte[] body, String boundary, List<OverrideForms.Form> found) throws OverrideForms.Unreadable {
        byte[] delimiter = ("--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
        byte[] next = ("\r\n--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
        int at = startsWith(body, 0, delimiter) ? 0 : indexOf(body, next, 0);
        if (at < 0) {
            throw unreadable("it has no opening delimiter");
        }
        int pos = at == 0 ? delimiter.length : at + next.length;
        while (true) {
            if (startsWith(body, pos, new byte[] {'-', '-'})) {
                return; // the closing delimiter; the epilogue is ignored, as RFC 2046 says
            }
            while (pos < body.length && (body[pos] == ' ' || body[pos] == '\t')) {
                pos++; // transport padding
            }
            if (!startsWith(body, pos, CRLF)) {
                throw unreadable("a delimiter is not followed by a line break");
            }
            int headStart = pos + 2;
            int headEnd = indexOf(body, HEAD_END, headStart - 2);
            if (headEnd < 0) {
                throw unreadable("a part has no end of its header fields");
            }
            int contentStart = headEnd + HEAD_END.length;
            int end = indexOf(body, next, contentStart - 2);
            if (end < 0) {
                throw unreadable("it has no closing delimiter");
            }
            String head = new String(body, headStart, Math.max(0, headEnd - headStart), StandardCharsets.ISO_8859_1);
            if (names(head).stream().anyMatch(OverrideForms::isFormParameter)) {
                String value = contentStart <= end ? new String(body, contentStart, end - contentStart,
                        StandardCharsets.ISO_8859_1) : "";
                found.add(new OverrideForms.Form("multipart _method", value));
            }
            pos = end + next.length;
        }
    }

    /**
     * {@return every name a part's header fields may give it: each {@code name} and decoded {@code name*} parameter
     * of each {@code Content-Disposition} field, read both as RFC 7578 and as PHP reads them}
     *
     * @throws OverrideForms.Unreadable if a plain name is percent- or RFC 2047-encoded, or a name is declared in a
     *     charset that cannot be decoded ({@link HeaderParameters.Readings#unreadable}: UTF-7, an unknown name; even
     *     when its UTF-8 reading or another name reads as {@code _method}: the precise answer is that it cannot be
     *     read)
     */
    static List<String> names(String head) throws OverrideForms.Unreadable {
        String unfolded = head.replaceAll("\r\n[ \t]+", " "); // obs-fold (RFC 9112 section 5.2)
        List<String> names = new ArrayList<>();
        for (String line : unfolded.split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon < 0 || !line.substring(0, colon).trim().equalsIgnoreCase("content-disposition")) {
                continue;
            }
            String value = ";" + line.substring(colon + 1); // PHP reads a name= pair in the first place too
            HeaderParameters.Readings read = HeaderParameters.readings(value, false);
            names.addAll(read.of("name"));
            if (read.unreadable().contains("name")) {
                throw unreadable("a part name is in a charset that cannot be decoded");
            }
            for (boolean php : new boolean[] {false, true}) {
                for (String[] p : parameters(value, php)) {
                    if (p[0].equals("name")) {
                        if (encoded(p[1]) && names.stream().noneMatch(OverrideForms::isFormParameter)) {
                            throw unreadable("a part name is percent- or RFC 2047-encoded");
                        }
                        names.add(p[1]);
                    } else if (p[0].equals("name*")) {
                        HeaderParameters.Readings ext = HeaderParameters.extendedReadings(p[1]);
                        names.addAll(ext.of("")); // PHP's cut at white space too
                        if (ext.anyUnreadable()) {
                            throw unreadable("a part name is in a charset that cannot be decoded");
                        }
                    }
                }
            }
        }
        return names;
    }

    /**
     * {@return the parameters of a header value, each {key (lower case), value}: a token or a quoted string (with
     * {@code \} escapes)}
     *
     * @param php whether to read as PHP's {@code php_ap_getword_conf}: {@code '} quotes too, and an unquoted value
     *     ends at white space
     */
    private static List<String[]> parameters(String value, boolean php) {
        List<String[]> out = new ArrayList<>();
        int i = 0;
        int n = value.length();
        while (i < n) {
            int semi = value.indexOf(';', i);
            if (semi < 0) {
                return out;
            }
            i = semi + 1;
            while (i < n && (value.charAt(i) == ' ' || value.charAt(i) == '\t')) {
                i++;
            }
            int eq = value.indexOf('=', i);
            if (eq < 0) {
                return out;
            }
            int nextSemi = value.indexOf(';', i);
            if (nextSemi >= 0 && nextSemi < eq) {
                i = nextSemi; // a parameter without '=' (form-data; x; name=...): the next one starts there
                continue;
            }
            String k = value.substring(i, eq).trim().toLowerCase(Locale.ROOT);
            i = eq + 1;
            while (php && i < n && Character.isWhitespace(value.charAt(i))) {
                i++;
            }
            StringBuilder v = new StringBuilder();
            char quote = i < n ? value.charAt(i) : 0;
            if (quote == '"' || php && quote == '\'') {
                for (i++; i < n && value.charAt(i) != quote; i++) {
                    if (value.charAt(i) == '\\' && i + 1 < n) {
                        i++;
                    }
                    v.append(value.charAt(i));
                }
                i++;
            } else {
                while (i < n && value.charAt(i) != ';' && !(php && Character.isWhitespace(value.charAt(i)))) {
                    v.append(value.charAt(i++));
                }
            }
            out.add(new String[] {k, k.endsWith("*") ? v.toString() : v.toString().trim()});
        }
        return out;
    }

    /**
     * {@return whether a plain part name, decoded as some parsers do (percent escapes, RFC 2047 encoded words), may
     * read as {@code _method}}: a name with an encoded word, or whose percent-decoding reads as {@code _method}
     */
    private static boolean encoded(String name) {
        if (name.contains("=?") && name.contains("?=")) {
            return true;
        }
        byte[] b = name.getBytes(StandardCharsets.ISO_8859_1);
        return name.indexOf('%') >= 0 && OverrideForms.isParameter(OverrideForms.decode(b, 0, b.length, false));
    }

    private static OverrideForms.Unreadable unreadable(String why) {
        return new OverrideForms.Unreadable("the multipart body cannot be read: " + why);
    }

    private static boolean startsWith(byte[] b, int at, byte[] prefix) {
        if (at < 0 || at + prefix.length > b.length) {
            return false;
        }
        for (int i = 0; i < prefix.length; i++) {
            if (b[at + i] != prefix[i]) {
                return false;
            }
        }
        return true;
    }

    private static int indexOf(byte[] b, byte[] needle, int from) {
        for (int i = Math.max(0, from); i + needle.length <= b.length; i++) {
            if (startsWith(b, i, needle)) {
                return i;
            }
        }
        return -1;
    }
}
