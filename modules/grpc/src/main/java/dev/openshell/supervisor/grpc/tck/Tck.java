package dev.openshell.supervisor.grpc.tck;

import static dev.openshell.supervisor.grpc.tck.Latency.millis;
import static dev.openshell.supervisor.grpc.tck.Latency.ms;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.supervisor.engine.chain.ChainEngine;
import dev.openshell.supervisor.engine.chain.ChainRequest;
import dev.openshell.supervisor.engine.chain.ChainResult;
import dev.openshell.supervisor.engine.chain.ChainSelector;
import dev.openshell.supervisor.engine.chain.EnvelopeSizes;
import dev.openshell.supervisor.engine.chain.HeaderMutationError;
import dev.openshell.supervisor.engine.chain.HeaderRules;
import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.supervisor.engine.chain.PlatformCodes;
import dev.openshell.supervisor.engine.chain.Provenance;
import dev.openshell.supervisor.engine.chain.StageLimits;
import dev.openshell.middleware.spi.internal.StageResult;
import dev.openshell.supervisor.engine.chain.StageRecord;
import dev.openshell.supervisor.engine.chain.StageSpec;
import dev.openshell.supervisor.grpc.GrpcMiddlewareProvider;
import dev.openshell.middleware.spi.internal.RpcTimeout;
import dev.openshell.supervisor.grpc.ServiceProbe;
import dev.openshell.supervisor.grpc.ServiceRegistration;
import dev.openshell.supervisor.grpc.auth.CallerTokens;
import dev.openshell.supervisor.grpc.StageFailureCodes;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The contract conformance kit ({@code supervisor tck}): checks a running {@code openshell.middleware.v1} service the
 * way this supervisor calls it, with the supervisor's own code: {@link ServiceProbe} sets the connection up as
 * start-up does and applies the supervisor's manifest rules; evaluations go through the supervisor's adapter
 * ({@link GrpcMiddlewareProvider}) and its {@link ChainEngine} (envelope limits, result validation, header rules),
 * as a {@code fail_closed} stage run inline, as the runtime runs external stages. A check fails exactly when the
 * supervisor would refuse the service or fail its stage; it warns when the supervisor would accept it but something
 * will hurt in production.
 *
 * <p>The checks, in order (names are stable; see {@code docs/external-middleware.md}, "Check your service"):
 * {@code auth.*} (extension tokens, {@code TokenChecks}), {@code describe.*}, {@code validate_config.*},
 * {@code evaluate.*}, {@code result.*}, {@code latency.*},
 * {@code deadline.*}, {@code load}. When {@code Describe} or the given config fails, the later checks are
 * {@link Check.Status#SKIP skipped}.
 */
public final class Tck {
    /** The config key the kit adds to fill a config to 64 KiB (kept only if the service accepts it). */
    static final String PADDING_KEY = "openshell_tck_padding";
    /** The config key that makes a config malformed: no service knows it. */
    static final String UNKNOWN_KEY = "openshell_tck_unknown_key";
    /** The config key of every generated request's stage. */
    static final String CONFIG_KEY = "tck";

    static final int JSON_2K = 2 * 1024;
    private static final Duration WARM_UP = Duration.ofSeconds(5);
    private static final Set<String> DECISION = Set.of(StageFailureCodes.INVALID_DECISION);
    private static final Set<String> HAS_BODY = Set.of(StageFailureCodes.RESULT_BODY_TOO_LARGE);
    private static final Set<String> MUTATIONS = Stream.concat(Stream.of(StageFailureCodes.INVALID_HEADER_MUTATION),
            Arrays.stream(HeaderMutationError.Kind.values()).map(HeaderMutationError.Kind::code))
            .collect(Collectors.toUnmodifiableSet());
    private static final Set<String> FINDINGS = Set.of(PlatformCodes.FINDING_COUNT_OVER_CAPACITY,
            PlatformCodes.FINDING_BYTES_OVER_CAPACITY);
    private static final Set<String> METADATA = Set.of(PlatformCodes.METADATA_COUNT_OVER_CAPACITY,
            PlatformCodes.METADATA_BYTES_OVER_CAPACITY, PlatformCodes.METADATA_INVALID_KEY,
            PlatformCodes.METADATA_INVALID_VALUE);
    private static final Set<String> REASON = Set.of(PlatformCodes.RESULT_INVALID_REASON_CODE,
            PlatformCodes.REASON_BYTES_OVER_CAPACITY);

    private final TckOptions options;
    private final List<Check> checks = new ArrayList<>();
    private final List<Evaluated> evaluated = new ArrayList<>();
    private ServiceProbe probe;
    private GrpcMiddlewareProvider provider;
    /** Whether the binding checked is a response binding ({@link TckResponse}). */
    private boolean responseBinding;
    private ChainEngine engine;
    private BindingId binding;
    /** Whether the chosen binding declares {@code skip_empty_body}: its empty-body answer must then be a plain allow. */
    private boolean skipsEmptyBody;
    private long maxBody;
    private Duration timeout = Duration.ZERO;
    private JsonObject envelopeConfig;
    private final AtomicLong requests = new AtomicLong();

    private Tck(TckOptions options) {
        this.options = options;
        this.envelopeConfig = options.config();
    }

    /**
     * Runs every check against the service.
     *
     * @param options what to check
     * @return the report; {@link TckReport#passed()} is {@code false} when any check failed
     */
    public static TckReport run(TckOptions options) {
        Tck t = new Tck(options);
        try {
            t.all();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            t.add(Check.of("interrupted", Check.Status.FAIL, "the kit was interrupted"));
        } catch (RuntimeException e) {
            t.add(Check.of("tck", Check.Status.FAIL, "the kit could not continue: " + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : ": " + e.getMessage().lines().findFirst().orElse(""))));
        } finally {
            if (t.probe != null) {
                t.probe.close();
            }
        }
        return new TckReport(options.registration(), Optional.ofNullable(t.binding).map(BindingId::value),
                t.maxBody, t.timeout, t.checks);
    }

    // ---- the sequence ------------------------------------------------------------------------------------------

    private void all() throws InterruptedException {
        ServiceRegistration reg = options.registration();
        ServiceRegistration zero = reg.withMaxBodyBytes(0);
        try {
            probe = ServiceProbe.open(zero, options.tokens().<CallerTokens>map(t -> t).orElse(CallerTokens.NONE));
        } catch (IOException | IllegalArgumentException e) {
            add(Check.of("describe.answer", Check.Status.FAIL, "cannot set up the channel: " + e.getMessage()));
            skipRest("describe.answer");
            return;
        }
        TokenChecks.run(probe, options.tokens(), this::add);
        if (!describe() || !validateConfig()) {
            return;
        }
        if (responseBinding) {
            checks.addAll(TckResponse.run(provider, binding, options.config(), maxBody)); // HttpResponsePreReturn
            return;
        }
        engine = ChainEngine.builder().limits(options.limits()).inlineStages(s -> true).build();
        evaluations();
        TimingChecks timing = new TimingChecks(new TckSubject(options, probe, provider, engine, binding, maxBody,
                timeout), this);
        timing.latencies();
        timing.deadline();
        results();
        SessionChecks.run(provider, binding, options.config(), timeout.toMillis()).forEach(this::add);
        if (options.load() > 0) {
            timing.load();
        }
    }

    private boolean describe() throws InterruptedException {
        ServiceProbe.Described d = probe.describe();
        String deadline = RpcTimeout.format(options.registration().timeout());
        if (!d.answered()) {
            add(Check.of("describe.answer", Check.Status.FAIL, "Describe failed within the service timeout: "
                    + d.detail(), ms(d.latencyNanos()) + " of " + deadline));
            skipRest("describe.answer");
            return false;
        }
        add(new Check("describe.answer", Check.Status.PASS, "Describe answered within the service timeout",
                ms(d.latencyNanos()) + " of " + deadline + " (first call, with warm-up: " + ms(probe.warmUpNanos())
                        + ")", Map.of("latency_ms", millis(d.latencyNanos()),
                "timeout_ms", options.registration().timeout().toMillis())));
        Map<String, List<String>> byRule = new LinkedHashMap<>();
        for (ServiceProbe.ManifestProblem p : d.problems()) {
            byRule.computeIfAbsent(p.rule(), r -> new ArrayList<>()).add(p.message());
        }
        String summary = d.bindings().size() + " binding(s): " + d.bindings().stream()
                .map(b -> (b.id().isEmpty() ? "(no ID)" : b.id()) + " " + b.operation() + "/" + b.phase())
                .collect(Collectors.joining(", "));
        add(d.problems().isEmpty()
                ? Check.of("describe.manifest", Check.Status.PASS, "the supervisor accepts the manifest", summary)
                : Check.of("describe.manifest", Check.Status.FAIL, "the supervisor refuses the service: "
                        + String.join("; ", d.problems().stream().map(ServiceProbe.ManifestProblem::message)
                        .toList()), summary));
        rule("describe.binding_ids", byRule, List.of("binding_id"), "binding IDs are valid, unique and outside "
                + "openshell/", d.bindings().stream().map(ServiceProbe.AdvertisedBinding::id)
                .map(id -> id.isEmpty() ? "(no ID: the registration name '" + options.registration().name() + "')"
                        : id).collect(Collectors.joining(", ")));
        rule("describe.operation_phase", byRule, List.of("operation_phase", "bindings"),
                "a supported HTTP_REQUEST/PRE_CREDENTIALS binding" + (d.skipped().isEmpty() ? ""
                        : "; skipped: " + String.join(", ", d.skipped())), summary);
        List<ServiceProbe.AdvertisedBinding> invoked = d.bindings().stream()
                .filter(b -> b.operation().equals("HTTP_REQUEST") && b.phase().equals("PRE_CREDENTIALS")).toList();
        long capability = invoked.stream().mapToLong(ServiceProbe.AdvertisedBinding::maxBodyBytes).min().orElse(0);
        maxBody = Math.min(capability, EnvelopeLimits.MAX_BODY_BYTES);
        String caps = invoked.stream().map(b -> b.maxBodyBytes() + " bytes").collect(Collectors.joining(", "));
        if (byRule.containsKey("max_body_bytes")) {
            rule("describe.max_payload_bytes", byRule, List.of("max_body_bytes"), "", caps);
        } else if (capability > EnvelopeLimits.MAX_BODY_BYTES) {
            add(Check.of("describe.max_payload_bytes", Check.Status.WARN, "a binding advertises more than the 4 MiB "
                    + "(" + EnvelopeLimits.MAX_BODY_BYTES + " bytes) the supervisor ever sends; registered with "
                    + maxBody, caps));
        } else if (!invoked.isEmpty() && capability == 0) {
            add(Check.of("describe.max_payload_bytes", Check.Status.WARN, "max_payload_bytes is 0: every request with a "
                    + "body fails this stage (body_bytes_over_capacity)", caps));
        } else {
            add(Check.of("describe.max_payload_bytes", Check.Status.PASS, "within 4 MiB; registered with " + maxBody
                    + " bytes", caps));
        }
        rule("describe.timeouts", byRule, List.of("timeout"), "advertised timeouts are an integer with ms or s, "
                + "10 ms to 30 s", invoked.stream().map(b -> b.timeout().isEmpty() ? "none (registration's "
                + deadline + ")" : b.timeout()).collect(Collectors.joining(", ")));
        if (byRule.containsKey("text")) {
            add(Check.of("describe.text", Check.Status.FAIL, String.join("; ", byRule.get("text"))));
        }
        if (!d.problems().isEmpty()) {
            skipRest("describe.manifest");
            return false;
        }
        provider = probe.provider(maxBody);
        List<MiddlewareBinding> accepted = provider.manifest().bindings();
        Optional<MiddlewareBinding> chosen = options.bindingId().isEmpty() ? accepted.stream().findFirst()
                : accepted.stream().filter(b -> b.id().value().equals(options.bindingId().get())).findFirst();
        if (chosen.isEmpty()) {
            add(Check.of("describe.binding", Check.Status.FAIL, "the service does not offer binding '"
                    + options.bindingId().orElse("") + "'", accepted.stream().map(b -> b.id().value())
                    .collect(Collectors.joining(", "))));
            skipRest("describe.binding");
            return false;
        }
        binding = chosen.get().id();
        responseBinding = chosen.get().operation() == dev.openshell.middleware.spi.Operation.HTTP_RESPONSE;
        skipsEmptyBody = chosen.get().skipEmptyBody();
        timeout = provider.timeout(binding);
        return true;
    }

    private void rule(String name, Map<String, List<String>> byRule, List<String> rules, String ok, String figure) {
        List<String> broken = rules.stream().flatMap(r -> byRule.getOrDefault(r, List.of()).stream()).toList();
        add(broken.isEmpty() ? Check.of(name, Check.Status.PASS, ok, figure)
                : Check.of(name, Check.Status.FAIL, String.join("; ", broken), figure));
    }

    private boolean validateConfig() {
        long start = System.nanoTime();
        String within = " of " + RpcTimeout.format(timeout);
        try {
            ConfigValidation v = provider.validateConfig(binding, options.config());
            long took = System.nanoTime() - start;
            if (!v.valid()) {
                add(Check.of("validate_config.accepts", Check.Status.FAIL, "the service refuses the given config "
                        + "(give the config your policy uses with --config FILE.json)", ms(took) + within));
                skipRest("validate_config.accepts");
                return false;
            }
            add(new Check("validate_config.accepts", Check.Status.PASS, "the given config is accepted within the "
                    + "binding's timeout", ms(took) + within, Map.of("latency_ms", millis(took))));
        } catch (MiddlewareException e) {
            add(Check.of("validate_config.accepts", Check.Status.FAIL, "the supervisor refuses the policy: "
                    + e.code() + " (ValidateConfig must answer within the binding's effective timeout)",
                    ms(System.nanoTime() - start) + within));
            skipRest("validate_config.accepts");
            return false;
        }
        JsonObject malformed = Json.createObjectBuilder(options.config()).add(UNKNOWN_KEY, Json.createArrayBuilder()
                .add(1).add("two").addNull()).build();
        ServiceProbe.RawValidation r = probe.validateConfig(binding, malformed, timeout);
        String figure = ms(r.latencyNanos()) + within;
        if (r.status().equals("OK") && r.valid()) {
            add(Check.of("validate_config.rejects_malformed", Check.Status.FAIL, "a config with the unknown key '"
                    + UNKNOWN_KEY + "' is accepted: refuse unknown keys, so that a misspelt key never weakens a "
                    + "stage silently", figure));
        } else if (r.status().equals("OK") && r.reasonBytes() == 0) {
            add(Check.of("validate_config.rejects_malformed", Check.Status.WARN, "refused, but without a reason "
                    + "(the supervisor never shows it; log it on your side too)", figure));
        } else if (r.status().equals("OK")) {
            add(new Check("validate_config.rejects_malformed", Check.Status.PASS, "refused with a reason of "
                    + r.reasonBytes() + " bytes (the supervisor shows the operator its own message, not yours)",
                    figure, Map.of("latency_ms", millis(r.latencyNanos()))));
        } else if (r.status().equals("DEADLINE_EXCEEDED")) {
            add(Check.of("validate_config.rejects_malformed", Check.Status.FAIL, "no answer within the binding's "
                    + "timeout (service_timeout)", figure));
        } else {
            add(Check.of("validate_config.rejects_malformed", Check.Status.WARN, "answered with gRPC status "
                    + r.status() + " instead of valid = false: the operator sees service_error, not a refusal",
                    figure));
        }
        JsonObject padded = Requests.paddedConfig(options.config(), options.limits().get(
                StageLimits.Limit.CONFIG_BYTES));
        try {
            if (provider.validateConfig(binding, padded).valid()) {
                envelopeConfig = padded;
            }
        } catch (MiddlewareException e) {
            // the envelope check then uses the given config; the message-limit check still fills 4 MiB + 292 KiB
        }
        return true;
    }

    // ---- evaluations -------------------------------------------------------------------------------------------

    /** One evaluation through the engine, with what the adapter read before translating. */
    record Evaluated(String kind, ChainRequest request, StageRecord stage, ChainResult chain,
                             Optional<HttpRequestResult> result, List<ServiceProbe.RawAnswer> raw) {
        boolean accepted() {
            return stage.outcome() == StageResult.ALLOWED || stage.outcome() == StageResult.DENIED;
        }

        String code() {
            return stage.failure().map(f -> f.code()).orElse("");
        }
    }

    private Evaluated evaluate(String kind, ChainRequest request, JsonObject config, long timeoutMillis) {
        RecordingProvider recording = new RecordingProvider(provider);
        StageSpec spec = new StageSpec(CONFIG_KEY, binding, recording, Provenance.THIRD_PARTY, 10,
                OnError.FAIL_CLOSED, (int) maxBody, timeoutMillis, config, h -> true);
        List<ServiceProbe.RawAnswer> raw = new ArrayList<>(1);
        ChainResult r;
        try {
            r = probe.watching(raw::add, () -> engine.run(ChainSelector.of(List.of(spec)).select(Requests.HOST),
                    request));
        } catch (Exception e) {
            throw new IllegalStateException("the chain engine threw", e);
        }
        Evaluated ev = new Evaluated(kind, request, r.stages().get(0), r, Optional.ofNullable(recording.last),
                List.copyOf(raw));
        synchronized (evaluated) {
            evaluated.add(ev);
        }
        return ev;
    }

    Evaluated evaluate(String kind, ChainRequest request) {
        return evaluate(kind, request, options.config(), timeout.toMillis());
    }

    String requestId() {
        return "tck-" + requests.incrementAndGet();
    }

    private void evaluations() {
        int body2k = (int) Math.min(JSON_2K, maxBody);
        // one unmeasured call per body size first: the first calls pay for class loading and JIT on both sides,
        // which a supervisor in service has long paid
        Duration generous = timeout.compareTo(WARM_UP) > 0 ? timeout : WARM_UP;
        for (Body b : List.of(Requests.json(body2k), Requests.json((int) maxBody))) {
            ChainRequest r = Requests.plain(b, requestId());
            probe.evaluate(new HttpRequestEvaluation(binding, Phase.PRE_CREDENTIALS, r.context(), options.config(),
                    r.target(), HeaderRules.visible(r.headers(), r.connectionNominated()), b), maxBody, generous, 0);
        }
        Evaluated empty = evaluate("empty_body", Requests.plain(Body.empty(), requestId()));
        once("evaluate.empty_body", "empty body", empty);
        if (skipsEmptyBody) {
            // the supervisor would skip every one of these: each must be a plain allow (a policy service that
            // denies DELETE /admin without a body must not declare the skip)
            List<Evaluated> bodiless = new ArrayList<>(List.of(empty));
            for (String[] mp : new String[][] {{"GET", "/"}, {"HEAD", "/admin"}, {"DELETE", "/admin"}}) {
                bodiless.add(evaluate("skip_" + mp[0].toLowerCase(java.util.Locale.ROOT),
                        Requests.bodiless(mp[0], mp[1], requestId())));
            }
            skipEmptyBody(bodiless);
        }
        once("evaluate.json_2k", body2k + "-byte JSON body", evaluate("json_2k",
                Requests.plain(Requests.json(body2k), requestId())));
        once("evaluate.max_body", "body at max_body_bytes (" + maxBody + " bytes)", evaluate("max_body",
                Requests.plain(Requests.json((int) maxBody), requestId())));
        ChainRequest full = Requests.fullEnvelope(Requests.json((int) maxBody), options.limits(), requestId());
        Evaluated e = evaluate("full_envelope", full, envelopeConfig, timeout.toMillis());
        String what = "every envelope part at its limit (%d visible header lines of %d bytes, target %d, context %d, config %d"
                .formatted(full.headers().size() - 2, EnvelopeSizes.headers(HeaderRules.visible(full.headers(),
                        full.connectionNominated())),
                        EnvelopeSizes.target(full.target()), EnvelopeSizes.context(full.context()),
                        EnvelopeSizes.config(envelopeConfig)) + (envelopeConfig == options.config()
                        ? ": the service refuses a config padded to 64 KiB" : "") + ", body " + maxBody + ")";
        if (envelopeConfig == options.config() && EnvelopeSizes.config(envelopeConfig)
                < options.limits().get(StageLimits.Limit.CONFIG_BYTES) && e.accepted()) {
            add(Check.of("evaluate.full_envelope", Check.Status.SKIP, what + ": the 64 KiB config was not tested "
                    + "(the service refuses the padding key " + PADDING_KEY + "; the rest of the envelope is "
                    + "accepted)", ms(e.stage().latencyNanos()) + " of " + RpcTimeout.format(timeout)));
        } else {
            once("evaluate.full_envelope", what, e);
        }
        messageLimit(full);
        probes();
    }

    /**
     * {@code evaluate.probe_*} and {@code evaluate.body_N}: the bodies a service acts on ({@link Probe}), each once;
     * a denial or a transform is what they are for, so only a result the supervisor would refuse fails.
     */
    private void probes() {
        List<Probe> all = new ArrayList<>(Probe.builtIns());
        all.addAll(options.bodies());
        for (Probe p : all) {
            String name = "evaluate." + p.name();
            String what = p.what() + " (" + p.body().size() + " bytes, " + p.contentType() + ")";
            if (p.body().size() > maxBody) {
                add(Check.of(name, Check.Status.SKIP, what + ": larger than the binding's max_body_bytes ("
                        + maxBody + "), so the supervisor never sends it to the stage"));
                continue;
            }
            Evaluated e = evaluate(p.name(), Requests.probe(p, requestId()));
            String figure = ms(e.stage().latencyNanos()) + " of " + RpcTimeout.format(timeout);
            if (!e.accepted()) {
                add(Check.of(name, Check.Status.FAIL, what + ": the supervisor fails the stage: " + e.code()
                        + aspectHint(e.code()), figure));
                continue;
            }
            HttpRequestResult r = e.result().orElseThrow();
            List<String> did = new ArrayList<>();
            did.add(r.decision() == Decision.ALLOW ? "allowed" : "denied" + r.reasonCode().map(c -> " (" + c + ")")
                    .orElse(""));
            if (e.stage().bodyReplaced()) {
                did.add("body replaced (" + e.chain().body().size() + " bytes)");
            }
            if (!r.headerMutations().isEmpty()) {
                did.add(r.headerMutations().size() + " header mutation(s)");
            }
            did.add(r.findings().size() + " finding(s)");
            add(Check.of(name, Check.Status.PASS, what + ": the supervisor accepts the result", figure + ", "
                    + String.join(", ", did)));
        }
    }

    private void once(String name, String what, Evaluated e) {
        Map<String, Number> m = new TreeMap<>();
        m.put("latency_ms", millis(e.stage().latencyNanos()));
        m.put("request_body_bytes", e.request().body().size());
        e.raw().stream().findFirst().ifPresent(a -> m.put("answer_bytes", a.messageBytes()));
        String figure = ms(e.stage().latencyNanos()) + " of " + RpcTimeout.format(timeout);
        if (!e.accepted()) {
            add(new Check(name, Check.Status.FAIL, what + ": the supervisor fails the stage: " + e.code()
                    + aspectHint(e.code()), figure, m));
            return;
        }
        HttpRequestResult r = e.result().orElseThrow();
        String decision = r.decision() + r.reasonCode().map(c -> " (" + c + ")").orElse("");
        figure += ", " + decision + ", " + r.findings().size() + " finding(s)"
                + (e.stage().bodyReplaced() ? ", body replaced" : "");
        if (e.stage().outcome() == StageResult.DENIED) {
            add(new Check(name, Check.Status.WARN, what + ": denied a benign request; if the service cannot handle "
                    + "it, advertise a smaller max_body_bytes instead", figure, m));
        } else {
            add(new Check(name, Check.Status.PASS, what + ": the supervisor accepts the result", figure, m));
        }
    }

    /**
     * {@code evaluate.skip_empty_body}: a binding that declares {@code skip_empty_body} is never asked about an empty
     * body by the supervisor, so its answer there must be a plain allow; anything else would silently not happen.
     */
    private void skipEmptyBody(List<Evaluated> evaluations) {
        String name = "evaluate.skip_empty_body";
        List<String> broken = new ArrayList<>();
        for (Evaluated e : evaluations) {
            List<String> effects = effects(e);
            if (!effects.isEmpty()) {
                broken.add(e.request().target().method() + " " + e.request().target().path() + ": "
                        + String.join(", ", effects));
            }
        }
        String figure = evaluations.size() + " bodiless evaluation(s)";
        add(broken.isEmpty()
                ? Check.of(name, Check.Status.PASS, "the binding declares skip_empty_body and allows every request "
                        + "without a body unchanged (POST, GET, HEAD, DELETE)", figure)
                : Check.of(name, Check.Status.FAIL, "the binding declares skip_empty_body, so the supervisor never "
                        + "asks it about a request without a body, but it answered " + String.join("; ", broken)
                        + ": that answer would never take effect; drop skip_empty_body", figure));
    }

    /** {@return what an answer to a bodiless request carries beyond a plain allow} */
    private static List<String> effects(Evaluated e) {
        List<String> effects = new ArrayList<>();
        Optional<HttpRequestResult> r = e.accepted() ? e.result() : Optional.empty();
        if (r.isEmpty()) {
            effects.add("no accepted answer (" + e.code() + ")");
            return effects;
        }
        HttpRequestResult a = r.get();
        if (a.decision() != Decision.ALLOW) {
            effects.add("a denial");
        }
        if (a.body().isPresent() && !a.body().get().isEmpty()) {
            effects.add("a body");
        }
        if (!a.headerMutations().isEmpty()) {
            effects.add(a.headerMutations().size() + " header mutation(s)");
        }
        if (!a.findings().isEmpty()) {
            effects.add(a.findings().size() + " finding(s)");
        }
        if (!a.metadata().isEmpty()) {
            effects.add(a.metadata().size() + " metadata entr" + (a.metadata().size() == 1 ? "y" : "ies"));
        }
        return effects;
    }

    private static String aspectHint(String code) {
        for (var a : List.of(Map.entry("result.decision", DECISION), Map.entry("result.has_body", HAS_BODY),
                Map.entry("result.header_mutations", MUTATIONS), Map.entry("result.findings", FINDINGS),
                Map.entry("result.metadata", METADATA), Map.entry("result.reason_code", REASON))) {
            if (a.getValue().contains(code)) {
                return " (see " + a.getKey() + ")";
            }
        }
        return "";
    }

    private void messageLimit(ChainRequest full) {
        int limit = EnvelopeLimits.MIN_GRPC_MESSAGE_BYTES;
        HttpRequestEvaluation e = new HttpRequestEvaluation(binding, Phase.PRE_CREDENTIALS, full.context(),
                envelopeConfig, full.target(), HeaderRules.visible(full.headers(), full.connectionNominated()), full.body());
        Duration deadline = timeout.compareTo(Duration.ofSeconds(2)) > 0 ? timeout : Duration.ofSeconds(2);
        ServiceProbe.RawCall c = probe.evaluate(e, maxBody, deadline, limit);
        if (!c.status().equals("OK") && !c.status().equals("RESOURCE_EXHAUSTED")) {
            // once more: a connection the service reset after an earlier check fails the first call on it
            c = probe.evaluate(e, maxBody, deadline, limit);
        }
        String figure = c.requestBytes() + "-byte request, " + c.status() + " after " + ms(c.latencyNanos());
        Map<String, Number> m = Map.of("request_bytes", c.requestBytes(), "latency_ms", millis(c.latencyNanos()));
        boolean canArrive = maxBody >= EnvelopeLimits.MAX_BODY_BYTES;
        if (c.status().equals("RESOURCE_EXHAUSTED")) {
            add(new Check("evaluate.message_limit", canArrive ? Check.Status.FAIL : Check.Status.WARN,
                    "the service refuses a " + limit + "-byte message (RESOURCE_EXHAUSTED): configure the server "
                            + "for at least 4 MiB + 292 KiB in both directions" + (canArrive ? ""
                            : " (this binding's bodies stay smaller, so the supervisor is not affected yet)"),
                    figure, m));
        } else if (c.status().equals("OK")) {
            add(new Check("evaluate.message_limit", Check.Status.PASS, "a " + limit + "-byte message (4 MiB + 292 "
                    + "KiB, padded with an unknown field) is read", figure, m));
        } else {
            add(new Check("evaluate.message_limit", Check.Status.WARN, "a " + limit + "-byte message got gRPC "
                    + "status " + c.status() + ": the limit could not be confirmed", figure, m));
        }
    }

    private void results() {
        List<Evaluated> all;
        synchronized (evaluated) {
            all = List.copyOf(evaluated);
        }
        aspect("result.decision", DECISION, all, "every decision is DECISION_ALLOW or DECISION_DENY");
        List<String> lost = all.stream().filter(e -> e.raw().stream().anyMatch(a -> !a.hasBody() && a.bodyBytes() > 0))
                .map(e -> e.kind() + ": body bytes with has_body = false").distinct().toList();
        List<String> same = all.stream().filter(e -> e.accepted() && e.stage().bodyReplaced()
                && e.chain().body().equals(e.request().body())).map(Evaluated::kind).distinct().toList();
        if (!lost.isEmpty()) {
            add(Check.of("result.has_body", Check.Status.FAIL, String.join("; ", lost) + ": the supervisor ignores "
                    + "the body and forwards the previous one (set has_body = true to replace it)"));
        } else {
            aspect("result.has_body", HAS_BODY, all, same.isEmpty() ? "has_body = true only with a replacement "
                    + "within max_body_bytes" : "");
            if (same.isEmpty() || checks.get(checks.size() - 1).status() != Check.Status.PASS) {
                // nothing more to say, or the aspect already failed
            } else {
                checks.set(checks.size() - 1, Check.of("result.has_body", Check.Status.WARN, String.join(", ", same)
                        + ": has_body = true with the same bytes; keep has_body = false when nothing changed"));
            }
        }
        aspect("result.header_mutations", MUTATIONS, all, "header mutations only write x-openshell-middleware-* "
                + "and touch no protected header");
        aspect("result.findings", FINDINGS, all, "at most " + options.limits().get(StageLimits.Limit.FINDINGS)
                + " findings of at most " + options.limits().get(StageLimits.Limit.FINDING_BYTES) + " bytes");
        aspect("result.metadata", METADATA, all, "metadata within " + options.limits().get(
                StageLimits.Limit.METADATA_ENTRIES) + " entries and " + options.limits().get(
                StageLimits.Limit.METADATA_BYTES) + " bytes, valid keys and values");
        aspect("result.reason_code", REASON, all, "reason codes are codes (a lower-case letter, then lower-case letters, digits and _, at most 64), reasons within "
                + options.limits().get(StageLimits.Limit.REASON_BYTES) + " bytes");
    }

    private void aspect(String name, Set<String> codes, List<Evaluated> all, String ok) {
        List<String> broken = all.stream().filter(e -> codes.contains(e.code())).map(e -> e.kind() + ": " + e.code())
                .distinct().toList();
        Map<String, Number> m = Map.of("evaluations", all.size());
        add(broken.isEmpty() ? new Check(name, Check.Status.PASS, ok, all.size() + " evaluation(s)", m)
                : new Check(name, Check.Status.FAIL, "the supervisor fails the stage: " + String.join("; ", broken),
                all.size() + " evaluation(s)", m));
    }

    // ---- helpers -----------------------------------------------------------------------------------------------

    void add(Check c) {
        checks.add(c);
    }

    private void skipRest(String because) {
        add(Check.of("remaining", Check.Status.SKIP, "not run: " + because + " failed"));
    }
}
