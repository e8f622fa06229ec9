package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.internal.StageResult;
import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.internal.Syntax;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * The stages that apply to one request, in ascending {@code order} (RFC 0009, "Middleware ordering"). Made by
 * {@link ChainSelector#select}; run by {@link ChainEngine#run}.
 *
 * <p>A request that matches no config gets the shared {@link #empty()} chain: nothing is allocated, no body is
 * buffered ({@link #requiresBody()} is {@code false}), and the proxy streams the request straight through. A chain
 * with more than {@link EnvelopeLimits#MAX_CHAIN_STAGES} (10) stages is {@linkplain #refused() refused} at runtime
 * (RFC 0009, "Policy integration": "runtime selection defensively rejects a chain longer than 10 stages"): it
 * requires no body and its run denies with {@value DenyResponse#CHAIN_REFUSED}. Immutable.
 */
public final class Chain {
    private static final Chain EMPTY = new Chain(List.of());

    private final List<Prepared> stages;

    /**
     * A stage with what is measured once per selector, not per request.
     *
     * @param spec the stage
     * @param configBytes the config's encoded size, in bytes
     * @param binding the stage's binding as its provider's manifest declares it; empty when the manifest cannot be
     *     read or does not list it (such a stage declares nothing: it is always invoked, on the body as sent)
     */
    record Prepared(StageSpec spec, long configBytes, Optional<MiddlewareBinding> binding) {
        static Prepared of(StageSpec s) {
            return new Prepared(s, s.configEncodedBytes(), declared(s));
        }

        private static Optional<MiddlewareBinding> declared(StageSpec s) {
            try {
                return s.provider().manifest().bindings().stream().filter(b -> b.id().equals(s.bindingId()))
                        .findFirst();
            } catch (RuntimeException e) {
                return Optional.empty();
            }
        }

        /** {@return whether the binding declares {@link MiddlewareBinding#skipEmptyBody()} at PRE_CREDENTIALS} */
        boolean skipsEmptyBody() {
            return binding.filter(b -> b.skipEmptyBody() && b.phase() == Phase.PRE_CREDENTIALS).isPresent();
        }

        /** {@return whether the binding asks for every one of {@code codings} to be decoded} */
        boolean decodes(List<String> codings) {
            return binding.filter(b -> b.decodedContentCodings().containsAll(codings)).isPresent();
        }
    }

    private Chain(List<Prepared> stages) {
        this.stages = stages;
    }

    static Chain of(List<Prepared> stages) {
        return stages.isEmpty() ? EMPTY : new Chain(Collections.unmodifiableList(stages));
    }

    /** {@return the shared empty chain} */
    public static Chain empty() {
        return EMPTY;
    }

    List<Prepared> prepared() {
        return stages;
    }

    /** {@return whether no config matched} */
    public boolean isEmpty() {
        return stages.isEmpty();
    }

    /**
     * {@return whether every stage declares {@link MiddlewareBinding#skipEmptyBody()}}, so that a request without a
     * body invokes none of them (unless an envelope limit fails one); {@code false} for the empty chain
     */
    public boolean skipsEveryStageOnEmptyBody() {
        if (stages.isEmpty()) {
            return false;
        }
        for (Prepared p : stages) {
            if (!p.skipsEmptyBody()) {
                return false;
            }
        }
        return true;
    }

    /** {@return whether more than 10 stages matched, so the chain must not run} */
    public boolean refused() {
        return stages.size() > EnvelopeLimits.MAX_CHAIN_STAGES;
    }

    /** {@return the matching stages in run order (all of them, also for a refused chain); unmodifiable} */
    public List<StageSpec> stages() {
        return stages.stream().map(Prepared::spec).toList();
    }

    /** {@return the number of matching stages} */
    public int size() {
        return stages.size();
    }

    /** {@return whether the proxy must buffer the body and run this chain} */
    public boolean requiresBody() {
        return !isEmpty() && !refused();
    }

    /**
     * {@return how many body bytes the proxy buffers: the largest stage limit, at most 4 MiB; 0 when
     * {@link #requiresBody()} is {@code false}} A body over this limit cannot be inspected by any stage: see
     * {@link #uninspectable}. A body over a smaller stage's limit is that stage's {@code on_error} event, handled by
     * the fold.
     */
    public int bodyBufferLimit() {
        if (!requiresBody()) {
            return 0;
        }
        int max = 0;
        for (Prepared p : stages) {
            max = Math.max(max, p.spec().maxBodyBytes());
        }
        return max;
    }

    /** {@return the denial for a refused chain; empty otherwise} */
    public Optional<DenyResponse> refusal() {
        if (!refused()) {
            return Optional.empty();
        }
        return Optional.of(new DenyResponse(DenyResponse.CHAIN_REFUSED,
                "middleware chain has %d matching stages, more than %d".formatted(stages.size(),
                        EnvelopeLimits.MAX_CHAIN_STAGES),
                Optional.empty(), Optional.empty(), PlatformCodes.CHAIN_STAGE_COUNT_OVER_CAPACITY));
    }

    /**
     * Applies the chain-level uninspectable-traffic rule (RFC 0009, "Operation phases and placement") to a request
     * this chain matches but that cannot be inspected: if any stage is {@code fail_closed} the request is denied;
     * if every stage is {@code fail_open} it is relayed unchanged with a bypass finding per stage.
     *
     * <p>The proxy calls this when a body cannot be buffered for the chain: a known {@code Content-Length} over
     * {@link #bodyBufferLimit()} before any byte is consumed (every stage is then affected, since the buffer limit is
     * the largest stage limit), or a body that cannot be decoded. A chunked body that crosses the limit after bytes
     * were consumed is denied whatever this says, since the raw stream cannot be resumed (RFC 0009, "Decisions":
     * "Chunked and compressed bodies").
     *
     * @param cause a platform code {@code [a-z][a-z0-9_]*} saying why, for example {@code body_over_capacity};
     *     an invalid code is replaced by {@value PlatformCodes#REQUEST_UNINSPECTABLE}
     * @return the verdict
     * @throws IllegalStateException if the chain is empty (nothing to decide) or refused (deny with
     *     {@link #refusal()})
     */
    public UninspectableVerdict uninspectable(String cause) {
        if (!requiresBody()) {
            throw new IllegalStateException(isEmpty() ? "an empty chain has no uninspectable rule"
                    : "a refused chain is denied with its refusal");
        }
        String code = Syntax.isCode(cause) ? cause : PlatformCodes.REQUEST_UNINSPECTABLE;
        StageFailure failure = new StageFailure(FailureCategory.UNINSPECTABLE, code, code);
        StageSpec firstClosed = null;
        List<StageRecord> closed = new ArrayList<>();
        List<StageRecord> open = new ArrayList<>();
        for (Prepared p : stages) {
            StageSpec s = p.spec();
            if (s.onError() == OnError.FAIL_CLOSED) {
                firstClosed = firstClosed == null ? s : firstClosed;
                closed.add(record(s, StageResult.FAILED_CLOSED, failure, List.of()));
            } else {
                Finding bypass = new Finding(PlatformCodes.FINDING_UNINSPECTABLE_BYPASS,
                        "uninspectable request relayed without middleware " + s.bindingId(), 1, "", "medium");
                open.add(record(s, StageResult.BYPASSED, failure, List.of(bypass)));
            }
        }
        if (firstClosed == null) {
            return new UninspectableVerdict.Relay(open);
        }
        return new UninspectableVerdict.Deny(DenyResponse.forStage(DenyResponse.UNINSPECTABLE,
                "request cannot be inspected by required middleware " + firstClosed.bindingId(), firstClosed, code),
                closed);
    }

    private static StageRecord record(StageSpec s, StageResult outcome, StageFailure failure,
                                      List<Finding> findings) {
        return new StageRecord(s.configKey(), s.bindingId(), s.provenance(), s.onError(), outcome, Optional.empty(),
                Optional.empty(), false, false, 0, Optional.of(failure), findings);
    }

    /** {@return the config keys in order, nothing else} */
    @Override
    public String toString() {
        return "Chain" + stages.stream().map(p -> p.spec().configKey()).toList() + (refused() ? " refused" : "");
    }
}
