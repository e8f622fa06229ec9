package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.supervisor.proxy.ChainSelection;
import dev.openshell.supervisor.proxy.ExchangeRecord;
import dev.openshell.supervisor.proxy.L7Verdict;
import dev.openshell.supervisor.proxy.ProxyRefusal;
import dev.openshell.supervisor.proxy.ProxyRequest;
import dev.openshell.supervisor.proxy.Uninspectable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The request body step of the {@link Pipeline} (RFC 0009, "Operation phases and placement": "The supervisor buffers
 * up to the largest resolved stage limit, bounded by the 4 MiB platform maximum"): with no chain the body streams
 * through later, unread; with one, the body decision comes before any body byte is read: {@code 413} over the cap
 * unless every affected stage is fail_open (then it streams, uninspected), {@code 503} when the body budget stays
 * full, {@code 100 Continue} only then, and the body buffered under its deadline and minimum data rate.
 *
 * <p>One instance per exchange; {@link #close} releases the body-budget reservation.
 */
final class RequestBody implements AutoCloseable {
    static final byte[] CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    /** What the body step read. */
    sealed interface Read {
        /** The body streams through after the head, unread here. */
        record Streamed() implements Read {
        }

        /**
         * The body is buffered whole.
         *
         * @param body the body, at most the cap; empty when the request has none
         */
        record Buffered(Body body) implements Read {
        }
    }

    private static final Read STREAMED = new Read.Streamed();

    private final ProxyCore core;
    private final ClientStream client;
    private final RequestReader reader;
    private final boolean inTunnel;
    /** The body-budget reservation of this request, if its body is buffered. */
    private BodyBudget.Reservation held;

    RequestBody(ProxyCore core, ClientStream client, RequestReader reader, boolean inTunnel) {
        this.core = core;
        this.client = client;
        this.reader = reader;
        this.inTunnel = inTunnel;
    }

    /**
     * {@return the body the policy needs: the chain's, widened by the L7 decision's} A body-aware L7 route needs the
     * body buffered up to its endpoint's limit (at most the 4 MiB platform maximum), and a body over it is refused
     * (413), never streamed uninspected.
     *
     * @param selection the plan's chain selection
     * @param l7 the L7 decision on the head
     */
    static ChainSelection need(ChainSelection selection, L7Verdict l7) {
        if (!(l7 instanceof L7Verdict.NeedsBody n)) {
            return selection;
        }
        int l7Cap = Math.min(n.bodyCapBytes(), EnvelopeLimits.MAX_BODY_BYTES);
        int cap = selection instanceof ChainSelection.Selected s ? Math.max(s.bodyCapBytes(), l7Cap) : l7Cap;
        return ChainSelection.selected(cap, false);
    }

    /**
     * Reads the body the policy needs.
     *
     * @param req the request as read
     * @param request the request as the policy steps see it
     * @param need the body the policy needs
     * @param audit the audit of this exchange
     * @throws Answered when the body was refused (413, 503) and answered
     */
    Read read(ParsedRequest req, ProxyRequest request, ChainSelection need, Consumer<ExchangeRecord> audit)
            throws IOException, FramingException, Answered {
        if (!(need instanceof ChainSelection.Selected s)) {
            return STREAMED;
        }
        BodyFraming framing = req.framing();
        if (framing.kind() == BodyFraming.Kind.LENGTH && framing.length() > s.bodyCapBytes()) {
            audit.accept(new ExchangeRecord.Uninspected(request, new Uninspectable(
                    Uninspectable.Kind.CONTENT_LENGTH_OVER_CAP, s.bodyCapBytes(), framing.length(), s.allFailOpen())));
            if (s.allFailOpen()) {
                return STREAMED;
            }
            throw answer(req, 413, "body_too_large", "the request body exceeds the middleware body limit of "
                    + s.bodyCapBytes() + " bytes");
        }
        if (framing.hasBody()) {
            reserve(req, request, framing.kind() == BodyFraming.Kind.LENGTH ? framing.length() : s.bodyCapBytes(),
                    audit);
        }
        if (req.expectContinue()) {
            client.send(CONTINUE);
        }
        Body received = buffer(framing, s.bodyCapBytes());
        if (received == null) {
            audit.accept(new ExchangeRecord.Uninspected(request, new Uninspectable(Uninspectable.Kind.CHUNKED_OVER_CAP,
                    s.bodyCapBytes(), -1, false)));
            throw answer(req, 413, "body_too_large", "the chunked request body exceeds the middleware body limit of "
                    + s.bodyCapBytes() + " bytes");
        }
        if (held != null) {
            held.shrinkTo(received.heapBytes());
        }
        audit.accept(new ExchangeRecord.BodyBuffered(received.size()));
        return new Read.Buffered(received);
    }

    /**
     * Buffers the body, under its deadline and minimum data rate; no deadline where the read cannot block: no body,
     * or a Content-Length body already buffered whole with its head (the usual small POST), which saves the two
     * watchdog tasks.
     *
     * @return the body, or {@code null} when a chunked body crossed the cap
     */
    private Body buffer(BodyFraming framing, int cap) throws IOException, FramingException {
        boolean readable = !framing.hasBody() || (framing.kind() == BodyFraming.Kind.LENGTH
                && client.in.buffered() >= framing.length());
        ReadDeadline deadline = readable ? null : ReadDeadline.body(core, client, inTunnel);
        try {
            return reader.readBody(framing, cap);
        } finally {
            if (deadline != null && !deadline.finish()) {
                // answered 408 and closed by the watchdog; whatever the read ended with, the exchange is over
                throw new IOException("the body buffering deadline expired");
            }
        }
    }

    /** Reserves the heap the segmented body will take ({@link Body#heapBytes}), not only its length; 503 without. */
    private void reserve(ParsedRequest req, ProxyRequest request, long bytes, Consumer<ExchangeRecord> audit)
            throws IOException, Answered {
        BodyBudget.Claim claim;
        try {
            claim = core.bodyBudget().reserve(Body.heapBytes(bytes), client.connection.client()
                    .map(InetSocketAddress::getAddress).orElse(null), () -> core.owner(client.connection));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while waiting for body buffer room");
        }
        audit.accept(new ExchangeRecord.BodyBufferWaited(claim.waitedNanos()));
        held = claim.reservation();
        if (held != null) {
            return;
        }
        String busy = claim.refusal().equals("client_body_buffer_limit")
                ? "this client is holding as many request bodies as one client may; retry shortly"
                : "the proxy is holding as many request bodies as it may; retry shortly";
        audit.accept(new ExchangeRecord.Refused(new ProxyRefusal(ProxyRefusal.Kind.LIMIT, 503, claim.refusal(),
                Optional.empty(), busy, client.connection, Optional.of(req.head().method()),
                Optional.of(new ProxyRefusal.Destination(request.target().scheme(), request.target().host(),
                        request.target().port())), Optional.of(request.requestId()))));
        throw answer(req, 503, claim.refusal(), busy);
    }

    /** Sends an error answer and closes; {@return the exception that ends the exchange} */
    private Answered answer(ParsedRequest req, int status, String error, String detail) throws IOException {
        client.send(ErrorResponses.response(status, error, detail, true));
        ResponseRelay.log(req, status);
        return new Answered(false);
    }

    /** Releases the body-budget reservation: the buffered body is no longer referenced. */
    @Override
    public void close() {
        if (held != null) {
            held.close();
            held = null;
        }
    }
}
