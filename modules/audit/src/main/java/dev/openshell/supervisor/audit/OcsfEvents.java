package dev.openshell.supervisor.audit;

import static dev.openshell.supervisor.audit.EventMembers.actor;
import static dev.openshell.supervisor.audit.EventMembers.requestBase;
import static dev.openshell.supervisor.audit.EventMembers.caption;
import static dev.openshell.supervisor.audit.EventMembers.HTTP_ACTIVITY_IDS;
import static dev.openshell.supervisor.audit.EventMembers.endpoint;
import static dev.openshell.supervisor.audit.EventMembers.openshell;
import static dev.openshell.supervisor.audit.EventMembers.httpMethod;
import static dev.openshell.supervisor.audit.EventMembers.policyText;
import static dev.openshell.supervisor.audit.EventMembers.randomUid;
import static dev.openshell.supervisor.audit.EventMembers.safeDetail;
import static dev.openshell.supervisor.audit.EventMembers.safeText;
import static dev.openshell.supervisor.audit.EventMembers.url;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.openshell.middleware.spi.internal.StageResult;
import dev.openshell.middleware.spi.internal.Syntax;
import jakarta.json.JsonObject;
import java.time.Clock;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Builds the OCSF events the supervisor emits (RFC 0009, "Audit and logging"), against OCSF schema
 * {@value #SCHEMA_VERSION}:
 * <ul>
 *   <li>{@code HTTP Activity} (class 4002) per stage invocation: Informational for allow, Medium for deny; and per
 *       L7 policy decision ({@link #l7Decision}): Informational for allow, Low for audit, Medium for deny.</li>
 *   <li>{@code Detection Finding} (class 2004): required-stage failures, invalid responses, uninspectable traffic and
 *       body-aware policy failures are High; {@code fail_open} bypasses and all-{@code fail_open} uninspectable relays
 *       are Medium, so operators can alert on reduced enforcement; middleware findings are Informational; a
 *       response scrubbed of injected credential values is High, and so is one refused because its body could not
 *       be scanned (Medium when relayed under {@code allow_unscanned_responses}); response header fields dropped as
 *       unreadable (a charset the supervisor cannot decode) are Medium.</li>
 *   <li>{@code Device Config State Change} (class 5019): registration validation, registry reload, policy validation,
 *       each insecure ({@code allow_insecure}) registration, and binary scoping turned off ({@code endpoint-only}).</li>
 * </ul>
 * HTTP Activity and Detection Finding events carry {@code actor.process} (PID, executable with its SHA-256, lineage,
 * parent) when the process behind the connection was identified; a changed binary is a High Detection Finding.
 * Supervisor-specific fields go under {@code unmapped.openshell}. Events are written straight to JSON text (the audit
 * hot path: one HTTP Activity per stage invocation); the returned {@link JsonObject} reads that text. Every string
 * that reaches an event is either supervisor-owned (config keys, binding IDs, platform codes) or passed through
 * {@link #safeText}; nothing here accepts paths, queries, header values, bodies or text from external services.
 */
public final class OcsfEvents {
    /** The OCSF schema version events conform to ({@code metadata.version}). */
    public static final String SCHEMA_VERSION = "1.9.0-dev";
    /** The product name in {@code metadata.product.name}. */
    public static final String PRODUCT = "OpenShell Supervisor";
    static final int CATEGORY_FINDINGS = 2;
    static final int CATEGORY_NETWORK = 4;
    static final int CATEGORY_DISCOVERY = 5;
    static final int HTTP_ACTIVITY = 4002;
    static final int DETECTION_FINDING = 2004;
    static final int DEVICE_CONFIG_STATE_CHANGE = 5019;

    private final String productVersion;
    private final String hostname;
    private final Clock clock;
    /** The member {@code metadata.product}, {@code "product":{...}}: the same for every event, so rendered once. */
    private final byte[] product;
    /** The members from {@code category_uid} to {@code severity}, rendered once per kind of event. */
    private final EventHeads heads = new EventHeads();
    /**
     * The rendered {@code actor} member per process (UTF-8): the block is about half of an event and the same on every
     * event of a connection. Bounded by size, not by count ({@value #ACTOR_CACHE_BYTES} bytes of members and their
     * keys, Caffeine's size eviction), since one member may carry 64 ancestors of 4,096-character paths; a member
     * longer than {@value #MAX_CACHED_MEMBER_BYTES} bytes is rendered for its event and not kept. Package-private for
     * the tests.
     */
    final Cache<ProcessFacts, byte[]> actors = Caffeine.newBuilder().maximumWeight(ACTOR_CACHE_BYTES)
            .weigher((ProcessFacts k, byte[] v) -> 2 * v.length) // the key holds the same paths as the member
            .executor(Runnable::run).build();
    /** The weight bound of {@link #actors}: about 4 MiB (the members' bytes, counted twice for their keys). */
    static final int ACTOR_CACHE_BYTES = 4 << 20;
    /** The longest {@code actor} member kept rendered, in bytes (a typical one is about 700). */
    static final int MAX_CACHED_MEMBER_BYTES = 16 * 1024;

    /**
     * @param productVersion the supervisor version, for {@code metadata.product.version}
     * @param hostname this host's name, for {@code device.hostname} in configuration events
     * @param clock the clock for {@code time}
     */
    public OcsfEvents(String productVersion, String hostname, Clock clock) {
        this.productVersion = Objects.requireNonNull(productVersion, "productVersion");
        this.hostname = Objects.requireNonNull(hostname, "hostname");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.product = new JsonText(128).open("product").add("name", PRODUCT).add("vendor_name", "OpenShell")
                .add("version", productVersion).end().member();
    }

    /**
     * {@return an HTTP Activity event (class 4002) for one stage invocation}
     *
     * @param request the request facts
     * @param stage what the stage did
     */
    public JsonObject httpActivity(RequestFacts request, StageOutcome stage) {
        return httpActivity(request, stage, 0);
    }

    /**
     * {@return an HTTP Activity event (class 4002) for one response stage invocation ({@code HTTP_RESPONSE/PRE_RETURN})}:
     * as {@link #httpActivity(RequestFacts, StageOutcome)}, with {@code http_response.code} the upstream's final status
     * and {@code unmapped.openshell.phase} {@code pre_return}
     *
     * @param request the request facts
     * @param stage what the stage did
     * @param responseStatus the final upstream status the stage saw; 0 for a request stage
     */
    public JsonObject httpActivity(RequestFacts request, StageOutcome stage, int responseStatus) {
        boolean allowed = stage.result() == StageResult.ALLOWED
                || stage.result() == StageResult.BYPASSED;
        String method = request.method().toUpperCase(Locale.ROOT);
        int activity = HTTP_ACTIVITY_IDS.getOrDefault(method, 99);
        byte[] actor = actor(actors, request);
        JsonText e = base(CATEGORY_NETWORK, "Network Activity", HTTP_ACTIVITY, "HTTP Activity", activity,
                activity == 99 ? "Other" : caption(method), allowed ? Severity.INFORMATIONAL : Severity.MEDIUM,
                actor);
        e.add("status_id", allowed ? 1 : 2).add("status", allowed ? "Success" : "Failure");
        e.add("action_id", allowed ? 1 : 2).add("action", allowed ? "Allowed" : "Denied");
        e.add("disposition_id", allowed ? 1 : 2).add("disposition", allowed ? "Allowed" : "Blocked");
        e.add("duration", stage.latencyNanos() / 1_000_000L);
        String decision = stage.result().name().toLowerCase(Locale.ROOT);
        e.add("message", "middleware " + stage.configKey() + " " + stage.bindingId() + ": " + decision);
        e.open("http_request").add("http_method", httpMethod(method));
        url(e.open("url"), request).end().end();
        if (responseStatus > 0) {
            e.open("http_response").add("code", responseStatus).end();
        }
        endpoint(e.open("dst_endpoint"), request).end();
        actor(e, actor);
        openshell(e.open("unmapped").open("openshell"), request, stage.configKey(), stage.bindingId())
                .add("decision", decision)
                .add("transformed", stage.transformed())
                .add("latency_us", stage.latencyNanos() / 1_000L)
                .add("on_error", stage.failClosed() ? "fail_closed" : "fail_open");
        if (responseStatus > 0) {
            e.add("phase", "pre_return");
        }
        stage.platformCode().ifPresent(c -> e.add("code", Syntax.safeCode(c)));
        return e.end().end().build();
    }

    /**
     * {@return an HTTP Activity event (class 4002) for one L7 policy decision on a request or a WebSocket text
     * message} ({@code docs/policy-reference.md}, "L7 policy", decision 5.) An allowed request is Informational and
     * Allowed; an audited violation (forwarded under {@code enforcement: audit}) is Low, Allowed, with decision
     * {@code audit}; a denial is Medium, Denied. {@code firewall_rule} names the policy key ({@code uid}), the
     * engine ({@code type}: {@code l7}, {@code l7-graphql}, {@code l7-jsonrpc}, {@code l7-mcp}, {@code l7-websocket})
     * and the rule that decided ({@code name}, as written in the policy); {@code url.path} is the canonical path,
     * never the query; {@code message} is {@code "<engine> <decision>: <reason>"}, e.g.
     * {@code "l7-graphql deny: mutation not permitted"}. Paths and rules pass through {@link #policyText}.
     *
     * @param request the request facts
     * @param d what was decided
     */
    public JsonObject l7Decision(RequestFacts request, L7Outcome d) {
        String method = request.method().toUpperCase(Locale.ROOT);
        int activity = HTTP_ACTIVITY_IDS.getOrDefault(method, 99);
        boolean allowed = !d.decision().equals("deny");
        Severity sev = d.decision().equals("allow") ? Severity.INFORMATIONAL
                : allowed ? Severity.LOW : Severity.MEDIUM;
        byte[] actor = actor(actors, request);
        JsonText e = base(CATEGORY_NETWORK, "Network Activity", HTTP_ACTIVITY, "HTTP Activity", activity,
                activity == 99 ? "Other" : caption(method), sev, actor);
        e.add("status_id", allowed ? 1 : 2).add("status", allowed ? "Success" : "Failure");
        e.add("action_id", allowed ? 1 : 2).add("action", allowed ? "Allowed" : "Denied");
        e.add("disposition_id", allowed ? 1 : 2).add("disposition", allowed ? "Allowed" : "Blocked");
        // the engine names the layer already ("l7", "l7-graphql", ...): "l7 deny: ...", never "l7 l7 deny: ..."
        e.add("message", safeText(d.engine(), 32) + " " + d.decision() + ": " + policyText(d.reason(), 300));
        e.open("http_request").add("http_method", httpMethod(method));
        url(e.open("url"), request).add("path", policyText(d.path(), 1024)).end().end();
        endpoint(e.open("dst_endpoint"), request).end();
        JsonText rule = e.open("firewall_rule").add("uid", safeText(d.policyKey(), 128))
                .add("type", safeText(d.engine(), 32));
        d.rule().ifPresent(r -> rule.add("name", policyText(r, 256)));
        rule.end();
        actor(e, actor);
        JsonText os = requestBase(e.open("unmapped").open("openshell"), request).add("layer", "l7")
                .add("decision", d.decision()).add("protocol", d.protocol()).add("engine", d.engine())
                .add("policy", safeText(d.policyKey(), 128)).add("status_code", d.status());
        d.rule().ifPresent(r -> os.add("rule", policyText(r, 256)));
        if (d.hard()) {
            os.add("hard_deny", true);
        }
        d.stage().ifPresent(k -> os.add("after_config_key", safeText(k, 128)));
        if (!d.rechecked().isEmpty()) {
            os.addArray("rechecked_after_config_keys", d.rechecked().stream().map(k -> safeText(k, 128)).toList());
        }
        d.code().ifPresent(c -> os.add("code", Syntax.safeCode(c)));
        return e.end().end().build();
    }

    /**
     * One L7 policy decision, as {@link #l7Decision} records it. Every string is supervisor- or policy-owned, or the
     * canonical path; none is a query value, header value or body.
     *
     * @param decision {@code allow}, {@code audit} or {@code deny}
     * @param hard whether a denial ignored {@code enforcement: audit}
     * @param status the HTTP status a denial answered (200 otherwise)
     * @param protocol the endpoint protocol ({@code rest}, {@code graphql}, {@code json-rpc}, {@code mcp},
     *     {@code websocket})
     * @param engine the engine name ({@code l7}, {@code l7-graphql}, ...)
     * @param policyKey the network policy whose endpoint decided
     * @param rule the rule that decided or that was missing, as written in the policy
     * @param reason the short reason (no request content)
     * @param path the canonical path, {@code -} when the target was refused
     * @param stage the config key of the stage whose body replacement was re-evaluated, for a re-evaluation
     * @param code the refusal's own code, when it has one ({@code method_override}, {@code json_too_deep}, ...)
     * @param rechecked the config keys of the stages, in chain order, whose body replacement was re-evaluated with
     *     this decision's result (decision, rule, reason, code), recorded in this event instead of one of their own
     *     ({@code unmapped.openshell.rechecked_after_config_keys}); empty when none was
     */
    public record L7Outcome(String decision, boolean hard, int status, String protocol, String engine,
                            String policyKey, Optional<String> rule, String reason, String path,
                            Optional<String> stage, Optional<String> code, List<String> rechecked) {
        /** @throws NullPointerException if a part is {@code null} */
        public L7Outcome {
            Objects.requireNonNull(decision, "decision");
            Objects.requireNonNull(protocol, "protocol");
            Objects.requireNonNull(engine, "engine");
            Objects.requireNonNull(policyKey, "policyKey");
            Objects.requireNonNull(rule, "rule");
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(path, "path");
            Objects.requireNonNull(stage, "stage");
            Objects.requireNonNull(code, "code");
            rechecked = List.copyOf(rechecked);
        }

        /**
         * An outcome that records no re-check of its own.
         *
         * @param decision {@code allow}, {@code audit} or {@code deny}
         * @param hard whether a denial ignored {@code enforcement: audit}
         * @param status the HTTP status a denial answered
         * @param protocol the endpoint protocol
         * @param engine the engine name
         * @param policyKey the network policy whose endpoint decided
         * @param rule the rule that decided or that was missing
         * @param reason the short reason
         * @param path the canonical path
         * @param stage the config key of the stage whose replacement was re-evaluated
         * @param code the refusal's own code, when it has one
         */
        public L7Outcome(String decision, boolean hard, int status, String protocol, String engine,
                         String policyKey, Optional<String> rule, String reason, String path,
                         Optional<String> stage, Optional<String> code) {
            this(decision, hard, status, protocol, engine, policyKey, rule, reason, path, stage, code, List.of());
        }

    }

    /**
     * {@return an HTTP Activity event (class 4002, Denied, Medium) for a request the supervisor refused or answered
     * itself (credential refusals, {@code TRACE})}
     *
     * @param request the request facts
     * @param code the platform code, e.g. {@code credential_placement_not_allowed}
     * @param detail the operator-facing explanation (names the credential and its host patterns, never a value),
     *     passed through {@link #safeText}
     */
    public JsonObject requestRefused(RequestFacts request, String code, String detail) {
        String method = request.method().toUpperCase(Locale.ROOT);
        int activity = HTTP_ACTIVITY_IDS.getOrDefault(method, 99);
        JsonText e = base(CATEGORY_NETWORK, "Network Activity", HTTP_ACTIVITY, "HTTP Activity", activity,
                activity == 99 ? "Other" : caption(method), Severity.MEDIUM, null);
        e.add("status_id", 2).add("status", "Failure");
        e.add("action_id", 2).add("action", "Denied");
        e.add("disposition_id", 2).add("disposition", "Blocked");
        e.add("message", "request refused: " + Syntax.safeCode(code));
        e.add("status_detail", safeText(detail, 300));
        e.open("http_request").add("http_method", httpMethod(method));
        url(e.open("url"), request).end().end();
        endpoint(e.open("dst_endpoint"), request).end();
        requestBase(e.open("unmapped").open("openshell"), request).add("code", Syntax.safeCode(code)).add("decision", "deny");
        return e.end().end().build();
    }

    /**
     * {@return an HTTP Activity event (class 4002, action Denied) for a refusal, or for {@code count} refusals of the
     * same code from the same client aggregated by {@link RefusalAudit}}: severity Medium for a policy decision
     * ({@code network_policy}, {@code ssrf}, {@code credential}), Low for the rest; the activity is the method when it
     * is a standard one (an unknown method is Other and is not named, a request refused before its method was read is
     * Unknown). {@code http_response.code} is the status the client got (absent for a connection closed unanswered; an
     * empty {@code http_request} then stands for a request nothing was read of), {@code src_endpoint.ip} the client
     * ({@code name: unknown} when the listener did not report it), {@code dst_endpoint} and {@code http_request.url}
     * scheme, host and port only. {@code unmapped.openshell} carries {@code code}, {@code category}, {@code cause}
     * (when known), {@code decision: deny}, {@code request_id} and {@code network_policy} (when known) and, for an
     * aggregate, {@code aggregated: true}; {@code count}, {@code start_time} and {@code end_time} are OCSF's own.
     *
     * @param r the refusal
     * @param count how many refusals the event stands for, at least 1
     * @param startMillis the first one's time, epoch milliseconds (used when {@code count > 1})
     * @param aggregated whether the event summarises refusals that were not written one by one
     */
    public JsonObject refusal(RefusalFacts r, long count, long startMillis, boolean aggregated) {
        String method = r.request().map(q -> q.method().toUpperCase(Locale.ROOT)).orElse("");
        boolean standard = HTTP_ACTIVITY_IDS.containsKey(method); // else activity Other, unnamed
        int activity = r.request().isEmpty() ? 0 : standard ? HTTP_ACTIVITY_IDS.get(method) : 99;
        String activityName = activity == 0 ? "Unknown" : activity == 99 ? "Other" : caption(method);
        boolean policy = r.category().equals("network_policy") || r.category().equals("ssrf")
                || r.category().equals("credential");
        JsonText e = base(CATEGORY_NETWORK, "Network Activity", HTTP_ACTIVITY, "HTTP Activity", activity,
                activityName, policy ? Severity.MEDIUM : Severity.LOW, null);
        e.add("status_id", 2).add("status", "Failure");
        e.add("action_id", 2).add("action", "Denied");
        e.add("disposition_id", 2).add("disposition", "Blocked");
        String code = Syntax.safeCode(r.code());
        e.add("message", (aggregated ? count + " further refusals not written one by one: " : "request refused: ")
                + code);
        if (r.status() > 0) {
            e.add("status_code", Integer.toString(r.status()));
        }
        e.add("status_detail", safeDetail(r.detail(), 300));
        if (count > 1 || aggregated) {
            e.add("count", count).add("start_time", startMillis).add("end_time", clock.millis());
        }
        r.request().ifPresent(q -> {
            e.open("http_request");
            if (standard) {
                e.add("http_method", method);
            }
            url(e.open("url"), q).end().end();
            endpoint(e.open("dst_endpoint"), q).end();
        });
        if (r.status() > 0) {
            e.open("http_response").add("code", r.status()).end();
        } else if (r.request().isEmpty()) {
            e.open("http_request").end(); // closed before a byte was read: an HTTP request nothing is known of
        }
        if (r.clientIp().isPresent()) {
            e.open("src_endpoint").add("ip", safeText(r.clientIp().get(), 64)).end();
        } else {
            e.open("src_endpoint").add("name", "unknown").end(); // OCSF: at least one endpoint
        }
        r.request().ifPresent(q -> actor(e, actor(actors, q)));
        JsonText os = e.open("unmapped").open("openshell");
        r.request().ifPresent(q -> requestBase(os, q));
        os.add("code", code).add("category", r.category());
        r.cause().ifPresent(c -> os.add("cause", Syntax.safeCode(c)));
        os.add("decision", "deny");
        if (aggregated) {
            os.add("aggregated", true);
        }
        return e.end().end().build();
    }

    /**
     * {@return a Detection Finding (class 2004) for a stage failure: High when {@code fail_closed} denied the
     * request, Medium for a {@code fail_open} bypass}
     *
     * @param request the request facts
     * @param stage the failed stage ({@link StageResult#FAILED_CLOSED} or {@link StageResult#BYPASSED})
     */
    public JsonObject stageFailure(RequestFacts request, StageOutcome stage) {
        boolean closed = stage.result() != StageResult.BYPASSED;
        String code = stage.platformCode().map(Syntax::safeCode).orElse("middleware_failed");
        String title = closed ? "required middleware stage failed; request denied"
                : "middleware stage bypassed (fail_open); request relayed without it";
        return finding(request, closed ? Severity.HIGH : Severity.MEDIUM, title,
                closed ? "middleware.failure" : "middleware.bypass",
                os -> openshell(os, request, stage.configKey(), stage.bindingId()).add("code", code)
                        .add("on_error", closed ? "fail_closed" : "fail_open")
                        .add("decision", closed ? "deny" : "bypass"));
    }

    /**
     * {@return a Detection Finding (class 2004) for a request the matching chain could not inspect (RFC 0009: denied
     * when any matching stage is {@code fail_closed}, High; relayed when all are {@code fail_open}, Medium)}
     *
     * @param request the request facts
     * @param configKeys the matching chain's config keys, in order
     * @param denied whether the request was denied
     * @param code the platform code for why it was uninspectable, e.g. {@code body_over_capacity}
     */
    public JsonObject uninspectable(RequestFacts request, List<String> configKeys, boolean denied, String code) {
        return finding(request, denied ? Severity.HIGH : Severity.MEDIUM,
                denied ? "uninspectable request denied: a matching stage is fail_closed"
                        : "uninspectable request relayed: every matching stage is fail_open",
                "middleware.uninspectable",
                os -> requestBase(os, request).addArray("config_keys", configKeys).add("code", Syntax.safeCode(code))
                        .add("decision", denied ? "deny" : "bypass"));
    }

    /**
     * {@return a Detection Finding (class 2004, High) for a body-aware policy failure after a body replacement}
     *
     * @param request the request facts
     * @param configKey the stage whose replacement failed the check
     * @param bindingId its binding ID
     * @param code the platform code
     */
    public JsonObject bodyPolicyFailure(RequestFacts request, String configKey, String bindingId, String code) {
        return finding(request, Severity.HIGH, "replacement body failed body-aware policy; request denied",
                "policy.body_recheck",
                os -> openshell(os, request, configKey, bindingId).add("code", Syntax.safeCode(code)).add("decision", "deny"));
    }

    /**
     * {@return a Detection Finding (class 2004, High) for a response from which injected credential values were removed
     * before it reached the sandbox (issue 22, item 2): the upstream echoed a secret} Names the credentials and counts
     * the replacements; never a value.
     *
     * @param request the request facts
     * @param credentials the credential names found, each passed through {@link #safeText}
     * @param headerMatches the replacements in the status line and header fields
     * @param bodyMatches the replacements in the body
     */
    public JsonObject responseScrubbed(RequestFacts request, List<String> credentials, long headerMatches,
                                       long bodyMatches) {
        List<String> names = credentials.stream().map(c -> safeText(c, 128)).toList();
        return finding(request, Severity.HIGH, "injected credential value removed from the upstream's response",
                "credential.response_scrubbed", os -> requestBase(os, request).add("code", "response_scrubbed")
                        .add("decision", "scrub").addArray("credentials", names).add("header_matches", headerMatches)
                        .add("body_matches", bodyMatches));
    }

    /**
     * {@return a Detection Finding (class 2004) for the response to a credential-bearing request whose body could not
     * be scanned for the injected values (a content coding the supervisor does not decode, or a compressed body that
     * does not decode): High when refused (502) or cut off, Medium when relayed because every credential allows it
     * ({@code allow_unscanned_responses})}
     *
     * @param request the request facts
     * @param code the platform code, {@code response_uninspectable}
     * @param relayed whether the body was relayed unscanned
     */
    public JsonObject responseUninspectable(RequestFacts request, String code, boolean relayed) {
        return finding(request, relayed ? Severity.MEDIUM : Severity.HIGH, relayed
                        ? "response relayed unscanned for injected credential values (allow_unscanned_responses)"
                        : "response refused: its body could not be scanned for injected credential values",
                "credential.response_uninspectable",
                os -> requestBase(os, request).add("code", Syntax.safeCode(code)).add("decision", relayed ? "bypass" : "deny"));
    }

    /**
     * {@return a Detection Finding (class 2004, Medium) for fields dropped from a response head to a credential-bearing
     * request because a parameter or RFC 2047 word of theirs is in a charset the supervisor cannot decode} Names the
     * fields ({@link #safeText}), never their values.
     *
     * @param request the request facts
     * @param fields the dropped fields' names, not empty
     */
    public JsonObject responseFieldsUnreadable(RequestFacts request, List<String> fields) {
        return finding(request, Severity.MEDIUM, "response header fields in a charset the supervisor cannot decode"
                + " dropped unscanned", "credential.response_field_unreadable", os -> requestBase(os, request)
                .add("code", "response_field_unreadable").add("decision", "drop")
                .addArray("fields", fields.stream().map(f -> safeText(f, 128)).toList()));
    }

    /**
     * {@return a Detection Finding (class 2004, Informational) for a finding a stage reported}
     *
     * @param request the request facts
     * @param configKey the stage's config key
     * @param bindingId its binding ID
     * @param type the finding type, e.g. {@code pii.email} (passed through {@link #safeText})
     * @param count the number of matches
     */
    public JsonObject middlewareFinding(RequestFacts request, String configKey, String bindingId, String type,
                                        long count) {
        String safeType = safeText(type, 64);
        return finding(request, Severity.INFORMATIONAL, "middleware finding: " + safeType, safeType,
                os -> openshell(os, request, configKey, bindingId).add("finding_type", safeType).add("count", count));
    }

    /**
     * {@return a Detection Finding (class 2004, High) for a binary whose SHA-256 is not the one first seen at its path
     * (trust on first use): the connection was denied}
     *
     * @param request the request facts (of the CONNECT or the request that opened the connection); its process, if
     *     any, is ignored: the changed binary is the actor
     * @param pid the process whose executable changed (the client or one of its ancestors)
     * @param binary the executable's path, passed through {@link #safeText}
     * @param trustedSha256 the hash first seen at that path
     * @param observedSha256 the hash now
     */
    public JsonObject binaryIntegrityViolation(RequestFacts request, long pid, String binary, String trustedSha256,
                                               String observedSha256) {
        RequestFacts withActor = new RequestFacts(request.requestId(), request.method(), request.scheme(),
                request.host(), request.port(), request.networkPolicy(),
                java.util.Optional.of(new ProcessFacts(pid, binary, observedSha256, List.of(), 0)));
        return finding(withActor, Severity.HIGH, "binary integrity violation: a binary changed since it was first"
                        + " seen; connection denied", "process.integrity_violation",
                os -> requestBase(os, request).add("code", "binary_integrity_violation").add("decision", "deny")
                        .add("binary", safeText(binary, 4096)).add("pid", pid)
                        .add("trusted_sha256", safeText(trustedSha256, 64))
                        .add("observed_sha256", safeText(observedSha256, 64)));
    }

    /**
     * {@return a Detection Finding (class 2004, Medium) for a connection whose identified process no longer holds its
     * socket: the connection was identified again, and its requests are judged as the process that holds it now}
     * A process may hand its connection to another ({@code pidfd_getfd(2)}, {@code SCM_RIGHTS}) and exit.
     *
     * @param request the destination of the request that found it; its process, when present, is the new holder (the
     *     actor)
     * @param previousPid the process the connection was identified as
     * @param previousBinary its executable's path, passed through {@link #safeText}
     * @param identity {@code identified}, or the safe reason the new holder is not known
     */
    public JsonObject connectionReidentified(RequestFacts request, long previousPid, String previousBinary,
                                             String identity) {
        return finding(request, Severity.MEDIUM, "connection re-identified: the process it was identified as no"
                        + " longer holds its socket", "process.connection_reidentified",
                os -> requestBase(os, request).add("code", "connection_reidentified").add("decision", "reidentified")
                        .add("previous_pid", previousPid).add("previous_binary", safeText(previousBinary, 4096))
                        .add("identity", safeText(identity, 300)));
    }

    /**
     * {@return a Detection Finding (class 2004) for a binding whose stages overran their timeout and have not
     * returned (issue 18, "Stuck stages contained"): High when the binding became unavailable (its stages now fail
     * per {@code on_error} without running), Informational when it is available again}
     *
     * @param bindingId the binding ID
     * @param available whether it is available now
     * @param stuckThreads its stage threads still stuck
     * @param limit the stuck threads at which a binding is unavailable
     */
    public JsonObject bindingAvailability(String bindingId, boolean available, int stuckThreads, int limit) {
        Severity severity = available ? Severity.INFORMATIONAL : Severity.HIGH;
        String title = available ? "middleware binding available again: its stuck stages returned"
                : "middleware binding unavailable: its stages are stuck past their timeout; its stages fail per"
                        + " on_error";
        JsonText e = base(CATEGORY_FINDINGS, "Findings", DETECTION_FINDING, "Detection Finding", 1, "Create",
                severity, null);
        e.add("status_id", 1).add("status", "New");
        e.add("is_alert", severity == Severity.HIGH);
        e.add("message", title);
        e.open("finding_info").addUuid("uid", randomUid()).add("title", title)
                .addSingletonArray("types", "middleware.unavailable").end();
        e.open("unmapped").open("openshell").add("binding_id", safeText(bindingId, 128))
                .add("code", available ? "middleware_available" : "middleware_unavailable")
                .add("stuck_threads", stuckThreads).add("max_stuck_stages_per_binding", limit).end().end();
        return e.build();
    }

    /**
     * {@return a Device Config State Change event (class 5019)}
     *
     * @param change what was checked or changed
     * @param success whether it succeeded
     * @param subject the supervisor-owned subject (registration name, policy file name), passed through
     *     {@link #safeDetail} (at most 200 characters)
     * @param detail a supervisor-owned explanation, passed through {@link #safeDetail} (at most 500 characters)
     */
    public JsonObject configChange(ConfigChange change, boolean success, String subject, String detail) {
        boolean atRisk = change == ConfigChange.INSECURE_REGISTRATION || change == ConfigChange.BINARY_SCOPING_OFF
                || change == ConfigChange.UNINSPECTED_UPGRADES;
        Severity sev = atRisk ? Severity.MEDIUM : success ? Severity.INFORMATIONAL : Severity.HIGH;
        JsonText e = base(CATEGORY_DISCOVERY, "Discovery", DEVICE_CONFIG_STATE_CHANGE,
                "Device Config State Change", 1, "Log", sev, null);
        e.add("status_id", success ? 1 : 2).add("status", success ? "Success" : "Failure");
        e.add("message", change.title() + " " + (success ? "succeeded" : "failed") + ": "
                + safeDetail(subject, 200));
        e.open("device").add("hostname", hostname).add("type_id", 1).add("type", "Server").end();
        e.add("security_level_id", atRisk ? 2 : 1).add("security_level", atRisk ? "At Risk" : "Secure");
        e.open("unmapped").open("openshell")
                .add("change", change.name().toLowerCase(Locale.ROOT)).add("subject", safeDetail(subject, 200))
                .add("detail", safeDetail(detail, 500)).end().end();
        return e.build();
    }

    private JsonObject finding(RequestFacts request, Severity severity, String title, String type,
                               Consumer<JsonText> openshellMembers) {
        byte[] actor = actor(actors, request);
        JsonText e = base(CATEGORY_FINDINGS, "Findings", DETECTION_FINDING, "Detection Finding", 1,
                "Create", severity, actor);
        e.add("status_id", 1).add("status", "New");
        e.add("is_alert", severity == Severity.HIGH);
        e.add("message", title);
        e.open("finding_info").addUuid("uid", randomUid()).add("title", title).addSingletonArray("types", type).end();
        endpoint(e.open("dst_endpoint"), request).end();
        actor(e, actor);
        openshellMembers.accept(e.open("unmapped").open("openshell"));
        return e.end().end().build();
    }

    /** The event's first members; {@code actor}: the member it splices in later, made room for ({@code null}: none). */
    private JsonText base(int category, String categoryName, int classUid, String className, int activity,
                          String activityName, Severity severity, byte[] actor) {
        return new JsonText(JsonText.CAPACITY + (actor == null ? 0 : actor.length))
                .add("time", clock.millis())
                .raw(heads.head(category, categoryName, classUid, className, activity, activityName, severity))
                .open("metadata")
                .add("version", SCHEMA_VERSION)
                .addUuid("uid", randomUid())
                .raw(product)
                .end();
    }
}
