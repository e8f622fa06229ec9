package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;

/**
 * The MIME layers: {@code multipart/*} bodies split into parts (RFC 2046 section 5.1, RFC 7578), and the
 * {@code quoted-printable} and {@code base64} transfer encodings of a part (RFC 2045 section 6).
 *
 * <p>A multipart body's text is its preamble, each delimiter line, each part's header block, each part's content
 * decoded by that part's own headers ({@code Content-Transfer-Encoding}, then {@code Content-Type} with its charset,
 * JSON or form syntax, exactly as a body: {@link BodyDecoder#content}), and the epilogue, separated by NUL bytes so no
 * match crosses from one into the next; a header block also with its parameters decoded ({@link PartHeaderText}).
 * Delimiter lines may end in CRLF or a bare LF. A body without its boundary, a
 * delimiter line that never closes, an unknown transfer encoding, or a part that does not decode is undecodable.
 * A transfer-encoded part of a {@code multipart/form-data} body is also read as sent ({@link TwoReadings}): form-data
 * receivers ignore the deprecated field (RFC 7578 section 4.7).
 * Nested multipart parts are followed up to {@value #MAX_DEPTH} levels.
 */
final class MimeText {
    /** How deep multipart parts may nest. */
    static final int MAX_DEPTH = 3;

    private MimeText() {
    }

    /** One piece of a multipart body's text. */
    record Segment(int textStart, int inputStart, TextView view) {
    }

    /**
     * {@return the view of a multipart body}
     *
     * @param input the body
     * @param boundary the {@code boundary} parameter, or {@code null}
     * @param depth how many multipart levels enclose this one
     * @param formData whether this body or one enclosing it is {@code multipart/form-data}
     * @throws Undecodable if the body or any part does not decode
     */
    static TextView multipart(ByteBuffer input, String boundary, int depth, boolean formData) throws Undecodable {
        return multipart(input, boundary, depth, formData, false);
    }

    /**
     * {@return the view of a multipart body}
     *
     * @param input the body
     * @param boundary the {@code boundary} parameter, or {@code null}
     * @param depth how many multipart or message levels enclose this one
     * @param formData whether this body or one enclosing it is {@code multipart/form-data}
     * @param digest whether it is {@code multipart/digest}: a part without {@code Content-Type} is then a
     *     {@code message/rfc822} entity (RFC 2046 section 5.1.5), read by {@link MessageText}
     * @throws Undecodable if the body or any part does not decode
     */
    static TextView multipart(ByteBuffer input, String boundary, int depth, boolean formData, boolean digest)
            throws Undecodable {
        if (boundary == null || boundary.isEmpty() || boundary.length() > 70) {
            throw Undecodable.because("multipart request body has no valid boundary parameter");
        }
        if (depth >= MAX_DEPTH) {
            throw Undecodable.because("multipart request body nests deeper than " + MAX_DEPTH + " levels");
        }
        byte[] delimiter = ("--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
        int n = input.limit();
        List<Segment> segments = new ArrayList<>();
        int textLength = 0;
        int p = findDelimiter(input, 0, delimiter, true);
        if (p < 0) {
            throw Undecodable.because("multipart request body holds no delimiter line");
        }
        textLength = add(segments, textLength, input, 0, p, null);
        while (true) {
            int after = p + delimiter.length;
            if (after + 1 < n && input.get(after) == '-' && input.get(after + 1) == '-') {
                add(segments, textLength, input, p, n, null); // close delimiter and epilogue
                break;
            }
            int headers = lineEnd(input, after);
            textLength = add(segments, textLength, input, p, headers, null);
            int contentStart = headersEnd(input, headers);
            if (contentStart < 0) {
                throw Undecodable.because("multipart request body part has no end of headers");
            }
            textLength = add(segments, textLength, input, headers, contentStart,
                    PartHeaderText.of(input.slice(headers, contentStart - headers)));
            int next = findDelimiter(input, contentStart, delimiter, false);
            if (next < 0) {
                throw Undecodable.because("multipart request body has no closing delimiter");
            }
            int contentEnd = next - 1;
            if (contentEnd > contentStart && input.get(contentEnd - 1) == '\r') {
                contentEnd--;
            }
            contentEnd = Math.max(contentEnd, contentStart);
            TextView part = part(input.slice(contentStart, contentEnd - contentStart),
                    headerBlock(input, headers, contentStart), depth, formData, digest);
            textLength = add(segments, textLength, input, contentStart, contentEnd, part);
            // the line break before the next delimiter goes with it
            p = next;
            int breakStart = contentEnd;
            textLength = add(segments, textLength, input, breakStart, next, null);
        }
        return assemble(segments);
    }

    /** Adds a segment; returns the text length after it and its NUL separator. */
    static int add(List<Segment> segments, int textStart, ByteBuffer input, int from, int to, TextView view) {
        if (to <= from && view == null) {
            return textStart;
        }
        TextView v = view != null ? view : TextView.identity(input.slice(from, to - from));
        segments.add(new Segment(textStart, from, v));
        return textStart + v.text().limit() + 1;
    }

    static TextView assemble(List<Segment> segments) {
        int length = 0;
        for (Segment s : segments) {
            length += s.view().text().limit() + 1;
        }
        byte[] text = new byte[Math.max(0, length - 1)];
        for (Segment s : segments) {
            ByteBuffer t = s.view().text();
            t.get(0, text, s.textStart(), t.limit());
        }
        ByteBuffer buffer = ByteBuffer.wrap(text);
        return new TextView() {
            @Override
            ByteBuffer text() {
                return buffer;
            }

            @Override
            boolean twoReadings() {
                return segments.stream().anyMatch(s -> s.view().twoReadings());
            }

            @Override
            List<Edit> toInput(List<Edit> edits) {
                List<Edit> out = new ArrayList<>(edits.size());
                List<Edit> local = new ArrayList<>();
                int k = 0;
                for (Edit e : edits) {
                    while (e.start() > end(segments.get(k))) {
                        flush(segments.get(k), local, out);
                        k++;
                    }
                    Segment s = segments.get(k);
                    local.add(new Edit(e.start() - s.textStart(), Math.min(e.end(), end(s)) - s.textStart(),
                            e.replacement()));
                }
                if (!local.isEmpty()) {
                    flush(segments.get(k), local, out);
                }
                return out;
            }
        };
    }

    private static int end(Segment s) {
        return s.textStart() + s.view().text().limit();
    }

    private static void flush(Segment s, List<Edit> local, List<Edit> out) {
        if (local.isEmpty()) {
            return;
        }
        for (Edit x : s.view().toInput(local)) {
            out.add(new Edit(x.start() + s.inputStart(), x.end() + s.inputStart(), x.replacement()));
        }
        local.clear();
    }

    /**
     * {@return where a delimiter line starts at or after {@code from}, or -1} A delimiter line is the delimiter at
     * the start of a line (or of the body, when {@code atStart}), followed by {@code --}, or by optional spaces and
     * tabs and a line break.
     */
    private static int findDelimiter(ByteBuffer b, int from, byte[] delimiter, boolean atStart) {
        int n = b.limit();
        for (int i = from; i + delimiter.length <= n; i++) {
            boolean lineStart = (i == 0 && atStart) || (i > 0 && b.get(i - 1) == '\n');
            if (!lineStart || !startsWith(b, i, delimiter)) {
                continue;
            }
            int j = i + delimiter.length;
            if (j + 1 < n && b.get(j) == '-' && b.get(j + 1) == '-') {
                return i;
            }
            while (j < n && (b.get(j) == ' ' || b.get(j) == '\t')) {
                j++;
            }
            if (j < n && (b.get(j) == '\n' || (b.get(j) == '\r' && j + 1 < n && b.get(j + 1) == '\n'))) {
                return i;
            }
        }
        return -1;
    }

    private static boolean startsWith(ByteBuffer b, int at, byte[] s) {
        for (int k = 0; k < s.length; k++) {
            if (b.get(at + k) != s[k]) {
                return false;
            }
        }
        return true;
    }

    /** {@return the index after the line break ending the line at {@code i}} */
    static int lineEnd(ByteBuffer b, int i) {
        int n = b.limit();
        while (i < n && b.get(i) != '\n') {
            i++;
        }
        return Math.min(n, i + 1);
    }

    /** {@return where the content starts after the header block at {@code i} (after its empty line), or -1} */
    private static int headersEnd(ByteBuffer b, int i) {
        int n = b.limit();
        int line = i;
        while (line < n) {
            if (b.get(line) == '\n') {
                return line + 1;
            }
            if (b.get(line) == '\r' && line + 1 < n && b.get(line + 1) == '\n') {
                return line + 2;
            }
            int next = lineEnd(b, line);
            if (next == n && (n == 0 || b.get(n - 1) != '\n')) {
                return -1;
            }
            line = next;
        }
        return -1;
    }

    static String headerBlock(ByteBuffer b, int from, int to) {
        byte[] bytes = new byte[to - from];
        b.get(from, bytes);
        return new String(bytes, StandardCharsets.ISO_8859_1);
    }

    /** {@return the value of a header in a part's header block (folded lines joined), or {@code null}} */
    static String header(String block, String name) {
        String[] lines = block.split("\r?\n");
        String found = null;
        for (int i = 0; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0 && lines[i].substring(0, colon).strip().equalsIgnoreCase(name)) {
                StringBuilder v = new StringBuilder(lines[i].substring(colon + 1));
                while (i + 1 < lines.length && !lines[i + 1].isEmpty()
                        && (lines[i + 1].charAt(0) == ' ' || lines[i + 1].charAt(0) == '\t')) {
                    v.append(' ').append(lines[++i].strip());
                }
                if (found != null) {
                    return null; // a repeated header is ambiguous: the caller treats the part as undecodable
                }
                found = v.toString().strip();
            }
        }
        return found;
    }

    /**
     * {@return the view of one part's content, decoded by its headers} In a {@code multipart/form-data} body a part
     * with a {@code quoted-printable} or {@code base64} transfer encoding is read twice, decoded and as it is
     * ({@link TwoReadings}): RFC 7578 section 4.7 deprecates the field, and most form-data receivers (PHP, Rack,
     * Python's multipart, Commons FileUpload) ignore it and hand the application the bytes as sent. So is a
     * {@code message/*} entity with one (RFC 2046 section 5.2.1 allows none; Python's {@code email} parses the
     * entity as sent, a MIME decoder decodes it first).
     *
     * @param content the part's content (or a message's body)
     * @param headers its header block (ISO-8859-1)
     * @param depth how many multipart or message levels enclose it
     * @param formData whether a {@code multipart/form-data} body encloses it
     * @param digest whether its default media type is {@code message/rfc822} ({@code multipart/digest})
     */
    static TextView part(ByteBuffer content, String headers, int depth, boolean formData, boolean digest)
            throws Undecodable {
        if (countHeader(headers, "content-type") > 1 || countHeader(headers, "content-transfer-encoding") > 1) {
            throw Undecodable.because("multipart request body part repeats a content header");
        }
        String type = header(headers, "content-type");
        String cte = header(headers, "content-transfer-encoding");
        TextView transfer;
        String coding = cte == null ? "7bit" : cte.toLowerCase(Locale.ROOT);
        switch (coding) {
            case "7bit", "8bit", "binary" -> transfer = TextView.identity(content);
            case "quoted-printable" -> transfer = QuotedPrintable.of(content);
            case "base64" -> transfer = Base64Text.of(content);
            default -> throw Undecodable.because("multipart request body part has an unsupported "
                    + "Content-Transfer-Encoding");
        }
        MediaType mt = type == null ? (digest ? MessageText.RFC822 : null) : MediaType.parse(type);
        TextView decoded = TextView.stacked(transfer, BodyDecoder.content(transfer.text(), mt, depth + 1, formData));
        boolean message = mt != null && mt.isMessage();
        if (!(formData || message) || transfer.text() == content) {
            return decoded;
        }
        TextView raw;
        try {
            raw = BodyDecoder.content(content, mt, depth + 1, true);
        } catch (Undecodable e) {
            raw = TextView.identity(content); // not of its type as sent (base64 declared JSON): read as it is
        }
        return new TwoReadings(decoded, raw, 1);
    }

    private static int countHeader(String block, String name) {
        int count = 0;
        for (String line : block.split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).strip().equalsIgnoreCase(name)) {
                count++;
            }
        }
        return count;
    }

    /**
     * {@code quoted-printable}: {@code =XX} is a byte, {@code =} before a line break is a soft break (nothing); as
     * Python's {@code binascii.a2b_qp} reads it, {@code =} and a CR is a soft break that also drops what follows up to
     * and with the next LF (or the end).
     */
    static final class QuotedPrintable extends TextView.Escaped {
        private QuotedPrintable(ByteBuffer input, ByteBuffer text) {
            super(input, text);
        }

        static QuotedPrintable of(ByteBuffer input) {
            int n = input.limit();
            byte[] out = new byte[n];
            int o = 0;
            for (int i = 0; i < n; ) {
                long u = step(input, i);
                int len = (int) (u >>> 32);
                int kind = (int) u;
                if (kind == 1) {
                    out[o++] = len == 3
                            ? (byte) ((JsonText.hex(input.get(i + 1)) << 4) | JsonText.hex(input.get(i + 2)))
                            : input.get(i);
                }
                i += len;
            }
            return new QuotedPrintable(input, ByteBuffer.wrap(out, 0, o).slice());
        }

        /** {@return the unit at {@code i}: input length times 2^32 plus the bytes it decodes to (0 or 1)} */
        private static long step(ByteBuffer b, int i) {
            int n = b.limit();
            if (b.get(i) == '=') {
                if (i + 2 < n && JsonText.hex(b.get(i + 1)) >= 0
                        && JsonText.hex(b.get(i + 2)) >= 0) {
                    return unit(3, 1);
                }
                if (i + 1 < n && b.get(i + 1) == '\n') {
                    return unit(2, 0);
                }
                if (i + 1 < n && b.get(i + 1) == '\r') {
                    int j = i + 1; // Python's binascii.a2b_qp: "=" CR drops everything to and with the next LF
                    while (j < n && b.get(j) != '\n') {
                        j++;
                    }
                    return unit(Math.min(n, j + 1) - i, 0);
                }
            }
            return unit(1, 1);
        }

        @Override
        long unit(int i) {
            return step(input, i);
        }

        @Override
        byte[] encode(byte[] ascii) {
            StringBuilder b = new StringBuilder();
            for (byte c : ascii) {
                if (c >= 33 && c <= 126 && c != '=') {
                    b.append((char) c);
                } else {
                    b.append('=').append(String.format("%02X", c & 0xff));
                }
            }
            return b.toString().getBytes(StandardCharsets.US_ASCII);
        }
    }

    /**
     * {@code base64}: decoded as MIME base64; a redaction re-encodes the whole part (76-character lines), keeping the
     * line break after its last line.
     */
    static final class Base64Text extends TextView {
        private final ByteBuffer input;
        private final ByteBuffer text;

        private Base64Text(ByteBuffer input, ByteBuffer text) {
            this.input = input;
            this.text = text;
        }

        static Base64Text of(ByteBuffer input) throws Undecodable {
            byte[] raw = new byte[input.limit()];
            input.get(0, raw);
            try {
                return new Base64Text(input, ByteBuffer.wrap(Base64.getMimeDecoder().decode(raw)));
            } catch (IllegalArgumentException e) {
                throw Undecodable.because("multipart request body part is not valid base64");
            }
        }

        @Override
        ByteBuffer text() {
            return text;
        }

        @Override
        List<Edit> toInput(List<Edit> edits) {
            if (edits.isEmpty()) {
                return edits;
            }
            byte[] encoded = Base64.getMimeEncoder().encode(Edit.apply(text, edits));
            int end = input.limit();
            while (end > 0 && (input.get(end - 1) == '\n' || input.get(end - 1) == '\r')) {
                end--; // the line break after the last line stays: a message body's ends before the next From line
            }
            return List.of(new Edit(0, end, encoded));
        }
    }
}
