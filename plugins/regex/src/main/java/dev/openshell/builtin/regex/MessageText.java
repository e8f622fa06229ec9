package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * MIME entities that are whole messages: a {@code message/*} entity ({@code message/rfc822}, RFC 5322 and RFC 2046
 * section 5.2.1; {@code message/global}, RFC 6532; {@code message/partial} and the others, which Python's {@code email}
 * parses as messages too), as a request body or as a part at any nesting, and an {@code application/mbox} body (RFC
 * 4155: messages each after a line starting {@code From }).
 *
 * <p>A message is its header block, read by {@link PartHeaderText} (as it is, and with every field's RFC 2047 encoded
 * words and every parameter decoded: {@code Subject: =?utf-8?B?...?=}; UTF-8 octets of RFC 6532 headers read as they
 * are), and its body, decoded by the message's own {@code Content-Type} and {@code Content-Transfer-Encoding} exactly
 * as a multipart part ({@link MimeText#part}: quoted-printable, base64, charset, nested multipart or message). Where
 * the header block ends is where Python's {@code email.feedparser} ends it: at an empty line, or before the first line
 * that is no header field line (a name of printable ASCII without {@code :} then {@code :}, a continuation line
 * starting with a space or tab, or a {@code From } line); so {@code Content-Transfer-Encoding: base64} followed
 * directly by base64 lines has a base64 body. A bare CR in the header block (Python also ends a line there) is
 * undecodable. Each message is one more level of nesting ({@link MimeText#MAX_DEPTH} in all), with the same failure
 * rule as a part: an entity that does not decode fails the body ({@link Undecodable}).
 */
final class MessageText {
    /** The media type of a {@code multipart/digest} part without {@code Content-Type} (RFC 2046 section 5.1.5). */
    static final MediaType RFC822 = MediaType.parse("message/rfc822");

    private MessageText() {
    }

    /**
     * {@return the view of a message entity}
     *
     * @param input the entity: header block, empty line, body
     * @param depth how many multipart or message levels enclose it
     * @param formData whether a {@code multipart/form-data} body encloses it
     * @throws Undecodable if it nests too deep, its header block holds a bare CR or a parameter or encoded word in
     *     a charset that cannot be decoded, or its body does not decode
     */
    static TextView message(ByteBuffer input, int depth, boolean formData) throws Undecodable {
        if (depth >= MimeText.MAX_DEPTH) {
            throw Undecodable.because("message entity nests deeper than " + MimeText.MAX_DEPTH + " levels");
        }
        int n = input.limit();
        int blockEnd = n;
        int bodyStart = n;
        int line = 0;
        while (line < n) {
            int end = MimeText.lineEnd(input, line);
            int content = end - (input.get(end - 1) == '\n' ? (end - 1 > line && input.get(end - 2) == '\r' ? 2 : 1)
                    : 0);
            if (content == line) { // the empty line
                blockEnd = line;
                bodyStart = end;
                break;
            }
            if (!headerLine(input, line, content)) {
                blockEnd = line;
                bodyStart = line;
                break;
            }
            line = end;
        }
        for (int i = 0; i < blockEnd; i++) {
            if (input.get(i) == '\r' && (i + 1 >= n || input.get(i + 1) != '\n')) {
                throw Undecodable.because("message entity header block holds a bare CR");
            }
        }
        List<MimeText.Segment> segments = new ArrayList<>();
        int textLength = MimeText.add(segments, 0, input, 0, blockEnd,
                blockEnd == 0 ? null : PartHeaderText.of(input.slice(0, blockEnd)));
        textLength = MimeText.add(segments, textLength, input, blockEnd, bodyStart, null);
        TextView body = MimeText.part(input.slice(bodyStart, n - bodyStart),
                MimeText.headerBlock(input, 0, blockEnd), depth, formData, false);
        MimeText.add(segments, textLength, input, bodyStart, n, body);
        return MimeText.assemble(segments);
    }

    /**
     * {@return the view of an {@code application/mbox} body} Each line that starts with {@code From } (at the start or
     * after an LF) begins a message; that line is read as it is, what follows up to the next one as a message
     * ({@link #message}); text before the first one is read as a message too.
     *
     * @param input the body
     * @param depth how many multipart or message levels enclose it
     * @param formData whether a {@code multipart/form-data} body encloses it
     * @throws Undecodable if a message does not decode
     */
    static TextView mbox(ByteBuffer input, int depth, boolean formData) throws Undecodable {
        int n = input.limit();
        List<MimeText.Segment> segments = new ArrayList<>();
        int textLength = 0;
        int at = fromLine(input, 0) ? 0 : nextFromLine(input, 0);
        if (at > 0) {
            textLength = MimeText.add(segments, textLength, input, 0, at, message(input.slice(0, at), depth, formData));
        }
        while (at < n) {
            int body = MimeText.lineEnd(input, at);
            int next = nextFromLine(input, body);
            textLength = MimeText.add(segments, textLength, input, at, body, null);
            if (next > body) {
                textLength = MimeText.add(segments, textLength, input, body, next,
                        message(input.slice(body, next - body), depth, formData));
            }
            at = next;
        }
        return segments.isEmpty() ? TextView.identity(input) : MimeText.assemble(segments);
    }

    /** {@return where the next line starting {@code From } starts, at a line start at or after {@code from}, or n} */
    private static int nextFromLine(ByteBuffer b, int from) {
        int n = b.limit();
        for (int i = from; i < n; i = MimeText.lineEnd(b, i)) {
            if (fromLine(b, i)) {
                return i;
            }
        }
        return n;
    }

    private static boolean fromLine(ByteBuffer b, int i) {
        return i + 5 <= b.limit() && b.get(i) == 'F' && b.get(i + 1) == 'r' && b.get(i + 2) == 'o'
                && b.get(i + 3) == 'm' && b.get(i + 4) == ' ';
    }

    /**
     * {@return whether the line from {@code from} to {@code to} (without its line break) is a header field line as
     * Python's {@code email.feedparser} sees one: {@code From }, a space or tab first, or characters 0x21-0x39 and
     * 0x3B-0x7E up to a {@code :}}
     */
    private static boolean headerLine(ByteBuffer b, int from, int to) {
        byte first = b.get(from);
        if (first == ' ' || first == '\t' || fromLine(b, from)) {
            return true;
        }
        for (int i = from; i < to; i++) {
            int c = b.get(i) & 0xff;
            if (c == ':') {
                return true;
            }
            if (c < 0x21 || c > 0x7e) {
                return false;
            }
        }
        return false;
    }
}
