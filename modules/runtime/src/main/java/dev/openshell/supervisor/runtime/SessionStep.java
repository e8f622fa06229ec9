package dev.openshell.supervisor.runtime;

import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.middleware.spi.SessionEndReason;
import dev.openshell.middleware.spi.WebSocketPreflight;
import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.middleware.spi.internal.StageResult;
import dev.openshell.supervisor.audit.RefusalFacts;
import dev.openshell.supervisor.audit.StageOutcome;
import dev.openshell.supervisor.engine.chain.MessageChain;
import dev.openshell.supervisor.engine.chain.SessionSlots;
import dev.openshell.supervisor.engine.chain.StageSpec;
import dev.openshell.supervisor.proxy.Answer;
import dev.openshell.supervisor.proxy.MessageSession;
import dev.openshell.supervisor.proxy.PolicySteps;
import dev.openshell.supervisor.proxy.ProxyRequest;
import dev.openshell.supervisor.proxy.SessionVerdict;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The message chain of a WebSocket upgrade ({@link PolicySteps.Sessions}; {@code docs/external-middleware.md},
 * "WebSocket messages"). A config selecting the host joins the session in each direction its binding's owner
 * serves ({@code WEBSOCKET_MESSAGE/PRE_CREDENTIALS}: client-to-upstream, {@code WEBSOCKET_MESSAGE/PRE_RETURN}:
 * upstream-to-client); the preflight runs here, before the upstream is contacted. A {@code fail_closed} config
 * without a client-to-upstream message binding leaves the session uncovered: the proxy then judges the upgrade as
 * uninspectable (refused unless the endpoint allows upgrades). Every stage outcome is an OCSF HTTP Activity event
 * and a metric, as for requests; every session end is logged with its reason.
 *
 * <p>A policy reload replaces the chain: a session opened under an older generation ends
 * ({@link SessionEndReason#POLICY_RELOAD}) and closes with 1008 at its next message or uninspectable frame, which no
 * stage of the old generation judges any more.
 *
 * @param chain the supervisor's message chain (it owns the session cap)
 * @param audit where records go
 * @param current the serving generation
 */
record SessionStep(MessageChain chain, ExchangeAudit audit, java.util.function.Supplier<Generation> current)
        implements PolicySteps.Sessions<ExchangePlan> {
    private static final System.Logger LOG = System.getLogger(SessionStep.class.getName());
    /** The code of a session closed because a reload replaced the policy it was opened under. */
    static final String RELOADED = "websocket_policy_reloaded";

    @Override
    public SessionVerdict open(ExchangePlan p, ProxyRequest request) {
        List<MessageChain.Member> members = new ArrayList<>();
        boolean covers = true;
        for (StageSpec s : p.chain().stages()) {
            var phases = p.generation().registry().messagePhases(s.bindingId());
            if (phases.contains(Phase.PRE_CREDENTIALS)) {
                members.add(new MessageChain.Member(s, Phase.PRE_CREDENTIALS));
            } else if (s.onError() == OnError.FAIL_CLOSED) {
                covers = false;
            }
            if (phases.contains(Phase.PRE_RETURN)) {
                members.add(new MessageChain.Member(s, Phase.PRE_RETURN));
            }
        }
        if (members.isEmpty()) {
            return new SessionVerdict.None();
        }
        List<String> protocols = HttpHeader.valuesOf(request.headers(), "sec-websocket-protocol").stream()
                .flatMap(v -> Arrays.stream(v.split(","))).map(String::trim).filter(v -> !v.isEmpty()).toList();
        HttpRequestTarget t = p.target(request.target());
        HttpRequestTarget target = new HttpRequestTarget(t.scheme(), t.host(), t.port(), "GET", t.path(), "");
        RequestContext context = new RequestContext(request.requestId(), "", "", "", p.process());
        SessionSlots.Owner owner = new SessionSlots.Owner(request.client().client().map(a -> a.getAddress()),
                p.process().map(pr -> java.util.OptionalLong.of(pr.pid())).orElse(java.util.OptionalLong.empty()));
        MessageChain.Opening o = chain.open(members, m -> new WebSocketPreflight(m.spec().bindingId(),
                request.requestId(), m.phase(), context, m.spec().config(), target, protocols), owner);
        record(p, request, o.events());
        if (o instanceof MessageChain.Refused r) {
            audit.metrics().failure(r.reasonCode());
            boolean fairness = r.reasonCode().endsWith("_session_limit");
            if (fairness) {
                audit.metrics().refused(r.reasonCode());
            }
            LOG.log(System.Logger.Level.INFO, "request {0}: WebSocket upgrade refused at preflight: {1}",
                    request.requestId(), r.reasonCode());
            int status = r.reasonCode().equals("session_capacity") ? 503 : fairness ? 429 : 403;
            return new SessionVerdict.Refuse(new Answer(status, r.reasonCode(), switch (r.reasonCode()) {
                case "session_capacity" -> "too many WebSocket sessions are inspected at once";
                case "client_session_limit" -> "this client address holds its share of inspected WebSocket sessions";
                case "process_session_limit" -> "this process holds its share of inspected WebSocket sessions";
                case "middleware_denied" -> "a middleware stage declined the WebSocket session";
                default -> "a fail_closed middleware stage could not open the WebSocket session";
            }));
        }
        MessageChain.Session session = ((MessageChain.Opened) o).session();
        boolean failClosed = members.stream().anyMatch(m -> m.spec().onError() == OnError.FAIL_CLOSED);
        return new SessionVerdict.Inspect(new Live(p, request, session, failClosed), covers);
    }

    /**
     * The records of each stage outcome, as for request stages ({@link ExchangeAudit#stage}): a stage that replaced
     * a message is {@code allowed} and {@code transformed}, a denial {@code denied}, a failure {@code failed_closed}
     * or {@code bypassed}; {@code on_error} is the config's own setting.
     */
    private void record(ExchangePlan p, ProxyRequest request, List<MessageChain.Event> events) {
        for (MessageChain.Event e : events) {
            StageResult result = switch (e.kind()) {
                case DENIED -> StageResult.DENIED;
                case FAILED -> StageResult.FAILED_CLOSED;
                case BYPASSED -> StageResult.BYPASSED;
                case INSPECTING, SKIPPED, ALLOWED, REPLACED -> StageResult.ALLOWED;
            };
            StageOutcome o = new StageOutcome(e.configKey(), e.bindingId().value(), result,
                    e.kind() == MessageChain.Kind.REPLACED, e.nanos(),
                    e.reasonCode().isEmpty() ? Optional.empty() : Optional.of(ExchangeAudit.safeCode(e.reasonCode())),
                    failClosed(p, e.configKey()));
            audit.stage(request.client(), p.facts(), o, e.findings(), 0);
        }
    }

    /** {@return whether the config's {@code on_error} is {@code fail_closed}} */
    static boolean failClosed(ExchangePlan p, String configKey) {
        return p.chain().stages().stream().anyMatch(s -> s.configKey().equals(configKey)
                && s.onError() == OnError.FAIL_CLOSED);
    }

    /** The proxy's view of one open session. */
    private final class Live implements MessageSession {
        private final ExchangePlan plan;
        private final ProxyRequest request;
        private final MessageChain.Session session;
        private final boolean failClosed;
        private final AtomicLong sequence = new AtomicLong();
        private final AtomicBoolean coverage = new AtomicBoolean();
        private final AtomicBoolean ended = new AtomicBoolean();
        private final AtomicBoolean reloadRecorded = new AtomicBoolean();

        Live(ExchangePlan plan, ProxyRequest request, MessageChain.Session session, boolean failClosed) {
            this.plan = plan;
            this.request = request;
            this.session = session;
            this.failClosed = failClosed;
        }

        private static Phase phase(Direction d) {
            return d == Direction.TO_UPSTREAM ? Phase.PRE_CREDENTIALS : Phase.PRE_RETURN;
        }

        @Override
        public boolean inspects(Direction direction) {
            return session.inspects(phase(direction));
        }

        @Override
        public void start(String selectedSubprotocol) {
            session.start(selectedSubprotocol);
        }

        /**
         * {@return whether a reload replaced the generation this session was opened under} Ends it then, and records
         * the close (1008) once: a refusal, category {@code network_policy}, code {@value #RELOADED}.
         */
        private boolean reloaded() {
            if (current.get() == plan.generation()) {
                return false;
            }
            if (reloadRecorded.compareAndSet(false, true)) {
                audit.refused(request.client(), new RefusalFacts("network_policy", RELOADED, Optional.empty(), 0,
                        "the policy was reloaded; the WebSocket session opened under the previous policy was closed"
                                + " with 1008", ExchangeAudit.clientIp(request.client()), Optional.of(plan.facts())));
            }
            end(SessionEndReason.POLICY_RELOAD);
            return true;
        }

        @Override
        public Verdict text(Direction direction, String text) {
            if (reloaded()) {
                return new Verdict(false, null, false);
            }
            MessageChain.MessageOutcome o = session.message(phase(direction), sequence.incrementAndGet(), text);
            record(plan, request, o.events());
            if (o instanceof MessageChain.Close c) {
                audit.metrics().failure(c.reasonCode());
                end(c.reason());
                return new Verdict(false, null, false);
            }
            MessageChain.Forward f = (MessageChain.Forward) o;
            return new Verdict(true, f.text(), f.replaced());
        }

        @Override
        public boolean uninspected(Direction direction) {
            if (reloaded()) {
                return false;
            }
            boolean allowed = !failClosed || request.endpoint().binaryMessagesAllowed();
            if (!allowed || coverage.compareAndSet(false, true)) {
                List<String> keys = plan.chain().stages().stream().map(StageSpec::configKey).toList();
                String code = allowed ? "websocket_binary_uninspected" : "websocket_binary_refused";
                audit.emit(request.client(), audit.events().uninspectable(plan.facts(), keys, !allowed, code));
                audit.metrics().failure(code);
            }
            return allowed;
        }

        @Override
        public void end(SessionEndReason reason) {
            if (ended.compareAndSet(false, true)) {
                session.end(reason);
                LOG.log(System.Logger.Level.DEBUG, "request {0}: WebSocket session ended: {1}",
                        request.requestId(), reason);
                audit.metrics().request("websocket_session_end_" + reason.name().toLowerCase(java.util.Locale.ROOT));
            }
        }
    }
}
