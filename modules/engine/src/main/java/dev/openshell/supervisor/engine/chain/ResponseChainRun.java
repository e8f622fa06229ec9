package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.HttpResponseBodyMode;
import dev.openshell.middleware.spi.HttpResponseBodyResult;
import dev.openshell.middleware.spi.HttpResponseBodyUnit;
import dev.openshell.middleware.spi.HttpResponsePreflight;
import dev.openshell.middleware.spi.HttpResponsePreflightDecision;
import dev.openshell.middleware.spi.HttpResponseStage;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.middleware.spi.SessionEndReason;
import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.middleware.spi.internal.StageResult;
import dev.openshell.middleware.spi.internal.Syntax;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongFunction;

/**
 * The response stages of one HTTP response ({@code HTTP_RESPONSE/PRE_RETURN}; NVIDIA/OpenShell
 * {@code HttpResponsePreReturn}): {@link #open} runs every stage's preflight in chain order, each on the head as the
 * previous stage left it; {@link #unit} then pushes the decoded body through the inspecting stages in order, each
 * stage's output being the next one's input.
 *
 * <ul>
 *   <li>A stage in {@link HttpResponseBodyMode#WHOLE_BODY_BYTES} accumulates its input up to its limit and is invoked
 *       once, with the whole body and {@code endOfStream}; over the limit it fails with
 *       {@value #WHOLE_BODY_OVER_CAPACITY}, and {@link #accumulationTimedOut} fails it with
 *       {@value #WHOLE_BODY_ACCUMULATION_TIMEOUT}. While such a stage holds, {@link #holdsHead()} is true: the caller
 *       must not commit the response head.</li>
 *   <li>A stage in {@link HttpResponseBodyMode#STREAM_BYTES} is invoked in lockstep for each unit of at most the
 *       smaller of 64 KiB and half its limit, as the input arrives.</li>
 *   <li>A failure (exception, timeout, invalid result, a mode outside the permitted list, a rejected header mutation,
 *       a wrong sequence, a replacement over the limit) of a {@code fail_open} stage bypasses it: its input passes on
 *       unchanged and a bypass finding is recorded. A {@code fail_closed} failure ends the run
 *       ({@link Opened.FailedClosed}, or {@link Failed} from {@link #unit}). A {@code block_delivery} wins whatever
 *       {@code on_error} says; later stages are not opened.</li>
 * </ul>
 * One instance per response, used by one thread. Every opened stage hears one best-effort
 * {@link HttpResponseStage#end}.
 */
public final class ResponseChainRun {
    /** A whole-body stage's body was over its limit. */
    public static final String WHOLE_BODY_OVER_CAPACITY = "whole_body_over_capacity";
    /** A whole-body stage's body did not arrive within the accumulation deadline. */
    public static final String WHOLE_BODY_ACCUMULATION_TIMEOUT = "whole_body_accumulation_timeout";
    /** A stage selected a body mode outside the permitted list (or none). */
    public static final String BODY_MODE_NOT_PERMITTED = "response_body_mode_not_permitted";
    /** A body result answered another sequence. */
    public static final String SEQUENCE_MISMATCH = "response_body_sequence_mismatch";
    /** A replacement was over the stage's limit. */
    public static final String REPLACEMENT_OVER_CAPACITY = "response_replacement_over_capacity";
    /** Largest streamed unit, in bytes. */
    public static final int MAX_STREAM_UNIT = 64 * 1024;

    /** The outcome of the preflights. */
    public sealed interface Opened {
        /** A stage blocked delivery. @param configKey its config @param bindingId its binding @param reasonCode its code */
        record Blocked(String configKey, String bindingId, String reasonCode) implements Opened {
        }

        /** A {@code fail_closed} stage failed. @param configKey its config @param failure why */
        record FailedClosed(String configKey, StageFailure failure) implements Opened {
        }

        /**
         * Deliver. @param headers the head's fields after every accepted mutation @param inspectsBody whether a stage
         * reads the body
         */
        record Proceed(List<HttpHeader> headers, boolean inspectsBody) implements Opened {
        }
    }

    /** A {@code fail_closed} stage failed on the body. */
    public static final class Failed extends Exception {
        private static final long serialVersionUID = 1L;
        private final transient StageFailure failure;

        Failed(StageFailure failure) {
            super(failure.code(), null, false, false);
            this.failure = failure;
        }

        /** {@return why} */
        public StageFailure failure() {
            return failure;
        }
    }

    /** One stage with a body mode, with its state. */
    private final class Active {
        final StageSpec spec;
        final HttpResponseStage session;
        final HttpResponseBodyMode mode;
        final long limit;
        final long started;
        final List<Finding> findings = new ArrayList<>();
        Body.Sink whole = Body.sink();
        long sequence;
        boolean replaced;
        boolean done;
        StageFailure bypassed;

        Active(StageSpec spec, HttpResponseStage session, HttpResponseBodyMode mode, long limit, long started) {
            this.spec = spec;
            this.session = session;
            this.mode = mode;
            this.limit = limit;
            this.started = started;
        }

        List<Body> accept(List<Body> in, boolean eos) throws Failed {
            if (bypassed != null || done) {
                return in;
            }
            return mode == HttpResponseBodyMode.WHOLE_BODY_BYTES ? acceptWhole(in, eos) : acceptStream(in, eos);
        }

        private List<Body> acceptWhole(List<Body> in, boolean eos) throws Failed {
            for (Body b : in) {
                if (whole.size() + b.size() > limit) {
                    List<Body> held = drain();
                    held.addAll(in.subList(in.indexOf(b), in.size()));
                    fail(failure(spec, FailureCategory.BODY_OVER_CAPACITY, WHOLE_BODY_OVER_CAPACITY,
                            "the response body is over the stage's limit of " + limit + " bytes"));
                    return held;
                }
                try {
                    b.writeTo(whole);
                } catch (java.io.IOException e) {
                    throw new IllegalStateException(e);
                }
            }
            if (!eos) {
                return List.of();
            }
            Body all = whole.toBody();
            whole = null;
            done = true;
            Optional<Body> out = invoke(new HttpResponseBodyUnit(++sequence, all, true));
            return new ArrayList<>(List.of(out.orElse(all)));
        }

        private List<Body> acceptStream(List<Body> in, boolean eos) throws Failed {
            int cap = (int) Math.max(1, Math.min(MAX_STREAM_UNIT, limit / 2));
            List<Body> out = new ArrayList<>();
            List<Body> units = new ArrayList<>();
            for (Body b : in) {
                byte[] bytes = b.toByteArray();
                for (int off = 0; off < bytes.length; off += cap) {
                    units.add(Body.of(java.util.Arrays.copyOfRange(bytes, off, Math.min(bytes.length, off + cap))));
                }
            }
            if (eos && units.isEmpty()) {
                units.add(Body.empty());
            }
            for (int i = 0; i < units.size(); i++) {
                Body u = units.get(i);
                if (bypassed != null) {
                    out.add(u);
                    continue;
                }
                boolean last = eos && i == units.size() - 1;
                Optional<Body> r = invoke(new HttpResponseBodyUnit(++sequence, u, last));
                out.add(bypassed != null ? u : r.orElse(u));
                done |= last && bypassed == null;
            }
            return out;
        }

        /** Invokes the stage on one unit; {@return the replacement, if any} (empty when bypassed just now). */
        private Optional<Body> invoke(HttpResponseBodyUnit unit) throws Failed {
            HttpResponseBodyResult r;
            try {
                r = call(spec, () -> session.body(unit));
            } catch (StageError e) {
                fail(e.failure);
                return Optional.empty();
            }
            StageFailure f = r.sequence() != unit.sequence()
                    ? failure(spec, FailureCategory.INVALID_RESULT, SEQUENCE_MISMATCH,
                            "the body result answered sequence " + r.sequence() + ", not " + unit.sequence())
                    : r.replacement().filter(b -> b.size() > limit).isPresent()
                    ? failure(spec, FailureCategory.ENVELOPE_VIOLATION, REPLACEMENT_OVER_CAPACITY,
                            "the replacement is over the stage's limit of " + limit + " bytes")
                    : checkDiagnostics(spec, r.reasonCode(), r.findings());
            if (f != null) {
                fail(f);
                return Optional.empty();
            }
            findings.addAll(r.findings());
            replaced |= r.replacement().isPresent();
            return r.replacement();
        }

        /** Bypasses a {@code fail_open} stage, or throws for a {@code fail_closed} one. */
        void fail(StageFailure f) throws Failed {
            session.end(f.code().equals(SEQUENCE_MISMATCH) ? SessionEndReason.PROTOCOL_ERROR
                    : SessionEndReason.MIDDLEWARE_FAILURE);
            bypassed = f;
            if (spec.onError() == OnError.FAIL_CLOSED) {
                closedBy = this;
                endAll(SessionEndReason.MIDDLEWARE_FAILURE, this);
                throw new Failed(f);
            }
        }

        /** {@return what was accumulated, as output} */
        List<Body> drain() {
            List<Body> out = new ArrayList<>();
            if (whole != null && whole.size() > 0) {
                out.add(whole.toBody());
            }
            whole = null;
            return out;
        }
    }

    private final List<StageSpec> stages;
    private final RequestContext context;
    private final HttpRequestTarget target;
    private final List<Active> active = new ArrayList<>();
    private final List<StageRecord> records = new ArrayList<>();
    private Active closedBy;
    private boolean ended;

    /**
     * @param stages the selected response stages, in chain order
     * @param context the request's context
     * @param target the request's target
     */
    public ResponseChainRun(List<StageSpec> stages, RequestContext context, HttpRequestTarget target) {
        this.stages = List.copyOf(stages);
        this.context = context;
        this.target = target;
    }

    /**
     * Runs every stage's preflight, in order.
     *
     * @param status the final status
     * @param headers the head's fields, names lowercase, hop-by-hop fields removed
     * @param nominated the Connection-nominated names of the upstream's head
     * @param permitted the permitted body modes for a stage limit, in bytes
     * @return block, fail closed, or proceed with the mutated head
     */
    public Opened open(int status, List<HttpHeader> headers, Set<String> nominated,
                       LongFunction<Set<HttpResponseBodyMode>> permitted) {
        List<HttpHeader> current = List.copyOf(headers);
        List<HttpResponseStage> opened = new ArrayList<>();
        for (StageSpec s : stages) {
            long start = System.nanoTime();
            long limit = Math.min(s.maxBodyBytes(), EnvelopeLimits.MAX_BODY_BYTES);
            Set<HttpResponseBodyMode> modes = permitted.apply(limit);
            HttpResponseStage session = null;
            HttpResponsePreflightDecision d;
            try {
                session = call(s, () -> s.provider().openResponse(s.bindingId()));
                opened.add(session);
                HttpResponseStage open = session;
                HttpResponsePreflight p = new HttpResponsePreflight(s.bindingId(), context, target, status,
                        ResponseHeaderRules.visible(current, nominated), s.config(), limit, modes,
                        s.onError() == OnError.FAIL_CLOSED);
                d = call(s, () -> open.preflight(p));
            } catch (StageError e) {
                Opened o = failedAtPreflight(s, session, e.failure, start, opened);
                if (o != null) {
                    return o;
                }
                continue;
            }
            StageFailure f = checkDiagnostics(s, d.reasonCode(), d.findings());
            MutationOutcome applied = null;
            if (f == null && d.action() == HttpResponsePreflightDecision.Action.INSPECT) {
                if (!modes.contains(d.bodyMode())) {
                    f = failure(s, FailureCategory.INVALID_RESULT, BODY_MODE_NOT_PERMITTED,
                            "the stage selected " + d.bodyMode() + ", which is not permitted for this response");
                } else {
                    applied = ResponseHeaderRules.apply(current, nominated, d.headerMutations());
                    if (applied instanceof MutationOutcome.Rejected rej) {
                        f = failure(s, FailureCategory.INVALID_HEADER_MUTATION, rej.error().code(),
                                rej.error().message());
                    }
                }
            }
            if (f != null) {
                Opened o = failedAtPreflight(s, session, f, start, opened);
                if (o != null) {
                    return o;
                }
                continue;
            }
            if (d.action() == HttpResponsePreflightDecision.Action.BLOCK_DELIVERY) {
                records.add(record(s, StageResult.DENIED, Decision.DENY, d.reasonCode(), false, false, start,
                        Optional.empty(), d.findings()));
                for (HttpResponseStage o : opened) {
                    end(o, SessionEndReason.MIDDLEWARE_DENIAL);
                }
                ended = true;
                return new Opened.Blocked(s.configKey(), s.bindingId().value(),
                        d.reasonCode().orElse(PlatformCodes.MIDDLEWARE_DENIED));
            }
            boolean mutated = applied instanceof MutationOutcome.Applied a && a.changed();
            if (applied instanceof MutationOutcome.Applied a) {
                current = a.headers();
            }
            boolean body = d.action() == HttpResponsePreflightDecision.Action.INSPECT
                    && d.bodyMode() != HttpResponseBodyMode.HEADERS_ONLY;
            if (body) {
                Active a = new Active(s, session, d.bodyMode(), limit, start);
                a.findings.addAll(d.findings());
                a.replaced = mutated;
                active.add(a);
            } else {
                records.add(record(s, StageResult.ALLOWED, Decision.ALLOW, d.reasonCode(), false, mutated, start,
                        Optional.empty(), d.findings()));
                end(session, d.action() == HttpResponsePreflightDecision.Action.SKIP
                        ? SessionEndReason.STAGE_SKIPPED : SessionEndReason.NORMAL);
            }
        }
        return new Opened.Proceed(current, !active.isEmpty());
    }

    /** A preflight failure: bypass ({@code null}) or fail closed. */
    private Opened failedAtPreflight(StageSpec s, HttpResponseStage session, StageFailure f, long start,
                                     List<HttpResponseStage> opened) {
        if (session != null) {
            end(session, SessionEndReason.MIDDLEWARE_FAILURE);
        }
        if (s.onError() == OnError.FAIL_CLOSED) {
            records.add(record(s, StageResult.FAILED_CLOSED, null, Optional.empty(), false, false, start,
                    Optional.of(f), List.of()));
            for (HttpResponseStage o : opened) {
                if (o != session) {
                    end(o, SessionEndReason.MIDDLEWARE_FAILURE);
                }
            }
            ended = true;
            return new Opened.FailedClosed(s.configKey(), f);
        }
        records.add(record(s, StageResult.BYPASSED, null, Optional.empty(), false, false, start, Optional.of(f),
                List.of(bypassFinding(s, f))));
        return null;
    }

    /** {@return whether a whole-body stage still holds: the response head must not be committed yet} */
    public boolean holdsHead() {
        for (Active a : active) {
            if (a.mode == HttpResponseBodyMode.WHOLE_BODY_BYTES && a.bypassed == null && !a.done) {
                return true;
            }
        }
        return false;
    }

    /**
     * Pushes one piece of the decoded body through the inspecting stages.
     *
     * @param data the next bytes (possibly empty)
     * @param endOfStream whether the body ends with them
     * @return what to deliver now, in order (possibly nothing)
     * @throws Failed when a {@code fail_closed} stage failed: the response must not complete
     */
    public List<Body> unit(Body data, boolean endOfStream) throws Failed {
        List<Body> pieces = new ArrayList<>(List.of(data));
        for (Active a : active) {
            pieces = a.accept(pieces, endOfStream);
        }
        List<Body> out = new ArrayList<>(pieces);
        out.removeIf(Body::isEmpty);
        return out;
    }

    /**
     * Fails every whole-body stage still accumulating with {@value #WHOLE_BODY_ACCUMULATION_TIMEOUT}.
     *
     * @return what the bypassed stages release, to deliver now
     * @throws Failed when such a stage is {@code fail_closed}
     */
    public List<Body> accumulationTimedOut() throws Failed {
        List<Body> out = new ArrayList<>();
        for (int i = 0; i < active.size(); i++) {
            Active a = active.get(i);
            if (a.mode != HttpResponseBodyMode.WHOLE_BODY_BYTES || a.bypassed != null || a.done) {
                continue;
            }
            List<Body> held = a.drain();
            a.fail(failure(a.spec, FailureCategory.TIMEOUT, WHOLE_BODY_ACCUMULATION_TIMEOUT,
                    "the response body did not arrive within the accumulation deadline"));
            for (Active later : active.subList(i + 1, active.size())) {
                held = later.accept(held, false);
            }
            out.addAll(held);
        }
        out.removeIf(Body::isEmpty);
        return out;
    }

    /**
     * Ends every stage still open and completes the records. Idempotent.
     *
     * @param reason why the response ended ({@link SessionEndReason#NORMAL} when it was delivered complete)
     */
    public void end(SessionEndReason reason) {
        if (ended && closedBy == null && active.stream().allMatch(a -> recorded(a))) {
            return;
        }
        for (Active a : active) {
            if (recorded(a)) {
                continue;
            }
            if (a.bypassed != null) {
                boolean closed = a == closedBy;
                records.add(record(a.spec, closed ? StageResult.FAILED_CLOSED : StageResult.BYPASSED, null,
                        Optional.empty(), false, false, a.started, Optional.of(a.bypassed),
                        closed ? a.findings : concat(a.findings, bypassFinding(a.spec, a.bypassed))));
            } else {
                if (!ended) {
                    end(a.session, reason);
                }
                records.add(record(a.spec, StageResult.ALLOWED, Decision.ALLOW, Optional.empty(), a.replaced, false,
                        a.started, Optional.empty(), a.findings));
            }
        }
        ended = true;
    }

    private boolean recorded(Active a) {
        return records.stream().anyMatch(r -> r.configKey().equals(a.spec.configKey())
                && r.bindingId().equals(a.spec.bindingId()));
    }

    private void endAll(SessionEndReason reason, Active except) {
        for (Active a : active) {
            if (a != except && a.bypassed == null) {
                end(a.session, reason);
            }
        }
        ended = true;
    }

    /** {@return what each stage did, for audit; complete after {@link #end}} */
    public List<StageRecord> records() {
        return List.copyOf(records);
    }

    private static <T> List<T> concat(List<T> a, T b) {
        List<T> out = new ArrayList<>(a);
        out.add(b);
        return out;
    }

    private static Finding bypassFinding(StageSpec s, StageFailure f) {
        return new Finding(PlatformCodes.FINDING_BYPASS, "middleware " + s.bindingId() + " bypassed after "
                + f.category().words(), 1, "", "medium");
    }

    private static void end(HttpResponseStage session, SessionEndReason reason) {
        try {
            session.end(reason);
        } catch (RuntimeException e) {
            // best effort: a stage's end answers nothing
        }
    }

    private static StageRecord record(StageSpec s, StageResult result, Decision decision, Optional<String> code,
                                      boolean replaced, boolean mutated, long start, Optional<StageFailure> failure,
                                      List<Finding> findings) {
        return new StageRecord(s.configKey(), s.bindingId(), s.provenance(), s.onError(), result,
                Optional.ofNullable(decision), code, replaced, mutated, System.nanoTime() - start, failure,
                findings.size() > EnvelopeLimits.MAX_FINDINGS ? findings.subList(0, EnvelopeLimits.MAX_FINDINGS)
                        : findings);
    }

    private static StageFailure checkDiagnostics(StageSpec s, Optional<String> reasonCode, List<Finding> findings) {
        if (reasonCode.isPresent() && !Syntax.isCode(reasonCode.get())) {
            return failure(s, FailureCategory.INVALID_RESULT, PlatformCodes.RESULT_INVALID_REASON_CODE,
                    "reason code is not a lowercase code of at most 64 characters");
        }
        if (findings.size() > EnvelopeLimits.MAX_FINDINGS) {
            return failure(s, FailureCategory.ENVELOPE_VIOLATION, PlatformCodes.FINDING_COUNT_OVER_CAPACITY,
                    findings.size() + " findings exceed " + EnvelopeLimits.MAX_FINDINGS);
        }
        return null;
    }

    private static StageFailure failure(StageSpec s, FailureCategory category, String code, String message) {
        return new StageFailure(category, code, s.provenance() == Provenance.BUILT_IN ? message : code);
    }

    /** A stage call that failed. */
    private static final class StageError extends Exception {
        private static final long serialVersionUID = 1L;
        private final transient StageFailure failure;

        StageError(StageFailure failure) {
            super(failure.code(), null, false, false);
            this.failure = failure;
        }
    }

    /** Calls a stage on a virtual thread within its timeout; {@code null} is a missing result. */
    private static <T> T call(StageSpec s, Callable<T> c) throws StageError {
        FutureTask<T> task = new FutureTask<>(c);
        Thread.ofVirtual().name("response-stage").start(task);
        try {
            T value = task.get(s.timeoutMillis(), TimeUnit.MILLISECONDS);
            if (value == null) {
                throw new StageError(failure(s, FailureCategory.INVALID_RESULT, PlatformCodes.RESULT_MISSING,
                        "stage returned no result"));
            }
            return value;
        } catch (TimeoutException e) {
            task.cancel(true);
            throw new StageError(failure(s, FailureCategory.TIMEOUT, PlatformCodes.STAGE_TIMEOUT,
                    "stage did not answer within " + s.timeoutMillis() + " ms"));
        } catch (InterruptedException e) {
            task.cancel(true);
            Thread.currentThread().interrupt();
            throw new StageError(failure(s, FailureCategory.STAGE_ERROR, PlatformCodes.CHAIN_INTERRUPTED,
                    "the response was interrupted"));
        } catch (ExecutionException e) {
            Throwable t = e.getCause();
            if (t instanceof VirtualMachineError v) {
                throw v;
            }
            String code = t instanceof dev.openshell.middleware.spi.MiddlewareException m && m.code() != null
                    ? m.code() : PlatformCodes.STAGE_EXCEPTION;
            throw new StageError(failure(s, FailureCategory.STAGE_ERROR, code, "stage threw "
                    + t.getClass().getSimpleName()));
        }
    }
}
