package dev.openshell.supervisor.l7;

import dev.openshell.middleware.spi.internal.AuditNames;
import dev.openshell.middleware.spi.internal.Syntax;
import dev.openshell.supervisor.l7.L7Decision.Outcome;
import dev.openshell.supervisor.policy.EndpointProtocol;
import dev.openshell.supervisor.policy.Enforcement;
import dev.openshell.supervisor.policy.Glob;
import dev.openshell.supervisor.policy.HostPattern;
import dev.openshell.supervisor.policy.L7Endpoint;
import dev.openshell.supervisor.policy.L7Rule;
import dev.openshell.supervisor.policy.MethodOverride;
import dev.openshell.supervisor.policy.NetworkEndpoint;
import dev.openshell.supervisor.policy.NetworkPolicy;
import dev.openshell.supervisor.policy.SandboxPolicy;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;

import org.eclipse.collections.api.factory.Lists;
import org.eclipse.collections.api.list.ImmutableList;

/**
 * The L7 policy decision of this supervisor, in native Java ({@code docs/policy-reference.md}, "L7 policy"): for a
 * request admitted at L4 (and by the SSRF check), which endpoints govern it, and whether their REST, GraphQL,
 * JSON-RPC, MCP or WebSocket rules allow it.
 *
 * <p>Which endpoints govern: every endpoint, of every network policy that matches the host and port (and the calling
 * binary, {@link #governing(String, int, Predicate)}), that declares an L7 protocol. An endpoint with a {@code path}
 * governs only the requests whose canonical path matches it. Among those, the most specific {@code path} (most
 * characters other than {@code *}; no path is least specific; ties to the first policy key, then the first endpoint)
 * <em>selects</em> the protocol, the enforcement and the body limit. Its allow rules and those of every other governing
 * endpoint of the same protocol can allow; the deny rules of every governing endpoint can deny, and deny wins.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class L7Engine {
    /**
     * Every endpoint that declares an L7 protocol other than {@code sql}, with its policy, in policy-key order, then
     * endpoint order: computed once per policy generation, so a request to a policy without L7 endpoints costs no scan.
     */
    private final ImmutableList<Candidate> candidates;

    /** An L7 endpoint and the network policy whose {@code binaries} decide whether it applies to a caller. */
    private record Candidate(NetworkPolicy policy, Governing governing) {
    }

    /**
     * An L7 endpoint that governs a host and port.
     *
     * @param policyKey the network policy's key
     * @param index the endpoint's index in the policy
     * @param endpoint the endpoint
     * @param l7 its L7 policy
     */
    public record Governing(String policyKey, int index, NetworkEndpoint endpoint, L7Endpoint l7) {
        /** Checks the components. @throws NullPointerException if any is {@code null} */
        public Governing {
            Objects.requireNonNull(policyKey, "policyKey");
            Objects.requireNonNull(endpoint, "endpoint");
            Objects.requireNonNull(l7, "l7");
        }

        int specificity() {
            return l7.path().map(Glob::specificity).orElse(-1);
        }
    }

    /**
     * Where one request goes in the L7 policy: the endpoints that govern its host and port, its canonical target and
     * the selected endpoint. A route whose target was refused, or whose path no endpoint governs, carries the denial.
     *
     * @param governing the governing endpoints whose {@code path} matches (all of them when the target was refused)
     * @param target the canonical target, when it was accepted
     * @param selected the selected endpoint, when one governs the path
     * @param refusal the denial, when the target was refused or no endpoint governs its path
     */
    public record Route(ImmutableList<Governing> governing, Optional<RequestTarget> target,
                        Optional<Governing> selected, Optional<L7Decision> refusal) {
        /** {@return how many body bytes the selected endpoint reads (0 when it is not body-aware)} */
        public int bodyLimit() {
            return selected.filter(g -> g.l7().bodyAware()).map(g -> g.l7().maxBodyBytes()).orElse(0);
        }

        /** {@return whether the decision needs the request body} */
        public boolean needsBody() {
            return refusal.isEmpty() && bodyLimit() > 0;
        }

        /** {@return the selected endpoint's protocol, if one was selected} */
        public Optional<EndpointProtocol> protocol() {
            return selected.map(g -> g.l7().protocol());
        }
    }

    /** @param policy the loaded sandbox policy */
    public L7Engine(SandboxPolicy policy) {
        Objects.requireNonNull(policy, "policy");
        List<Candidate> all = new ArrayList<>();
        for (NetworkPolicy p : policy.networkPolicies().valuesView()) {
            for (int i = 0; i < p.endpoints().size(); i++) {
                NetworkEndpoint ep = p.endpoints().get(i);
                if (ep.l7().isPresent() && ep.l7().get().protocol() != EndpointProtocol.SQL) {
                    all.add(new Candidate(p, new Governing(p.key(), i, ep, ep.l7().get())));
                }
            }
        }
        this.candidates = Lists.immutable.withAll(all);
    }

    /**
     * {@return the L7 endpoints that govern {@code host}:{@code port}, every policy's binaries taken as satisfied}
     *
     * @param host the request host
     * @param port the request port
     */
    public ImmutableList<Governing> governing(String host, int port) {
        return governing(host, port, p -> true);
    }

    /**
     * {@return the L7 endpoints that govern {@code host}:{@code port} for a caller} The one function that decides
     * "which policies match": an endpoint governs when it admits the host and port, its policy admits the caller
     * ({@code binaryAllowed}), and it declares an L7 protocol other than {@code sql}. In policy-key order, then
     * endpoint order.
     *
     * @param host the request host (canonicalized here)
     * @param port the request port
     * @param binaryAllowed whether a network policy's {@code binaries} admit the calling process
     */
    public ImmutableList<Governing> governing(String host, int port, Predicate<NetworkPolicy> binaryAllowed) {
        if (candidates.isEmpty()) {
            return Lists.immutable.empty();
        }
        String canonical = HostPattern.canonicalHost(host);
        // the endpoint test first: the caller test may have to identify the calling process
        return candidates.select(c -> c.governing().endpoint().admits(canonical, port)
                && binaryAllowed.test(c.policy())).collect(Candidate::governing);
    }

    /**
     * Routes a request: canonicalizes its target and selects the governing endpoint.
     *
     * @param governing the endpoints governing the host and port ({@link #governing(String, int, Predicate)})
     * @param method the request method
     * @param rawTarget the request-target as received
     * @return the route, or empty when no L7 endpoint governs the host and port (L4 rules only)
     */
    public static Optional<Route> route(ImmutableList<Governing> governing, String method, String rawTarget) {
        if (governing.isEmpty()) {
            return Optional.empty();
        }
        boolean anySlash = governing.anySatisfy(g -> g.l7().allowEncodedSlash());
        RequestTarget target;
        try {
            target = RequestTarget.canonicalize(rawTarget, anySlash);
        } catch (RequestTarget.InvalidTargetException e) {
            Governing first = governing.getFirst();
            return Optional.of(new Route(governing, Optional.empty(), Optional.empty(), Optional.of(
                    new L7Decision(Outcome.DENY, true, 400, first.l7().protocol(), engine(first), first.policyKey(),
                            Optional.empty(), "invalid request-target: " + e.getMessage(), "-", ""))));
        }
        ImmutableList<Governing> matching = governing.select(g -> g.l7().path()
                .map(p -> p.matches(target.path())).orElse(true));
        if (matching.isEmpty()) {
            Governing first = governing.getFirst();
            return Optional.of(new Route(governing, Optional.of(target), Optional.empty(), Optional.of(
                    new L7Decision(Outcome.DENY, true, 403, first.l7().protocol(), engine(first), first.policyKey(),
                            Optional.empty(), "no L7 endpoint path matched request", target.path(), ""))));
        }
        Governing selected = matching.getFirst();
        for (Governing g : matching) {
            if (g.specificity() > selected.specificity()) {
                selected = g;
            }
        }
        if (!PathFolds.sameEndpoints(governing, matching, target.path())) {
            return Optional.of(new Route(matching, Optional.of(target), Optional.of(selected), Optional.of(hard(selected,
                    400, "invalid request-target: the request path reads as another path to origins that fold \\"
                    + " to / or drop the dots and spaces ending a segment, and the endpoints governing the two differ",
                    target.path(), "", Optional.of("path_ambiguous")))));
        }
        if (target.encodedSlash() && !selected.l7().allowEncodedSlash()) {
            return Optional.of(new Route(matching, Optional.of(target), Optional.of(selected), Optional.of(
                    new L7Decision(Outcome.DENY, true, 400, selected.l7().protocol(), engine(selected),
                            selected.policyKey(), Optional.empty(), "invalid request-target: the request path"
                            + " contains an encoded slash (%2F), which this endpoint does not allow"
                            + " (allow_encoded_slash)", target.path(), ""))));
        }
        return Optional.of(new Route(matching, Optional.of(target), Optional.of(selected), Optional.empty()));
    }

    /**
     * {@return how many body bytes the decision on a request needs, 0 when it is made on the head} The body-aware
     * protocols read the body up to the endpoint's limit ({@link Route#bodyLimit()}); a REST-shaped request (REST, a
     * WebSocket upgrade) whose endpoint does not ignore method overrides reads the body of a {@code POST} that
     * frameworks parse into parameters, for a {@code _method} field, up to {@value OverrideForms#MAX_BODY_BYTES}
     * bytes ({@code docs/policy-reference.md}, "Method override").
     *
     * @param route the request's route
     * @param head the request head (its body is not read)
     */
    public static int bodyLimit(Route route, L7Request head) {
        if (route.needsBody()) {
            return route.bodyLimit();
        }
        boolean overrides = route.refusal().isEmpty() && route.selected().map(g -> g.l7().restShaped()
                && g.l7().methodOverride() != MethodOverride.IGNORE).orElse(false);
        return overrides && OverrideForms.bodyMayCarry(head) ? OverrideForms.MAX_BODY_BYTES : 0;
    }

    /**
     * Decides a request in one step: routes it and evaluates it.
     *
     * @param host the request host
     * @param port the request port
     * @param request the request (with its body when the endpoint is body-aware)
     * @return the decision, or empty when no L7 endpoint governs the host and port
     */
    public Optional<L7Decision> decide(String host, int port, L7Request request) {
        return route(governing(host, port), request.method(), request.target()).map(r -> decide(r, request));
    }

    /**
     * Evaluates a routed request.
     *
     * @param route the route ({@link #route(ImmutableList, String, String)})
     * @param request the request; its body must be present when {@link Route#needsBody()}
     * @return the decision
     */
    public static L7Decision decide(Route route, L7Request request) {
        if (route.refusal().isPresent()) {
            return route.refusal().get();
        }
        Governing selected = route.selected().orElseThrow();
        L7Endpoint ep = selected.l7();
        RequestTarget target = route.target().orElseThrow();
        String method = request.method().toUpperCase(Locale.ROOT);
        Rest rest = Rest.of(method, target);
        if (rest == null) {
            return hard(selected, 400, "invalid request-target: the query is not well-formed (a malformed"
                    + " percent-escape or not UTF-8)", target.path(), "");
        }
        Map<String, List<String>> query = rest.query();
        if (ep.bodyAware() && request.body().map(b -> b.size() > ep.maxBodyBytes()).orElse(false)) {
            return hard(selected, 413, "request body is larger than the endpoint's limit of " + ep.maxBodyBytes()
                    + " bytes", target.path(), "");
        }
        return switch (ep.protocol()) {
            case GRAPHQL -> {
                List<GraphQl.Operation> ops;
                try {
                    GraphQl.sameInEveryReading(rest.readings());
                    ops = GraphQl.classifyHttp(method, query, request, ep);
                } catch (GraphQl.Invalid e) {
                    yield hard(selected, 400, e.getMessage(), target.path(), "", e.code());
                }
                yield graphql(route, selected, rest, ops);
            }
            case JSON_RPC, MCP -> JsonRpcRules.decide(route, selected, rest, request);
            case WEBSOCKET -> {
                if (!isUpgrade(request)) {
                    yield hard(selected, 403, "a websocket endpoint accepts WebSocket upgrade requests only (RFC 6455"
                            + " section 4.1)", target.path(), "");
                }
                yield overridden(route, selected, rest, request);
            }
            default -> overridden(route, selected, rest, request);
        };
    }

    /**
     * Evaluates one client-to-server WebSocket text message on a {@code protocol: websocket} endpoint, as method
     * {@code WEBSOCKET_TEXT} with the upgrade request's path and query, or, when the endpoint's rules name GraphQL
     * operations, as a GraphQL-over-WebSocket message ({@code subscribe}/{@code start} classified; control messages
     * pass; anything else is a hard denial).
     *
     * @param route the upgrade request's route
     * @param message the complete text message
     * @return the decision
     */
    public static L7Decision decideText(Route route, String message) {
        if (route.refusal().isPresent()) {
            return route.refusal().get();
        }
        Governing selected = route.selected().orElseThrow();
        RequestTarget target = route.target().orElseThrow();
        Rest rest = Rest.of("WEBSOCKET_TEXT", target);
        if (rest == null) {
            return hard(selected, 400, "invalid request-target: the query is not well-formed (a malformed"
                    + " percent-escape or not UTF-8)", target.path(), "");
        }
        if (!selected.l7().graphqlMessages()) {
            return rest(route, selected, rest);
        }
        JsonValue json;
        try {
            json = Bodies.json(message);
        } catch (Bodies.Malformed e) {
            return hard(selected, 403, "GraphQL WebSocket message rejected: " + e.getMessage(), target.path(), "",
                    Optional.of(e.code()));
        }
        JsonValue[] governed = new JsonValue[3]; // type, id, payload
        try {
            for (int i = 0; i < 3 && json instanceof JsonObject o; i++) {
                governed[i] = Bodies.member(o, List.of("type", "id", "payload").get(i));
            }
        } catch (Bodies.Malformed e) {
            return hard(selected, 403, "GraphQL WebSocket message rejected: " + e.getMessage(), target.path(), "",
                    Optional.of(e.code()));
        }
        if (!(governed[0] instanceof JsonString t)) {
            return hard(selected, 403, "GraphQL WebSocket message rejected: not a JSON object with a type",
                    target.path(), "");
        }
        switch (t.getString()) {
            case "connection_init", "connection_terminate", "ping", "pong", "complete", "stop" -> {
                return decision(selected, Outcome.ALLOW, 200, Optional.empty(), "GraphQL WebSocket control message",
                        target.path(), t.getString());
            }
            case "subscribe", "start" -> {
                if (!(governed[1] instanceof JsonString id) || id.getString().isEmpty()
                        || !(governed[2] instanceof JsonObject payload)) {
                    return hard(selected, 403, "GraphQL WebSocket message rejected: " + t.getString()
                            + " needs a non-empty string id and an object payload", target.path(), "");
                }
                List<GraphQl.Operation> ops;
                try {
                    ops = GraphQl.jsonEnvelope(payload, selected.l7());
                } catch (GraphQl.Invalid e) {
                    return hard(selected, 403, e.getMessage(), target.path(), "", e.code());
                }
                return graphql(route, selected, rest, ops);
            }
            default -> {
                return hard(selected, 403, "GraphQL WebSocket message rejected: unknown message type",
                        target.path(), "");
            }
        }
    }

    // ---------------------------------------------------------------------------------------------- evaluation

    /**
     * The REST view of a request: method (upper case), canonical path, decoded query, and what rules judge: every
     * reading of the query ({@link QueryReadings}) and the paths (the canonical one, then its fold, {@link PathFolds}).
     */
    record Rest(String method, String path, Map<String, List<String>> query, QueryReadings readings,
                List<String> paths) {
        /** {@return the view of a canonical target, or {@code null} when its query or its fold is malformed} */
        static Rest of(String method, RequestTarget target) {
            try {
                Map<String, List<String>> query = Map.of();
                QueryReadings readings = QueryReadings.NONE;
                if (target.query().isPresent()) {
                    query = RequestTarget.parseQuery(target.query().get());
                    readings = QueryReadings.of(target.query().get(), query);
                }
                List<String> paths = PathFolds.folded(target.path()).map(f -> List.of(target.path(), f))
                        .orElse(List.of(target.path()));
                return new Rest(method, target.path(), query, readings, paths);
            } catch (RequestTarget.InvalidTargetException e) {
                return null;
            }
        }

        Rest withMethod(String m) {
            return new Rest(m, path, query, readings, paths);
        }
    }

    private static L7Decision rest(Route route, Governing selected, Rest r) {
        Optional<Denial> denied = restDeny(route, r);
        if (denied.isPresent()) {
            return violation(selected, denied.get().rule(), AuditNames.safe(r.method()) + " " + r.path()
                    + " blocked by deny rule", r.path(), "");
        }
        for (Governing g : sameProtocol(route, selected)) {
            for (L7Rule rule : g.l7().allow()) {
                if (!rule.isOperationRule() && restAllows(rule, r)) {
                    return decision(selected, Outcome.ALLOW, 200, Optional.of(rule.source()), "allowed by rule",
                            r.path(), "");
                }
            }
        }
        String method = AuditNames.safe(r.method()); // the token as sent may be any agent-chosen text
        return violation(selected, Optional.of(method + " " + r.path()), method + " " + r.path()
                + " not permitted by policy", r.path(), "");
    }

    record Denial(Optional<String> rule) {
    }

    /**
     * A REST-shaped request under the endpoint's {@code method_override}: {@code refuse} (a request carrying any
     * override form is a hard 400), {@code evaluate} (the rules judge both the request's own method and the one method the
     * forms name, and the stricter decision stands; forms naming several, or something that is not a method, are a
     * hard 400), {@code ignore} (the rules judge the request's own method). A body that may carry a form and cannot be read for one is a hard 400 unless overrides are ignored.
     */
    private static L7Decision overridden(Route route, Governing selected, Rest r, L7Request request) {
        MethodOverride mode = selected.l7().methodOverride();
        if (mode == MethodOverride.IGNORE) {
            return rest(route, selected, r);
        }
        List<OverrideForms.Form> forms;
        try {
            forms = OverrideForms.find(request, r.readings());
        } catch (OverrideForms.Unreadable e) {
            return hard(selected, 400, "method override: " + e.getMessage(), r.path(), "",
                    Optional.of("method_override_unreadable"));
        }
        if (forms.isEmpty()) {
            return rest(route, selected, r);
        }
        String where = String.join(", ", forms.stream().map(OverrideForms.Form::where).distinct().toList());
        if (mode == MethodOverride.REFUSE) {
            return hard(selected, 400, "the request asks the upstream to apply another method (" + where + "), and"
                    + " this endpoint refuses method overrides (method_override: evaluate judges it as both methods;"
                    + " ignore, for an upstream that honours none)", r.path(), "method_override=" + where,
                    Optional.of("method_override"));
        }
        List<String> methods = forms.stream().map(f -> f.value().trim().toUpperCase(Locale.ROOT)).distinct()
                .toList();
        if (methods.size() != 1 || !isMethod(methods.get(0))) {
            return hard(selected, 400, "the request's method overrides (" + where + ") do not name one method",
                    r.path(), "method_override=" + where, Optional.of("method_override_ambiguous"));
        }
        L7Decision d = stricter(rest(route, selected, r), rest(route, selected, r.withMethod(methods.get(0))));
        return new L7Decision(d.outcome(), d.hard(), d.status(), d.protocol(), d.engine(), d.policyKey(), d.rule(),
                d.reason(), d.path(), "method_override=" + methods.get(0), d.code());
    }

    /**
     * {@return the stricter of the decisions on the request's own method and on the method its overrides name}
     * ({@code DENY} over {@code AUDIT} over {@code ALLOW}; the overriding method's on a tie): the supervisor cannot
     * know whether the upstream applies the override, so under {@code evaluate} the request must pass as either
     * method ({@code docs/policy-reference.md}, "Method override")
     */
    private static L7Decision stricter(L7Decision own, L7Decision overriding) {
        return severity(own.outcome()) > severity(overriding.outcome()) ? own : overriding;
    }

    private static int severity(Outcome outcome) {
        return switch (outcome) {
            case ALLOW -> 0;
            case AUDIT -> 1;
            case DENY -> 2;
        };
    }

    /** REST-shaped deny rules of every governing endpoint (any protocol): method, path, query. */
    static Optional<Denial> restDeny(Route route, Rest r) {
        for (Governing g : route.governing()) {
            for (L7Rule rule : g.l7().deny()) {
                if (rule.method().isPresent() && restDenies(rule, r)) {
                    return Optional.of(new Denial(Optional.of(rule.source())));
                }
            }
        }
        return Optional.empty();
    }

    static ImmutableList<Governing> sameProtocol(Route route, Governing selected) {
        return route.governing().select(g -> g.l7().protocol() == selected.l7().protocol());
    }

    static boolean methodMatches(String rule, String method) {
        return rule.equals("*") || rule.equals(method) || (method.equals("HEAD") && rule.equals("GET"));
    }

    private static boolean restAllows(L7Rule rule, Rest r) {
        if (rule.method().isEmpty() || rule.path().isEmpty()) {
            return false;
        }
        if (!methodMatches(rule.method().get(), r.method())
                || !r.paths().stream().allMatch(rule.path().get()::matches)) {
            return false;
        }
        return rule.query().keyValuesView().allSatisfy(q -> r.readings().allows(q.getOne(), q.getTwo()));
    }

    private static boolean restDenies(L7Rule rule, Rest r) {
        if (!methodMatches(rule.method().get(), r.method())
                || rule.path().map(p -> r.paths().stream().noneMatch(p::matches)).orElse(true)) {
            return false;
        }
        return rule.query().keyValuesView().allSatisfy(q -> r.readings().denies(q.getOne(), q.getTwo()));
    }

    private static L7Decision graphql(Route route, Governing selected, Rest r, List<GraphQl.Operation> ops) {
        String detail = "graphql_ops=" + String.join(";", ops.stream().map(GraphQl.Operation::describe).toList());
        Optional<Denial> restDenied = restDeny(route, r);
        if (restDenied.isPresent()) {
            return violation(selected, restDenied.get().rule(), AuditNames.safe(r.method()) + " " + r.path()
                    + " blocked by deny rule", r.path(), detail);
        }
        for (GraphQl.Operation op : ops) {
            if (op.type().isEmpty()) {
                return violation(selected, Optional.empty(), "GraphQL persisted query is not registered", r.path(),
                        detail);
            }
            for (Governing g : route.governing()) {
                for (L7Rule rule : g.l7().deny()) {
                    if (rule.isOperationRule() && operationMatches(rule, op, true)) {
                        return violation(selected, Optional.of(rule.source()), "GraphQL operation blocked by"
                                + " endpoint policy", r.path(), detail);
                    }
                }
            }
        }
        Optional<String> deciding = Optional.empty();
        for (GraphQl.Operation op : ops) {
            Optional<String> allowedBy = Optional.empty();
            for (Governing g : sameProtocol(route, selected)) {
                for (L7Rule rule : g.l7().allow()) {
                    if (allowedBy.isEmpty() && rule.isOperationRule() && operationMatches(rule, op, false)) {
                        allowedBy = Optional.of(rule.source());
                    }
                }
            }
            if (allowedBy.isEmpty()) {
                return violation(selected, Optional.of(op.describe()), "GraphQL operation not permitted by policy",
                        r.path(), detail);
            }
            if (deciding.isEmpty()) {
                deciding = allowedBy;
            }
        }
        return decision(selected, Outcome.ALLOW, 200, deciding, "allowed by rule", r.path(), detail);
    }

    private static boolean operationMatches(L7Rule rule, GraphQl.Operation op, boolean deny) {
        String type = rule.operationType().get();
        if (!type.equals("*") && !type.equals(op.type())) {
            return false;
        }
        if (rule.operationName().isPresent() && !rule.operationName().get().matches(op.name())) {
            return false;
        }
        if (rule.fields().isEmpty()) {
            return true;
        }
        if (deny) {
            return op.fields().stream().anyMatch(f -> rule.fields().anySatisfy(g -> g.matches(f)));
        }
        return !op.fields().isEmpty() && op.fields().stream().allMatch(f -> rule.fields().anySatisfy(g -> g.matches(f)));
    }

    static boolean isUpgrade(L7Request r) {
        return r.method().equalsIgnoreCase("GET") && r.headerHasToken("Upgrade", "websocket")
                && r.headerHasToken("Connection", "upgrade") && r.header("Sec-WebSocket-Key").isPresent()
                && r.header("Sec-WebSocket-Version").map(v -> v.trim().equals("13")).orElse(false);
    }

    // ------------------------------------------------------------------------------------------------ results

    private static String engine(Governing g) {
        return L7Decision.engineFor(g.l7().protocol());
    }

    static L7Decision decision(Governing g, Outcome outcome, int status, Optional<String> rule, String reason,
                               String path, String detail) {
        return new L7Decision(outcome, false, status, g.l7().protocol(), engine(g), g.policyKey(), rule, reason, path,
                detail);
    }

    static L7Decision violation(Governing g, Optional<String> rule, String reason, String path,
                                String detail) {
        Outcome outcome = g.l7().enforcement() == Enforcement.AUDIT ? Outcome.AUDIT : Outcome.DENY;
        return decision(g, outcome, outcome == Outcome.DENY ? 403 : 200, rule, reason, path, detail);
    }

    static L7Decision hard(Governing g, int status, String reason, String path, String detail) {
        return hard(g, status, reason, path, detail, Optional.empty());
    }

    static L7Decision hard(Governing g, int status, String reason, String path, String detail,
                           Optional<String> code) {
        return new L7Decision(Outcome.DENY, true, status, g.l7().protocol(), engine(g), g.policyKey(),
                Optional.empty(), reason, path, detail, code);
    }

    /** {@return whether {@code m} is an upper-case RFC 9110 method token of at most 64 characters} */
    private static boolean isMethod(String m) {
        return m.length() <= 64 && Syntax.isToken(m) && m.equals(m.toUpperCase(Locale.ROOT));
    }
}
