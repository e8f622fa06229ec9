package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.supervisor.proxy.CredentialVerdict;
import dev.openshell.supervisor.proxy.ProxyRequest;
import dev.openshell.supervisor.proxy.RequestVerdict;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What the request step of the {@link Pipeline} hands on to credentials and upstream: the headers (as received, or as
 * the chain left them), how the body goes, and whether the head must be rebuilt rather than forwarded as received.
 * {@code Max-Forwards} of an {@code OPTIONS} or {@code TRACE} is decremented here (RFC 9110 section 7.6.2).
 *
 * @param headers the headers about to be forwarded, in order
 * @param fromChain whether the chain produced {@code headers}
 * @param rebuilt whether the head is rebuilt from {@code headers} even when credentials change nothing
 * @param mode how the body goes upstream
 * @param buffered the buffered body with {@link OutboundHead.BodyMode#BUFFERED}, else {@code null}
 * @param continueAfterCredentials whether {@code 100 Continue} is sent after the credential step (a streamed body)
 */
record OutgoingRequest(List<HttpHeader> headers, boolean fromChain, boolean rebuilt, OutboundHead.BodyMode mode,
                       Body buffered, boolean continueAfterCredentials) {
    /** {@return a request whose body streams through unread (no chain, or one every stage lets bypass)} */
    static OutgoingRequest streamed(ParsedRequest req, ProxyRequest request) {
        BodyFraming framing = req.framing();
        OutboundHead.BodyMode mode = switch (framing.kind()) {
            case NONE -> OutboundHead.BodyMode.NONE;
            case LENGTH -> framing.length() == 0 ? OutboundHead.BodyMode.NONE : OutboundHead.BodyMode.STREAM_LENGTH;
            case CHUNKED -> OutboundHead.BodyMode.STREAM_CHUNKED;
            case UNTIL_CLOSE -> throw new IllegalStateException("requests are never close-delimited");
        };
        List<HttpHeader> headers = maxForwardsDecremented(req, request.headers());
        return new OutgoingRequest(headers, false, headers != request.headers(), mode, null, req.expectContinue());
    }

    /**
     * {@return the request as the chain left it} A bodiless request the chain left bodiless is framed as received (no
     * Content-Length added), and forwarded with its own head when the chain changed no header either; any
     * {@code 100 Continue} was sent before the body was read.
     */
    static OutgoingRequest chained(ParsedRequest req, ProxyRequest request, RequestVerdict.Forward f) {
        if (!req.framing().hasBody() && f.body().isEmpty()) {
            boolean same = f.headers().equals(request.headers());
            List<HttpHeader> base = same ? request.headers() : f.headers();
            List<HttpHeader> headers = maxForwardsDecremented(req, base);
            return new OutgoingRequest(headers, true, !same || headers != base, OutboundHead.BodyMode.NONE, null,
                    false);
        }
        return new OutgoingRequest(maxForwardsDecremented(req, f.headers()), true, true,
                OutboundHead.BodyMode.BUFFERED, f.body(), false);
    }

    /**
     * {@return this request without {@code Sec-WebSocket-Extensions}} For an upgrade whose frames the proxy parses
     * (RFC 6455 section 9: an extension such as {@code permessage-deflate} changes the payloads), none may be
     * negotiated.
     */
    OutgoingRequest withoutWebSocketExtensions() {
        List<HttpHeader> kept = headers.stream()
                .filter(h -> !h.name().equalsIgnoreCase("sec-websocket-extensions")).toList();
        return kept.size() == headers.size() ? this
                : new OutgoingRequest(kept, fromChain, true, mode, buffered, continueAfterCredentials);
    }

    /** {@return whether the body is still unread (streamed after the head): a refusal then closes the connection} */
    boolean streamed() {
        return mode == OutboundHead.BodyMode.STREAM_LENGTH || mode == OutboundHead.BodyMode.STREAM_CHUNKED;
    }

    /**
     * {@return the encoded head to send upstream} The original field lines byte for byte when neither the chain nor
     * the credential step changed a field, else rebuilt with exactly one framing field; the request line carries the
     * canonical path the L7 decision matched, when it made one, and the query as credentials left it.
     *
     * @param req the request as read
     * @param forwardPath the canonical path, when it differs from the one received
     * @param sent the credential step's result
     * @throws Refusal 500 when a field a step produced is not a token with a trimmed safe value
     */
    byte[] encodeHead(ParsedRequest req, Optional<String> forwardPath, CredentialVerdict.Forward sent)
            throws Refusal {
        RequestReader.Target t = req.target();
        String query = t.queryOrEmpty();
        String path = forwardPath.orElse(t.path());
        String originForm = sent.rawQuery().equals(query)
                ? (path.equals(t.path()) ? t.originForm() : t.query() == null ? path : path + "?" + t.query())
                : sent.rawQuery().isEmpty() ? path : path + "?" + sent.rawQuery();
        String requestLine = req.head().method() + " " + originForm + " HTTP/1.1\r\n";
        String host = OutboundHead.hostValue(req.head(), t);
        String head = !rebuilt && sent.headers().equals(headers)
                ? OutboundHead.raw(requestLine, req.head(), req.nominated(), req.websocket(), host, req.framing())
                : OutboundHead.rebuilt(requestLine, req.head(), sent.headers(), req.nominated(), req.websocket(),
                        host, mode, buffered == null ? 0 : buffered.size(), req.framing());
        return OutboundHead.encode(head);
    }

    /**
     * {@return the headers with {@code Max-Forwards} decremented for a forwarded {@code OPTIONS} or {@code TRACE}
     * (RFC 9110 section 7.6.2), or {@code headers} itself when nothing changes}
     */
    static List<HttpHeader> maxForwardsDecremented(ParsedRequest req, List<HttpHeader> headers) {
        String method = req.head().method();
        int maxForwards = LocalAnswers.maxForwards(req.head());
        if (!(method.equals("OPTIONS") || method.equals("TRACE")) || maxForwards <= 0) {
            return headers;
        }
        List<HttpHeader> decremented = new ArrayList<>(headers.size());
        for (HttpHeader h : headers) {
            decremented.add(h.name().equalsIgnoreCase("max-forwards")
                    ? new HttpHeader(h.name(), Integer.toString(maxForwards - 1)) : h);
        }
        return decremented;
    }
}
