package dev.openshell.supervisor.grpc.tck;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareProvider;
import dev.openshell.middleware.spi.Operation;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.middleware.spi.SessionEndReason;
import dev.openshell.middleware.spi.WebSocketPreflight;
import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.supervisor.engine.chain.MessageChain;
import dev.openshell.supervisor.engine.chain.Provenance;
import dev.openshell.supervisor.engine.chain.StageSpec;
import jakarta.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * The kit's checks of a service's WebSocket message binding ({@code EvaluateWebSocketSession}), one set per phase the
 * service advertises ({@code websocket.pre_credentials.*}, {@code websocket.pre_return.*}), run through the
 * supervisor's own {@link MessageChain} so that a pass means the supervisor accepts the answers:
 * <ul>
 *   <li>{@code preflight}: a valid answer (INSPECT, SKIP or DENY) within the smaller of the timeout and 1 s;</li>
 *   <li>{@code messages}: for three text messages with sequence numbers 1, 3 and 7 (gaps, as the other direction
 *       leaves them), each answer echoes its sequence, carries a text replacement only, a valid reason code, and
 *       comes within the timeout; a 1 MiB message is answered too (limits);</li>
 *   <li>{@code after_end}: after {@code session_end}, a new session of the same stage is served.</li>
 * </ul>
 * A service without a message binding gets one {@code websocket.binding} check, SKIP.
 */
final class SessionChecks {
    private static final HttpRequestTarget TARGET = new HttpRequestTarget("https", Requests.HOST, 443, "GET",
            "/realtime", "");

    private SessionChecks() {
    }

    static List<Check> run(MiddlewareProvider provider, BindingId binding, JsonObject config, long timeoutMillis) {
        List<Check> checks = new ArrayList<>();
        List<Phase> phases = provider.manifest().bindings().stream()
                .filter(b -> b.operation() == Operation.WEBSOCKET_MESSAGE && b.id().equals(binding))
                .map(MiddlewareBinding::phase).distinct().sorted().toList();
        if (phases.isEmpty()) {
            checks.add(Check.of("websocket.binding", Check.Status.SKIP,
                    "the service advertises no WEBSOCKET_MESSAGE binding"));
            return checks;
        }
        for (Phase phase : phases) {
            String prefix = "websocket." + phase.name().toLowerCase(java.util.Locale.ROOT) + ".";
            StageSpec spec = new StageSpec("tck", binding, provider, Provenance.THIRD_PARTY, 10, OnError.FAIL_CLOSED,
                    0, timeoutMillis, config, h -> true);
            phase(checks, prefix, new MessageChain.Member(spec, phase));
        }
        return checks;
    }

    private static MessageChain.Opening open(MessageChain.Member m) {
        return new MessageChain().open(List.of(m), x -> new WebSocketPreflight(x.spec().bindingId(), "tck-ws",
                x.phase(), RequestContext.of("tck-ws"), x.spec().config(), TARGET, List.of("tck")));
    }

    private static void phase(List<Check> checks, String prefix, MessageChain.Member m) {
        MessageChain.Opening o = open(m);
        MessageChain.Event pre = o.events().getFirst();
        if (o instanceof MessageChain.Refused && pre.kind() == MessageChain.Kind.FAILED) {
            checks.add(Check.of(prefix + "preflight", Check.Status.FAIL, "no valid preflight answer: "
                    + pre.reasonCode()));
            checks.add(Check.of(prefix + "messages", Check.Status.SKIP, "the preflight failed"));
            return;
        }
        checks.add(Check.of(prefix + "preflight", Check.Status.PASS, "answered " + pre.kind().name().toLowerCase(
                java.util.Locale.ROOT) + " within the smaller of the timeout and 1 s",
                (pre.nanos() / 1_000_000) + " ms"));
        if (!(o instanceof MessageChain.Opened opened) || !opened.session().inspects(m.phase())) {
            checks.add(Check.of(prefix + "messages", Check.Status.SKIP, "the preflight did not ask to inspect"));
            return;
        }
        MessageChain.Session s = opened.session();
        s.start("tck");
        String problem = null;
        long[] sequences = {1, 3, 7};
        String[] texts = {"{\"type\":\"input\",\"text\":\"hello\"}", "plain text", "x".repeat(1 << 20)};
        for (int i = 0; i < sequences.length && problem == null; i++) {
            MessageChain.MessageOutcome r = s.message(m.phase(), sequences[i], texts[i]);
            MessageChain.Event e = r.events().getFirst();
            if (e.kind() == MessageChain.Kind.FAILED) {
                problem = "message with sequence " + sequences[i] + ": " + e.reasonCode();
            } else if (r instanceof MessageChain.Close) {
                break; // a denial is a valid answer; the session is over
            }
        }
        s.end(SessionEndReason.NORMAL);
        checks.add(problem == null
                ? Check.of(prefix + "messages", Check.Status.PASS, "every answer echoes its sequence (1, 3, 7), "
                        + "replaces text with text and came within the timeout, also for a 1 MiB message")
                : Check.of(prefix + "messages", Check.Status.FAIL, problem));
        checks.add(afterEnd(prefix, m));
    }

    /**
     * {@code after_end}: a new session after {@code session_end} is served. An HTTP/2 server that resets the
     * connection when the previous stream ends fails the next stream in flight (seen with Helidon 4.5); the adapter
     * sends such a preflight once more on a new stream, as {@code supervisor run} does, so the check opens the
     * session once, as the supervisor would: served (or denied) is a PASS, failed a FAIL with the failure's code.
     */
    private static Check afterEnd(String prefix, MessageChain.Member m) {
        MessageChain.Opening again = open(m);
        if (again instanceof MessageChain.Opened a) {
            a.session().end(SessionEndReason.NORMAL);
        }
        if (again instanceof MessageChain.Opened || again.events().getFirst().kind() == MessageChain.Kind.DENIED) {
            return Check.of(prefix + "after_end", Check.Status.PASS, "a new session after session_end is served");
        }
        return Check.of(prefix + "after_end", Check.Status.FAIL, "a new session after session_end failed: "
                + again.events().getFirst().reasonCode());
    }
}
