package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.internal.BodyCharsets;
import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PushbackInputStream;
import java.io.SequenceInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import java.util.zip.Inflater;
import java.util.zip.InflaterInputStream;
import java.util.zip.ZipException;

/**
 * Relays a response that must be scrubbed (its request carried a credential, or went to a host a credential is bound
 * to), with every such value replaced by its placeholder (issue 22, item 2; issue 39, items 3 and 4;
 * {@link SecretScrubber} for the forms searched): in the status line's reason phrase, in every header field value,
 * also as its quoted-pairs, RFC 2047 encoded words and RFC 2231 continuations read ({@link HeadScrub}; a field
 * whose name holds a value is dropped; a value split across two field values is replaced too), and in the body,
 * whatever its framing (the trailer section is dropped).
 *
 * <p>The body's length changes with each replacement, so it is re-framed (RFC 9112 section 6): a Content-Length body
 * of at most {@value #SMALL_BODY} bytes is read whole, scrubbed and sent with its new Content-Length; any other body
 * (longer, chunked, close-delimited, compressed) is streamed through the scrubber and sent chunked to an HTTP/1.1
 * client (the connection stays open) or close-delimited to an HTTP/1.0 client. The upstream connection is reused
 * exactly as when relaying unscrubbed.
 *
 * <p>Content codings (RFC 9110 section 8.4): a body in {@code gzip}, {@code x-gzip} or {@code deflate} (zlib or raw)
 * is decoded, scrubbed and sent decoded ({@code Content-Encoding} dropped). A body in any other coding, or stacked
 * codings, cannot be scanned: it is answered {@code 502 response_uninspectable} (nothing of it reaches the client)
 * unless every injected credential allows relaying it with its content unread; a compressed body that does not
 * decode before the head is sent is answered the same way, and one that stops decoding later is cut off (the
 * connection closes). Gzip data without a label (a body, after its labelled coding is decoded, that starts with the
 * gzip header) is decoded too, up to {@value #NESTED_GZIP} layers, scrubbed and sent gzip-encoded again, so the
 * client gets the representation it was sent; a small one is relayed byte for byte only as {@link UnlabelledGzip}
 * decides. Decoding streams at the pace the client reads, so a highly compressed body costs no memory.
 *
 * <p>Delivered bytes are always scanned: decoding adds a view and never replaces the bytes themselves. Re-encoded
 * gzip data passes the scrubber again as compressed bytes, and a body relayed with its content unread is scrubbed as
 * bytes (attacker pass finding 3).
 *
 * <p>A {@code 101} is not relayed here: {@link ResponseRelay} scrubs its head and relays the upgraded bytes (with
 * their WebSocket message policy) unscrubbed.
 */
final class ScrubbingRelay {
    /** The longest Content-Length body read whole, to keep a Content-Length; longer ones are re-chunked. */
    static final int SMALL_BODY = 64 * 1024;
    static final String UNINSPECTABLE = "response_uninspectable";
    private static final System.Logger LOG = ProxyCore.LOG;

    private enum Coding { IDENTITY, GZIP, DEFLATE, UNSCANNABLE }

    private final ProxyCore core;
    private final ClientStream client;
    private final ResponseRelay relay;
    private final ResponseScrub scrub;
    private final SecretScrubber scrubber;
    /** Values replaced in the status line and header fields; set before the body is relayed. */
    private long headerMatches;
    /** Whether {@link #reportMatches} has reported this response. */
    private boolean reported;

    ScrubbingRelay(ProxyCore core, ClientStream client, ResponseRelay relay, ResponseScrub scrub,
                   SecretScrubber scrubber) {
        this.core = core;
        this.client = client;
        this.relay = relay;
        this.scrub = scrub;
        this.scrubber = scrubber;
    }

    /** {@return whether the client connection stays open} */
    boolean relay(UpstreamPool.Connection c, ParsedRequest req, ResponseHead received) throws IOException, Refusal {
        RequestHead head = req.head();
        ResponseHead r = HeadScrub.scrub(received, scrubber).audited(scrub);
        headerMatches = scrubber.matches();
        try {
            return relayScrubbed(c, req, head, received, r);
        } finally {
            reportMatches(); // a response cut off: what was replaced until then
        }
    }

    /**
     * Reports the values replaced so far, once. Called before the response's last bytes go to the client, so that
     * the client never has a complete response before its audit line is written ({@link dev.openshell.supervisor.proxy.AuditBarrier}
     * waits for it at the next write).
     */
    private void reportMatches() {
        if (!reported && scrubber.matches() > 0) {
            reported = true;
            scrub.scrubbed(scrubber.matchedNames(), headerMatches, scrubber.matches() - headerMatches);
        }
    }

    private boolean relayScrubbed(UpstreamPool.Connection c, ParsedRequest req, RequestHead head,
                                  ResponseHead received, ResponseHead r) throws IOException, Refusal {
        BodyFraming rf;
        try {
            rf = BodyFraming.forResponse(received, head.method());
        } catch (FramingException e) {
            throw new Refusal(502, "invalid_upstream_response", e.getMessage());
        }
        boolean client10 = head.isHttp10();
        boolean closeAfter = req.clientClose() || rf.kind() == BodyFraming.Kind.UNTIL_CLOSE
                || client.state.draining();
        if (!rf.hasBody()) {
            reportMatches();
            client.out.write(OutboundHead.encode(ResponseRelay.responseHead(r, false, closeAfter, false)));
            client.responseStarted();
            relay.relayBody(c, rf, client10); // a zero Content-Length: nothing to read
            ResponseRelay.log(req, r.status());
            return relay.release(c, received, rf, closeAfter);
        }
        Coding coding = coding(received);
        if (coding == Coding.UNSCANNABLE && !relayUnread()) {
            return refuse(c, req, CODING);
        }
        String charset = ResponseCharsets.unreadable(received);
        if (charset != null && !relayUnread()) {
            return refuse(c, req, charset);
        }
        InputStream framed = framed(c, rf);
        if (coding != Coding.GZIP && coding != Coding.DEFLATE && rf.kind() == BodyFraming.Kind.LENGTH
                && rf.length() <= SMALL_BODY) {
            byte[] body = framed.readNBytes((int) rf.length());
            if (body.length != rf.length()) {
                throw c.in().ended("stream ended inside a message body");
            }
            if (charset == null && ResponseCharsets.wide(received)
                    && ResponseCharsets.startsEvents(body, body.length) && !relayUnread()) {
                return refuse(c, req, ResponseCharsets.WIDE_EVENTS);
            }
            String inBody = charset != null ? null : ResponseCharsets.declaredInBody(body, body.length);
            if (inBody != null && !relayUnread()) {
                return refuse(c, req, inBody);
            }
            byte[] sent = scrubber.scrubAll(body);
            if ((eventStream(r) || EventText.start(body, body.length) == EventText.Start.EVENTS)
                    && !gzipAt(body, body.length)) {
                sent = EventSplits.whole(scrubber, sent); // a whole event stream: splits across its events too
            }
            if (coding == Coding.IDENTITY && gzipAt(body, body.length)) {
                UnlabelledGzip.Decision d = UnlabelledGzip.decide(body, scrub::newScrubber,
                        decoded -> ResponseCharsets.declaredInBody(decoded, decoded.length) != null);
                sent = d.verdict() == UnlabelledGzip.Verdict.AS_SENT ? body : sent;
                if (d.verdict() == UnlabelledGzip.Verdict.UNDECODABLE && !relayUnread()) {
                    return refuse(c, req, CODING);
                } else if (d.verdict() == UnlabelledGzip.Verdict.REENCODE) {
                    sent = null;
                    framed = new ByteArrayInputStream(d.members()); // decoded, scrubbed and re-encoded
                }
            }
            if (sent != null) {
                return sendWhole(c, req, received, r, rf, sent, closeAfter);
            }
        }
        BodyCharsets.Reader declarations = charset == null && coding != Coding.UNSCANNABLE
                ? BodyCharsets.reader() : null; // every decoded byte, whatever the type, as the body arrives (P12-1)
        String refused = streamBody(c, req, r, framed, coding, declarations, closeAfter || client10);
        if (refused != null) {
            return refuse(c, req, refused);
        }
        ResponseRelay.log(req, r.status());
        return relay.release(c, received, rf, closeAfter || client10);
    }

    /** Sends a whole body with its Content-Length, then releases the upstream connection. */
    private boolean sendWhole(UpstreamPool.Connection c, ParsedRequest req, ResponseHead received, ResponseHead r,
                              BodyFraming rf, byte[] sent, boolean closeAfter) throws IOException {
        reportMatches();
        client.out.write(OutboundHead.encode(ResponseRelay.reframedHead(r, closeAfter, sent.length, false, false)));
        client.responseStarted();
        client.out.write(sent);
        client.out.flush();
        ResponseRelay.log(req, r.status());
        return relay.release(c, received, rf, closeAfter);
    }

    /**
     * Streams the body through the scrubber: decoded per its label, then every layer of gzip data it holds without a
     * label (up to {@value #NESTED_GZIP}) decoded as well, scrubbed, and re-encoded in gzip for the client (the
     * representation keeps its type); sent chunked to an HTTP/1.1 client, close-delimited to an HTTP/1.0 one.
     *
     * @param declarations the reader of the charsets the body declares in itself, or {@code null} when it is not read
     * @return why the body cannot be relayed when it could not be decoded, its wide text starts an event stream, or
     *     its first bytes declare a charset the scrub does not read, before the head was sent (the caller answers 502); {@code null} when it was relayed
     */
    private String streamBody(UpstreamPool.Connection c, ParsedRequest req, ResponseHead r, InputStream framed,
                              Coding coding, BodyCharsets.Reader declarations, boolean closeAfter)
            throws IOException {
        boolean client10 = req.head().isHttp10();
        byte[] buf = new byte[16 * 1024];
        Inflater[] inflater = new Inflater[1];
        boolean sniff = coding != Coding.UNSCANNABLE;
        try {
            InputStream body;
            int n;
            int layers;
            try {
                body = decoded(framed, coding, inflater);
                n = body.read(buf); // the first bytes are decoded before the head is sent: a bad coding is a 502
                layers = 0;
                for (n = sniff ? fillMagic(body, buf, n) : n; sniff && gzipAt(buf, n); n = fillMagic(body, buf, n)) {
                    if (++layers > NESTED_GZIP) {
                        throw new ZipException("gzip nested too deep");
                    }
                    body = new GZIPInputStream(new SequenceInputStream(new ByteArrayInputStream(
                            Arrays.copyOf(buf, n)), body), 8 * 1024);
                    n = body.read(buf);
                }
                n = sniff ? ResponseCharsets.fill(body, buf, n, ResponseCharsets.window(r)) : n; // a signature
            } catch (ZipException | EOFException e) { // the decoder's: the framed body throws UpstreamIOException
                scrub.uninspectable(UNINSPECTABLE, false);
                return CODING;
            }
            n = layers == 0 && sniff && ResponseCharsets.wide(r) ? ResponseCharsets.fill(body, buf, n) : n;
            String why = ResponseCharsets.firstBytes(r, buf, n, declarations);
            if (why != null && !relayUnread()) {
                return why;
            }
            boolean chunkedOut = !client10;
            client.out.write(OutboundHead.encode(ResponseRelay.reframedHead(r, closeAfter, -1, chunkedOut,
                    coding == Coding.GZIP || coding == Coding.DEFLATE)));
            client.responseStarted();
            ChunkedOutput chunks = chunkedOut ? new ChunkedOutput(client.out) : null;
            List<GZIPOutputStream> encoders = new ArrayList<>();
            OutputStream sink = chunkedOut ? chunks : client.out;
            // re-encoded gzip is scrubbed again as it is delivered: no value leaves in the compressed bytes either
            SecretScrubber.Scrubbing delivered = layers > 0 ? scrubber.scrubbing(sink) : null;
            sink = delivered != null ? delivered : sink;
            for (int l = 0; l < layers; l++) {
                GZIPOutputStream g = new GZIPOutputStream(sink, 8 * 1024, true);
                encoders.add(0, g);
                sink = g;
            }
            // an event stream: a value split across two events is found as a client joining their data reads it
            EventSplits events = layers == 0 ? events(r, scrubber, sink) : null;
            SecretScrubber.Scrubbing out = scrubber.scrubbing(events != null ? events : sink);
            c.in().silence(silence(c, out, events, delivered));
            try {
                copyScrubbed(body, buf, n, out, r, why == null ? declarations : null);
            } finally {
                c.in().silence(null);
            }
            finishLayers(out, events, encoders, delivered);
            reportMatches(); // before the last chunk and the flush that completes the response
            if (chunks != null) {
                chunks.finish();
            }
            client.out.flush();
            if (coding != Coding.IDENTITY || layers > 0) {
                framed.transferTo(OutputStream.nullOutputStream()); // what follows the compressed data, to the end
            }
            return null;
        } finally {
            if (inflater[0] != null) {
                inflater[0].end();
            }
        }
    }

    /** Ends the scrub, the held events, each gzip re-encoding (innermost first) and the delivered bytes' scrub. */
    private static void finishLayers(SecretScrubber.Scrubbing out, EventSplits events, List<GZIPOutputStream> encoders,
                                     SecretScrubber.Scrubbing delivered) throws IOException {
        out.finish();
        if (events != null) {
            events.finish();
        }
        for (GZIPOutputStream g : encoders) {
            g.finish(); // innermost first
        }
        if (delivered != null) {
            delivered.finish();
        }
    }

    /**
     * Writes the decoded body through the scrub, {@code n} bytes of {@code buf} first (read by {@code reader}
     * already), each read flushed at once. Every later read is read by {@code reader} (when not {@code null}) for a
     * charset the body declares in itself before it is written.
     *
     * @throws IOException when the body stops decoding (an {@link UpstreamIOException#uninspectable}), events are
     *     held past their bound, or a later read declares a charset the scrub does not read (all audited as
     *     {@value #UNINSPECTABLE}): the caller closes the connection
     */
    private void copyScrubbed(InputStream body, byte[] buf, int n, SecretScrubber.Scrubbing out, ResponseHead r,
                              BodyCharsets.Reader reader) throws IOException {
        try {
            while (n >= 0) {
                if (n > 0) {
                    out.write(buf, 0, n);
                    out.flush();
                }
                n = ResponseFailure.readDecoded(body, buf, scrub);
                if (reader != null) {
                    reader = lateDeclaration(r, reader, n < 0 ? reader.end() : reader.read(buf, 0, n));
                }
            }
        } catch (EventSplits.HeldTooLong e) { // events held past the bound
            scrub.uninspectable(UNINSPECTABLE, false);
            LOG.log(System.Logger.Level.DEBUG, "a response body could not be inspected to its end; closing");
            throw e;
        }
    }

    /**
     * {@return {@code reader}, or {@code null} once a declaration it found is relayed unread} Judges the declarations
     * found in a read after the head was sent (attacker pass 10, P12-1): one the scrub does not read cuts the response
     * off before that read's bytes (audited), unless every injected credential allows relaying it unread.
     *
     * @throws IOException the cut, an {@link UpstreamIOException#uninspectable} the caller closes the connection on
     */
    private BodyCharsets.Reader lateDeclaration(ResponseHead r, BodyCharsets.Reader reader,
                                                List<BodyCharsets.Declaration> found) throws IOException {
        if (ResponseCharsets.unreadableIn(found) == null) {
            return reader;
        }
        if (relayUnread()) {
            return null;
        }
        LOG.log(System.Logger.Level.DEBUG, "a response body declared an unreadable charset after its start; closing");
        throw UpstreamIOException.uninspectable(new IOException(ResponseCharsets.BODY_DECLARED),
                "the upstream's response body declares a charset the scrub does not read, after its start");
    }

    /**
     * {@return the splitter of a scrubbed body's events}: a {@code text/event-stream} is read as events; a body of any
     * other (or no) media type is read as events when its first bytes are an event stream's ({@link EventText#start}),
     * since stream readers that do not check the type decode it so, and otherwise passes unchanged
     */
    static EventSplits events(ResponseHead r, SecretScrubber scrubber, OutputStream sink) {
        EventSplits events = new EventSplits(scrubber, sink);
        return eventStream(r) ? events : events.sniffing();
    }

    /**
     * {@return the release of the held text after {@link ResponseScrub#SILENCE_MILLIS} ms without upstream bytes}:
     * the scrubber's tail, then the held events, then the tail of the re-encoded bytes' scrub, flushed to the client.
     */
    private static HttpInput.Silence silence(UpstreamPool.Connection c, SecretScrubber.Scrubbing out,
                                             EventSplits events, SecretScrubber.Scrubbing delivered) {
        return ResponseScrub.silence(c, out, events, () -> delivered != null && delivered.holding(), () -> false,
                () -> {
                    out.flush(); // through the events and any gzip re-encoding to the delivered bytes' scrub
                    if (delivered != null) {
                        delivered.finish();
                        delivered.flush();
                    }
                });
    }

    /** {@return whether the response is a {@code text/event-stream}} */
    static boolean eventStream(ResponseHead r) {
        return r.all("content-type").stream().anyMatch(f -> f.value().strip().toLowerCase(java.util.Locale.ROOT)
                .startsWith("text/event-stream"));
    }

    /** The most layers of unlabelled gzip data decoded in one body; more is answered 502. */
    static final int NESTED_GZIP = 3;

    /** {@return the body decoded per its label} The inflater made for {@code deflate} goes to {@code inflater[0]}. */
    private static InputStream decoded(InputStream framed, Coding coding, Inflater[] inflater) throws IOException {
        if (coding == Coding.GZIP) {
            return new GZIPInputStream(framed, 8 * 1024);
        }
        if (coding == Coding.DEFLATE) {
            PushbackInputStream p = new PushbackInputStream(framed, 2);
            byte[] h = p.readNBytes(2);
            p.unread(h);
            boolean zlib = h.length == 2 && (h[0] & 0x0f) == 8 && (((h[0] & 0xff) << 8) | (h[1] & 0xff)) % 31 == 0;
            inflater[0] = new Inflater(!zlib);
            return new InflaterInputStream(p, inflater[0], 8 * 1024);
        }
        return framed;
    }

    /**
     * {@return {@code n}, or more when {@code buf[0, n)} is a proper prefix of the gzip magic: read until the magic
     * is complete or refuted} A stream that pauses after one byte that is not {@code 1f} is not waited for.
     */
    private static int fillMagic(InputStream body, byte[] buf, int n) throws IOException {
        while (n > 0 && n < GZIP_MAGIC.length && Arrays.equals(buf, 0, n, GZIP_MAGIC, 0, n)) {
            int more = body.read(buf, n, buf.length - n);
            if (more < 0) {
                break;
            }
            n += more;
        }
        return n;
    }

    /** The gzip member header's first bytes (RFC 1952 section 2.3.1: ID1, ID2, CM = deflate). */
    private static final byte[] GZIP_MAGIC = {0x1f, (byte) 0x8b, 8};

    /** {@return whether {@code buf[0, n)} starts like gzip data} */
    static boolean gzipAt(byte[] buf, int n) {
        return n >= GZIP_MAGIC.length && Arrays.equals(buf, 0, GZIP_MAGIC.length, GZIP_MAGIC, 0, GZIP_MAGIC.length);
    }

    /** Why a body in a content coding that cannot be decoded is not relayed. */
    private static final String CODING = "its content coding cannot be inspected";

    /** {@return whether an unreadable body is relayed anyway (its bytes still scrubbed as delivered); audited} */
    private boolean relayUnread() {
        boolean relayed = scrub.injected().relayUnscannable();
        scrub.uninspectable(UNINSPECTABLE, relayed);
        return relayed;
    }

    /** Answers 502 {@value #UNINSPECTABLE} before any byte of the response; the upstream connection is closed. */
    private boolean refuse(UpstreamPool.Connection c, ParsedRequest req, String why) throws IOException {
        c.close();
        client.send(ErrorResponses.response(502, UNINSPECTABLE, "the upstream's response could not be checked for"
                + " credential values (" + why + ")", req.clientClose()));
        ResponseRelay.log(req, 502);
        return !req.clientClose();
    }

    private static Coding coding(ResponseHead r) {
        List<String> codings = new ArrayList<>(r.listElements("content-encoding"));
        codings.removeIf(c -> c.equals("identity"));
        if (codings.isEmpty()) {
            return Coding.IDENTITY;
        }
        if (codings.size() > 1) {
            return Coding.UNSCANNABLE;
        }
        return switch (codings.get(0)) {
            case "gzip", "x-gzip" -> Coding.GZIP;
            case "deflate" -> Coding.DEFLATE;
            default -> Coding.UNSCANNABLE;
        };
    }

    /** The body's bytes as framed (chunked decoded), ending where the message ends; closing does nothing. */
    static InputStream framed(UpstreamPool.Connection c, BodyFraming rf) {
        HttpInput in = c.in();
        return switch (rf.kind()) {
            case CHUNKED -> new ChunkedDecoder(in).dataStream();
            case LENGTH -> new InputStream() {
                private long left = rf.length();

                @Override
                public int read() throws IOException {
                    byte[] one = new byte[1];
                    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    if (left == 0) {
                        return -1;
                    }
                    if (len == 0) {
                        return 0;
                    }
                    int n = in.read(b, off, (int) Math.min(len, left));
                    if (n < 0) {
                        throw in.ended("stream ended inside a message body");
                    }
                    left -= n;
                    return n;
                }
            };
            case UNTIL_CLOSE -> new InputStream() {
                @Override
                public int read() throws IOException {
                    return in.read();
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    return in.read(b, off, len);
                }
            };
            case NONE -> InputStream.nullInputStream();
        };
    }

    /**
     * The chunked transfer coding on the way out (RFC 9112 section 7.1): what is written is collected and sent as
     * one chunk on each {@link #flush} (or when 16 KiB are collected); {@link #finish} writes the last chunk.
     */
    static final class ChunkedOutput extends OutputStream {
        private final OutputStream out;
        private final byte[] buf = new byte[16 * 1024];
        private final byte[] frame = new byte[16 * 1024 + 16];
        private int len;

        ChunkedOutput(OutputStream out) {
            this.out = out;
        }

        @Override
        public void write(int b) throws IOException {
            if (len == buf.length) {
                emit();
            }
            buf[len++] = (byte) b;
        }

        @Override
        public void write(byte[] b, int off, int n) throws IOException {
            if (len + n > buf.length) {
                emit();
            }
            if (n >= buf.length) {
                chunk(b, off, n);
            } else {
                System.arraycopy(b, off, buf, len, n);
                len += n;
            }
        }

        @Override
        public void flush() throws IOException {
            emit();
            out.flush();
        }

        void finish() throws IOException {
            emit();
            out.write(new byte[] {'0', '\r', '\n', '\r', '\n'});
        }

        private void emit() throws IOException {
            if (len > 0) {
                chunk(buf, 0, len);
                len = 0;
            }
        }

        private void chunk(byte[] b, int off, int n) throws IOException {
            if (n == 0) {
                return;
            }
            // one write per chunk: size line, data and CRLF in one array, so that a small size line never goes to
            // the socket on its own (Nagle's algorithm and delayed ACKs would hold it back)
            byte[] size = (Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII);
            byte[] frame = n + size.length + 2 <= this.frame.length ? this.frame : new byte[n + size.length + 2];
            System.arraycopy(size, 0, frame, 0, size.length);
            System.arraycopy(b, off, frame, size.length, n);
            frame[size.length + n] = '\r';
            frame[size.length + n + 1] = '\n';
            out.write(frame, 0, size.length + n + 2);
        }
    }
}
