package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.HeaderTable;
import java.io.EOFException;
import java.io.IOException;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Relays the upstream's response to the client: interim 1xx responses (except {@code 100}, which the proxy answers
 * itself), then the final head without hop-by-hop ({@link HeaderTable#hopByHop}) and Connection-nominated fields
 * (RFC 9110 section 7.6.1), then the body as framed (RFC 9112 section 6; de-chunked for an HTTP/1.0 client), and
 * decides whether the client and upstream connections stay open. A {@code 101} to a WebSocket upgrade hands over to
 * {@link UpgradeRelay}. The response to a request that carried a credential goes through {@link ScrubbingRelay}.
 */
final class ResponseRelay {
    private static final System.Logger LOG = ProxyCore.LOG;
    /**
     * The most interim (1xx) responses before the final one: a real server sends one or two ({@code 100}, {@code 103}
     * Early Hints); more is an upstream holding the exchange open (RFC 9110 section 15.2 sets no limit).
     */
    static final int MAX_INTERIM_RESPONSES = 16;

    private final ProxyCore core;
    private final ClientStream client;

    ResponseRelay(ProxyCore core, ClientStream client) {
        this.core = core;
        this.client = client;
    }

    /**
     * Reads the final response head, relaying interim ones (scrubbed with the final head's scrubber) or, with
     * {@code withheld}, dropping them.
     *
     * @param withheld when interim heads are withheld ({@link
     *     dev.openshell.supervisor.proxy.PolicySteps.ResponseChain#withholdsInterim}), told the status of the first;
     *     {@code null} to relay them
     * @throws UpstreamIOException when the upstream closed before a head (a reused connection may then be retried)
     * @throws Refusal 502 for a malformed head, an unasked {@code 101}, an interim response in HTTP/1.0 or more than
     *     {@value #MAX_INTERIM_RESPONSES} interim responses
     */
    ResponseHead finalResponse(UpstreamPool.Connection c, RequestHead head, boolean websocket, ResponseScrub scrub,
                               java.util.function.IntConsumer withheld) throws IOException, Refusal {
        for (int interims = 0; ; ) {
            ResponseHead r;
            try {
                r = HeadParser.readResponseHead(c.in());
            } catch (FramingException e) {
                throw new Refusal(502, "invalid_upstream_response", "the upstream sent a malformed response");
            } catch (EOFException e) {
                throw new UpstreamIOException(e);
            }
            if (r.status() < 200 && r.isHttp10() && !(r.status() == 101 && websocket)) {
                // 1xx is not defined for HTTP/1.0 (RFC 9110 section 15.2); a 101 to an upgrade is refused with the
                // handshake's other checks (UpgradeHandshake)
                throw new Refusal(502, "invalid_upstream_response", "the upstream sent an interim (1xx) response"
                        + " in HTTP/1.0, which does not define them (RFC 9110 section 15.2)");
            }
            if (r.status() == 101) {
                if (websocket) {
                    return r;
                }
                throw new Refusal(502, "invalid_upstream_response", "the upstream switched protocols unasked");
            }
            if (r.status() >= 200) {
                return r;
            }
            if (++interims > MAX_INTERIM_RESPONSES) {
                throw new Refusal(502, "invalid_upstream_response", "the upstream sent more than "
                        + MAX_INTERIM_RESPONSES + " interim (1xx) responses");
            }
            if (r.status() != 100 && withheld != null) {
                if (!interimWithheld) {
                    interimWithheld = true;
                    withheld.accept(r.status());
                }
            } else if (r.status() != 100 && !head.isHttp10()) {
                ResponseHead interim = r;
                if (scrub != null) {
                    long before = scrubber(scrub).matches();
                    interim = HeadScrub.scrub(r, scrubber).audited(scrub);
                    interimMatches += scrubber.matches() - before;
                }
                client.out.write(OutboundHead.encode(responseHead(interim, false, false, false)));
                client.out.flush();
                client.responseStarted();
            }
        }
    }

    /**
     * Relays the final response.
     *
     * @return whether the client connection stays open for another request
     */
    boolean relay(UpstreamPool.Connection c, ParsedRequest req, ResponseHead r) throws IOException, Refusal {
        return relay(c, req, r, java.util.Optional.empty(), null, null, null, MessageMemory.unbounded());
    }

    /**
     * Relays the final response; after a {@code 101}, the client's WebSocket text messages go through
     * {@code websocketMessages} when it is present ({@link UpgradeRelay}), and the session's messages through
     * {@code session} ({@link SessionRelay}). Any other final response goes through the response stages of
     * {@code responses} when any applies ({@link InspectingRelay}); with {@code scrub} (a credential was injected or
     * the host is credential-bound) it is scrubbed first ({@link ScrubbingRelay}, or inside the inspecting relay);
     * a {@code 101}'s head is scrubbed here.
     *
     * @param session the WebSocket session's message chain, or {@code null}
     * @param responses the exchange's response step, or {@code null}
     * @return whether the client connection stays open for another request
     */
    boolean relay(UpstreamPool.Connection c, ParsedRequest req, ResponseHead r,
                  java.util.Optional<dev.openshell.supervisor.proxy.WebSocketMessages> websocketMessages,
                  ResponseScrub scrub, dev.openshell.supervisor.proxy.MessageSession session,
                  java.util.function.Function<dev.openshell.supervisor.proxy.ProxyResponse,
                          dev.openshell.supervisor.proxy.ResponseVerdict> responses, MessageMemory memory)
            throws IOException, Refusal {
        RequestHead head = req.head();
        if (session != null && r.status() != 101) {
            session.end(dev.openshell.middleware.spi.SessionEndReason.UPSTREAM_FAILURE);
        }
        if (responses != null && r.status() != 101) {
            Boolean kept = new InspectingRelay(core, client, this).relay(c, req, r, scrub, responses);
            if (kept != null) {
                return kept;
            }
        }
        if (scrub != null && r.status() != 101) {
            return new ScrubbingRelay(core, client, this, scrub, scrubber(scrub)).relay(c, req, r);
        }
        if (r.status() == 101) {
            String failed = UpgradeHandshake.problem(head, r);
            if (failed == null && (session != null || websocketMessages.isPresent() || scrub != null)
                    && !r.all("sec-websocket-extensions").isEmpty()) {
                // the request went without Sec-WebSocket-Extensions (frames are parsed here): RFC 6455 section 4.1
                failed = "the upstream accepted a WebSocket extension that was not offered (RFC 6455 section 4.1)";
            }
            if (failed != null) {
                if (session != null) {
                    session.end(dev.openshell.middleware.spi.SessionEndReason.UPSTREAM_FAILURE);
                }
                throw new Refusal(502, "invalid_upstream_response", failed);
            }
            if (scrub != null) {
                // the head here; the server's messages by the relay (ScrubbedMessages)
                SecretScrubber s = scrubber(scrub);
                r = HeadScrub.scrub(r, s).audited(scrub);
                if (s.matches() > 0) {
                    scrub.scrubbed(s.matchedNames(), s.matches(), 0);
                }
            }
            client.out.write(OutboundHead.encode(responseHead(r, true, false, false)));
            client.out.flush();
            client.responseStarted();
            log(req, 101);
            if (session != null) {
                session.start(r.fields().stream().filter(f -> f.lowerName().equals("sec-websocket-protocol"))
                        .map(HeaderField::value).findFirst().orElse("").trim());
                SessionRelay.relay(client, c, core.timeouts().upstreamRead(), websocketMessages, session,
                        core.maskKeys(), scrub, memory, core.watchdog());
            } else if (websocketMessages.isPresent()) {
                UpgradeRelay.relayInspected(client, c, core.timeouts().upstreamRead(), websocketMessages.get(),
                        core.maskKeys(), scrub == null ? null : new ScrubbedMessages(scrub, null), memory,
                        core.watchdog());
            } else {
                UpgradeRelay.relay(client, c, core.timeouts().upstreamRead(),
                        scrub == null ? null : new ScrubbedMessages(scrub, null), core.maskKeys(), memory,
                        core.watchdog());
            }
            return false;
        }
        BodyFraming rf;
        try {
            rf = BodyFraming.forResponse(r, head.method());
        } catch (FramingException e) {
            throw new Refusal(502, "invalid_upstream_response", e.getMessage());
        }
        boolean client10 = head.isHttp10();
        boolean closeAfter = req.clientClose() || rf.kind() == BodyFraming.Kind.UNTIL_CLOSE
                || client.state.draining();
        client.out.write(OutboundHead.encode(responseHead(r, false, closeAfter,
                client10 && rf.kind() == BodyFraming.Kind.CHUNKED)));
        client.responseStarted();
        flushHeadOfOpenEndedBody(c, rf);
        relayBody(c, rf, client10);
        log(req, r.status());
        return release(c, r, rf, closeAfter);
    }

    /**
     * Sends the head at once when the body is open-ended (chunked, or until close) and none of it has arrived yet: a
     * server-sent event stream's head reaches the client when the upstream sends it, not with the first event. A head
     * whose body is already buffered goes out with it, in one write.
     */
    void flushHeadOfOpenEndedBody(UpstreamPool.Connection c, BodyFraming rf) throws IOException {
        if ((rf.kind() == BodyFraming.Kind.CHUNKED || rf.kind() == BodyFraming.Kind.UNTIL_CLOSE)
                && c.in().buffered() == 0) {
            client.out.flush();
        }
    }

    /** Relays the body as framed (de-chunked for an HTTP/1.0 client) and flushes. */
    void relayBody(UpstreamPool.Connection c, BodyFraming rf, boolean client10) throws IOException {
        switch (rf.kind()) {
            case LENGTH -> c.in().transferExactly(rf.length(), client.out, true);
            case CHUNKED -> {
                try {
                    new ChunkedDecoder(c.in()).relay(client.out, client10);
                } catch (FramingException e) {
                    LOG.log(System.Logger.Level.DEBUG, "upstream sent a malformed chunked body; closing");
                    throw c.in().malformed(e); // no last chunk is made up (ResponseFailure)
                }
            }
            case UNTIL_CLOSE -> c.in().transferToEnd(client.out);
            case NONE -> {
            }
        }
        client.out.flush();
    }

    /**
     * Returns the upstream connection to the pool when it may be reused, else closes it.
     *
     * @return whether the client connection stays open: {@code !closeAfter}
     */
    boolean release(UpstreamPool.Connection c, ResponseHead r, BodyFraming rf, boolean closeAfter) {
        boolean upstreamKeep = rf.kind() != BodyFraming.Kind.UNTIL_CLOSE && r.version().equals("HTTP/1.1")
                && !r.listElements("connection").contains("close");
        if (upstreamKeep) {
            core.pool().release(c);
        } else {
            c.close();
        }
        return !closeAfter;
    }

    /** The values replaced in this exchange's relayed interim heads. */
    private long interimMatches;

    /**
     * {@return the values replaced in the interim heads relayed so far, and the names of the credentials found in
     * them} For a relay that scrubs the final response with a scrubber of its own ({@link InspectingRelay}), so its
     * report counts the interim heads too.
     */
    java.util.Map.Entry<Long, Set<String>> interimScrubs() {
        return java.util.Map.entry(interimMatches, interimMatches == 0 ? Set.of() : scrubber.matchedNames());
    }

    /** Whether an interim head of this exchange was withheld (recorded once). */
    private boolean interimWithheld;

    /** The scrubber of this exchange's response, made on first use (interim and final heads share it). */
    private SecretScrubber scrubber;

    private SecretScrubber scrubber(ResponseScrub scrub) {
        if (scrubber == null) {
            scrubber = scrub.newScrubber();
        }
        return scrubber;
    }

    /**
     * The upstream's response head minus hop-by-hop fields and names that shadow a protected field with {@code _}
     * ({@link HeaderTable#underscoreShadowsProtected}); framing fields stay as the relay needs them.
     */
    static String responseHead(ResponseHead r, boolean upgrade, boolean close, boolean dechunk) {
        Set<String> nominated = nominated(r);
        boolean chunked = !r.all("transfer-encoding").isEmpty();
        StringBuilder sb = new StringBuilder(OutboundHead.sizeOf(r.statusLine(), r.fields())).append(r.statusLine())
                .append("\r\n");
        for (HeaderField f : r.fields()) {
            String lower = f.lowerName();
            if (dropped(lower, nominated)) {
                continue;
            }
            if (lower.equals("content-length") && chunked) {
                continue; // RFC 9112 section 6.1: Transfer-Encoding overrides Content-Length
            }
            if (lower.equals("transfer-encoding") && dechunk) {
                continue;
            }
            sb.append(f.rawLine()).append("\r\n");
        }
        if (upgrade) {
            sb.append("Connection: Upgrade\r\n");
            for (HeaderField f : r.all("upgrade")) {
                sb.append(f.rawLine()).append("\r\n");
            }
        }
        if (close) {
            sb.append("Connection: close\r\n");
        }
        return sb.append("\r\n").toString();
    }

    /**
     * The head of a response whose body the proxy re-frames (scrubbed): like {@link #responseHead} but without the
     * upstream's framing fields, with the proxy's own.
     *
     * @param r the (scrubbed) head
     * @param close whether to add {@code Connection: close}
     * @param length the new Content-Length, or -1 for none
     * @param chunked whether to add {@code Transfer-Encoding: chunked}
     * @param decoded whether the body is sent decoded: {@code Content-Encoding} is dropped
     */
    static String reframedHead(ResponseHead r, boolean close, long length, boolean chunked, boolean decoded) {
        Set<String> nominated = nominated(r);
        StringBuilder sb = new StringBuilder(OutboundHead.sizeOf(r.statusLine(), r.fields())).append(r.statusLine())
                .append("\r\n");
        for (HeaderField f : r.fields()) {
            String lower = f.lowerName();
            if (dropped(lower, nominated) || lower.equals("content-length") || lower.equals("transfer-encoding")
                    || (decoded && lower.equals("content-encoding"))) {
                continue;
            }
            sb.append(f.rawLine()).append("\r\n");
        }
        if (length >= 0) {
            sb.append("Content-Length: ").append(length).append("\r\n");
        }
        if (chunked) {
            sb.append("Transfer-Encoding: chunked\r\n");
        }
        if (close) {
            sb.append("Connection: close\r\n");
        }
        return sb.append("\r\n").toString();
    }

    private static Set<String> nominated(ResponseHead r) {
        Set<String> nominated = new LinkedHashSet<>(r.listElements("connection"));
        nominated.removeIf(HeaderTable::routingOrFraming);
        return nominated;
    }

    /** Hop-by-hop, nominated, and names that shadow a protected field with {@code _} (dropped, as Envoy can). */
    private static boolean dropped(String lower, Set<String> nominated) {
        return HeaderTable.hopByHop(lower) || nominated.contains(lower) || HeaderTable.underscoreShadowsProtected(lower);
    }

    static void log(ParsedRequest req, int status) {
        if (LOG.isLoggable(System.Logger.Level.DEBUG)) {
            LOG.log(System.Logger.Level.DEBUG, req.describe(status));
        }
    }

    static void log(dev.openshell.supervisor.proxy.ProxyRequest r, int status) {
        if (LOG.isLoggable(System.Logger.Level.DEBUG)) {
            LOG.log(System.Logger.Level.DEBUG, r.target().method() + " " + r.target().scheme() + "://"
                    + r.target().host() + ":" + r.target().port() + " -> " + status);
        }
    }
}
