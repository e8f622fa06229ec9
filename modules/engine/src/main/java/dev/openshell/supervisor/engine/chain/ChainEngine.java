package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.internal.StageResult;
import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.middleware.spi.internal.Syntax;
import dev.openshell.middleware.spi.host.CredentialAccess;
import dev.openshell.middleware.spi.host.OutboundRequest;
import dev.openshell.middleware.spi.host.RestrictedMiddlewareProvider;
import static dev.openshell.supervisor.engine.chain.StageAttempts.failed;
import static dev.openshell.supervisor.engine.chain.StageAttempts.failedRecord;
import static dev.openshell.supervisor.engine.chain.StageAttempts.failure;
import static dev.openshell.supervisor.engine.chain.StageAttempts.sanitize;

import dev.openshell.supervisor.engine.chain.StageAttempts.Attempt;
import dev.openshell.supervisor.engine.chain.StageAttempts.Invoked;
import dev.openshell.supervisor.engine.chain.StageLimits.Limit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadFactory;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * Runs a {@link Chain} over one request: the fold of RFC 0009 ("The middleware contract", "Middleware ordering").
 *
 * <h2>The fold</h2>
 * Stages run one at a time in ascending order. Each receives the previous stage's accepted body and headers: the
 * visible subset of the complete header list ({@link HeaderRules#visible}), in wire order with duplicates. For each
 * stage the engine:
 * <ol>
 *   <li>checks the input envelope: config at most 64 KiB encoded, context 4 KiB, target 32 KiB, at most 128 header
 *       lines and 64 KiB of encoded headers, and the body within the stage's {@code max_body_bytes};</li>
 *   <li>invokes the provider on a virtual thread and waits at most the stage's timeout (or, for an inline stage,
 *       on the calling thread, checking the timeout when it returns);</li>
 *   <li>checks the result: present; reason at most 4 KiB; reason code {@code [a-z][a-z0-9_]*}; at most 64 header
 *       mutations and 64 KiB of them encoded; at most 32 findings of at most 4 KiB encoded each; at most 64
 *       metadata entries, 32 KiB in all, with keys {@code [A-Za-z0-9][A-Za-z0-9_.-]*} (at most 128 characters) and
 *       values without control characters;</li>
 *   <li>for {@code ALLOW}, validates and applies the header mutations atomically ({@link HeaderRules#apply}); a
 *       present body replaces the previous one (present and empty replaces it with nothing; absent keeps it);</li>
 *   <li>after an accepted body replacement, runs the {@link BodyRecheck}.</li>
 * </ol>
 * A {@code DENY} stops the chain: later stages never run. Any failure in steps 1 to 4 (exception, timeout, invalid
 * result, over-cap body, invalid mutation, envelope violation) follows the stage's {@link OnError}:
 * {@code fail_closed} stops and denies; {@code fail_open} leaves the representation exactly as the stage received
 * it, records a bypass finding ({@value PlatformCodes#FINDING_BYPASS}) and lets later stages run. Findings and
 * metadata of an accepted result (allow or deny) are kept, metadata under the stage's config key.
 *
 * <h2>Stages skipped on an empty body</h2>
 * A stage whose binding declares {@link dev.openshell.middleware.spi.MiddlewareBinding#skipEmptyBody()} (a plain
 * allow for every empty body; {@code openshell/regex} does) is not invoked when the body that would reach it is empty:
 * the body as sent, or as decoded for the chain, or as an earlier stage replaced it. It gets no {@link StageRecord}
 * (so no per-stage event: there was no invocation) and is listed in {@link ChainResult#skipped()} instead, for the
 * metrics. The input envelope is still checked first (step 1 above), so a request the stage could not be sent fails it
 * as before. A stage after it still runs, on the same representation; a stage before it that puts a body in place
 * makes it run. So a bodiless request through a chain of such stages costs no invocation at all. What is not asked
 * cannot fail: a skipped stage's service being unavailable or slow does not matter to a request it would allow
 * unchanged. The post-credentials phase never skips.
 *
 * <h2>The post-credentials phase</h2>
 * {@link #runPostCredentials} runs the restricted built-ins of a request (for example {@code openshell/sigv4}) after
 * credential injection, with the same fold, failure policy, envelope limits, threads, timeouts and
 * {@link StageRecord}s. The differences, all from {@link RestrictedMiddlewareProvider}'s contract: a stage is invoked
 * through {@link RestrictedMiddlewareProvider#evaluatePostCredentials} with the credential access of the request's
 * generation; it sees every end-to-end header, credentials included, but no hop-by-hop, framing or
 * Connection-nominated one (the proxy frames the request itself); it cannot deny, only fail; and its answer is checked
 * by {@link PostCredentialsRules}: target and body unchanged, {@code Host} unchanged, no hop-by-hop or framing header
 * added, every field a token name with a safe value, within the header limits. A failed check is the stage's
 * {@code on_error} event like any other failure. A provider that is not restricted fails with
 * {@value PlatformCodes#POST_CREDENTIALS_NOT_RESTRICTED}.
 *
 * <h2>Threads and timeouts</h2>
 * Every invocation, in-process or not, runs on a fresh thread from the engine's factory (virtual by default) while
 * the caller waits at most the stage's timeout, except stages chosen with {@link Builder#inlineStages} (by default
 * {@code openshell/regex}, whose run time is bounded by the body), which run on the caller's thread and whose late
 * result is discarded as a timeout when they return; a late stage is a {@link FailureCategory#TIMEOUT} failure and its
 * thread is interrupted. A stage that ignores interrupts keeps its thread until it returns; its result is discarded.
 * With a {@link Builder#bulkLane bulk lane}, the bounded built-ins on bodies of at least its threshold run on its
 * platform threads while the caller parks, so CPU-bound scans of large bodies do not hold the virtual-thread carriers
 * ({@link BulkLane}); their timeout is judged as inline.
 * With a {@link Builder#stagePool stage pool}, the other stages run on its bounded platform threads instead, a stage
 * past its timeout is counted as stuck, and a binding with too many stuck threads is unavailable (its stages fail
 * with {@value PlatformCodes#MIDDLEWARE_UNAVAILABLE}, {@link FailureCategory#UNAVAILABLE}, without running).
 * A {@link VirtualMachineError} thrown by a stage is rethrown; every other {@link Throwable} is a stage failure. If
 * the calling thread is interrupted while waiting, the request is denied ({@value PlatformCodes#CHAIN_INTERRUPTED})
 * whatever the stage's {@code on_error}, and the interrupt status is restored.
 *
 * <p>Instances are immutable and thread-safe; one engine serves every request.
 */
public final class ChainEngine {
    private static final ChainOutcome FORWARD = new ChainOutcome.Forward();
    /**
     * Built-ins whose run time is bounded by their input: a linear scan of at most 4 MiB (the regex), one SHA-256 of
     * at most 4 MiB and a few HMACs (the SigV4 signer).
     */
    private static final Set<String> BOUNDED_BUILT_INS = Set.of("openshell/regex", "openshell/sigv4");

    /**
     * The default of {@link Builder#inlineStages}: {@link Provenance#BUILT_IN} stages of bindings whose run time is
     * bounded by their input and that never block ({@code openshell/regex}: one linear scan of a body of at most
     * 4 MiB; {@code openshell/sigv4}: one hash of it). The {@code openshell/} namespace is reserved for built-ins, so a plugin cannot claim this.
     */
    public static final Predicate<StageSpec> BOUNDED_BUILT_IN_STAGES = s -> s.provenance() == Provenance.BUILT_IN
            && BOUNDED_BUILT_INS.contains(s.bindingId().value());

    private final HeaderRules rules;
    private final StageLimits limits;
    private final BodyRecheck recheck;
    private final LongSupplier nanoClock;
    private final StageInvoker invoker;

    private ChainEngine(Builder b) {
        this.rules = b.rules;
        this.limits = b.limits;
        this.recheck = b.recheck;
        this.nanoClock = b.nanoClock;
        this.invoker = new StageInvoker(b.nanoClock, b.threads, b.inline, b.pool, b.bulk);
    }

    /** {@return a builder with the defaults: fresh {@link HeaderRules}, no re-check, System.nanoTime, virtual threads} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return the envelope limits this engine checks around every stage} */
    public StageLimits limits() {
        return limits;
    }

    /** {@return the header rules this engine applies (and whose rejection counters it feeds)} */
    public HeaderRules headerRules() {
        return rules;
    }

    /**
     * Runs {@code chain} over {@code request}.
     *
     * @param chain the selected chain; an empty chain forwards the request unchanged, a refused chain denies it
     *     without running any stage
     * @param request the request representation
     * @return the outcome with per-stage records; never {@code null}
     * @throws VirtualMachineError if a stage threw one
     */
    public ChainResult run(Chain chain, ChainRequest request) {
        return run(chain, request, recheck);
    }

    /**
     * Runs {@code chain} over {@code request} with a re-check of this request's own, instead of the engine's: the
     * body-aware L7 policy of the endpoint the request was routed to (RFC 0009, "Operation phases and placement").
     *
     * @param chain the selected chain; an empty chain forwards the request unchanged, a refused chain denies it
     *     without running any stage
     * @param request the request representation
     * @param recheck the re-check run after every accepted body replacement of this run
     * @return the outcome with per-stage records; never {@code null}
     * @throws VirtualMachineError if a stage threw one
     */
    public ChainResult run(Chain chain, ChainRequest request, BodyRecheck recheck) {
        Objects.requireNonNull(chain, "chain");
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(recheck, "recheck");
        if (chain.refused() || chain.isEmpty()) {
            return unrun(chain, request.headers(), request.body());
        }
        return fold(chain, new Fold(request.target(), request.headers(), request.body(), request.context(), null,
                chain, recheck));
    }

    /**
     * Runs the post-credentials {@code chain} over the request as it will be forwarded (see the class
     * documentation, "The post-credentials phase").
     *
     * @param chain the selected post-credentials chain; an empty chain forwards unchanged, a refused one denies
     * @param request the request after credential injection: the admitted target with the final query, the headers
     *     about to be forwarded (hop-by-hop, framing and Connection-nominated lines are dropped before any stage sees
     *     them, and the result holds none), the body the proxy buffered ({@link dev.openshell.middleware.spi.Body#empty()}
     *     when it streams); its header values may be real credentials
     * @param credentials the credential access of the generation serving the request, handed to every stage
     * @param context the audit context
     * @return the outcome with per-stage records; its headers are the ones to forward; never {@code null}
     * @throws VirtualMachineError if a stage threw one
     */
    public ChainResult runPostCredentials(Chain chain, OutboundRequest request, CredentialAccess credentials,
                                          RequestContext context) {
        Objects.requireNonNull(chain, "chain");
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(credentials, "credentials");
        Objects.requireNonNull(context, "context");
        List<HttpHeader> headers = PostCredentialsRules.forwardable(request.headers());
        if (chain.refused() || chain.isEmpty()) {
            return unrun(chain, headers, request.body());
        }
        return fold(chain, new Fold(request.target(), headers, request.body(), context, credentials, chain,
                recheck));
    }

    /** {@return the result of a chain no stage runs in: a refused chain denies, an empty one forwards unchanged} */
    private static ChainResult unrun(Chain chain, List<HttpHeader> headers, Body body) {
        ChainOutcome outcome = chain.refused() ? new ChainOutcome.Deny(chain.refusal().orElseThrow()) : FORWARD;
        return new ChainResult(outcome, List.of(), headers, body, ChainMetadata.empty(), List.of(), List.of());
    }

    private static ChainResult fold(Chain chain, Fold fold) {
        for (Chain.Prepared p : chain.prepared()) {
            if (!fold.step(p)) {
                break;
            }
        }
        return fold.result();
    }

    /** The state of one run. */
    private final class Fold {
        private final HttpRequestTarget target;
        private final RequestContext context;
        /** The post-credentials phase's credential access; {@code null} in the pre-credentials phase. */
        private final CredentialAccess credentials;
        private final Set<String> nominated;
        private final List<StageRecord> records = new ArrayList<>();
        private final List<RecheckRecord> rechecks = new ArrayList<>(0);
        /** The stages skipped on an empty body ({@link Chain.Prepared#skipsEmptyBody()}). */
        private final List<StageSpec> skipped = new ArrayList<>(0);
        private final ChainMetadata.Builder metadata = new ChainMetadata.Builder();
        private List<HttpHeader> headers;
        private List<HttpHeader> visible;
        private Body body;
        private long contextBytes = -1;
        private long targetBytes = -1;
        private ChainOutcome outcome = FORWARD;
        /** Why the Content-Encoding the stages asked for could not be decoded: each stage fails with it. */
        private ContentDecoding.Outcome.Failed decodingFailure;
        /** The re-check of this run. */
        private final BodyRecheck recheck;

        Fold(HttpRequestTarget target, List<HttpHeader> headers, Body body, RequestContext context,
             CredentialAccess credentials, Chain chain, BodyRecheck recheck) {
            this.recheck = recheck;
            this.target = target;
            this.context = context;
            this.credentials = credentials;
            this.nominated = credentials == null ? HeaderRules.connectionNominated(headers) : Set.of();
            this.headers = headers;
            this.body = body;
            if (credentials != null) {
                return; // the post-credentials phase signs the body exactly as it will be forwarded
            }
            switch (ContentDecoding.forChain(chain, headers, body)) {
                case ContentDecoding.Outcome.Decoded d -> {
                    this.body = d.body();
                    this.headers = ContentDecoding.withoutContentEncoding(headers);
                }
                case ContentDecoding.Outcome.Failed f -> decodingFailure = f;
                case null -> { } // left as sent: no stage asked, or nothing to decode
            }
        }

        /**
         * The result. A body decoded for the stages is forwarded decoded, without {@code Content-Encoding}, whether
         * or not a stage changed it: what the stages inspected is what the upstream gets. The encoded form carries
         * bytes no stage sees (each gzip member's MTIME, XFL, OS, FEXTRA, FNAME and FCOMMENT fields, the encoder's
         * choice of deflate blocks), enough to carry a secret out.
         */
        ChainResult result() {
            return new ChainResult(outcome, records, headers, body, metadata.build(), rechecks, skipped);
        }

        /** {@return whether the chain continues} */
        boolean step(Chain.Prepared p) {
            StageSpec s = p.spec();
            if (p.skipsEmptyBody() && credentials == null && decodingFailure == null && body.isEmpty()
                    && envelopeFits(p)) {
                // the binding declares a plain allow for an empty body: nothing to ask, nothing to record
                skipped.add(s);
                return true;
            }
            long start = nanoClock.getAsLong();
            Attempt attempt = attempt(p);
            long latency = nanoClock.getAsLong() - start;
            if (attempt instanceof Attempt.Failed f) {
                List<Finding> unavailable = f.failure().code().equals(PlatformCodes.MIDDLEWARE_UNAVAILABLE)
                        ? List.of(new Finding(PlatformCodes.FINDING_UNAVAILABLE, "middleware " + s.bindingId()
                                + " unavailable: stages stuck past their timeout", 1, "", "high"))
                        : List.of();
                if (f.interrupted() || s.onError() == OnError.FAIL_CLOSED) {
                    records.add(failedRecord(s, StageResult.FAILED_CLOSED, latency, f.failure(), unavailable));
                    outcome = new ChainOutcome.Deny(DenyResponse.forStage(DenyResponse.MIDDLEWARE_FAILED,
                            DenyResponse.MIDDLEWARE_FAILED + ": " + f.failure().message(), s, f.failure().code()));
                    return false;
                }
                Finding bypass = new Finding(PlatformCodes.FINDING_BYPASS, "middleware " + s.bindingId()
                        + " bypassed after " + f.failure().category().words(), 1, "", "medium");
                records.add(failedRecord(s, StageResult.BYPASSED, latency, f.failure(), unavailable.isEmpty()
                        ? List.of(bypass) : List.of(bypass, unavailable.get(0))));
                return true;
            }
            Attempt.Accepted a = (Attempt.Accepted) attempt;
            HttpRequestResult r = a.result();
            metadata.put(s.configKey(), s.provenance(), r.metadata());
            List<Finding> findings = s.trusted() ? r.findings() : sanitize(s, r.findings());
            if (r.decision() == Decision.DENY) {
                records.add(new StageRecord(s.configKey(), s.bindingId(), s.provenance(), s.onError(),
                        StageResult.DENIED, Optional.of(Decision.DENY), r.reasonCode(), false, false, latency,
                        Optional.empty(), findings));
                String detail = s.trusted() && !r.reason().isBlank() ? SafeText.safeReason(r.reason())
                        : "request denied by middleware " + s.bindingId();
                outcome = new ChainOutcome.Deny(DenyResponse.forStage(DenyResponse.MIDDLEWARE_DENIED, detail, s,
                        r.reasonCode().orElse(PlatformCodes.MIDDLEWARE_DENIED)));
                return false;
            }
            // transformed means changed: a stage that returns the headers or the body it was given changed nothing
            boolean mutated = a.headers() != null && !a.headers().equals(headers);
            if (mutated) {
                headers = a.headers();
                visible = null;
            }
            boolean replaced = r.body().isPresent() && !r.body().get().equals(body);
            if (replaced) {
                body = r.body().get();
            }
            records.add(new StageRecord(s.configKey(), s.bindingId(), s.provenance(), s.onError(),
                    StageResult.ALLOWED, Optional.of(Decision.ALLOW), r.reasonCode(), replaced, mutated, latency,
                    Optional.empty(), findings));
            return !replaced || recheck(s);
        }

        private Attempt attempt(Chain.Prepared p) {
            StageSpec s = p.spec();
            if (visible == null) {
                // the post-credentials phase sees every forwardable header; hop-by-hop ones were dropped already
                visible = credentials == null ? HeaderRules.visible(headers, nominated) : headers;
            }
            StageFailure inputFailure = checkInput(p);
            if (inputFailure != null) {
                return new Attempt.Failed(inputFailure, false);
            }
            if (credentials != null) {
                return attemptPostCredentials(s);
            }
            HttpRequestEvaluation evaluation = new HttpRequestEvaluation(s.bindingId(), Phase.PRE_CREDENTIALS,
                    context, s.config(), target, visible, body);
            Invoked<HttpRequestResult> invoked = invoker.invoke(s, () -> s.provider().evaluate(evaluation), body.size());
            if (invoked.failed() != null) {
                return invoked.failed();
            }
            HttpRequestResult result = invoked.value();
            StageFailure resultFailure = StageAttempts.checkResult(s, result, limits, rules);
            if (resultFailure != null) {
                return new Attempt.Failed(resultFailure, false);
            }
            if (result.decision() == Decision.DENY || result.headerMutations().isEmpty()) {
                return new Attempt.Accepted(result, null);
            }
            return switch (rules.apply(headers, nominated, result.headerMutations())) {
                case MutationOutcome.Rejected rej -> failed(s, FailureCategory.INVALID_HEADER_MUTATION,
                        rej.error().code(), rej.error().message());
                case MutationOutcome.Applied app -> new Attempt.Accepted(result, app.changed() ? app.headers() : null);
            };
        }

        /** One restricted stage: invoked with the request's credential access, its answer checked. */
        private Attempt attemptPostCredentials(StageSpec s) {
            if (!(s.provider() instanceof RestrictedMiddlewareProvider restricted)) {
                return failed(s, FailureCategory.STAGE_ERROR, PlatformCodes.POST_CREDENTIALS_NOT_RESTRICTED,
                        "the post-credentials stage's provider is not a restricted built-in");
            }
            OutboundRequest in = new OutboundRequest(target, headers, body);
            Invoked<OutboundRequest> invoked = invoker.invoke(s,
                    () -> restricted.evaluatePostCredentials(s.bindingId(), s.config(), in, credentials), body.size());
            if (invoked.failed() != null) {
                return invoked.failed();
            }
            PostCredentialsRules.Violation v = PostCredentialsRules.check(in, invoked.value());
            if (v != null) {
                return failed(s, v.category(), v.code(), v.message());
            }
            List<HttpHeader> out = invoked.value().headers();
            return new Attempt.Accepted(HttpRequestResult.allow(), out.equals(headers) ? null : out);
        }

        /**
         * {@return whether the stage could be sent this request} A skip changes nothing else: an envelope over a
         * limit still fails the stage (and a {@code fail_closed} one denies), as when it is invoked.
         */
        private boolean envelopeFits(Chain.Prepared p) {
            if (visible == null) {
                visible = HeaderRules.visible(headers, nominated);
            }
            return checkInput(p) == null;
        }

        private StageFailure checkInput(Chain.Prepared p) {
            StageSpec s = p.spec();
            if (p.configBytes() > limits.get(Limit.CONFIG_BYTES)) {
                return failure(s, FailureCategory.ENVELOPE_VIOLATION, PlatformCodes.CONFIG_BYTES_OVER_CAPACITY,
                        "config exceeds " + limits.get(Limit.CONFIG_BYTES) + " encoded bytes");
            }
            if (contextBytes < 0) {
                contextBytes = Wire.context(context);
                targetBytes = Wire.target(target);
            }
            if (contextBytes > limits.get(Limit.CONTEXT_BYTES)) {
                return failure(s, FailureCategory.ENVELOPE_VIOLATION, PlatformCodes.CONTEXT_BYTES_OVER_CAPACITY,
                        "request context exceeds " + limits.get(Limit.CONTEXT_BYTES) + " encoded bytes");
            }
            if (targetBytes > limits.get(Limit.TARGET_BYTES)) {
                return failure(s, FailureCategory.ENVELOPE_VIOLATION, PlatformCodes.TARGET_BYTES_OVER_CAPACITY,
                        "request target exceeds " + limits.get(Limit.TARGET_BYTES) + " encoded bytes");
            }
            if (visible.size() > limits.get(Limit.HEADER_LINES)) {
                return failure(s, FailureCategory.ENVELOPE_VIOLATION, PlatformCodes.HEADER_COUNT_OVER_CAPACITY,
                        visible.size() + " header lines exceed " + limits.get(Limit.HEADER_LINES));
            }
            if (Wire.headers(visible) > limits.get(Limit.HEADER_BYTES)) {
                return failure(s, FailureCategory.ENVELOPE_VIOLATION, PlatformCodes.HEADER_BYTES_OVER_CAPACITY,
                        "headers exceed " + limits.get(Limit.HEADER_BYTES) + " encoded bytes");
            }
            if (decodingFailure != null) {
                return failure(s, decodingFailure.code().equals(PlatformCodes.DECODED_BODY_OVER_CAPACITY)
                        ? FailureCategory.BODY_OVER_CAPACITY : FailureCategory.UNINSPECTABLE, decodingFailure.code(),
                        decodingFailure.message());
            }
            if (body.size() > s.maxBodyBytes()) {
                return failure(s, FailureCategory.BODY_OVER_CAPACITY, PlatformCodes.BODY_BYTES_OVER_CAPACITY,
                        "body of " + body.size() + " bytes exceeds the stage limit of " + s.maxBodyBytes() + " bytes");
            }
            return null;
        }

        private boolean recheck(StageSpec s) {
            BodyRecheck.Verdict v;
            try {
                v = recheck.recheck(new BodyRecheck.Request(s.configKey(), s.bindingId(), target, headers,
                        body));
            } catch (VirtualMachineError e) {
                throw e;
            } catch (Throwable t) {
                v = null;
            }
            switch (v) {
                case null -> {
                    rechecks.add(new RecheckRecord(s.configKey(), s.bindingId(), RecheckRecord.Result.FAILED,
                            PlatformCodes.BODY_RECHECK_FAILED));
                    outcome = new ChainOutcome.Deny(DenyResponse.forStage(DenyResponse.POLICY_FAILED,
                            "body-aware policy re-check failed after a transformation by middleware "
                                    + s.bindingId(), s, PlatformCodes.BODY_RECHECK_FAILED));
                    return false;
                }
                case BodyRecheck.Verdict.Pass pass -> {
                    rechecks.add(new RecheckRecord(s.configKey(), s.bindingId(), RecheckRecord.Result.PASSED, ""));
                    return true;
                }
                case BodyRecheck.Verdict.Deny d -> {
                    String code = Syntax.isCode(d.reasonCode()) ? d.reasonCode() : PlatformCodes.BODY_RECHECK_DENIED;
                    rechecks.add(new RecheckRecord(s.configKey(), s.bindingId(), RecheckRecord.Result.DENIED, code));
                    outcome = new ChainOutcome.Deny(DenyResponse.forStage(DenyResponse.POLICY_DENIED,
                            "transformed request denied by body-aware policy after middleware " + s.bindingId(), s,
                            code));
                    return false;
                }
                case BodyRecheck.Verdict.AuditDeny d -> {
                    String code = Syntax.isCode(d.reasonCode()) ? d.reasonCode() : PlatformCodes.BODY_RECHECK_DENIED;
                    rechecks.add(new RecheckRecord(s.configKey(), s.bindingId(), RecheckRecord.Result.AUDIT_DENIED,
                            code));
                    return false;
                }
            }
        }
    }

    /** Configures a {@link ChainEngine}; not thread-safe. */
    public static final class Builder {
        private HeaderRules rules = new HeaderRules();
        private StageLimits limits = StageLimits.DEFAULT;
        private BodyRecheck recheck = BodyRecheck.none();
        private LongSupplier nanoClock = System::nanoTime;
        private ThreadFactory threads = Thread.ofVirtual().name("middleware-stage-", 0).factory();
        private Predicate<StageSpec> inline = BOUNDED_BUILT_IN_STAGES;
        private StagePool pool;
        private BulkLane bulk;

        private Builder() {
        }

        /**
         * {@return this}
         *
         * @param rules the header rules (and rejection counters) to use
         */
        public Builder headerRules(HeaderRules rules) {
            this.rules = Objects.requireNonNull(rules, "rules");
            return this;
        }

        /**
         * {@return this}
         *
         * @param limits the envelope limits checked around every stage; {@link StageLimits#DEFAULT} (the contract's)
         *     unless a test or the conformance kit tightens one
         */
        public Builder limits(StageLimits limits) {
            this.limits = Objects.requireNonNull(limits, "limits");
            return this;
        }

        /**
         * {@return this}
         *
         * @param recheck the body-aware policy re-check run after every body replacement
         */
        public Builder bodyRecheck(BodyRecheck recheck) {
            this.recheck = Objects.requireNonNull(recheck, "recheck");
            return this;
        }

        /**
         * {@return this}
         *
         * @param nanoClock the clock for stage latencies, in nanoseconds
         */
        public Builder nanoClock(LongSupplier nanoClock) {
            this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
            return this;
        }

        /**
         * {@return this}
         *
         * @param threads the factory for stage threads; virtual threads by default
         */
        public Builder threadFactory(ThreadFactory threads) {
            this.threads = Objects.requireNonNull(threads, "threads");
            return this;
        }

        /**
         * Chooses the stages that run on the calling thread instead of a fresh one. Such a stage's timeout is checked
         * when it returns: a late result is discarded as a {@link FailureCategory#TIMEOUT} failure, exactly as on a
         * separate thread, but the stage cannot be cut short, so the caller waits for it. Use it only for in-process
         * stages whose run time is bounded by their input and that never block; it saves the thread start and the
         * two hand-offs per stage (about 15 to 30 microseconds). An interrupted caller denies with
         * {@value PlatformCodes#CHAIN_INTERRUPTED} as it does while waiting for a stage thread.
         *
         * @param inline the stages to run inline; default {@link #BOUNDED_BUILT_IN_STAGES}, {@code s -> false} for
         *     none
         * @return this
         */
        public Builder inlineStages(Predicate<StageSpec> inline) {
            this.inline = Objects.requireNonNull(inline, "inline");
            return this;
        }

        /**
         * Runs every stage that is not inline ({@link #inlineStages}) on {@code pool}'s platform threads instead of a
         * fresh thread of the {@linkplain #threadFactory factory}: a stage that spins then cannot pin a virtual
         * thread's carrier, a stage past its timeout is counted as stuck, and the stages of a binding with too many
         * stuck threads fail at once with {@value PlatformCodes#MIDDLEWARE_UNAVAILABLE} (its {@code on_error}; the
         * stage record carries a {@code high} {@value PlatformCodes#FINDING_UNAVAILABLE} finding). See
         * {@link StagePool}.
         *
         * @param pool the pool, shared by every engine of the process; {@code null} for none (the default)
         * @return this
         */
        public Builder stagePool(StagePool pool) {
            this.pool = pool;
            return this;
        }

        /**
         * Runs the bounded built-in stages ({@link #BOUNDED_BUILT_IN_STAGES}) on large bodies on {@code lane}'s
         * platform threads instead of the caller's (virtual) thread, so that CPU-bound scans of large bodies do not
         * hold the virtual-thread carriers ({@link BulkLane}).
         *
         * @param lane the lane, shared by every engine of the process; {@code null} for none (the default)
         * @return this builder
         */
        public Builder bulkLane(BulkLane lane) {
            this.bulk = lane;
            return this;
        }

        /** {@return the engine} */
        public ChainEngine build() {
            return new ChainEngine(this);
        }
    }
}
