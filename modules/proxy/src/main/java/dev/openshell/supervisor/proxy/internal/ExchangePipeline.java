package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HeaderTable;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.supervisor.proxy.AdmissionDecision;
import dev.openshell.supervisor.proxy.ChainSelection;
import dev.openshell.supervisor.proxy.CredentialInjection;
import dev.openshell.supervisor.proxy.HookResult;
import dev.openshell.supervisor.proxy.ProxyRefusal;
import dev.openshell.supervisor.proxy.ProxyRequest;
import dev.openshell.supervisor.proxy.RequestPlan;
import dev.openshell.supervisor.proxy.Uninspectable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One request's exchange, in RFC 0009's order ("Operation phases and placement"): L4 then SSRF admission (or the
 * tunnel's), the {@link RequestPlan} ({@link ProxyCore#plan}), the body decision for a selected chain (413 over the
 * cap unless every affected stage is fail_open, 503 when the body budget is full), {@code 100 Continue} only then,
 * body buffering and the hook's evaluation, the credential step (with post-credentials stages), then the outbound
 * head ({@link OutboundHead}) handed to the {@link UpstreamForwarder}. Every refusal is answered here or thrown as a
 * {@link Refusal} for the session to answer and close.
 *
 * <p>One instance per request; {@link #close} releases its body-budget reservation.
 */
final class ExchangePipeline implements AutoCloseable {
    private static final System.Logger LOG = ProxyCore.LOG;
    private static final AtomicLong LAST_BUDGET_WARNING = new AtomicLong(System.nanoTime() - 20_000_000_000L);
    private static final byte[] CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    private final ProxyCore core;
    private final ClientStream client;
    private final RequestReader reader;
    private final Tunnel tunnel;
    /** The body-budget reservation of this request, if its body is buffered. */
    private BodyBudget.Reservation held;
    /** The request as the hooks see it, once admitted; {@code null} before. */
    private ProxyRequest request;

    ExchangePipeline(ProxyCore core, ClientStream client, RequestReader reader, Tunnel tunnel) {
        this.core = core;
        this.client = client;
        this.reader = reader;
        this.tunnel = tunnel;
    }

    /** {@return whether the client connection stays open} */
    boolean run(ParsedRequest req) throws IOException, FramingException, Refusal {
        RequestReader.Target t = req.target();
        BodyFraming framing = req.framing();
        ProxyCore.Admitted admitted;
        if (tunnel != null) {
            admitted = tunnel.admitted();
        } else {
            try {
                admitted = core.admit(t.authority(), client.connection, req.head().method(), t.scheme());
            } catch (Refusal r) {
                return answer(req, r.status(), r.error(), r.detail(), req.clientClose() || framing.hasBody());
            }
        }
        ProxyRequest request = new ProxyRequest(core.nextRequestId(),
                new HttpRequestTarget(t.scheme(), t.authority().host(), t.authority().port(), req.head().method(),
                        t.path(), t.queryOrEmpty()),
                lowerHeaders(req.head()), req.nominated(), admitted.endpoint(), admitted.generation(),
                framing.kind() == BodyFraming.Kind.LENGTH ? OptionalLong.of(framing.length()) : OptionalLong.empty(),
                framing.kind() == BodyFraming.Kind.CHUNKED, req.websocket(), client.connection);
        this.request = request;
        RequestPlan plan = core.plan(request);
        if (plan.admission() instanceof AdmissionDecision.Denied denied) {
            // the generation serving the request no longer admits it: nothing is read or sent upstream
            core.report(ProxyRefusal.Kind.NETWORK_POLICY, 403, "policy_denied", Optional.empty(), denied.reason(),
                    client.connection, Optional.of(method(req)), destination(), requestId());
            return answer(req, 403, "policy_denied", denied.reason(), req.clientClose() || framing.hasBody());
        }
        if (plan.refusal().isPresent()) {
            // the L7 policy refused the head: nothing is read or sent upstream, and the connection closes
            HookResult.Deny d = plan.refusal().get();
            client.send(ErrorResponses.response(d.status(), d.error(), d.detail(), d.extra(), true));
            ResponseRelay.log(req, d.status());
            return false;
        }

        String method = req.head().method();
        int maxForwards = maxForwards(req.head());
        boolean trace = method.equals("TRACE");
        if (trace && request.endpoint().traceAllowed() && maxForwards == 0) {
            // RFC 9110 sections 7.6.2 and 9.3.8: the last recipient reflects the request, without credential fields
            core.answeredLocally(plan, request, 200, "max_forwards_exhausted");
            boolean close = req.clientClose() || framing.hasBody();
            StringBuilder echo = new StringBuilder(512).append(method).append(' ').append(req.head().target())
                    .append(' ').append(req.head().version()).append("\r\n");
            for (HeaderField f : req.head().fields()) {
                String lower = f.lowerName();
                // credential-bearing fields (Authorization, Cookie, Proxy-*, X-Amz-*) are not reflected
                if (!HeaderTable.hiddenFromMiddleware(lower) || HeaderTable.routingOrFraming(lower)) {
                    echo.append(f.rawLine()).append("\r\n");
                }
            }
            byte[] body = echo.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
            client.send(("HTTP/1.1 200 OK\r\nContent-Type: message/http\r\nContent-Length: " + body.length + "\r\n"
                    + (close ? "Connection: close\r\n" : "") + "\r\n").getBytes(StandardCharsets.US_ASCII));
            client.send(body);
            ResponseRelay.log(req, 200);
            return !close;
        }
        if (trace && !request.endpoint().traceAllowed()) {
            // a TRACE reflects the request as forwarded, credentials included: not forwarded (RFC 9110 9.3.8)
            // unless the endpoint says trace: allow
            core.answeredLocally(plan, request, 405, "method_not_allowed");
            client.send(ErrorResponses.response(405, "method_not_allowed", "TRACE is not forwarded by the supervisor",
                    java.util.Map.of(), "Allow: GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS\r\n",
                    req.clientClose() || framing.hasBody()));
            ResponseRelay.log(req, 405);
            return !(req.clientClose() || framing.hasBody());
        }
        if (method.equals("OPTIONS") && maxForwards == 0) {
            // RFC 9110 section 7.6.2: the last recipient answers itself
            core.answeredLocally(plan, request, 200, "max_forwards_exhausted");
            boolean close = req.clientClose() || framing.hasBody();
            client.send(("HTTP/1.1 200 OK\r\nAllow: GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS\r\n"
                    + "Content-Length: 0\r\n" + (close ? "Connection: close\r\n" : "") + "\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            ResponseRelay.log(req, 200);
            return !close;
        }
        if (req.websocket() && plan.selection() instanceof ChainSelection.Selected s
                && !request.endpoint().upgradesAllowed()) {
            // RFC 0009: traffic that becomes uninspectable under a chain with a fail_closed stage is denied
            core.uninspectable(plan, request, new Uninspectable(Uninspectable.Kind.UPGRADE, -1, -1, s.allFailOpen()));
            if (!s.allFailOpen()) {
                return answer(req, 403, "upgrade_uninspectable", "the bytes after a protocol upgrade are not"
                        + " inspected and a fail_closed middleware applies to this host",
                        req.clientClose() || framing.hasBody());
            }
        }

        OutboundHead.BodyMode mode = null;
        Body buffered = null;
        List<HttpHeader> hookHeaders = null;
        if (plan.selection() instanceof ChainSelection.Selected s) {
            if (framing.kind() == BodyFraming.Kind.LENGTH && framing.length() > s.bodyCapBytes()) {
                core.uninspectable(plan, request, new Uninspectable(Uninspectable.Kind.CONTENT_LENGTH_OVER_CAP,
                        s.bodyCapBytes(), framing.length(), s.allFailOpen()));
                if (!s.allFailOpen()) {
                    return answer(req, 413, "body_too_large", "the request body exceeds the middleware body limit of "
                            + s.bodyCapBytes() + " bytes", true);
                }
            } else {
                if (framing.hasBody()) {
                    // the heap the segmented body will take (Body.heapBytes), not only its length
                    BodyBudget.Claim claim = reserve(Body.heapBytes(framing.kind() == BodyFraming.Kind.LENGTH
                            ? framing.length() : s.bodyCapBytes()));
                    held = claim.reservation();
                    if (held == null) {
                        String busy = claim.refusal().equals("client_body_buffer_limit")
                                ? "this client is holding as many request bodies as one client may; retry shortly"
                                : "the proxy is holding as many request bodies as it may; retry shortly";
                        core.report(ProxyRefusal.Kind.LIMIT, 503, claim.refusal(), Optional.empty(), busy,
                                client.connection, Optional.of(method), destination(), requestId());
                        return answer(req, 503, claim.refusal(), busy, true);
                    }
                }
                if (req.expectContinue()) {
                    client.send(CONTINUE);
                }
                // no deadline where the read cannot block: no body, or a Content-Length body already buffered whole
                // (the usual small POST: head and body in one segment), which saves the two watchdog tasks
                boolean readable = !framing.hasBody() || (framing.kind() == BodyFraming.Kind.LENGTH
                        && client.in.buffered() >= framing.length());
                ReadDeadline deadline = readable ? null : ReadDeadline.body(core, client, tunnel != null);
                Body received;
                try {
                    received = reader.readBody(framing, s.bodyCapBytes());
                } finally {
                    if (deadline != null && !deadline.finish()) {
                        // answered 408 and closed by the watchdog; whatever the read ended with, the exchange is over
                        throw new IOException("the body buffering deadline expired");
                    }
                }
                if (received == null) {
                    core.uninspectable(plan, request, new Uninspectable(Uninspectable.Kind.CHUNKED_OVER_CAP,
                            s.bodyCapBytes(), -1, false));
                    return answer(req, 413, "body_too_large", "the chunked request body exceeds the middleware body"
                            + " limit of " + s.bodyCapBytes() + " bytes", true);
                }
                if (held != null) {
                    held.shrinkTo(received.heapBytes());
                }
                HookResult result = core.evaluate(plan, request, received);
                if (result instanceof HookResult.Deny d) {
                    boolean close = req.clientClose() || d.close();
                    client.send(ErrorResponses.response(d.status(), d.error(), d.detail(), d.extra(), close));
                    ResponseRelay.log(req, d.status());
                    return !close;
                }
                HookResult.Forward f = (HookResult.Forward) result;
                if (!HttpHeader.valuesOf(request.headers(), "host").equals(HttpHeader.valuesOf(f.headers(), "host"))) {
                    throw new Refusal(500, "internal_error", "the middleware hook changed the Host field");
                }
                if (!framing.hasBody() && f.body().isEmpty()) {
                    // a bodiless request the chain left bodiless: framed as received (no Content-Length added), and
                    // forwarded with its own head when the chain changed no header either
                    hookHeaders = f.headers().equals(request.headers()) ? null : f.headers();
                    mode = OutboundHead.BodyMode.NONE; // any 100 Continue was sent above, before the read
                } else {
                    hookHeaders = f.headers();
                    buffered = f.body();
                    mode = OutboundHead.BodyMode.BUFFERED;
                }
            }
        }
        boolean continueAfterCredentials = false;
        if (mode == null) {
            continueAfterCredentials = req.expectContinue();
            mode = switch (framing.kind()) {
                case NONE -> OutboundHead.BodyMode.NONE;
                case LENGTH -> framing.length() == 0 ? OutboundHead.BodyMode.NONE : OutboundHead.BodyMode.STREAM_LENGTH;
                case CHUNKED -> OutboundHead.BodyMode.STREAM_CHUNKED;
                case UNTIL_CLOSE -> throw new IllegalStateException("requests are never close-delimited");
            };
        }
        List<HttpHeader> base = hookHeaders != null ? hookHeaders : request.headers();
        boolean rewritten = false;
        if ((method.equals("OPTIONS") || trace) && maxForwards > 0) {
            // RFC 9110 section 7.6.2: decremented when forwarded
            List<HttpHeader> decremented = new ArrayList<>(base.size());
            for (HttpHeader h : base) {
                decremented.add(h.name().equalsIgnoreCase("max-forwards")
                        ? new HttpHeader(h.name(), Integer.toString(maxForwards - 1)) : h);
            }
            base = decremented;
            rewritten = true;
        }
        String query = t.queryOrEmpty();
        CredentialInjection.Outcome.Forward credentialed;
        try {
            credentialed = core.inject(plan, request, base, query, Optional.ofNullable(buffered));
        } catch (Refusal r) {
            if (mode == OutboundHead.BodyMode.STREAM_LENGTH || mode == OutboundHead.BodyMode.STREAM_CHUNKED) {
                throw r; // the body is still unread: answer and close
            }
            return answer(req, r.status(), r.error(), r.detail(), req.clientClose());
        }
        if (trace && !credentialed.injected().isEmpty()) {
            // a forwarded TRACE comes back as the origin received it: never with a credential in it
            core.answeredLocally(plan, request, 403, "credential_trace_not_allowed");
            if (mode == OutboundHead.BodyMode.STREAM_LENGTH || mode == OutboundHead.BodyMode.STREAM_CHUNKED) {
                throw new Refusal(403, "credential_trace_not_allowed", "a credential is never sent in a TRACE");
            }
            return answer(req, 403, "credential_trace_not_allowed", "a credential is never sent in a TRACE",
                    req.clientClose());
        }
        if (continueAfterCredentials) {
            client.send(CONTINUE);
        }
        List<HttpHeader> injected = credentialed.headers();
        // the canonical path when the hook made one (what the L7 policy matched), else the path as received
        String path = plan.forwardPath().orElse(t.path());
        String originForm = credentialed.rawQuery().equals(query)
                ? (path.equals(t.path()) ? t.originForm() : t.query() == null ? path : path + "?" + t.query())
                : credentialed.rawQuery().isEmpty() ? path : path + "?" + credentialed.rawQuery();
        String requestLine = req.head().method() + " " + originForm + " HTTP/1.1\r\n";
        String headBlock = hookHeaders == null && !rewritten && injected.equals(base)
                ? OutboundHead.raw(requestLine, req.head(), req.nominated(), req.websocket())
                : OutboundHead.rebuilt(requestLine, req.head(), injected, req.nominated(), req.websocket(), mode,
                        buffered == null ? 0 : buffered.size(), framing);
        ResponseScrub scrub = credentialed.injected().isEmpty() ? null
                : new ResponseScrub(plan, request, credentialed.injected());
        return new UpstreamForwarder(core, client).forward(new UpstreamForwarder.Outbound(req, admitted,
                OutboundHead.encode(headBlock), mode, buffered, req.websocket() ? plan.websocketMessages()
                        : Optional.empty(), scrub));
    }

    /** {@return the request ID, once the request was admitted and given one} */
    Optional<String> requestId() {
        return Optional.ofNullable(request).map(ProxyRequest::requestId);
    }

    /** {@return the destination, once the request was admitted} */
    Optional<dev.openshell.supervisor.proxy.ProxyRefusal.Destination> destination() {
        return Optional.ofNullable(request).map(r -> new ProxyRefusal.Destination(r.target().scheme(),
                r.target().host(), r.target().port()));
    }

    private static String method(ParsedRequest req) {
        return req.head().method();
    }

    /** Sends an error response; {@return whether the connection stays open} */
    private boolean answer(ParsedRequest req, int status, String error, String detail, boolean close)
            throws IOException {
        client.send(ErrorResponses.response(status, error, detail, close));
        ResponseRelay.log(req, status);
        return !close;
    }

    private BodyBudget.Claim reserve(long bytes) throws IOException {
        BodyBudget budget = core.bodyBudget();
        try {
            BodyBudget.Claim r = budget.reserve(bytes, client.connection.client()
                    .map(java.net.InetSocketAddress::getAddress).orElse(null));
            core.bodyBufferWaited(r.waitedNanos());
            if (r.refusal() != null && r.refusal().equals("body_buffer_busy")) {
                long now = System.nanoTime();
                long last = LAST_BUDGET_WARNING.get();
                if (now - last > 10_000_000_000L && LAST_BUDGET_WARNING.compareAndSet(last, now)) {
                    LOG.log(System.Logger.Level.WARNING, "requests refused with 503: the body buffer budget of "
                            + budget.totalBytes() + " bytes stayed full (raise body_buffer_budget_bytes, or the"
                            + " heap); logged at most every 10 s");
                }
            }
            return r;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while waiting for body buffer room");
        }
    }

    /** {@return the request's Max-Forwards (RFC 9110 section 7.6.2), or -1 when absent or not 1*DIGIT} */
    private static int maxForwards(RequestHead head) {
        List<HeaderField> all = head.all("max-forwards");
        if (all.size() != 1) {
            return -1;
        }
        String v = all.get(0).value().strip();
        if (v.isEmpty() || v.length() > 9 || !v.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return -1;
        }
        return Integer.parseInt(v);
    }

    private static List<HttpHeader> lowerHeaders(RequestHead head) {
        List<HttpHeader> out = new ArrayList<>(head.fields().size());
        for (HeaderField f : head.fields()) {
            out.add(new HttpHeader(f.lowerName(), f.value()));
        }
        return out;
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
