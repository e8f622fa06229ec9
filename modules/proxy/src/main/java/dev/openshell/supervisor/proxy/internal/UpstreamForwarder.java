package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.Body;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Duration;
import java.util.Set;

/**
 * Sends one request upstream over a pooled or fresh connection to the admitted addresses and hands the response to
 * the {@link ResponseRelay}. A request whose body is buffered or absent, with an idempotent method (RFC 9110 section
 * 9.2.2), is retried once on a fresh connection when a reused one fails before any response byte reached the client;
 * such requests may also reuse connections idle for longer.
 */
final class UpstreamForwarder {
    private static final Set<String> IDEMPOTENT = Set.of("GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE");

    /**
     * What goes upstream.
     *
     * @param req the request as read
     * @param admitted the destination and its checked addresses
     * @param head the encoded request head
     * @param mode how the body goes
     * @param buffered the buffered body, with {@link OutboundHead.BodyMode#BUFFERED}
     * @param websocketMessages the policy on the client's WebSocket text messages after a {@code 101}, when they
     *     are inspected ({@link dev.openshell.supervisor.proxy.L7Verdict.Allow#messages()})
     * @param scrub the credential values to scrub from the response, or {@code null} when none was injected
     * @param session the WebSocket session's message chain, or {@code null} when no stage joins it
     * @param responses the exchange's response step ({@link InspectingRelay}), or {@code null}
     * @param interimWithheld when interim heads are withheld from the client, what records it (called once, at the
     *     first); {@code null} when they are relayed
     */
    record Outbound(ParsedRequest req, ProxyCore.Admitted admitted, byte[] head, OutboundHead.BodyMode mode,
                    Body buffered,
                    java.util.Optional<dev.openshell.supervisor.proxy.WebSocketMessages> websocketMessages,
                    ResponseScrub scrub, dev.openshell.supervisor.proxy.MessageSession session,
                    java.util.function.Function<dev.openshell.supervisor.proxy.ProxyResponse,
                            dev.openshell.supervisor.proxy.ResponseVerdict> responses,
                    java.util.function.IntConsumer interimWithheld, MessageMemory memory) {
    }

    private final ProxyCore core;
    private final ClientStream client;
    private final ResponseRelay relay;

    UpstreamForwarder(ProxyCore core, ClientStream client) {
        this.core = core;
        this.client = client;
        this.relay = new ResponseRelay(core, client);
    }

    /** Streams the request body upstream, under the minimum body data rate ({@link ReadDeadline#streamed}). */
    private void streamBody(ParsedRequest req, OutputStream up) throws IOException, FramingException {
        ReadDeadline rate = ReadDeadline.streamed(core, client, client.inTunnel());
        try {
            if (req.framing().kind() == BodyFraming.Kind.CHUNKED) {
                new ChunkedDecoder(client.in).relay(up, false);
            } else {
                client.in.transferExactly(req.framing().length(), up);
            }
        } finally {
            if (!rate.finish()) {
                // answered 408 and closed by the watchdog: the upstream connection must not be reused
                throw new IOException("the request body was slower than the minimum data rate");
            }
        }
    }

    /** {@return whether the client connection stays open} */
    boolean forward(Outbound o) throws IOException, FramingException, Refusal {
        ParsedRequest req = o.req();
        RequestReader.Target t = req.target();
        UpstreamPool.Key key = new UpstreamPool.Key(t.scheme().equals("https"), t.authority().host(),
                t.authority().port());
        boolean replayable = o.mode() == OutboundHead.BodyMode.NONE || o.mode() == OutboundHead.BodyMode.BUFFERED;
        boolean idempotent = IDEMPOTENT.contains(req.head().method());
        ProxyCore.Timeouts to = core.timeouts();
        Duration maxIdle = req.websocket() ? Duration.ZERO : replayable && idempotent ? to.poolIdle() : to.freshIdle();
        UpstreamPool.Connection c;
        ResponseHead response;
        for (int attempt = 0; ; attempt++) {
            c = core.pool().acquire(key, o.admitted().addresses(), attempt == 0 ? maxIdle : Duration.ZERO);
            try {
                OutputStream up = c.out();
                up.write(o.head());
                switch (o.mode()) {
                    // the body's own segments: no whole-body copy per attempt
                    case BUFFERED -> o.buffered().writeTo(up);
                    case STREAM_LENGTH, STREAM_CHUNKED -> streamBody(req, up);
                    case NONE -> {
                    }
                }
                up.flush();
                c.awaitReadable();
                response = relay.finalResponse(c, req.head(), req.websocket(), o.scrub(), o.interimWithheld());
                break;
            } catch (UpstreamIOException e) {
                c.close();
                if (attempt == 0 && c.reused() && replayable && idempotent && !client.isResponseStarted()) {
                    continue;
                }
                throw e;
            } catch (IOException | FramingException | Refusal | RuntimeException e) {
                c.close();
                throw e;
            }
        }
        try {
            return relay.relay(c, req, response, o.websocketMessages(), o.scrub(), o.session(), o.responses(),
                    o.memory() == null ? MessageMemory.unbounded() : o.memory());
        } catch (IOException | RuntimeException e) {
            c.close();
            throw e;
        }
    }
}
