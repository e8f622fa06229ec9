package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.supervisor.proxy.ChainSelection;
import dev.openshell.supervisor.proxy.CredentialInjection;
import dev.openshell.supervisor.proxy.HookResult;
import dev.openshell.supervisor.proxy.ProxyRequest;
import dev.openshell.supervisor.proxy.Uninspectable;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.Set;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;

/**
 * One client connection's request loop: the request flow of the proxy, one request at a time (no pipelined request
 * is read before the previous response is complete, so every request is evaluated on its own).
 *
 * <p>Flow per request: strict head parsing ({@link HeadParser}); request-target (absolute-form on the proxy port,
 * origin-form inside a tunnel); Host must agree with the target; framing ({@link BodyFraming}); L4 then SSRF
 * admission; chain selection; 100-continue only now; body buffering when a chain is selected; the hook; the credential
 * step; forwarding over a pooled or fresh upstream connection; the response relayed with hop-by-hop fields removed.
 */
final class ProxySession {
    private static final System.Logger LOG = ProxyCore.LOG;
    private static final Set<String> HOP_BY_HOP = Set.of("connection", "keep-alive", "proxy-connection",
            "proxy-authorization", "proxy-authenticate", "te", "trailer", "upgrade");
    private static final Set<String> NOT_NOMINABLE = Set.of("host", "content-length", "transfer-encoding");
    private static final Set<String> IDEMPOTENT = Set.of("GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE");
    private static final java.util.concurrent.atomic.AtomicLong LAST_BUDGET_WARNING =
            new java.util.concurrent.atomic.AtomicLong(System.nanoTime() - 20_000_000_000L);
    private static final byte[] CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ESTABLISHED =
            "HTTP/1.1 200 Connection Established\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    /** The destination fixed by a CONNECT: every request inside goes there. */
    record Tunnel(String scheme, ProxyCore.Admitted admitted) {
    }

    private record Target(String scheme, Authority authority, String path, String query, String originForm) {
    }

    private enum BodyMode { NONE, BUFFERED, STREAM_LENGTH, STREAM_CHUNKED }

    private final ProxyCore core;
    private final HttpInput in;
    private final OutputStream out;
    private final Runnable closer;
    private final ConnectionState state;
    private final Tunnel tunnel;
    private boolean responseStarted;
    /** The body-budget reservation of the request in progress, if its body is buffered. */
    private BodyBudget.Reservation held;

    ProxySession(ProxyCore core, HttpInput in, OutputStream out, Runnable closer, ConnectionState state,
                 Tunnel tunnel) {
        this.core = core;
        this.in = in;
        this.out = out;
        this.closer = closer;
        this.state = state;
        this.tunnel = tunnel;
    }

    /** Serves requests until the client closes, an error closes the connection, or the proxy drains. */
    void loop() throws IOException {
        while (true) {
            state.waiting();
            RequestHead head;
            try {
                head = HeadParser.readRequestHead(in);
            } catch (FramingException e) {
                send(ErrorResponses.response(e.status(), e.code(), e.getMessage(), true));
                return;
            } catch (EOFException e) {
                return;
            }
            if (head == null || !state.startRequest()) {
                return;
            }
            responseStarted = false;
            boolean keepAlive;
            try {
                keepAlive = exchange(head);
            } catch (FramingException e) {
                refuse(e.status(), e.code(), e.getMessage());
                return;
            } catch (Refusal r) {
                refuse(r.status(), r.error(), r.detail());
                return;
            } catch (UpstreamIOException e) {
                if (UpstreamPool.isTimeout(e)) {
                    refuse(504, "upstream_timeout", "the upstream did not answer in time");
                } else if (e.isTls()) {
                    refuse(502, "upstream_tls_failed", "TLS with the upstream failed (certificate not trusted?)");
                } else {
                    refuse(502, "upstream_failed", "the upstream connection failed");
                }
                return;
            } finally {
                if (held != null) {
                    held.close(); // the buffered body is no longer referenced
                    held = null;
                }
                state.endRequest();
            }
            if (!keepAlive || state.draining()) {
                return;
            }
        }
    }

    private void refuse(int status, String error, String detail) throws IOException {
        if (!responseStarted) {
            send(ErrorResponses.response(status, error, detail, true));
        }
    }

    private void send(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    private boolean exchange(RequestHead head) throws IOException, FramingException, Refusal {
        if (head.method().equals("CONNECT")) {
            connect(head);
            return false;
        }
        Target t = target(head);
        checkHost(head, t.authority(), defaultPort(t.scheme()));
        BodyFraming framing = BodyFraming.forRequest(head);
        Set<String> nominated = nominated(head);
        boolean expectContinue = expectContinue(head);
        boolean clientClose = head.isHttp10() || head.listElements("connection").contains("close");
        boolean websocket = head.method().equals("GET") && nominated.contains("upgrade")
                && head.listElements("upgrade").equals(List.of("websocket"));

        ProxyCore.Admitted admitted;
        if (tunnel != null) {
            admitted = tunnel.admitted();
        } else {
            try {
                admitted = core.admit(t.authority());
            } catch (Refusal r) {
                boolean close = clientClose || framing.hasBody();
                send(ErrorResponses.response(r.status(), r.error(), r.detail(), close));
                log(head, t, r.status());
                return !close;
            }
        }

        ProxyRequest request = new ProxyRequest(core.nextRequestId(),
                new HttpRequestTarget(t.scheme(), t.authority().host(), t.authority().port(), head.method(), t.path(),
                        t.query() == null ? "" : t.query()),
                lowerHeaders(head), nominated, admitted.endpoint(),
                framing.kind() == BodyFraming.Kind.LENGTH ? OptionalLong.of(framing.length()) : OptionalLong.empty(),
                framing.kind() == BodyFraming.Kind.CHUNKED, websocket);
        ChainSelection selection = core.select(request);
        if (websocket && selection instanceof ChainSelection.Selected s && !request.endpoint().upgradesAllowed()) {
            // RFC 0009: traffic that becomes uninspectable under a chain with a fail_closed stage is denied
            core.uninspectable(request, new Uninspectable(Uninspectable.Kind.UPGRADE, -1, -1, s.allFailOpen()));
            if (!s.allFailOpen()) {
                boolean close = clientClose || framing.hasBody();
                send(ErrorResponses.response(403, "upgrade_uninspectable", "the bytes after a protocol upgrade are"
                        + " not inspected and a fail_closed middleware applies to this host", close));
                log(head, t, 403);
                return !close;
            }
        }

        BodyMode mode = null;
        Body buffered = null;
        List<HttpHeader> hookHeaders = null;
        if (selection instanceof ChainSelection.Selected s) {
            if (framing.kind() == BodyFraming.Kind.LENGTH && framing.length() > s.bodyCapBytes()) {
                core.uninspectable(request, new Uninspectable(Uninspectable.Kind.CONTENT_LENGTH_OVER_CAP,
                        s.bodyCapBytes(), framing.length(), s.allFailOpen()));
                if (!s.allFailOpen()) {
                    send(ErrorResponses.response(413, "body_too_large",
                            "the request body exceeds the middleware body limit of " + s.bodyCapBytes() + " bytes",
                            true));
                    log(head, t, 413);
                    return false;
                }
            } else {
                if (framing.hasBody()) {
                    held = reserve(framing.kind() == BodyFraming.Kind.LENGTH ? framing.length() : s.bodyCapBytes());
                    if (held == null) {
                        send(ErrorResponses.response(503, "body_buffer_busy",
                                "the proxy is holding as many request bodies as it may; retry shortly", true));
                        log(head, t, 503);
                        return false;
                    }
                }
                if (expectContinue) {
                    send(CONTINUE);
                }
                byte[] received = readBody(framing, s.bodyCapBytes());
                if (held != null && received != null) {
                    held.shrinkTo(received.length);
                }
                if (received == null) {
                    core.uninspectable(request, new Uninspectable(Uninspectable.Kind.CHUNKED_OVER_CAP,
                            s.bodyCapBytes(), -1, false));
                    send(ErrorResponses.response(413, "body_too_large",
                            "the chunked request body exceeds the middleware body limit of " + s.bodyCapBytes()
                                    + " bytes", true));
                    log(head, t, 413);
                    return false;
                }
                HookResult result = core.evaluate(request, Body.ofOwned(received));
                if (result instanceof HookResult.Deny d) {
                    send(ErrorResponses.response(d.status(), d.error(), d.detail(), d.extra(), clientClose));
                    log(head, t, d.status());
                    return !clientClose;
                }
                HookResult.Forward f = (HookResult.Forward) result;
                if (!hostValues(request.headers()).equals(hostValues(f.headers()))) {
                    throw new Refusal(500, "internal_error", "the middleware hook changed the Host field");
                }
                hookHeaders = f.headers();
                buffered = f.body();
                mode = BodyMode.BUFFERED;
            }
        }
        boolean continueAfterCredentials = false;
        if (mode == null) {
            continueAfterCredentials = expectContinue;
            mode = switch (framing.kind()) {
                case NONE -> BodyMode.NONE;
                case LENGTH -> framing.length() == 0 ? BodyMode.NONE : BodyMode.STREAM_LENGTH;
                case CHUNKED -> BodyMode.STREAM_CHUNKED;
                case UNTIL_CLOSE -> throw new IllegalStateException("requests are never close-delimited");
            };
        }
        List<HttpHeader> base = hookHeaders != null ? hookHeaders : request.headers();
        String query = t.query() == null ? "" : t.query();
        CredentialInjection.Outcome.Forward credentialed;
        try {
            credentialed = core.inject(request, base, query,
                    java.util.Optional.ofNullable(buffered));
        } catch (Refusal r) {
            if (mode == BodyMode.STREAM_LENGTH || mode == BodyMode.STREAM_CHUNKED) {
                throw r; // the body is still unread: answer and close
            }
            send(ErrorResponses.response(r.status(), r.error(), r.detail(), clientClose));
            log(head, t, r.status());
            return !clientClose;
        }
        if (continueAfterCredentials) {
            send(CONTINUE);
        }
        List<HttpHeader> injected = credentialed.headers();
        String originForm = credentialed.rawQuery().equals(query) ? t.originForm()
                : credentialed.rawQuery().isEmpty() ? t.path() : t.path() + "?" + credentialed.rawQuery();
        String headBlock;
        String requestLine = head.method() + " " + originForm + " HTTP/1.1\r\n";
        if (hookHeaders == null && injected.equals(base)) {
            headBlock = rawHead(requestLine, head, nominated, websocket);
        } else {
            headBlock = rebuiltHead(requestLine, head, injected, nominated, websocket, mode,
                    buffered == null ? 0 : buffered.size(), framing);
        }
        return forward(head, t, admitted, headBlock, mode, buffered, framing, websocket, clientClose);
    }

    private boolean forward(RequestHead head, Target t, ProxyCore.Admitted admitted, String headBlock, BodyMode mode,
                            Body buffered, BodyFraming framing, boolean websocket, boolean clientClose)
            throws IOException, FramingException, Refusal {
        UpstreamPool.Key key = new UpstreamPool.Key(t.scheme().equals("https"), t.authority().host(),
                t.authority().port());
        boolean replayable = mode == BodyMode.NONE || mode == BodyMode.BUFFERED;
        boolean idempotent = IDEMPOTENT.contains(head.method());
        ProxyCore.Timeouts to = core.timeouts();
        Duration maxIdle = websocket ? Duration.ZERO : replayable && idempotent ? to.poolIdle() : to.freshIdle();
        byte[] headBytes = encode(headBlock);
        UpstreamPool.Connection c;
        ResponseHead response;
        for (int attempt = 0; ; attempt++) {
            c = core.pool().acquire(key, admitted.addresses(), attempt == 0 ? maxIdle : Duration.ZERO);
            try {
                OutputStream up = c.out();
                up.write(headBytes);
                switch (mode) {
                    // the body's own array, in chunks through a small buffer: no whole-body copy per attempt
                    case BUFFERED -> buffered.newInputStream().transferTo(up);
                    case STREAM_LENGTH -> in.transferExactly(framing.length(), up);
                    case STREAM_CHUNKED -> new ChunkedDecoder(in).relay(up, false);
                    case NONE -> {
                    }
                }
                up.flush();
                c.awaitReadable();
                response = finalResponse(c, head, websocket);
                break;
            } catch (UpstreamIOException e) {
                c.close();
                if (attempt == 0 && c.reused() && replayable && idempotent && !responseStarted) {
                    continue;
                }
                throw e;
            } catch (IOException | FramingException | Refusal | RuntimeException e) {
                c.close();
                throw e;
            }
        }
        try {
            return relayResponse(c, head, t, response, websocket, clientClose);
        } catch (IOException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    private ResponseHead finalResponse(UpstreamPool.Connection c, RequestHead head, boolean websocket)
            throws IOException, Refusal {
        while (true) {
            ResponseHead r;
            try {
                r = HeadParser.readResponseHead(c.in());
            } catch (FramingException e) {
                throw new Refusal(502, "invalid_upstream_response", "the upstream sent a malformed response");
            } catch (EOFException e) {
                throw new UpstreamIOException(e);
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
            if (r.status() != 100 && !head.isHttp10()) {
                out.write(encode(responseHead(r, false, false, false)));
                out.flush();
                responseStarted = true;
            }
        }
    }

    private boolean relayResponse(UpstreamPool.Connection c, RequestHead head, Target t, ResponseHead r,
                                  boolean websocket, boolean clientClose) throws IOException, Refusal {
        if (r.status() == 101) {
            out.write(encode(responseHead(r, true, false, false)));
            out.flush();
            responseStarted = true;
            log(head, t, 101);
            relayBothWays(c);
            return false;
        }
        BodyFraming rf;
        try {
            rf = BodyFraming.forResponse(r, head.method());
        } catch (FramingException e) {
            throw new Refusal(502, "invalid_upstream_response", "the upstream sent an invalid Content-Length");
        }
        boolean client10 = head.isHttp10();
        boolean closeAfter = clientClose || rf.kind() == BodyFraming.Kind.UNTIL_CLOSE || state.draining();
        out.write(encode(responseHead(r, false, closeAfter, client10 && rf.kind() == BodyFraming.Kind.CHUNKED)));
        responseStarted = true;
        switch (rf.kind()) {
            case LENGTH -> c.in().transferExactly(rf.length(), out, true);
            case CHUNKED -> {
                try {
                    new ChunkedDecoder(c.in()).relay(out, client10);
                } catch (FramingException e) {
                    LOG.log(System.Logger.Level.DEBUG, "upstream sent a malformed chunked body; closing");
                    throw new UpstreamIOException(new IOException("malformed upstream chunked body"));
                }
            }
            case UNTIL_CLOSE -> c.in().transferToEnd(out);
            case NONE -> {
            }
        }
        out.flush();
        log(head, t, r.status());
        boolean upstreamKeep = rf.kind() != BodyFraming.Kind.UNTIL_CLOSE && r.version().equals("HTTP/1.1")
                && !r.listElements("connection").contains("close");
        if (upstreamKeep) {
            core.pool().release(c);
        } else {
            c.close();
        }
        return !closeAfter;
    }

    /** Relays bytes both ways until either side ends (after a 101, or for a {@code tls: skip} tunnel). */
    private void relayBothWays(UpstreamPool.Connection c) {
        c.readTimeout(core.timeouts().upstreamRead());
        Thread toUpstream = Thread.ofVirtual().name("proxy-relay-up").start(() -> {
            try {
                in.transferToEnd(c.out());
            } catch (IOException e) {
                // either side closed
            } finally {
                c.shutdownOutput();
            }
        });
        try {
            c.in().transferToEnd(out);
        } catch (IOException e) {
            // either side closed
        } finally {
            try {
                out.flush();
            } catch (IOException ignored) {
                // client gone
            }
            c.close();
            closer.run();
        }
        try {
            toUpstream.join(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void connect(RequestHead head) throws IOException, FramingException, Refusal {
        if (tunnel != null) {
            throw FramingException.badRequest("connect_in_tunnel", "CONNECT inside a CONNECT tunnel is not supported");
        }
        Authority a = Authority.parse(head.target(), -1);
        checkHost(head, a, a.port());
        if (BodyFraming.forRequest(head).hasBody()) {
            throw FramingException.badRequest("connect_with_body", "a CONNECT request carries no content");
        }
        ProxyCore.Admitted admitted = core.admit(a);
        if (admitted.endpoint().tlsSkip()) {
            UpstreamPool.Connection c = core.pool().acquire(new UpstreamPool.Key(false, a.host(), a.port()),
                    admitted.addresses(), Duration.ZERO);
            send(ESTABLISHED);
            responseStarted = true;
            LOG.log(System.Logger.Level.DEBUG, "CONNECT " + a.hostPort() + " tunnelled (tls: skip)");
            relayBothWays(c);
            return;
        }
        SSLContext ctx;
        try {
            ctx = core.interception().contextFor(a);
        } catch (GeneralSecurityException | RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "TLS interception unavailable for a CONNECT: " + e.getClass().getName());
            throw new Refusal(502, "tls_interception_unavailable", "TLS interception could not be set up");
        }
        send(ESTABLISHED);
        responseStarted = true;
        state.waiting();
        int first = in.peek();
        if (first < 0 || !state.startRequest()) {
            return;
        }
        if (first == 0x16) {
            SSLEngine engine = InterceptionTls.serverEngine(ctx);
            SslEngineStream tls = new SslEngineStream(engine, in, out);
            try {
                tls.handshake();
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "client TLS handshake failed: " + e.getClass().getName());
                return;
            }
            ProxySession inner = new ProxySession(core, new HttpInput(tls.in()),
                    new BufferedOutputStream(tls.out(), 16 * 1024), closer, state, new Tunnel("https", admitted));
            try {
                inner.loop();
            } finally {
                tls.closeOutbound();
            }
        } else {
            new ProxySession(core, in, out, closer, state, new Tunnel("http", admitted)).loop();
        }
    }

    private Target target(RequestHead head) throws FramingException {
        String raw = head.target();
        if (raw.indexOf('#') >= 0) {
            throw FramingException.badRequest("invalid_request_target",
                    "the request-target carries a fragment (RFC 9112 section 3.2)");
        }
        boolean options = head.method().equals("OPTIONS");
        if (tunnel != null) {
            Authority a = tunnel.admitted().authority();
            if (raw.startsWith("/")) {
                return build(tunnel.scheme(), a, raw, options);
            }
            if (raw.equals("*") && options) {
                return new Target(tunnel.scheme(), a, "*", null, "*");
            }
            Target abs = absolute(raw, options);
            if (!abs.scheme().equals(tunnel.scheme()) || !abs.authority().host().equals(a.host())
                    || abs.authority().port() != a.port()) {
                throw FramingException.badRequest("target_outside_tunnel",
                        "the request-target names another destination than the CONNECT authority");
            }
            return abs;
        }
        if (raw.startsWith("/") || raw.equals("*")) {
            throw FramingException.badRequest("absolute_form_required",
                    "a request to a proxy must use absolute-form (RFC 9112 section 3.2.2)");
        }
        return absolute(raw, options);
    }

    private Target absolute(String raw, boolean options) throws FramingException {
        int schemeEnd = raw.indexOf("://");
        if (schemeEnd <= 0) {
            throw FramingException.badRequest("absolute_form_required",
                    "a request to a proxy must use absolute-form (RFC 9112 section 3.2.2)");
        }
        String scheme = raw.substring(0, schemeEnd).toLowerCase(Locale.ROOT);
        if (tunnel == null && scheme.equals("https")) {
            throw FramingException.badRequest("https_needs_connect",
                    "send https requests through CONNECT (RFC 9110 section 9.3.6)");
        }
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw FramingException.badRequest("unsupported_scheme", "only http and https are proxied");
        }
        String rest = raw.substring(schemeEnd + 3);
        int end = rest.length();
        for (int i = 0; i < rest.length(); i++) {
            char ch = rest.charAt(i);
            if (ch == '/' || ch == '?') {
                end = i;
                break;
            }
        }
        Authority a = Authority.parse(rest.substring(0, end), defaultPort(scheme));
        return build(scheme, a, rest.substring(end), options);
    }

    private static Target build(String scheme, Authority a, String pathAndQuery, boolean options) {
        if (pathAndQuery.isEmpty()) {
            return options ? new Target(scheme, a, "*", null, "*") : new Target(scheme, a, "/", null, "/");
        }
        int q = pathAndQuery.indexOf('?');
        String path = q < 0 ? pathAndQuery : pathAndQuery.substring(0, q);
        String query = q < 0 ? null : pathAndQuery.substring(q + 1);
        if (path.isEmpty()) {
            path = "/";
        }
        return new Target(scheme, a, path, query, query == null ? path : path + "?" + query);
    }

    private static int defaultPort(String scheme) {
        return scheme.equals("https") ? 443 : 80;
    }

    /** RFC 9112 section 3.2: exactly one Host in HTTP/1.1; here it must also name the request-target's authority. */
    private static void checkHost(RequestHead head, Authority target, int defaultPort) throws FramingException {
        List<HeaderField> hosts = head.all("host");
        if (hosts.size() > 1) {
            throw FramingException.badRequest("multiple_host", "more than one Host field (RFC 9112 section 3.2)");
        }
        if (hosts.isEmpty()) {
            if (head.isHttp10()) {
                return;
            }
            throw FramingException.badRequest("missing_host", "an HTTP/1.1 request without Host (RFC 9112 section 3.2)");
        }
        Authority h;
        try {
            h = Authority.parse(hosts.get(0).value(), defaultPort);
        } catch (FramingException e) {
            throw FramingException.badRequest("invalid_host", "the Host field is not a valid authority");
        }
        if (!h.host().equals(target.host()) || h.port() != target.port()) {
            throw FramingException.badRequest("host_mismatch",
                    "the Host field does not match the request-target authority");
        }
    }

    private static Set<String> nominated(RequestHead head) throws FramingException {
        Set<String> names = new LinkedHashSet<>();
        for (String e : head.listElements("connection")) {
            if (!HeadParser.isToken(e)) {
                throw FramingException.badRequest("invalid_connection",
                        "a Connection option is not a token (RFC 9110 section 7.6.1)");
            }
            if (NOT_NOMINABLE.contains(e)) {
                throw FramingException.badRequest("connection_nominates_protected",
                        "Connection nominates a routing or framing field");
            }
            names.add(e);
        }
        return names;
    }

    private static boolean expectContinue(RequestHead head) throws Refusal {
        List<String> ex = head.listElements("expect");
        if (ex.isEmpty() || head.isHttp10()) {
            return false;
        }
        if (ex.equals(List.of("100-continue"))) {
            return true;
        }
        throw new Refusal(417, "expectation_failed", "only the 100-continue expectation is supported");
    }

    private BodyBudget.Reservation reserve(long bytes) throws IOException {
        BodyBudget budget = core.bodyBudget();
        try {
            BodyBudget.Reservation r = budget.reserve(bytes);
            if (r == null) {
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

    private byte[] readBody(BodyFraming framing, int cap) throws IOException, FramingException {
        return switch (framing.kind()) {
            case NONE, UNTIL_CLOSE -> new byte[0];
            case LENGTH -> {
                byte[] b = new byte[(int) framing.length()];
                in.readFully(b, 0, b.length);
                yield b;
            }
            case CHUNKED -> {
                ByteArrayOutputStream bos = new ByteArrayOutputStream();
                long n = new ChunkedDecoder(in).decodeTo(bos, cap);
                yield n < 0 ? null : bos.toByteArray();
            }
        };
    }

    private static List<HttpHeader> lowerHeaders(RequestHead head) {
        List<HttpHeader> out = new ArrayList<>(head.fields().size());
        for (HeaderField f : head.fields()) {
            out.add(new HttpHeader(f.lowerName(), f.value()));
        }
        return out;
    }

    private static List<String> hostValues(List<HttpHeader> headers) {
        List<String> out = new ArrayList<>(1);
        for (HttpHeader h : headers) {
            if (h.name().equalsIgnoreCase("host")) {
                out.add(h.value());
            }
        }
        return out;
    }

    private static boolean dropOnForward(String lower, Set<String> nominated) {
        return HOP_BY_HOP.contains(lower) || nominated.contains(lower) || lower.equals("expect");
    }

    /** The request as received, minus hop-by-hop and Connection-nominated fields (RFC 9110 section 7.6.1). */
    private static String rawHead(String requestLine, RequestHead head, Set<String> nominated, boolean websocket) {
        StringBuilder sb = new StringBuilder(1024).append(requestLine);
        for (HeaderField f : head.fields()) {
            if (!dropOnForward(f.lowerName(), nominated)) {
                sb.append(f.rawLine()).append("\r\n");
            }
        }
        appendUpgrade(sb, head, websocket);
        return sb.append("\r\n").toString();
    }

    /** The request rebuilt from a header list: framing replaced by exactly one correct field (RFC 9112 6.2). */
    private static String rebuiltHead(String requestLine, RequestHead head, List<HttpHeader> fields,
                                      Set<String> nominated, boolean websocket, BodyMode mode, int bufferedLength,
                                      BodyFraming original) throws Refusal {
        StringBuilder sb = new StringBuilder(1024).append(requestLine);
        for (HttpHeader h : fields) {
            String lower = h.name().toLowerCase(Locale.ROOT);
            if (dropOnForward(lower, nominated) || lower.equals("content-length")
                    || lower.equals("transfer-encoding")) {
                continue;
            }
            if (!HeadParser.isToken(h.name()) || h.value().chars().anyMatch(c -> (c < 0x20 && c != '\t') || c == 0x7f)
                    || !h.value().equals(HeadParser.trimOws(h.value()))) {
                throw new Refusal(500, "internal_error", "the middleware hook produced an invalid header field");
            }
            sb.append(h.name()).append(": ").append(h.value()).append("\r\n");
        }
        switch (mode) {
            case BUFFERED -> {
                if (bufferedLength > 0 || original.kind() != BodyFraming.Kind.NONE) {
                    sb.append("Content-Length: ").append(bufferedLength).append("\r\n");
                }
            }
            case STREAM_LENGTH -> sb.append("Content-Length: ").append(original.length()).append("\r\n");
            case STREAM_CHUNKED -> sb.append("Transfer-Encoding: chunked\r\n");
            case NONE -> {
                if (original.kind() == BodyFraming.Kind.LENGTH) {
                    sb.append("Content-Length: 0\r\n");
                }
            }
        }
        appendUpgrade(sb, head, websocket);
        return sb.append("\r\n").toString();
    }

    private static void appendUpgrade(StringBuilder sb, RequestHead head, boolean websocket) {
        if (websocket) {
            sb.append("Connection: Upgrade\r\n");
            for (HeaderField f : head.all("upgrade")) {
                sb.append(f.rawLine()).append("\r\n");
            }
        }
    }

    /** The upstream's response head minus hop-by-hop fields; framing fields stay as the relay needs them. */
    private static String responseHead(ResponseHead r, boolean upgrade, boolean close, boolean dechunk) {
        Set<String> nominated = new LinkedHashSet<>(r.listElements("connection"));
        nominated.removeAll(NOT_NOMINABLE);
        boolean chunked = !r.all("transfer-encoding").isEmpty();
        StringBuilder sb = new StringBuilder(1024).append(r.statusLine()).append("\r\n");
        for (HeaderField f : r.fields()) {
            String lower = f.lowerName();
            if (HOP_BY_HOP.contains(lower) || nominated.contains(lower)) {
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

    /** Head text is ISO-8859-1 (one char per byte); a char above U+00FF can only come from the hook: UTF-8 then. */
    private static byte[] encode(String s) {
        ByteArrayOutputStream b = new ByteArrayOutputStream(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c <= 0xff) {
                b.write(c);
            } else {
                int cp = s.codePointAt(i);
                b.writeBytes(new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8));
                i += Character.charCount(cp) - 1;
            }
        }
        return b.toByteArray();
    }

    private static void log(RequestHead head, Target t, int status) {
        if (LOG.isLoggable(System.Logger.Level.DEBUG)) {
            LOG.log(System.Logger.Level.DEBUG, head.method() + " " + t.scheme() + "://" + t.authority().hostPort()
                    + " -> " + status);
        }
    }
}
