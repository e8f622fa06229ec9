package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HeaderTable;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.supervisor.proxy.ProxyRefusal;
import dev.openshell.supervisor.proxy.ProxyResponse;
import dev.openshell.supervisor.proxy.ResponseBody;
import dev.openshell.supervisor.proxy.ResponseVerdict;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PushbackInputStream;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Function;
import java.util.zip.GZIPInputStream;
import java.util.zip.Inflater;
import java.util.zip.InflaterInputStream;
import java.util.zip.ZipException;

/**
 * Relays a final response through the response stages ({@link dev.openshell.supervisor.proxy.PolicySteps.ResponseChain};
 * {@code docs/proxy.md}, "Response stages"). Order: the credential scrub first (on a credential-bound exchange the
 * head and every body byte a stage sees are scrubbed), then the stages, then delivery.
 *
 * <ul>
 *   <li>A {@code gzip}/{@code x-gzip}/{@code deflate} body is decoded; stages see it as identity and the client
 *       receives it decoded, without {@code Content-Encoding}. Other codings: stages may only read the head, and the
 *       body is relayed as framed.</li>
 *   <li>A withheld response (a block, a {@code fail_closed} failure before the head is committed) is answered with
 *       the step's platform answer and no upstream byte; the upstream connection is closed.</li>
 *   <li>Framing is the proxy's own: a body held whole is sent with its new {@code Content-Length}; a streamed one is
 *       chunked to an HTTP/1.1 client (the connection stays open) and close-delimited to an HTTP/1.0 client. A
 *       {@code fail_closed} failure after the head is committed closes the client connection without the last chunk,
 *       so the client cannot take the response for complete.</li>
 * </ul>
 */
final class InspectingRelay {
    private enum Coding { IDENTITY, GZIP, DEFLATE, OTHER }

    private final ProxyCore core;
    private final ClientStream client;
    private final ResponseRelay relay;

    InspectingRelay(ProxyCore core, ClientStream client, ResponseRelay relay) {
        this.core = core;
        this.client = client;
        this.relay = relay;
    }

    /**
     * Relays {@code received} through the response stages.
     *
     * @param scrub the credential scrub, or {@code null}
     * @param step the exchange's response step
     * @return whether the client connection stays open, or {@code null} when no response stage applies (nothing was
     *     read or sent: the caller relays as usual)
     */
    Boolean relay(UpstreamPool.Connection c, ParsedRequest req, ResponseHead received, ResponseScrub scrub,
                  Function<ProxyResponse, ResponseVerdict> step) throws IOException, Refusal {
        BodyFraming rf;
        try {
            rf = BodyFraming.forResponse(received, req.head().method());
        } catch (FramingException e) {
            throw new Refusal(502, "invalid_upstream_response", e.getMessage());
        }
        Coding coding = coding(received);
        if (scrub != null && coding == Coding.OTHER && rf.hasBody() && !scrub.injected().relayUnscannable()) {
            return null; // the scrub refuses it (502 response_uninspectable) before any stage could read it
        }
        SecretScrubber scrubber = scrub == null ? null : scrub.newScrubber();
        HeadScrub scrubbed = scrubber == null ? null : HeadScrub.scrub(received, scrubber);
        ResponseHead r = scrubbed == null ? received : scrubbed.head();
        long headerMatches = scrubber == null ? 0 : scrubber.matches();
        boolean decoded = rf.hasBody() && (coding == Coding.GZIP || coding == Coding.DEFLATE);
        Set<String> nominated = nominated(r);
        ProxyResponse response = new ProxyResponse(r.status(), fields(r, nominated, decoded), nominated,
                shape(req, r, rf, coding));
        ResponseVerdict v = step.apply(response);
        if (v == null) {
            return null; // the caller relays it as usual, and scrubs (and audits) the head itself
        }
        if (scrubbed != null) {
            scrubbed.audited(scrub); // fields dropped as unreadable: recorded before any byte goes to the client
        }
        if (v instanceof ResponseVerdict.Withhold w) {
            c.close();
            client.send(ErrorResponses.response(w.answer(), req.clientClose() || w.answer().close()));
            ResponseRelay.log(req, w.answer().status());
            return !(req.clientClose() || w.answer().close());
        }
        ResponseVerdict.Deliver d = (ResponseVerdict.Deliver) v;
        ResponseBody body = d.body().orElse(null);
        Delivery delivery = new Delivery(c, req, r, d.headers(), rf, decoded, body);
        try {
            boolean keep;
            try {
                keep = delivery.run(coding, scrubber);
            } catch (EventSplits.HeldTooLong e) { // events held past the bound: closed, as ScrubbingRelay does
                scrub.uninspectable(ScrubbingRelay.UNINSPECTABLE, false);
                throw e;
            }
            var interim = relay.interimScrubs(); // the interim heads were scrubbed by the relay's scrubber
            if (scrubber != null && scrubber.matches() + interim.getKey() > 0) {
                Set<String> names = new java.util.TreeSet<>(scrubber.matchedNames());
                names.addAll(interim.getValue());
                scrub.scrubbed(names, headerMatches + interim.getKey(), scrubber.matches() - headerMatches);
            }
            return keep;
        } finally {
            if (body != null && !delivery.stagesEnded) {
                delivery.stagesEnded = true;
                body.end(false);
            }
        }
    }

    /** One response's delivery: the body read, decoded, scrubbed, pushed through the stages and framed. */
    private final class Delivery {
        private final UpstreamPool.Connection c;
        private final ParsedRequest req;
        private final ResponseHead r;
        private final List<HttpHeader> headers;
        private final BodyFraming rf;
        private final boolean decoded;
        private final ResponseBody body;
        private final boolean client10;
        private boolean closeAfter;
        private boolean committed;
        private ScrubbingRelay.ChunkedOutput chunks;
        private final List<Body> held = new ArrayList<>();
        private boolean stagesEnded;
        /** Reports what the scrub replaced; run once, before the response's last bytes. */
        private Runnable report = () -> { };

        Delivery(UpstreamPool.Connection c, ParsedRequest req, ResponseHead r, List<HttpHeader> headers,
                 BodyFraming rf, boolean decoded, ResponseBody body) {
            this.c = c;
            this.req = req;
            this.r = r;
            this.headers = headers;
            this.rf = rf;
            this.decoded = decoded;
            this.body = body;
            this.client10 = req.head().isHttp10();
            this.closeAfter = req.clientClose() || rf.kind() == BodyFraming.Kind.UNTIL_CLOSE
                    || client.state.draining();
        }

        boolean run(Coding coding, SecretScrubber scrubber) throws IOException, Refusal {
            if (!rf.hasBody()) {
                endStages();
                commit(0);
                client.out.flush();
                ResponseRelay.log(req, r.status());
                return relay.release(c, r, rf, closeAfter);
            }
            if (coding == Coding.OTHER && body == null && scrubber == null) {
                // stages read the head only: the body goes as framed, in its coding
                client.out.write(OutboundHead.encode(head(rf.kind() == BodyFraming.Kind.LENGTH ? rf.length() : -1,
                        !client10 && rf.kind() != BodyFraming.Kind.LENGTH, true)));
                client.responseStarted();
                relay.relayBody(c, rf, client10);
                ResponseRelay.log(req, r.status());
                return relay.release(c, r, rf, closeAfter);
            }
            InputStream framed = ScrubbingRelay.framed(c, rf);
            Inflater inflater = null;
            try {
                InputStream in = framed;
                if (coding == Coding.GZIP) {
                    in = new GZIPInputStream(framed, 8 * 1024);
                } else if (coding == Coding.DEFLATE) {
                    PushbackInputStream p = new PushbackInputStream(framed, 2);
                    byte[] h = p.readNBytes(2);
                    p.unread(h);
                    boolean zlib = h.length == 2 && (h[0] & 0x0f) == 8
                            && (((h[0] & 0xff) << 8) | (h[1] & 0xff)) % 31 == 0;
                    inflater = new Inflater(!zlib);
                    in = new InflaterInputStream(p, inflater, 8 * 1024);
                }
                pump(in, scrubber);
                if (decoded) {
                    framed.transferTo(OutputStream.nullOutputStream()); // what follows the compressed data
                }
            } catch (ZipException | EOFException e) { // the decoder's: the framed body throws UpstreamIOException
                c.close();
                if (!committed) {
                    throw new Refusal(ProxyRefusal.Kind.UPSTREAM, 502, "response_undecodable",
                            Optional.of(ProxyRefusal.UpstreamCause.INVALID_RESPONSE.code()),
                            "the upstream's response body could not be decoded for inspection");
                }
                throw UpstreamIOException.invalidResponse("the upstream's compressed response body stopped"
                        + " decoding"); // cut off (ResponseFailure)
            } catch (ResponseBody.Failure f) {
                c.close();
                if (committed) {
                    // the head and some body went: end so the client cannot take the response for complete
                    throw new IOException("a response stage failed after the response was committed");
                }
                client.send(ErrorResponses.response(f.answer(), true));
                ResponseRelay.log(req, f.answer().status());
                return false;
            } finally {
                if (inflater != null) {
                    inflater.end();
                }
                report.run(); // a response cut off: what was replaced until then
            }
            ResponseRelay.log(req, r.status());
            return relay.release(c, r, rf, closeAfter);
        }

        /** Reads the body to its end, unit by unit as the upstream sends it. */
        private void pump(InputStream in, SecretScrubber scrubber) throws IOException, ResponseBody.Failure {
            byte[] buf = new byte[16 * 1024];
            ByteArrayOutputStream sink = new ByteArrayOutputStream();
            // an event stream: a value split across two events is scrubbed as well (EventSplits)
            EventSplits events = scrubber != null ? ScrubbingRelay.events(r, scrubber, sink) : null;
            SecretScrubber.Scrubbing scrubbing = scrubber == null ? null
                    : scrubber.scrubbing(events != null ? events : sink);
            if (scrubbing != null) {
                c.in().silence(silence(scrubbing, events, sink));
            }
            try {
                pumpUnits(in, buf, sink, scrubbing, events);
            } catch (StageFailed f) {
                throw f.failure;
            } finally {
                c.in().silence(null);
            }
        }

        /** A stage's failure on text released while the upstream was silent, thrown out of the read that waited. */
        private static final class StageFailed extends IOException {
            private static final long serialVersionUID = 1L;
            final transient ResponseBody.Failure failure;

            StageFailed(ResponseBody.Failure failure) {
                super("a response stage failed", null);
                this.failure = failure;
            }
        }

        /**
         * {@return the release of the scrub's held text to the stages after {@link ResponseScrub#SILENCE_MILLIS} ms
         * without upstream bytes}; not while a stage holds the head (its accumulation deadline times the reads then).
         */
        private HttpInput.Silence silence(SecretScrubber.Scrubbing scrubbing, EventSplits events,
                                          ByteArrayOutputStream sink) {
            return ResponseScrub.silence(c, scrubbing, events, () -> false, () -> body != null && body.holdsHead(),
                    () -> {
                        byte[] piece = sink.toByteArray();
                        sink.reset();
                        if (piece.length > 0) {
                            try {
                                deliver(body == null ? List.of(Body.ofOwned(piece))
                                        : body.unit(Body.ofOwned(piece), false), false);
                            } catch (ResponseBody.Failure f) {
                                throw new StageFailed(f);
                            }
                        }
                    });
        }

        /** The loop of {@link #pump}: one read, scrubbed, to the stages and the client. */
        private void pumpUnits(InputStream in, byte[] buf, ByteArrayOutputStream sink,
                               SecretScrubber.Scrubbing scrubbing, EventSplits events)
                throws IOException, ResponseBody.Failure {
            long deadline = body != null && body.holdsHead()
                    ? System.nanoTime() + body.accumulationDeadline().toNanos() : Long.MAX_VALUE;
            while (true) {
                int n;
                try {
                    if (body != null && body.holdsHead()) {
                        long left = (deadline - System.nanoTime()) / 1_000_000;
                        if (left <= 0) {
                            throw new SocketTimeoutException("accumulation deadline");
                        }
                        c.readTimeout((int) Math.min(Integer.MAX_VALUE, Math.max(1, left)));
                    }
                    n = in.read(buf);
                } catch (IOException e) {
                    if (e instanceof StageFailed || !timedOut(e) || body == null || !body.holdsHead()) {
                        throw e;
                    }
                    if (System.nanoTime() < deadline) {
                        continue; // the socket's timer ran out just before the deadline: wait for the rest
                    }
                    c.readTimeout(0);
                    deliver(body.accumulationTimedOut(), false);
                    continue;
                }
                boolean end = n < 0;
                byte[] piece;
                if (scrubbing != null) {
                    if (n > 0) {
                        scrubbing.write(buf, 0, n);
                    }
                    if (end) {
                        scrubbing.finish();
                        if (events != null) {
                            events.finish();
                        }
                    }
                    piece = sink.toByteArray();
                    sink.reset();
                } else {
                    piece = n > 0 ? java.util.Arrays.copyOf(buf, n) : new byte[0];
                }
                List<Body> out = body == null ? List.of(Body.ofOwned(piece)) : body.unit(Body.ofOwned(piece), end);
                deliver(out, end);
                if (end) {
                    return;
                }
            }
        }

        private static boolean timedOut(Throwable e) {
            for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
                if (c instanceof SocketTimeoutException) {
                    return true;
                }
            }
            return false;
        }

        /** Ends the stages (their records written) before the response's last bytes reach the client. */
        private void endStages() {
            report.run();
            report = () -> { };
            if (body != null && !stagesEnded) {
                stagesEnded = true;
                body.end(true);
            }
        }

        /** Delivers stage output: held while a whole-body stage holds, else streamed. */
        private void deliver(List<Body> out, boolean end) throws IOException {
            boolean holds = body != null && body.holdsHead();
            if (!committed && (holds || (end && body != null))) {
                held.addAll(out);
                if (!end) {
                    return;
                }
                long length = 0;
                for (Body b : held) {
                    length += b.size();
                }
                endStages();
                commit(length);
                for (Body b : held) {
                    b.writeTo(client.out);
                }
                client.out.flush();
                return;
            }
            if (!committed) {
                commit(-1);
                for (Body b : held) {
                    write(b);
                }
                held.clear();
            }
            for (Body b : out) {
                write(b);
            }
            if (end) {
                endStages();
                if (chunks != null) {
                    chunks.finish();
                }
            }
            client.out.flush();
        }

        private void write(Body b) throws IOException {
            if (b.isEmpty()) {
                return;
            }
            if (chunks != null) {
                b.writeTo(chunks);
                chunks.flush();
            } else {
                b.writeTo(client.out);
            }
        }

        /** Sends the head: with {@code length} when known, else chunked (HTTP/1.1) or close-delimited. */
        private void commit(long length) throws IOException {
            boolean chunked = length < 0 && !client10;
            if (length < 0 && client10) {
                closeAfter = true;
            }
            client.out.write(OutboundHead.encode(head(length, chunked, false)));
            client.responseStarted();
            committed = true;
            if (chunked) {
                chunks = new ScrubbingRelay.ChunkedOutput(client.out);
            }
        }

        /** The delivered head: the status line, the stages' fields, the proxy's framing. */
        private String head(long length, boolean chunked, boolean asFramed) {
            StringBuilder sb = new StringBuilder(1024).append(r.statusLine()).append("\r\n");
            for (HttpHeader h : headers) {
                String lower = h.name().toLowerCase(Locale.ROOT);
                if (lower.equals("content-length") || lower.equals("transfer-encoding")
                        || (decoded && lower.equals("content-encoding"))) {
                    continue;
                }
                sb.append(h.name()).append(": ").append(h.value()).append("\r\n");
            }
            boolean bodyless = req.head().method().equals("HEAD") || r.status() == 204 || r.status() == 304;
            if (bodyless || asFramed) {
                for (HeaderField f : r.fields()) {
                    String lower = f.lowerName();
                    if ((lower.equals("content-length") && r.all("transfer-encoding").isEmpty())
                            || (asFramed && lower.equals("transfer-encoding") && !client10)) {
                        sb.append(f.rawLine()).append("\r\n");
                    }
                }
            } else if (length >= 0) {
                sb.append("Content-Length: ").append(length).append("\r\n");
            } else if (chunked) {
                sb.append("Transfer-Encoding: chunked\r\n");
            }
            if (closeAfter) {
                sb.append("Connection: close\r\n");
            }
            return sb.append("\r\n").toString();
        }
    }

    /** {@return the head's fields as stages see them: hop-by-hop, nominated and shadowing names removed} */
    private static List<HttpHeader> fields(ResponseHead r, Set<String> nominated, boolean decoded) {
        List<HttpHeader> out = new ArrayList<>(r.fields().size());
        for (HeaderField f : r.fields()) {
            String lower = f.lowerName();
            if (HeaderTable.hopByHop(lower) || nominated.contains(lower) || lower.equals("transfer-encoding")
                    || HeaderTable.underscoreShadowsProtected(lower)
                    || (decoded && (lower.equals("content-encoding") || lower.equals("content-length")))) {
                continue;
            }
            out.add(new HttpHeader(lower, new String(f.value().getBytes(StandardCharsets.ISO_8859_1),
                    StandardCharsets.ISO_8859_1)));
        }
        return out;
    }

    private static ProxyResponse.Shape shape(ParsedRequest req, ResponseHead r, BodyFraming rf, Coding coding) {
        int s = r.status();
        boolean bodyless = req.head().method().equals("HEAD") || s == 204 || s == 304;
        String type = String.join(",", r.listElements("content-type")).toLowerCase(Locale.ROOT);
        boolean partial = s == 206 || !r.all("content-range").isEmpty() || type.startsWith("multipart/byteranges");
        boolean noTransform = r.listElements("cache-control").stream()
                .anyMatch(d -> d.toLowerCase(Locale.ROOT).startsWith("no-transform"));
        boolean openEnded = type.startsWith("text/event-stream") || type.startsWith("multipart/x-mixed-replace");
        OptionalLong declared = coding == Coding.IDENTITY && rf.kind() == BodyFraming.Kind.LENGTH
                ? OptionalLong.of(rf.length()) : OptionalLong.empty();
        return new ProxyResponse.Shape(bodyless, partial, noTransform, openEnded, coding != Coding.OTHER, declared);
    }

    private static Set<String> nominated(ResponseHead r) {
        Set<String> nominated = new LinkedHashSet<>();
        for (String n : r.listElements("connection")) {
            nominated.add(n.toLowerCase(Locale.ROOT));
        }
        nominated.removeIf(HeaderTable::routingOrFraming);
        return nominated;
    }

    private static Coding coding(ResponseHead r) {
        List<String> codings = new ArrayList<>(r.listElements("content-encoding"));
        codings.replaceAll(c -> c.toLowerCase(Locale.ROOT));
        codings.removeIf(c -> c.equals("identity"));
        if (codings.isEmpty()) {
            return Coding.IDENTITY;
        }
        if (codings.size() > 1) {
            return Coding.OTHER;
        }
        return switch (codings.get(0)) {
            case "gzip", "x-gzip" -> Coding.GZIP;
            case "deflate" -> Coding.DEFLATE;
            default -> Coding.OTHER;
        };
    }
}
