package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.SessionEndReason;
import dev.openshell.supervisor.proxy.AdmissionDecision;
import dev.openshell.supervisor.proxy.Answer;
import dev.openshell.supervisor.proxy.ChainSelection;
import dev.openshell.supervisor.proxy.ClientConnection;
import dev.openshell.supervisor.proxy.CredentialVerdict;
import dev.openshell.supervisor.proxy.ExchangeRecord;
import dev.openshell.supervisor.proxy.L7Verdict;
import dev.openshell.supervisor.proxy.MessageSession;
import dev.openshell.supervisor.proxy.Planned;
import dev.openshell.supervisor.proxy.PolicySteps;
import dev.openshell.supervisor.proxy.ProxyRefusal;
import dev.openshell.supervisor.proxy.ProxyRequest;
import dev.openshell.supervisor.proxy.RequestVerdict;
import dev.openshell.supervisor.proxy.SessionVerdict;
import dev.openshell.supervisor.proxy.Uninspectable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Supplier;

/**
 * One exchange (a request and its response, or an upgraded session), as the ordered steps of RFC 0009's "Operation
 * phases and placement". {@link #run} lists them; each step is a small method with a typed input and output. The
 * policy steps come from one {@link PolicySteps} value, read once per exchange, so one exchange is served by one
 * policy generation; the I/O steps (body, upstream, response) are the proxy's own classes. This class is the only
 * caller of the policy steps ({@code PipelineArchitectureTest}).
 *
 * <p>A step that answers the client itself (a refusal, a local answer) throws {@link Answered} after the answer was
 * sent; {@link Refusal} ends the exchange with an error answer and a closed connection (the session answers it).
 *
 * <p>One instance per exchange; {@link #close} releases its body-budget reservation.
 *
 * @param <P> the policy steps' own plan type, handed from step to step unread
 */
final class Pipeline<P> implements AutoCloseable {
    private static final System.Logger LOG = ProxyCore.LOG;

    private final ProxyCore core;
    private final ClientStream client;
    private final RequestReader reader;
    private final Tunnel tunnel;
    private final PolicySteps<P> steps;
    private final RequestBody body;
    /** The code of a request shed by the middleware work bound. */
    static final String SHED = "middleware_admission_exhausted";
    /** The work permit while this exchange's stages run ({@link WorkAdmission}). */
    private WorkAdmission.Permit work;
    /** The request as the policy steps see it, once admitted; {@code null} before. */
    private ProxyRequest request;
    /** The policy steps' plan of this exchange, once planned; {@code null} before. */
    private P plan;
    /** The WebSocket session's message chain, once opened; {@code null} when none. */
    private MessageSession session;

    private Pipeline(ProxyCore core, ClientStream client, RequestReader reader, Tunnel tunnel, PolicySteps<P> steps) {
        this.core = core;
        this.client = client;
        this.reader = reader;
        this.tunnel = tunnel;
        this.steps = steps;
        this.body = new RequestBody(core, client, reader, tunnel != null);
    }

    /** {@return an exchange served by the current policy generation} */
    static Pipeline<?> open(ProxyCore core, ClientStream client, RequestReader reader, Tunnel tunnel) {
        return new Pipeline<>(core, client, reader, tunnel, core.policy());
    }

    /**
     * Runs the exchange, step by step.
     *
     * @return whether the client connection stays open
     */
    boolean run(ParsedRequest req) throws IOException, FramingException, Refusal {
        try {
            ProxyCore.Admitted admitted = admission(req);              // L4 network policy, binaries, SSRF
            request = request(req, admitted);
            Planned<P> planned = plan();                               // chain selection, the steps' own facts
            L7Verdict l7 = l7(Optional.empty());                       // L7 policy on the head
            LocalAnswers.answer(req, request, client, this::audit);    // TRACE, OPTIONS with Max-Forwards: 0
            ChainSelection need = RequestBody.need(planned.selection(), l7);
            boolean covered = openSession(req);                         // message chain preflight
            refuseUninspectableUpgrade(req, covered ? ChainSelection.none() : need, planned.responses());
            RequestBody.Read read = body.read(req, request, need, this::audit); // budget, 100-continue, buffer
            OutgoingRequest out;
            if (read instanceof RequestBody.Read.Buffered b) {
                admitWork(req);                                        // the work bound, or shed (503)
                out = chain(req, l7, b.body());                        // L7 on the body, chain, re-check
            } else {
                out = OutgoingRequest.streamed(req, request);
            }
            if (framesInspected(req, l7) || session != null) {
                out = out.withoutWebSocketExtensions();                // no extension may change what is read
            }
            CredentialVerdict.Forward sent = credentials(req, out);    // credentials, post-credentials
            if (req.websocket() && !sent.injected().isEmpty()) {
                out = out.withoutWebSocketExtensions();                // the server's messages are scrubbed
                sent = withoutWebSocketExtensions(sent);
            }
            endWork();
            return forward(req, admitted, l7, out, sent);              // upstream, response, scrub, deliver
        } catch (Answered a) {
            endSession(SessionEndReason.POLICY_DENIAL);
            if (!a.keepAlive()) {
                client.state.lingerOnClose(); // answered before the body was read: the client may still send it
            }
            return a.keepAlive();
        } catch (Refusal r) {
            endSession(SessionEndReason.POLICY_DENIAL);
            throw r;
        } finally {
            endSession(SessionEndReason.UPSTREAM_FAILURE);             // no-op once the relay ended it
        }
    }

    /**
     * The WebSocket session's message chain: the configs that join it, their preflight before the upstream is
     * contacted; a refusal is answered here.
     *
     * @return whether every fail_closed config of the chain joins the session's messages
     */
    private boolean openSession(ParsedRequest req) throws IOException, Refusal, Answered {
        if (!req.websocket()) {
            return false;
        }
        SessionVerdict v = guard(() -> steps.sessions().open(plan, request), 500, "internal_error",
                "middleware selection failed", "WebSocket session");
        if (v instanceof SessionVerdict.Refuse r) {
            throw answer(req, r.answer(), req.clientClose() || req.framing().hasBody());
        }
        if (v instanceof SessionVerdict.Inspect i) {
            session = i.session();
            return i.coversChain();
        }
        return false;
    }

    private void endSession(SessionEndReason reason) {
        if (session != null) {
            try {
                session.end(reason);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "WebSocket session end failed: " + e.getClass().getName());
            }
        }
    }

    /**
     * Admission: the connection's process identity checked again, L4 network policy and binaries, then SSRF. Inside a
     * tunnel, the destination was admitted at {@code CONNECT}; a tunnel admitted by another generation, or on a
     * connection whose identity was decided again, is admitted again (its SSRF check stays the one made at
     * {@code CONNECT}).
     */
    private ProxyCore.Admitted admission(ParsedRequest req) throws IOException, Answered {
        boolean close = req.clientClose() || req.framing().hasBody();
        if (tunnel == null) {
            try {
                return admit(core, steps, req.target().authority(), client.connection, req.head().method(),
                        req.target().scheme());
            } catch (Refusal r) {
                throw answer(req, new Answer(r.status(), r.error(), r.detail()), close);
            }
        }
        ProxyCore.Admitted a = tunnel.admitted();
        boolean checked = revalidated(steps, a.authority(), client.connection);
        if (checked && a.generation() == steps.generation() && !client.connection.reidentified()) {
            return a;
        }
        AdmissionDecision d = checked ? decide(steps, a.authority(), client.connection) : null;
        if (d instanceof AdmissionDecision.Allowed allowed) {
            return new ProxyCore.Admitted(a.authority(), allowed.endpoint(), a.addresses(), steps.generation());
        }
        String reason = d instanceof AdmissionDecision.Denied denied ? denied.reason()
                : "network policy could not be evaluated";
        audit(new ExchangeRecord.Refused(new ProxyRefusal(ProxyRefusal.Kind.NETWORK_POLICY, 403, "policy_denied",
                Optional.empty(), reason, client.connection, Optional.of(req.head().method()),
                Optional.of(ProxyCore.destination(req.target())), Optional.empty())));
        throw answer(req, new Answer(403, "policy_denied", reason), close);
    }

    /** The plan: the chain this generation selects, and the policy steps' own facts. */
    private Planned<P> plan() throws Refusal {
        Planned<P> planned = guard(() -> steps.plan().plan(request), 500, "internal_error",
                "middleware selection failed", "chain selection");
        plan = planned.plan();
        return planned;
    }

    /** L7 policy: on the head ({@code body} empty), or on the buffered body; a denial answers and closes. */
    private L7Verdict l7(Optional<Body> received) throws IOException, Refusal, Answered {
        L7Verdict v = guard(() -> steps.l7().decide(plan, request, received), 500, "internal_error",
                "middleware selection failed", "L7 decision");
        if (v instanceof L7Verdict.Deny d) {
            client.send(ErrorResponses.response(d.answer(), true));
            ResponseRelay.log(request, d.answer().status());
            throw new Answered(false);
        }
        return v;
    }

    /**
     * RFC 0009: traffic that becomes uninspectable under a chain with a fail_closed stage is denied: a WebSocket
     * upgrade to an endpoint that neither inspects messages nor allows uninspected upgrades, when a request stage the
     * message chain does not cover ({@code request}: {@link ChainSelection.None} when it covers every fail_closed
     * one) or a response stage (which never reads the bytes after a 101) selects the host.
     */
    private void refuseUninspectableUpgrade(ParsedRequest req, ChainSelection requests, ChainSelection responses)
            throws IOException, Answered {
        if (!req.websocket() || request.endpoint().upgradesAllowed()) {
            return;
        }
        boolean any = false;
        boolean allFailOpen = true;
        for (ChainSelection c : List.of(requests, responses)) {
            if (c instanceof ChainSelection.Selected s) {
                any = true;
                allFailOpen &= s.allFailOpen();
            }
        }
        if (!any) {
            return;
        }
        audit(new ExchangeRecord.Uninspected(request,
                new Uninspectable(Uninspectable.Kind.UPGRADE, -1, -1, allFailOpen)));
        if (!allFailOpen) {
            throw answer(req, new Answer(403, "upgrade_uninspectable", "the bytes after a protocol upgrade are not"
                    + " inspected and a fail_closed middleware applies to this host"),
                    req.clientClose() || req.framing().hasBody());
        }
    }

    /** The buffered body: L7 on it when the head's verdict needed it, then the chain with its re-check. */
    private OutgoingRequest chain(ParsedRequest req, L7Verdict head, Body received) throws IOException, Refusal, Answered {
        if (head instanceof L7Verdict.NeedsBody) {
            l7(Optional.of(received));
        }
        RequestVerdict v = guard(() -> steps.requestChain().run(plan, request, received), 500, "internal_error",
                "middleware evaluation failed", "middleware chain");
        if (v instanceof RequestVerdict.Refuse r) {
            boolean close = req.clientClose() || r.answer().close();
            client.send(ErrorResponses.response(r.answer(), close));
            ResponseRelay.log(request, r.answer().status());
            throw new Answered(!close);
        }
        RequestVerdict.Forward f = (RequestVerdict.Forward) v;
        if (!HttpHeader.valuesOf(request.headers(), "host").equals(HttpHeader.valuesOf(f.headers(), "host"))) {
            throw new Refusal(500, "internal_error", "the middleware chain changed the Host field");
        }
        return OutgoingRequest.chained(req, request, f);
    }

    /**
     * Credentials: placeholders replaced, then the post-credentials stages; a {@code TRACE} never carries a
     * credential. A refusal of a request whose body is still unread is answered and closed.
     */
    private CredentialVerdict.Forward credentials(ParsedRequest req, OutgoingRequest out)
            throws IOException, Refusal, Answered {
        PolicySteps.Outgoing outgoing = new PolicySteps.Outgoing(out.headers(), out.fromChain(),
                req.target().queryOrEmpty(), Optional.ofNullable(out.buffered()));
        CredentialVerdict v = guard(() -> steps.credentials().inject(plan, request, outgoing), 502,
                "credential_injection_failed", "credential injection failed", "credential injection");
        if (v instanceof CredentialVerdict.Refuse r) {
            // the step reported its own refusal, with the operator's detail, which the client does not get
            if (out.streamed()) {
                throw new Refusal(r.answer().status(), r.answer().error(), r.answer().detail()).reported();
            }
            throw answer(req, r.answer(), req.clientClose());
        }
        CredentialVerdict.Forward sent = (CredentialVerdict.Forward) v;
        if (req.head().method().equals("TRACE") && sent.injected().anySent()) {
            // a forwarded TRACE comes back as the origin received it: never with a credential in it
            audit(new ExchangeRecord.AnsweredLocally(request, 403, "credential_trace_not_allowed"));
            if (out.streamed()) {
                throw new Refusal(403, "credential_trace_not_allowed", "a credential is never sent in a TRACE");
            }
            throw answer(req, new Answer(403, "credential_trace_not_allowed", "a credential is never sent in a"
                    + " TRACE"), req.clientClose());
        }
        if (out.continueAfterCredentials()) {
            client.send(RequestBody.CONTINUE);
        }
        return sent;
    }

    /** Upstream: the outbound head, the pooled connection, the response relayed (scrubbed when a credential went). */
    private boolean forward(ParsedRequest req, ProxyCore.Admitted admitted, L7Verdict l7, OutgoingRequest out,
                            CredentialVerdict.Forward sent) throws IOException, FramingException, Refusal {
        byte[] head = out.encodeHead(req, l7.forwardPath(), sent);
        ResponseScrub scrub = sent.injected().isEmpty() ? null
                : new ResponseScrub(request, sent.injected(), this::audit);
        return new UpstreamForwarder(core, client).forward(new UpstreamForwarder.Outbound(req, admitted, head,
                out.mode(), out.buffered(), framesInspected(req, l7) ? ((L7Verdict.Allow) l7).messages()
                        : Optional.empty(), scrub, session, response -> responseStep(response),
                withholdsInterim() ? status -> audit(new ExchangeRecord.InterimWithheld(
                        request, status)) : null, req.websocket() ? messageMemory(req) : null));
    }

    /**
     * {@return the body budget as a WebSocket session's messages use it, with the one home of the session's
     * refusals} A refused reservation ({@code LIMIT}, status 0: the session is closed with 1013, not answered) and a
     * close for a peer's breach of RFC 6455 ({@link WebSocketCloses}) are this exchange's refusals, counted with the
     * proxy's other refusals.
     */
    private MessageMemory messageMemory(ParsedRequest req) {
        ProxyRequest r = request;
        return new MessageMemory(core.bodyBudget(), client.connection.client()
                .map(java.net.InetSocketAddress::getAddress).orElse(null), () -> core.owner(client.connection),
                new WebSocketCloses((kind, code, cause, detail) -> audit(new ExchangeRecord.Refused(
                        new ProxyRefusal(kind, 0, code, cause, detail, client.connection,
                                Optional.of(req.head().method()), Optional.of(new ProxyRefusal.Destination(
                                        r.target().scheme(), r.target().host(), r.target().port())),
                                Optional.of(r.requestId()))))));
    }

    /**
     * {@return whether interim heads are withheld ({@link PolicySteps.ResponseChain#withholdsInterim}); a runtime
     * failure of the step withholds them (fail closed)}
     */
    private boolean withholdsInterim() {
        try {
            return steps.responseChain().withholdsInterim(plan, request);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "request " + request.requestId() + ": response stage selection failed: "
                    + e.getClass().getName());
            return true;
        }
    }

    /**
     * The response step on the final response head; {@code null} when no response stage applies. A runtime
     * failure of the step withholds the response (fail closed).
     */
    private dev.openshell.supervisor.proxy.ResponseVerdict responseStep(
            dev.openshell.supervisor.proxy.ProxyResponse response) {
        try {
            return steps.responseChain().open(plan, request, response);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "request " + request.requestId() + ": response stages failed: "
                    + e.getClass().getName());
            return new dev.openshell.supervisor.proxy.ResponseVerdict.Withhold(new Answer(502, "internal_error",
                    "response middleware evaluation failed; the upstream request may have completed"));
        }
    }

    /**
     * {@return the credential step's headers without {@code Sec-WebSocket-Extensions}} An upgrade whose response is
     * scrubbed has its server messages parsed ({@link ScrubbedMessages}): no extension may compress them.
     */
    private static CredentialVerdict.Forward withoutWebSocketExtensions(CredentialVerdict.Forward sent) {
        List<HttpHeader> kept = sent.headers().stream()
                .filter(h -> !h.name().equalsIgnoreCase("sec-websocket-extensions")).toList();
        return kept.size() == sent.headers().size() ? sent
                : new CredentialVerdict.Forward(kept, sent.rawQuery(), sent.injected());
    }

    /** {@return whether the proxy parses the frames of this upgrade: the L7 policy decides on its messages} */
    private static boolean framesInspected(ParsedRequest req, L7Verdict l7) {
        return req.websocket() && l7 instanceof L7Verdict.Allow a && a.messages().isPresent();
    }

    /** The request as the policy steps see it: names lowercased, the admitted destination. */
    private ProxyRequest request(ParsedRequest req, ProxyCore.Admitted admitted) {
        RequestReader.Target t = req.target();
        BodyFraming framing = req.framing();
        List<HttpHeader> headers = new ArrayList<>(req.head().fields().size());
        for (HeaderField f : req.head().fields()) {
            headers.add(new HttpHeader(f.lowerName(), f.value()));
        }
        return new ProxyRequest(core.nextRequestId(), new HttpRequestTarget(t.scheme(), t.authority().host(),
                t.authority().port(), req.head().method(), t.path(), t.queryOrEmpty()), headers, req.nominated(),
                admitted.endpoint(),
                framing.kind() == BodyFraming.Kind.LENGTH ? OptionalLong.of(framing.length()) : OptionalLong.empty(),
                framing.kind() == BodyFraming.Kind.CHUNKED, req.websocket(), client.connection);
    }

    /** Hands a record of this exchange to the audit step (never throws). */
    void audit(ExchangeRecord r) {
        try {
            steps.audit().record(Optional.ofNullable(plan), r);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "audit record failed: " + e.getClass().getName());
        }
    }

    /**
     * Reports a refusal that ended this exchange to its audit step, unless reported already.
     *
     * @param r the refusal
     * @param method the request's method
     * @param destination the destination known before admission, if any
     */
    void report(Refusal r, String method, Optional<ProxyRefusal.Destination> destination) {
        ProxyCore.report(steps, r, client.connection, Optional.of(method), destination().or(() -> destination),
                requestId());
    }

    /** {@return the request ID, once the request was admitted and given one} */
    Optional<String> requestId() {
        return Optional.ofNullable(request).map(ProxyRequest::requestId);
    }

    /** {@return the destination, once the request was admitted} */
    Optional<ProxyRefusal.Destination> destination() {
        return Optional.ofNullable(request).map(r -> new ProxyRefusal.Destination(r.target().scheme(),
                r.target().host(), r.target().port()));
    }

    /** Sends an error answer; {@return the exception that ends the exchange there} */
    private Answered answer(ParsedRequest req, Answer a, boolean close) throws IOException {
        client.send(ErrorResponses.response(a, close));
        ResponseRelay.log(req, a.status());
        return new Answered(!close);
    }

    /** Releases the body-budget reservation and the work permit: the buffered body is no longer referenced. */
    @Override
    public void close() {
        endWork();
        body.close();
    }

    /**
     * Takes a permit of the middleware work bound ({@link WorkAdmission}), waiting in its queue; when the queue is
     * full too, the request is shed: reported ({@code middleware_admission_exhausted}) and answered 503 with
     * {@code Retry-After}, never evaluated.
     */
    private void admitWork(ParsedRequest req) throws IOException, Answered {
        try {
            work = core.work().acquire(client.connection.client().map(java.net.InetSocketAddress::getAddress)
                    .orElse(null));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while waiting for middleware work admission");
        }
        if (work != null) {
            return;
        }
        String detail = "the proxy is evaluating as many requests as it may and its queue is full; retry shortly";
        audit(new ExchangeRecord.Refused(new ProxyRefusal(ProxyRefusal.Kind.LIMIT, 503, SHED, Optional.empty(),
                detail, client.connection, Optional.of(req.head().method()), destination(), requestId())));
        boolean close = req.clientClose();
        client.send(ErrorResponses.response(503, SHED, detail, java.util.Map.of(),
                "Retry-After: " + WorkAdmission.RETRY_AFTER_SECONDS + "\r\n", close));
        ResponseRelay.log(req, 503);
        throw new Answered(!close);
    }

    /** Gives back the work permit, if this exchange holds one: its stages have run. */
    private void endWork() {
        if (work != null) {
            work.close();
            work = null;
        }
    }

    /**
     * Admission of a destination: the connection's process identity checked again, L4 network policy (and binaries)
     * by {@code steps}, then SSRF. A refusal is reported here ({@link ProxyCore#report}) and thrown marked reported.
     * For a plain request and for a {@code CONNECT}.
     *
     * @param authority the destination
     * @param client the connection
     * @param method the request's method ({@code CONNECT} for a tunnel)
     * @param scheme the request's scheme ({@code http} for a tunnel)
     */
    static ProxyCore.Admitted admit(ProxyCore core, PolicySteps<?> steps, Authority authority,
                                    ClientConnection client, String method, String scheme) throws Refusal {
        try {
            AdmissionDecision d = revalidated(steps, authority, client) ? decide(steps, authority, client) : null;
            if (d instanceof AdmissionDecision.Denied denied) {
                throw new Refusal(403, "policy_denied", denied.reason());
            }
            if (d == null) {
                throw new Refusal(403, "policy_denied", "network policy could not be evaluated");
            }
            AdmissionDecision.Allowed allowed = (AdmissionDecision.Allowed) d;
            List<java.net.InetAddress> addresses = core.ssrf(authority, allowed.endpoint());
            return new ProxyCore.Admitted(authority, allowed.endpoint(), addresses, steps.generation());
        } catch (Refusal r) {
            ProxyCore.report(steps, r, client, Optional.of(method),
                    Optional.of(ProxyCore.destination(scheme, authority)), Optional.empty());
            throw r;
        }
    }

    /**
     * {@return whether the connection's process identity was checked at the start of this request (and decided again
     * if it no longer held); false when the check failed (fail closed)}
     */
    private static boolean revalidated(PolicySteps<?> steps, Authority authority, ClientConnection client) {
        try {
            steps.admit().revalidate(authority.host(), authority.port(), client);
            return true;
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "process identity check failed: " + e.getClass().getName());
            return false;
        }
    }

    /** {@return the admission step's verdict, or {@code null} when it failed (fail closed)} */
    private static AdmissionDecision decide(PolicySteps<?> steps, Authority authority, ClientConnection client) {
        try {
            return java.util.Objects.requireNonNull(steps.admit().admit(authority.host(), authority.port(), client));
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "network policy evaluation failed: " + e.getClass().getName());
            return null;
        }
    }

    /** Hands a refusal made outside any exchange's plan to the audit step (never throws). */
    static void refused(PolicySteps<?> steps, ProxyRefusal r) {
        try {
            steps.audit().record(Optional.empty(), new ExchangeRecord.Refused(r));
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "refusal report failed: " + e.getClass().getName());
        }
    }

    /** Runs a policy step; a runtime failure of the step is a refusal (fail closed), logged without content. */
    private <T> T guard(Supplier<T> step, int status, String error, String detail, String what) throws Refusal {
        try {
            return java.util.Objects.requireNonNull(step.get(), what);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "request " + request.requestId() + ": " + what + " failed: "
                    + e.getClass().getName());
            throw new Refusal(status, error, detail);
        }
    }
}
