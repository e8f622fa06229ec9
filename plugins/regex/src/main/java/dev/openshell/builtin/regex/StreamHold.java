package dev.openshell.builtin.regex;

import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.MiddlewareException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

/**
 * The bytes a streaming {@code openshell/regex-response} stage holds back between units, so that a secret the
 * upstream splits across two writes is scanned whole. Each call takes the held bytes plus the next unit and splits
 * them into the part to scan and emit now and the part to hold:
 * <ul>
 *   <li>{@code text/event-stream} ({@link #events}): everything up to the end of the last complete event (a blank
 *       line: {@code \n\n}, {@code \r\n\r\n}, {@code \r\r} or a mix) is emitted; the unfinished event is held.</li>
 *   <li>Any other body ({@link #tail}): the last {@value #TAIL} bytes are held, and more when a match of the scanner
 *       starts before that point and ends after it (the cut moves to the match's start), so a match of up to
 *       {@value #TAIL} bytes that straddles units is scanned whole; the cut never falls inside a character.</li>
 * </ul>
 * The held bytes are bounded by the caller, {@link RegexResponseStage}, to half the stage's limit (the published
 * contract lets a replacement carry a deferred tail of up to half the limit besides the unit's own bytes); at the end
 * of the stream everything is emitted. Stateless: the caller keeps the held bytes.
 */
final class StreamHold {
    /** The bytes held at the end of a non-event stream, at least: the longest straddling match seen whole. */
    static final int TAIL = 8 * 1024;

    private StreamHold() {
    }

    /**
     * {@return where the complete events of {@code buf} end: 0 when no event is complete}
     *
     * @param buf the held bytes and the new unit; starts at the beginning of an event
     */
    static int events(byte[] buf) {
        int boundary = 0;
        int lineStart = 0;
        int i = 0;
        while (i < buf.length) {
            byte c = buf[i];
            if (c != '\n' && c != '\r') {
                i++;
                continue;
            }
            int next = i + 1;
            if (c == '\r') {
                if (next == buf.length) {
                    break; // a CR the next unit may complete as CRLF: not yet a line end
                }
                if (buf[next] == '\n') {
                    next++;
                }
            }
            if (i == lineStart) {
                boundary = next; // an empty line ends the event
            }
            lineStart = next;
            i = next;
        }
        return boundary;
    }

    /**
     * {@return where to cut {@code buf}: bytes before the cut are emitted, the rest held}
     *
     * @param headers the response headers (the body's media type and charset)
     * @param buf the held bytes and the new unit
     * @param selection what the stage looks for
     * @param tail the bytes to hold at least: {@value #TAIL}, or less when the stage's hold bound is smaller
     * @throws MiddlewareException when the body cannot be read as its media type and charset say
     */
    static int tail(List<HttpHeader> headers, byte[] buf, Selection selection, int tail) {
        if (buf.length <= tail) {
            return 0;
        }
        TextView view = null;
        int end = buf.length;
        Undecodable first = null;
        for (int drop = 0; drop <= 3 && view == null; drop++) { // a character the next unit completes
            try {
                view = BodyDecoder.decodeWindow(headers, ByteBuffer.wrap(buf, 0, buf.length - drop).slice()
                        .asReadOnlyBuffer());
                end = buf.length - drop;
            } catch (Undecodable e) {
                first = first == null ? e : first;
            }
        }
        if (view == null) {
            throw new MiddlewareException(first.code(), first.getMessage());
        }
        int cut = end - tail;
        Scan scan = SecretScanner.scan(view.text(), selection, true);
        if (!scan.isEmpty()) {
            for (Edit e : view.toInput(scan.edits())) {
                if (e.start() < cut && e.end() > cut) {
                    cut = e.start();
                }
            }
        }
        for (int c = cut; c >= Math.max(1, cut - 8); c--) { // not inside a character or an escape: both decode
            if (decodes(headers, buf, c, end) && decodes(headers, buf, 0, c)) {
                return c;
            }
        }
        return 0;
    }

    private static boolean decodes(List<HttpHeader> headers, byte[] buf, int from, int to) {
        try {
            BodyDecoder.decodeWindow(headers, ByteBuffer.wrap(Arrays.copyOfRange(buf, from, to)).asReadOnlyBuffer());
            return true;
        } catch (Undecodable e) {
            return false;
        }
    }
}
