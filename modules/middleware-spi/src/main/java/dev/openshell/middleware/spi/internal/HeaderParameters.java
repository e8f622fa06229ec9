package dev.openshell.middleware.spi.internal;

import static org.apiguardian.api.API.Status.INTERNAL;

import java.io.ByteArrayOutputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apiguardian.api.API;

/**
 * The parameters of a header field value ({@code attachment; filename*=UTF-8''%6B...}, {@code form-data;
 * name*0="_me"; name*1="thod"}) and every text a lenient reader may take from each: the one home of this reading, used
 * by the response header scrub (the proxy's {@code HeaderReadings}), the regex plugin's multipart part headers and
 * the L7 {@code _method} check. Readers disagree (Python's {@code email} and {@code urllib}, Werkzeug, Node's busboy,
 * Go's {@code mime}, Jakarta Mail), so every plausible reading is kept, none dropped:
 * <ul>
 *   <li>a plain parameter ({@code name=value}, {@code name="value"}): its text as written between the quotes, with
 *       its quoted-pairs unescaped (RFC 9110 section 5.6.4);</li>
 *   <li>an extended parameter ({@code name*=charset'language'%XX}, RFC 2231 section 4, RFC 8187 section 3.2): the
 *       percent-decoded octets decoded in the declared charset (any charset this runtime decodes, {@link
 *       HeaderCharsets#decoders}: UTF-16 with its byte order mark or without it both big- and little-endian,
 *       UTF-16LE/BE, UTF-32, IBM037, Shift_JIS, ...) and in UTF-8; without the {@code '} prefix the whole value
 *       percent-decoded as UTF-8, and the value as written;</li>
 *   <li>continuations ({@code name*0=}, {@code name*1*=}, {@code name*00=}, a lone {@code name*0}, section 3 and
 *       4.1): the parts present joined in number order (numbers read as integers, so {@code *00} is {@code *0}; gaps
 *       skipped, as Python's {@code email} joins them), extended parts percent-decoded, plain parts as their
 *       octets, the whole decoded in the charset of the first part's prefix and in UTF-8; a number given twice is
 *       read with the first and with the last of its parts; and all parameters of the name (plain ones too) joined
 *       in the order written, as Werkzeug joins them, percent-decoded and as written; and all of them in number order
 *       with an unnumbered one as section 0, as Python's {@code email} default policy joins them;</li>
 *   <li>every reading above holding {@code =?} once more with its RFC 2047 encoded words decoded ({@link
 *       EncodedWords#decode}).</li>
 * </ul>
 *
 * <p><b>Unreadable.</b> A value, continuation join or encoded word declared in a charset this runtime cannot decode
 * (an unknown name, UTF-7, a Python codec that is no charset such as {@code unicode_escape}: {@link HeaderCharsets}),
 * or whose octets do not decode cleanly in its charset ({@link HeaderCharsets#decode}: ISO-2022-JP-2's
 * {@code ESC . A}, which Python reads and the JDK rejects; UTF-8 and US-ASCII excepted), is not read as UTF-8 in its
 * stead: its name is in {@link Readings#unreadable}, and every user acts on it (the
 * response header scrub drops the field, the regex plugin fails the part as undecodable, L7 answers
 * {@code method_override_unreadable}). Its UTF-8 reading is still among the readings, for a scan of what can be
 * read.
 *
 * <p>Bounds: a section number has any number of digits (Python's {@code email} and Werkzeug read any, as an
 * integer), ordered as an integer without being parsed. No reading is dropped (a cap would let decoys hide the one
 * that matters); instead every reading is at most as long as the text it is read from (percent, base64, Q and
 * quoted-pair decoding only shrink text, and a charset decodes at least one octet per character), a plain parameter
 * gives at most 2 readings, an extended one 3, the continuations of a name 9, each at most doubled by its RFC 2047
 * reading, so the readings of a value total at most 20 times its length and cost time linear in it (a value declared
 * {@code UTF-16} or {@code UTF-32} is also read little-endian, as Python reads it without a byte order mark: at most
 * 13 readings of a name, 26 times the length). Parameters are
 * split at {@code ;} (and, when asked, at {@code ,}, for fields that list several values) outside quoted-strings; a
 * parameter name is lower-cased.
 * Static methods only; never throws on any input.
 */
@API(status = INTERNAL, since = "0.2")
public final class HeaderParameters {
    private HeaderParameters() {
    }

    /**
     * One parameter as written.
     *
     * @param name the name without its {@code *N} and {@code *} suffixes, lower case
     * @param section the continuation number's rank among the distinct numbers of the field value (0 for the
     *     lowest; numbers of any length, ordered as integers), or -1 for none
     * @param extended whether the name ends in {@code *} (RFC 2231 extended value)
     * @param start where the value starts in the field value (its opening quote, if quoted)
     * @param end where the value ends (after its closing quote, if quoted)
     * @param quoted whether the value is a quoted-string
     * @param number the continuation number as written, leading zeros dropped ({@code ""} for none)
     */
    @API(status = INTERNAL, since = "0.2")
    public record Parameter(String name, int section, boolean extended, int start, int end, boolean quoted,
                            String number) {
        /** {@return the value's content: between the quotes when quoted, quoted-pairs kept} @param v the value */
        public String content(String v) {
            return quoted ? v.substring(start + 1, end - 1) : v.substring(start, end);
        }

        /** {@return the content with quoted-pairs unescaped when quoted} @param v the field value */
        public String text(String v) {
            return quoted ? unescape(content(v)) : content(v);
        }
    }

    /**
     * {@return the parameters of a field value, in the order written} A parameter is {@code name=value} between
     * separators outside quoted-strings: text before the first separator without {@code =} (a disposition or media
     * type) is none; the value a quoted-string (to its closing quote, quoted-pairs skipped, or the end) or a token
     * (trailing white space removed).
     *
     * @param value the field value, one character per octet (ISO-8859-1)
     * @param commas whether {@code ,} separates parameters too
     */
    public static List<Parameter> parse(String value, boolean commas) {
        List<Parameter> out = new ArrayList<>();
        int i = 0;
        int n = value.length();
        while (i < n) {
            int eq = i;
            while (eq < n && value.charAt(eq) != '=' && value.charAt(eq) != ';'
                    && !(commas && value.charAt(eq) == ',')) {
                eq++;
            }
            if (eq >= n || value.charAt(eq) != '=') {
                i = eq + 1;
                continue;
            }
            int v = eq + 1;
            while (v < n && (value.charAt(v) == ' ' || value.charAt(v) == '\t')) {
                v++;
            }
            int end = valueEnd(value, v, commas);
            boolean quoted = v < n && value.charAt(v) == '"' && end - v >= 2 && value.charAt(end - 1) == '"';
            Parameter p = named(value.substring(i, eq).strip().toLowerCase(Locale.ROOT), v, end, quoted);
            if (p != null) {
                out.add(p);
            }
            i = end + 1;
        }
        return ranked(out);
    }

    /**
     * {@return the parameters with each section number replaced by its rank among the distinct numbers of the value}
     * Numbers of any length are read as Python's {@code email} and Werkzeug read them ({@code int()}: leading zeros
     * dropped, {@code *00001} is 1, {@code *10000} comes after {@code *9999}, and a number past any integer type is
     * still ordered), without parsing them: by digit count, then digit by digit. Equal numbers keep equal ranks, and
     * 0 always ranks 0 (counted whether written or not), so a name's {@code *0} and its unnumbered part tie at 0 and
     * every other number ranks above it, whatever the other names of the value are numbered.
     */
    private static List<Parameter> ranked(List<Parameter> params) {
        java.util.TreeMap<String, Integer> ranks = new java.util.TreeMap<>(
                Comparator.comparingInt(String::length).thenComparing(Comparator.naturalOrder()));
        for (Parameter p : params) {
            if (p.section() >= 0) {
                ranks.put(p.number(), 0);
            }
        }
        if (ranks.isEmpty()) {
            return params;
        }
        ranks.put("0", 0);
        int rank = 0;
        for (Map.Entry<String, Integer> e : ranks.entrySet()) {
            e.setValue(rank++);
        }
        List<Parameter> out = new ArrayList<>(params.size());
        for (Parameter p : params) {
            out.add(p.section() < 0 ? p : new Parameter(p.name(), ranks.get(p.number()), p.extended(), p.start(),
                    p.end(), p.quoted(), p.number()));
        }
        return out;
    }

    private static int valueEnd(String s, int v, boolean commas) {
        int n = s.length();
        if (v < n && s.charAt(v) == '"') {
            for (int k = v + 1; k < n; k++) {
                if (s.charAt(k) == '\\') {
                    k++;
                } else if (s.charAt(k) == '"') {
                    return k + 1;
                }
            }
            return n;
        }
        int k = v;
        while (k < n && s.charAt(k) != ';' && !(commas && s.charAt(k) == ',')) {
            k++;
        }
        while (k > v && (s.charAt(k - 1) == ' ' || s.charAt(k - 1) == '\t')) {
            k--;
        }
        return k;
    }

    private static Parameter named(String attribute, int start, int end, boolean quoted) {
        if (attribute.isEmpty()) {
            return null;
        }
        boolean extended = attribute.endsWith("*");
        String a = extended ? attribute.substring(0, attribute.length() - 1) : attribute;
        int star = a.lastIndexOf('*');
        if (star > 0 && star < a.length() - 1 && a.substring(star + 1).chars().allMatch(c -> c >= '0' && c <= '9')) {
            int first = star + 1;
            while (first < a.length() - 1 && a.charAt(first) == '0') {
                first++; // leading zeros dropped, as int() reads them; "0" stays
            }
            String number = a.substring(first);
            return new Parameter(a.substring(0, star), 0, extended, start, end, quoted, number);
        }
        return a.isEmpty() ? null : new Parameter(a, -1, extended, start, end, quoted, "");
    }

    /**
     * The readings of a field value's parameters.
     *
     * @param byName every reading of each parameter, by lower-case name (without {@code *} suffixes), in the order the
     *     names first appear (see the class comment)
     * @param unreadable the names (a subset of {@code byName}'s keys, in the same order) with a value, continuation
     *     join or RFC 2047 word declared in a charset this runtime cannot decode, or not decoding cleanly in it
     *     ({@link HeaderCharsets}, {@link HeaderCharsets#decode}): what a
     *     reader that knows that charset finds in it is not known, so a user must not treat its readings as complete
     */
    @API(status = INTERNAL, since = "0.2")
    public record Readings(Map<String, List<String>> byName, Set<String> unreadable) {
        /** {@return whether any parameter is unreadable} */
        public boolean anyUnreadable() {
            return !unreadable.isEmpty();
        }

        /** {@return every reading of one parameter, empty when it is absent} @param name lower case */
        public List<String> of(String name) {
            return byName.getOrDefault(name, List.of());
        }
    }

    /**
     * Readings being collected for one name, and whether one of them could not be made.
     */
    private static final class Sink {
        final Set<String> texts = new LinkedHashSet<>();
        boolean unreadable;

        void add(String s) {
            texts.add(s);
        }
    }

    /**
     * {@return every reading of each parameter of a field value, and which cannot be read} See the class comment
     * for the readings, {@link HeaderCharsets} for when a charset cannot be read.
     *
     * @param value the field value, one character per octet (ISO-8859-1)
     * @param commas whether {@code ,} separates parameters too
     */
    public static Readings readings(String value, boolean commas) {
        Map<String, List<Parameter>> byName = new LinkedHashMap<>();
        for (Parameter p : parse(value, commas)) {
            byName.computeIfAbsent(p.name(), k -> new ArrayList<>()).add(p);
        }
        Map<String, List<String>> out = new LinkedHashMap<>();
        Set<String> unreadable = new LinkedHashSet<>();
        for (Map.Entry<String, List<Parameter>> e : byName.entrySet()) {
            Sink r = new Sink();
            List<Parameter> sections = new ArrayList<>();
            for (Parameter p : e.getValue()) {
                if (p.section() >= 0) {
                    sections.add(p);
                } else if (p.extended()) {
                    extendedReadings(p.text(value), r);
                } else {
                    r.add(p.content(value));
                    r.add(p.text(value));
                }
            }
            if (!sections.isEmpty()) {
                joinedReadings(value, sections, r);
                appearanceReadings(value, e.getValue(), r);
                pythonReading(value, e.getValue(), r);
            }
            Set<String> all = new LinkedHashSet<>();
            for (String s : r.texts) {
                all.add(s);
                if (s.contains("=?")) {
                    EncodedWords.Decoded d = EncodedWords.decode(s);
                    all.add(d.text());
                    all.add(d.pythonText());
                    r.unreadable |= d.unreadable();
                }
            }
            out.put(e.getKey(), List.copyOf(all));
            if (r.unreadable) {
                unreadable.add(e.getKey());
            }
        }
        return new Readings(out, java.util.Collections.unmodifiableSet(unreadable));
    }

    /**
     * {@return every reading of one extended value {@code charset'language'%XX...}, unquoted (see the class comment),
     * under the name {@code ""}; unreadable when its charset cannot be read or rejects its octets ({@link HeaderCharsets})}
     *
     * @param v the value, one character per octet
     */
    public static Readings extendedReadings(String v) {
        Sink r = new Sink();
        extendedReadings(v, r);
        return new Readings(Map.of("", List.copyOf(r.texts)), r.unreadable ? Set.of("") : Set.of());
    }

    /** Adds the readings of one extended value {@code charset'language'%XX...}. */
    private static void extendedReadings(String v, Sink r) {
        int from = prefixEnd(v);
        if (from < 0) {
            r.add(v);
            r.add(new String(percentDecode(v, 0, v.length()), StandardCharsets.UTF_8));
            return;
        }
        decoded(v.substring(0, v.indexOf('\'')), percentDecode(v, from, v.length()), r);
    }

    /**
     * {@return where the octets of an RFC 2231 extended value start: after its {@code charset'language'} prefix (RFC
     * 2231 section 4, RFC 8187 section 3.2.1), or -1 when it has none (no two {@code '})} The charset is the text
     * before the first {@code '}.
     *
     * @param v the extended value, unquoted
     */
    public static int prefixEnd(String v) {
        int q1 = v.indexOf('\'');
        int q2 = q1 < 0 ? -1 : v.indexOf('\'', q1 + 1);
        return q2 < 0 ? -1 : q2 + 1;
    }

    /**
     * {@return whether the {@code charset'language'} prefix of an RFC 2231 extended value names a charset that cannot
     * be read ({@link HeaderCharsets#readable}); false without a prefix}
     *
     * @param v the extended value, unquoted
     */
    public static boolean prefixUnreadable(String v) {
        return prefixEnd(v) > 0 && !HeaderCharsets.readable(v.substring(0, v.indexOf('\'')));
    }

    /** Adds the continuations joined (first and last part of each repeated number), see the class comment. */
    private static void joinedReadings(String value, List<Parameter> sections, Sink r) {
        for (boolean last : new boolean[] {false, true}) {
            Map<Integer, Parameter> pick = new LinkedHashMap<>();
            for (Parameter p : sections) {
                if (last || !pick.containsKey(p.section())) {
                    pick.put(p.section(), p);
                }
            }
            List<Parameter> parts = new ArrayList<>(pick.values());
            parts.sort(Comparator.comparingInt(Parameter::section));
            String charset = null;
            ByteArrayOutputStream octets = new ByteArrayOutputStream(value.length());
            for (int k = 0; k < parts.size(); k++) {
                Parameter p = parts.get(k);
                String t = p.text(value);
                int from = 0;
                if (p.extended() && k == 0 && prefixEnd(t) >= 0) {
                    charset = t.substring(0, t.indexOf('\''));
                    from = prefixEnd(t);
                }
                octets.writeBytes(p.extended() ? percentDecode(t, from, t.length())
                        : t.getBytes(StandardCharsets.ISO_8859_1));
            }
            decoded(charset, octets.toByteArray(), r);
        }
    }

    /**
     * Adds the reading of Python's {@code email} with its default policy ({@code MimeParameters}): every parameter of
     * the name, an unnumbered one as section 0, in number order (written order among equal numbers), a plain part
     * whose number is not the next one skipped, an extended one kept; each extended part percent-decoded and decoded on
     * its own in the first part's charset (UTF-8 when it cannot be read, which marks the name unreadable), a plain part as written
     * ({@code filename*=UTF-8''%73%6B; filename*1="-rest"} reads
     * {@code sk-rest}: attacker pass 7, P9-5).
     */
    private static void pythonReading(String value, List<Parameter> all, Sink r) {
        List<Parameter> parts = new ArrayList<>(all);
        // an unnumbered part is section 0: it ties with a written *0 (rank 0) and comes before every other number
        parts.sort(Comparator.comparingInt(p -> Math.max(0, p.section())));
        Charset charset = null;
        StringBuilder out = new StringBuilder(value.length());
        int next = 0;
        for (int k = 0; k < parts.size(); k++) {
            Parameter p = parts.get(k);
            if (Math.max(0, p.section()) != next && !p.extended()) {
                continue;
            }
            next++;
            String t = p.text(value);
            if (!p.extended()) {
                out.append(t);
                continue;
            }
            int from = Math.max(0, prefixEnd(t));
            if (k == 0 && from > 0) {
                String name = t.substring(0, t.indexOf('\''));
                List<Charset> decoders = HeaderCharsets.decoders(name);
                charset = decoders.isEmpty() ? null : decoders.get(decoders.size() - 1); // Python's reading
                r.unreadable |= !HeaderCharsets.readable(name);
            }
            // each part decoded on its own in the first part's charset, as Python decodes them
            byte[] octets = percentDecode(t, from, t.length());
            String text = charset == null ? null : HeaderCharsets.decode(octets, charset);
            r.unreadable |= charset != null && text == null; // not clean (HeaderCharsets#decode)
            out.append(text != null ? text : new String(octets, charset == null ? StandardCharsets.UTF_8 : charset));
        }
        r.add(out.toString());
    }

    /**
     * Adds the parameters of one name joined in the order written, plain ones included, as Werkzeug joins them
     * ({@code name="x"; name*0="_me"} reads {@code x_me}, {@code name*1=a; name*0=b} reads {@code ab}): extended parts
     * percent-decoded (their {@code charset'language'} prefix dropped, the first charset given counting for all) and,
     * once more, as written (Werkzeug keeps the percent text of a charset it does not decode).
     */
    private static void appearanceReadings(String value, List<Parameter> all, Sink r) {
        String charset = null;
        ByteArrayOutputStream octets = new ByteArrayOutputStream(value.length());
        StringBuilder written = new StringBuilder();
        for (Parameter p : all) {
            String t = p.content(value);
            written.append(t);
            int from = 0;
            if (p.extended() && prefixEnd(t) >= 0) {
                charset = charset == null && t.indexOf('\'') > 0 ? t.substring(0, t.indexOf('\'')) : charset;
                from = prefixEnd(t);
            }
            octets.writeBytes(p.extended() ? percentDecode(t, from, t.length())
                    : t.getBytes(StandardCharsets.ISO_8859_1));
        }
        decoded(charset, octets.toByteArray(), r);
        r.add(written.toString());
    }

    /**
     * Adds {@code octets} decoded in {@code charset} (when it is readable, {@link HeaderCharsets}) and in UTF-8; a
     * charset declared and not readable, or octets it rejects ({@link HeaderCharsets#decode}), mark the readings
     * unreadable (the UTF-8 reading, Python's fallback for a
     * name it does not know either, is still added, for whoever scans what can be read).
     */
    private static void decoded(String charset, byte[] octets, Sink r) {
        for (Charset cs : HeaderCharsets.decoders(charset)) {
            String text = HeaderCharsets.decode(octets, cs);
            r.unreadable |= text == null; // not clean: what Python's codec reads in it is not known
            r.add(text != null ? text : new String(octets, cs));
        }
        r.unreadable |= !HeaderCharsets.readable(charset);
        r.add(new String(octets, StandardCharsets.UTF_8));
    }

    /** {@return {@code s} with every quoted-pair {@code \x} read as {@code x}} @param s quoted-string content */
    public static String unescape(String s) {
        if (s.indexOf('\\') < 0) {
            return s;
        }
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                c = s.charAt(++i);
            }
            b.append(c);
        }
        return b.toString();
    }

    /**
     * {@return the octets of {@code s[from, to)} with each {@code %XX} (hex in either case) decoded} Leniently: a
     * {@code %} not followed by two hex digits is itself, as Python's {@code unquote} reads it; other characters are
     * their octet (ISO-8859-1).
     *
     * @param s the text
     * @param from the first index
     * @param to the index after the last
     */
    public static byte[] percentDecode(String s, int from, int to) {
        return percentDecode(s, from, to, false);
    }

    /**
     * {@return the octets of {@code s[from, to)} with each {@code %XX} decoded, or {@code null} when {@code strict}
     * and a {@code %} is not followed by two hex digits} Otherwise as {@link #percentDecode(String, int, int)}.
     *
     * @param s the text
     * @param from the first index
     * @param to the index after the last
     * @param strict whether a bad escape makes the text undecodable
     */
    public static byte[] percentDecode(String s, int from, int to, boolean strict) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(0, to - from));
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            int hi = c == '%' && i + 2 < to ? Syntax.hexDigit(s.charAt(i + 1)) : -1;
            int lo = hi < 0 ? -1 : Syntax.hexDigit(s.charAt(i + 2));
            if (lo >= 0) {
                out.write(hi << 4 | lo);
                i += 2;
            } else if (strict && c == '%') {
                return null;
            } else {
                out.write(c);
            }
        }
        return out.toByteArray();
    }
}
