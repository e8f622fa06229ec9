package dev.openshell.builtin.regex;

import dev.openshell.middleware.spi.internal.EncodedWords;
import dev.openshell.middleware.spi.internal.HeaderParameters;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The header block of a multipart part, read as it is and as receivers decode its parameters (attacker pass 8,
 * P8-1): every header field's parameters ({@code Content-Disposition: form-data; name*=UTF-8''%73%6B...;
 * filename*0="sk-"; filename*1="proj..."}, {@code Content-Type: ...; name="=?utf-8?B?...?="}) are read by {@link
 * HeaderParameters#readings} (RFC 2231 / RFC 8187 values in any charset the JDK knows, continuations joined, RFC 2047
 * words decoded, quoted-pairs unescaped: what Python's {@code email}, Werkzeug and busboy hand the application). Folded
 * lines (obs-fold) are joined first. A parameter or encoded word declared in a charset that cannot be decoded (UTF-7,
 * {@code unicode_escape}, an unknown name) makes the part {@link Undecodable}: the stage fails, its {@code on_error}
 * decides. Every field but {@code Content-Type} and {@code Content-Disposition} is also read with its RFC 2047
 * encoded words decoded ({@link EncodedWords}: a message's {@code Subject: =?utf-8?B?...?=}); a match there replaces
 * the whole field value by a space and the replacement.
 *
 * <p>The text is the block as it is, then, after a NUL each, every reading that differs from each value as written.
 * A match in the block is replaced where it stands. A match in a decoded reading cannot be replaced in place (its
 * octets are percent-, base64- or charset-encoded, or spread over continuations), so every value of that parameter
 * name in that field is replaced whole: the first by the replacement as a quoted-string, the others by {@code ""}.
 * The view reports two readings, so the redacted body is decoded and scanned again ({@link RegexProvider}) and one
 * that still shows a secret fails the stage.
 */
final class PartHeaderText extends TextView {
    /**
     * One decoded reading: its place in the text, and the values of its parameter it came from (or the whole field
     * value, when {@code field}: the field's encoded words decoded).
     */
    private record Extra(int start, int end, List<int[]> spans, boolean field) {
    }

    private final ByteBuffer block;
    private final ByteBuffer text;
    private final List<Extra> extras;

    private PartHeaderText(ByteBuffer block, ByteBuffer text, List<Extra> extras) {
        this.block = block;
        this.text = text;
        this.extras = extras;
    }

    /**
     * {@return the view of a part's header block; the block itself when no parameter reads otherwise}
     *
     * @throws Undecodable if a parameter or RFC 2047 word of a field is declared in a charset that cannot be decoded
     *     ({@link HeaderParameters.Readings#unreadable}: UTF-7, {@code unicode_escape}, an unknown name; Python's
     *     {@code email} decodes some of them, so what the upstream reads there is not known)
     */
    static TextView of(ByteBuffer block) throws Undecodable {
        byte[] raw = new byte[block.limit()];
        block.get(0, raw);
        char[] c = new String(raw, StandardCharsets.ISO_8859_1).toCharArray();
        for (int i = 0; i + 1 < c.length; i++) {
            if (c[i] == '\n' && (c[i + 1] == ' ' || c[i + 1] == '\t')) {
                c[i] = ' '; // obs-fold: the line goes on (positions kept)
                if (i > 0 && c[i - 1] == '\r') {
                    c[i - 1] = ' ';
                }
            }
        }
        String s = new String(c);
        ByteArrayOutputStream out = new ByteArrayOutputStream(raw.length * 2);
        out.writeBytes(raw);
        List<Extra> extras = new ArrayList<>();
        int line = 0;
        while (line < s.length()) {
            int end = s.indexOf('\n', line);
            end = end < 0 ? s.length() : end;
            int colon = s.indexOf(':', line);
            if (colon >= 0 && colon < end) {
                String value = s.substring(colon + 1, end > line && s.charAt(end - 1) == '\r' ? end - 1 : end);
                readField(s.substring(line, colon).strip(), value, colon + 1, out, extras);
            }
            line = end + 1;
        }
        return extras.isEmpty() ? TextView.identity(block)
                : new PartHeaderText(block, ByteBuffer.wrap(out.toByteArray()), extras);
    }

    /**
     * Adds the readings of one field value (starting at {@code base} in the block) that differ from it: its
     * parameters', and, but for {@code Content-Type} and {@code Content-Disposition} (whose words are read in their
     * parameters), the value with its RFC 2047 encoded words decoded ({@link EncodedWords#decode}: {@code Subject},
     * {@code From}, any field, as Python's {@code email} hands a message's header to the application).
     */
    private static void readField(String name, String value, int base, ByteArrayOutputStream out,
            List<Extra> extras) throws Undecodable {
        if (value.indexOf('*') < 0 && value.indexOf('\\') < 0 && !value.contains("=?")) {
            return; // every reading is a value as written
        }
        if (value.contains("=?") && !name.equalsIgnoreCase("content-type")
                && !name.equalsIgnoreCase("content-disposition")) {
            EncodedWords.Decoded words = EncodedWords.decode(value);
            if (words.unreadable()) {
                throw Undecodable.because("header field has an encoded word in a charset that cannot be decoded");
            }
            List<int[]> whole = List.of(new int[] {base, base + value.length()});
            for (String r : new java.util.LinkedHashSet<>(List.of(words.text(), words.pythonText()))) {
                if (!r.equals(value) && !r.isBlank()) {
                    out.write(0);
                    int start = out.size();
                    out.writeBytes(r.getBytes(StandardCharsets.UTF_8));
                    extras.add(new Extra(start, out.size(), whole, true));
                }
            }
        }
        Map<String, List<int[]>> spans = new LinkedHashMap<>();
        Map<String, Set<String>> written = new LinkedHashMap<>();
        for (HeaderParameters.Parameter p : HeaderParameters.parse(value, false)) {
            spans.computeIfAbsent(p.name(), k -> new ArrayList<>()).add(new int[] {base + p.start(), base + p.end()});
            written.computeIfAbsent(p.name(), k -> new HashSet<>()).add(p.content(value));
        }
        HeaderParameters.Readings readings = HeaderParameters.readings(value, false);
        if (readings.anyUnreadable()) {
            throw Undecodable.because("multipart request body part header has a parameter in a charset that cannot"
                    + " be decoded");
        }
        for (Map.Entry<String, List<String>> e : readings.byName().entrySet()) {
            for (String r : e.getValue()) {
                if (r.isEmpty() || written.get(e.getKey()).contains(r)) {
                    continue;
                }
                out.write(0);
                int start = out.size();
                out.writeBytes(r.getBytes(StandardCharsets.UTF_8));
                extras.add(new Extra(start, out.size(), spans.get(e.getKey()), false));
            }
        }
    }

    @Override
    ByteBuffer text() {
        return text;
    }

    @Override
    boolean twoReadings() {
        return true;
    }

    @Override
    List<Edit> toInput(List<Edit> edits) {
        List<Edit> fields = new ArrayList<>();
        List<Edit> params = new ArrayList<>();
        Set<List<int[]>> done = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        List<Edit> raw = new ArrayList<>();
        for (Edit e : edits) {
            Interrupts.check(); // each edit is compared with every parameter's reading
            if (e.end() <= block.limit()) {
                raw.add(e);
                continue;
            }
            for (Extra x : extras) {
                if (e.start() >= x.start() && e.start() < x.end() && done.add(x.spans())) {
                    if (x.field()) { // the whole value: " " and the replacement
                        byte[] r = new byte[e.replacement().length + 1];
                        r[0] = ' ';
                        System.arraycopy(e.replacement(), 0, r, 1, r.length - 1);
                        fields.add(new Edit(x.spans().get(0)[0], x.spans().get(0)[1], r));
                        continue;
                    }
                    List<int[]> spans = new ArrayList<>(x.spans());
                    spans.sort(Comparator.comparingInt(s -> s[0]));
                    for (int k = 0; k < spans.size(); k++) {
                        params.add(new Edit(spans.get(k)[0], spans.get(k)[1], k == 0 ? quoted(e.replacement())
                                : new byte[] {'"', '"'}));
                    }
                }
            }
        }
        List<Edit> whole = new ArrayList<>(fields);
        for (List<Edit> more : List.of(params, raw)) {
            List<Edit> kept = new ArrayList<>();
            for (Edit e : more) {
                if (whole.stream().noneMatch(w -> e.start() < w.end() && w.start() < e.end())) {
                    kept.add(e);
                }
            }
            whole.addAll(kept);
        }
        whole.sort(Comparator.comparingInt(Edit::start));
        return whole;
    }

    /** {@return {@code r} as a quoted-string} */
    private static byte[] quoted(byte[] r) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(r.length + 2);
        out.write('"');
        for (byte b : r) {
            if (b == '"' || b == '\\') {
                out.write('\\');
            }
            out.write(b);
        }
        out.write('"');
        return out.toByteArray();
    }
}
