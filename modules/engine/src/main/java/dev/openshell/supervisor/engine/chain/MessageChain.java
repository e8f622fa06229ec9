package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.SessionEndReason;
import dev.openshell.middleware.spi.WebSocketMessage;
import dev.openshell.middleware.spi.WebSocketMessageResult;
import dev.openshell.middleware.spi.WebSocketPreflight;
import dev.openshell.middleware.spi.WebSocketPreflightDecision;
import dev.openshell.middleware.spi.WebSocketSession;
import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.middleware.spi.internal.Syntax;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * The message chain of WebSocket sessions ({@code WEBSOCKET_MESSAGE}; RFC 0009 appendix "Additional operation
 * phases", OpenShell's {@code EvaluateWebSocketSession}): one stage stream per joining config and direction,
 * opened by a concurrent preflight before the upstream is contacted, then every complete text message of that
 * direction through the direction's stages in order (a later stage sees an earlier replacement).
 *
 * <h2>Rules</h2>
 * <ul>
 *   <li>At most {@value #MAX_CONCURRENT_SESSIONS} sessions with a joining stage at once (OpenShell's
 *       {@code MAX_CONCURRENT_MIDDLEWARE_SESSIONS}), shared fairly between client addresses and their processes
 *       ({@link SessionSlots}); without a slot, {@link #open} refuses ({@code session_capacity},
 *       {@code client_session_limit} or {@code process_session_limit}) when a joining stage is {@code fail_closed},
 *       and opens no stream otherwise.</li>
 *   <li>Preflights run concurrently, each within the smaller of its stage's timeout and
 *       {@value #PREFLIGHT_CAP_MILLIS} ms. An explicit {@code DENY} wins over everything, whatever {@code on_error}
 *       says; a failure or timeout follows {@code on_error}; {@code SKIP} ends that stream
 *       ({@link SessionEndReason#STAGE_SKIPPED}).</li>
 *   <li>Per message: the stage's timeout applies; the result must echo the sequence, carry a text replacement only
 *       (at most {@value #MAX_TEXT_BYTES} bytes of UTF-8) and a reason code of {@code [a-z][a-z0-9_]*} (at most 64
 *       bytes). A broken rule, an exception or a timeout is a stage failure: {@code fail_closed} closes the session
 *       ({@link SessionEndReason#MIDDLEWARE_FAILURE}), {@code fail_open} ends that stage's stream and the message
 *       goes on without it. A {@code DENY} closes the session ({@link SessionEndReason#MIDDLEWARE_DENIAL}).</li>
 *   <li>Every opened stream hears at most one {@code session_end}, best effort ({@link Session#end}).</li>
 * </ul>
 * One instance per supervisor (it owns the session cap); thread-safe.
 */
public final class MessageChain {
    /** OpenShell's {@code MAX_CONCURRENT_MIDDLEWARE_SESSIONS}. */
    public static final int MAX_CONCURRENT_SESSIONS = 32;
    /** OpenShell's cap on one preflight, in milliseconds. */
    public static final long PREFLIGHT_CAP_MILLIS = 1000;
    /** The largest text message or replacement a stage sees or returns, in bytes of UTF-8. */
    public static final int MAX_TEXT_BYTES = 4 * 1024 * 1024;

    private final SessionSlots sessions;

    /**
     * A chain with OpenShell's session cap, {@value SessionSlots#DEFAULT_PER_CLIENT} of them per client address and
     * {@value SessionSlots#DEFAULT_PER_PROCESS} per process beyond that.
     */
    public MessageChain() {
        this(new SessionSlots(MAX_CONCURRENT_SESSIONS, SessionSlots.DEFAULT_PER_CLIENT,
                SessionSlots.DEFAULT_PER_PROCESS));
    }

    /** @param sessions the session slots */
    public MessageChain(SessionSlots sessions) {
        this.sessions = Objects.requireNonNull(sessions, "sessions");
    }

    /**
     * One config joining a session in one direction.
     *
     * @param spec the stage
     * @param phase {@link Phase#PRE_CREDENTIALS} (client-to-upstream) or {@link Phase#PRE_RETURN}
     */
    public record Member(StageSpec spec, Phase phase) {
        /** @throws NullPointerException if a part is {@code null} */
        public Member {
            Objects.requireNonNull(spec, "spec");
            Objects.requireNonNull(phase, "phase");
        }
    }

    /** What happened at one stage, for audit events and metrics (never message content). */
    public enum Kind {
        /** The stage asked for the messages. */
        INSPECTING,
        /** The stage declined at preflight. */
        SKIPPED,
        /** The stage denied the session or a message. */
        DENIED,
        /** The stage allowed a message unchanged. */
        ALLOWED,
        /** The stage replaced a message. */
        REPLACED,
        /** The stage failed under {@code fail_open}: its stream ended, the session went on without it. */
        BYPASSED,
        /** The stage failed under {@code fail_closed}: the session closes. */
        FAILED
    }

    /**
     * One stage's outcome.
     *
     * @param configKey the config
     * @param bindingId its binding
     * @param phase the direction
     * @param kind what happened
     * @param reasonCode the stage's or the platform's code, empty when none
     * @param findings what the stage found
     * @param nanos how long the stage took, in nanoseconds
     */
    public record Event(String configKey, BindingId bindingId, Phase phase, Kind kind, String reasonCode,
                       List<Finding> findings, long nanos) {
        /** Copies the findings. */
        public Event {
            findings = List.copyOf(findings);
        }
    }

    /** The outcome of {@link #open}. */
    public sealed interface Opening {
        /** {@return what happened at each stage} */
        List<Event> events();
    }

    /**
     * The upgrade is refused before the upstream is contacted.
     *
     * @param reasonCode why ({@code middleware_denied}, {@code middleware_failed}, {@code session_capacity},
     *     {@code client_session_limit} or {@code process_session_limit})
     * @param events what happened at each stage
     */
    public record Refused(String reasonCode, List<Event> events) implements Opening {
    }

    /**
     * The session may proceed.
     *
     * @param session the open streams; {@link Session#end} must be called on every path
     * @param events what happened at each stage
     */
    public record Opened(Session session, List<Event> events) implements Opening {
    }

    /**
     * Opens the streams of one session for an owner nothing is known of ({@link SessionSlots.Owner#UNKNOWN}).
     *
     * @see #open(List, Function, SessionSlots.Owner)
     */
    public Opening open(List<Member> members, Function<Member, WebSocketPreflight> preflightOf) {
        return open(members, preflightOf, SessionSlots.Owner.UNKNOWN);
    }

    /**
     * Opens the streams of one session: takes a session slot of {@code owner}, runs every member's preflight
     * concurrently.
     *
     * @param members the joining configs, in chain order (both directions)
     * @param preflightOf the preflight of each member
     * @param owner the client address and process opening the session
     * @return refused, or opened (possibly with no active stream)
     */
    public Opening open(List<Member> members, Function<Member, WebSocketPreflight> preflightOf,
                        SessionSlots.Owner owner) {
        if (members.isEmpty()) {
            return new Opened(new Session(List.of(), null), List.of());
        }
        SessionSlots.Slot slot;
        switch (sessions.take(owner)) {
            case SessionSlots.Denied d -> {
                List<Event> events = new ArrayList<>();
                java.util.Set<String> configs = new java.util.HashSet<>();
                for (Member m : members) { // one refusal per joining config, though it joins in both directions
                    if (configs.add(m.spec().configKey())) {
                        events.add(event(m, Kind.FAILED, d.code(), List.of(), 0));
                    }
                }
                boolean anyClosed = members.stream().anyMatch(m -> m.spec().onError() == OnError.FAIL_CLOSED);
                return anyClosed ? new Refused(d.code(), events)
                        : new Opened(new Session(List.of(), null), bypassed(events));
            }
            case SessionSlots.Granted g -> slot = g.slot();
        }
        List<FutureTask<WebSocketPreflightDecision>> tasks = new ArrayList<>();
        List<WebSocketSession> streams = new ArrayList<>();
        for (Member m : members) {
            WebSocketSession s;
            try {
                s = Objects.requireNonNull(m.spec().provider().openWebSocketSession(m.spec().bindingId(),
                        m.phase()));
            } catch (RuntimeException e) {
                s = null;
            }
            streams.add(s);
            WebSocketSession stream = s;
            FutureTask<WebSocketPreflightDecision> t = new FutureTask<>(() -> {
                if (stream == null) {
                    throw new IllegalStateException("no session stream");
                }
                return Objects.requireNonNull(stream.preflight(preflightOf.apply(m)));
            });
            tasks.add(t);
            Thread.ofVirtual().name("ws-preflight").start(t);
        }
        return collect(members, streams, tasks, slot);
    }

    private Opening collect(List<Member> members, List<WebSocketSession> streams,
                            List<FutureTask<WebSocketPreflightDecision>> tasks, SessionSlots.Slot slot) {
        List<Event> events = new ArrayList<>();
        List<Stream> active = new ArrayList<>();
        String refusal = null;
        for (int i = 0; i < members.size(); i++) {
            Member m = members.get(i);
            long start = System.nanoTime();
            long limit = Math.min(m.spec().timeoutMillis(), PREFLIGHT_CAP_MILLIS);
            Answer<WebSocketPreflightDecision> a = await(tasks.get(i), limit);
            long took = System.nanoTime() - start;
            WebSocketPreflightDecision d = a.value();
            Stream stream = new Stream(m, streams.get(i));
            if (d != null && d.action() == WebSocketPreflightDecision.Action.DENY) {
                events.add(event(m, Kind.DENIED, code(d.reasonCode(), "middleware_denied"), d.findings(), took));
                refusal = "middleware_denied";
                stream.end(SessionEndReason.MIDDLEWARE_DENIAL);
            } else if (d == null || (d.action() != WebSocketPreflightDecision.Action.INSPECT
                    && d.action() != WebSocketPreflightDecision.Action.SKIP)) {
                boolean closed = m.spec().onError() == OnError.FAIL_CLOSED;
                events.add(event(m, closed ? Kind.FAILED : Kind.BYPASSED, a.failure(), List.of(), took));
                if (closed && refusal == null) {
                    refusal = "middleware_failed";
                }
                stream.end(SessionEndReason.MIDDLEWARE_FAILURE);
            } else if (d.action() == WebSocketPreflightDecision.Action.SKIP) {
                events.add(event(m, Kind.SKIPPED, d.reasonCode(), d.findings(), took));
                stream.end(SessionEndReason.STAGE_SKIPPED);
            } else {
                events.add(event(m, Kind.INSPECTING, d.reasonCode(), d.findings(), took));
                active.add(stream);
            }
        }
        if (refusal != null) {
            SessionEndReason reason = refusal.equals("middleware_denied") ? SessionEndReason.MIDDLEWARE_DENIAL
                    : SessionEndReason.MIDDLEWARE_FAILURE;
            for (Stream s : active) {
                s.end(reason);
            }
            slot.release();
            return new Refused(refusal, events);
        }
        return new Opened(new Session(active, slot), events);
    }

    private static List<Event> bypassed(List<Event> events) {
        return events.stream().map(e -> new Event(e.configKey(), e.bindingId(), e.phase(), Kind.BYPASSED,
                e.reasonCode(), e.findings(), 0)).toList();
    }

    private static Event event(Member m, Kind kind, String code, List<Finding> findings, long nanos) {
        return new Event(m.spec().configKey(), m.spec().bindingId(), m.phase(), kind, code, findings, nanos);
    }

    private static String code(String given, String fallback) {
        return given != null && Syntax.isCode(given) ? given : fallback;
    }

    /** A value or the platform's code for why there is none. */
    private record Answer<T>(T value, String failure) {
    }

    private static <T> Answer<T> await(FutureTask<T> task, long millis) {
        try {
            return new Answer<>(task.get(millis, TimeUnit.MILLISECONDS), "");
        } catch (TimeoutException e) {
            task.cancel(true);
            return new Answer<>(null, "middleware_timeout");
        } catch (InterruptedException e) {
            task.cancel(true);
            Thread.currentThread().interrupt();
            return new Answer<>(null, "middleware_cancelled");
        } catch (ExecutionException e) {
            return new Answer<>(null, "middleware_error");
        }
    }

    private static <T> Answer<T> call(Callable<T> call, long millis) {
        FutureTask<T> task = new FutureTask<>(call);
        Thread.ofVirtual().name("ws-message").start(task);
        return await(task, millis);
    }

    /** One stage's open stream. */
    private static final class Stream {
        final Member member;
        final WebSocketSession session;
        private boolean ended;

        Stream(Member member, WebSocketSession session) {
            this.member = member;
            this.session = session;
        }

        synchronized boolean active() {
            return !ended;
        }

        synchronized void end(SessionEndReason reason) {
            if (ended || session == null) {
                ended = true;
                return;
            }
            ended = true;
            try {
                session.end(reason);
            } catch (RuntimeException e) {
                // best effort: a stage hears at most one end, and answers none
            }
        }
    }

    /** The outcome of one message. */
    public sealed interface MessageOutcome {
        /** {@return what happened at each stage} */
        List<Event> events();
    }

    /**
     * Forward the message.
     *
     * @param text the message to forward (the last replacement, or the original)
     * @param replaced whether a stage replaced it
     * @param events what happened at each stage
     */
    public record Forward(String text, boolean replaced, List<Event> events) implements MessageOutcome {
        /** {@return the length and flags only} */
        @Override
        public String toString() {
            return "Forward[" + text.length() + " chars, replaced " + replaced + ", " + events.size() + " events]";
        }
    }

    /**
     * Close the session toward both peers with 1008; the message is not forwarded.
     *
     * @param reason the session end every stream hears
     * @param reasonCode the code for the audit record
     * @param events what happened at each stage
     */
    public record Close(SessionEndReason reason, String reasonCode, List<Event> events) implements MessageOutcome {
    }

    /**
     * The open streams of one WebSocket session. The two directions may call {@link #message} concurrently; each
     * direction calls it from one thread, in message order.
     */
    public static final class Session {
        private final List<Stream> streams;
        private final SessionSlots.Slot slot;
        private boolean ended;

        private Session(List<Stream> streams, SessionSlots.Slot slot) {
            this.streams = List.copyOf(streams);
            this.slot = slot;
        }

        /** {@return whether any stream inspects messages of a direction} @param phase the direction */
        public boolean inspects(Phase phase) {
            return streams.stream().anyMatch(s -> s.member.phase() == phase);
        }

        /** Tells every stream the upstream accepted the upgrade (best effort). @param subprotocol empty: none */
        public void start(String subprotocol) {
            for (Stream s : streams) {
                try {
                    s.session.start(subprotocol);
                } catch (RuntimeException e) {
                    // a failing start shows at the first message
                }
            }
        }

        /**
         * Runs one complete text message through the direction's active streams, in order.
         *
         * @param phase the direction
         * @param sequence the session-wide sequence number, from 1, increasing
         * @param text the message
         * @return forward (possibly replaced) or close
         */
        public MessageOutcome message(Phase phase, long sequence, String text) {
            List<Event> events = new ArrayList<>();
            String current = text;
            boolean replaced = false;
            for (Stream s : streams) {
                if (s.member.phase() != phase || !s.active()) {
                    continue;
                }
                long start = System.nanoTime();
                String in = current;
                Answer<WebSocketMessageResult> a = call(() -> s.session.message(new WebSocketMessage(sequence, in)),
                        s.member.spec().timeoutMillis());
                long took = System.nanoTime() - start;
                String problem = a.value() == null ? a.failure() : problem(a.value(), sequence);
                if (problem != null) {
                    boolean closed = s.member.spec().onError() == OnError.FAIL_CLOSED;
                    events.add(event(s.member, closed ? Kind.FAILED : Kind.BYPASSED, problem, List.of(), took));
                    if (closed) {
                        return new Close(SessionEndReason.MIDDLEWARE_FAILURE, problem, events);
                    }
                    s.end(SessionEndReason.MIDDLEWARE_FAILURE);
                    continue;
                }
                WebSocketMessageResult r = a.value();
                if (r.decision() == Decision.DENY) {
                    String code = code(r.reasonCode(), "middleware_denied");
                    events.add(event(s.member, Kind.DENIED, code, r.findings(), took));
                    return new Close(SessionEndReason.MIDDLEWARE_DENIAL, code, events);
                }
                if (r.replacementText().isPresent()) {
                    current = r.replacementText().get();
                    replaced = true;
                }
                events.add(event(s.member, r.replacementText().isPresent() ? Kind.REPLACED : Kind.ALLOWED,
                        code(r.reasonCode(), ""), r.findings(), took));
            }
            return new Forward(current, replaced, events);
        }

        /** {@return why a result breaks the contract, or {@code null}} */
        private static String problem(WebSocketMessageResult r, long sequence) {
            if (r.sequence() != sequence) {
                return "middleware_sequence_mismatch";
            }
            if (r.decision() != Decision.ALLOW && r.decision() != Decision.DENY) {
                return "middleware_invalid_result";
            }
            if (!r.reasonCode().isEmpty() && !Syntax.isCode(r.reasonCode())) {
                return "middleware_invalid_result";
            }
            if (r.replacementText().isPresent()
                    && r.replacementText().get().getBytes(StandardCharsets.UTF_8).length > MAX_TEXT_BYTES) {
                return "middleware_replacement_too_large";
            }
            return null;
        }

        /**
         * Ends every stream not ended yet with {@code reason} and frees the session slot; later calls do nothing.
         *
         * @param reason why the session ended
         */
        public void end(SessionEndReason reason) {
            synchronized (this) {
                if (ended) {
                    return;
                }
                ended = true;
            }
            for (Stream s : streams) {
                s.end(reason);
            }
            if (slot != null) {
                slot.release();
            }
        }
    }
}
