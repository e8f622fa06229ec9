package dev.openshell.supervisor.cli;

import dev.openshell.supervisor.grpc.auth.CallerTokens;
import dev.openshell.supervisor.policy.ConfigProblem;
import dev.openshell.supervisor.policy.Loaded;
import dev.openshell.supervisor.policy.PolicyException;
import dev.openshell.supervisor.policy.SandboxPolicy;
import dev.openshell.supervisor.policy.SandboxPolicyLoader;
import dev.openshell.supervisor.policy.gateway.GatewayConfig;
import dev.openshell.supervisor.policy.gateway.GatewayConfigLoader;
import dev.openshell.supervisor.runtime.ConnectedRegistry;
import dev.openshell.supervisor.runtime.ExtensionAuth;
import dev.openshell.supervisor.runtime.Explanation;
import dev.openshell.supervisor.runtime.Supervisor;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObjectBuilder;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;
import dev.openshell.middleware.spi.internal.Syntax;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code supervisor explain}: what the supervisor would do with a request to {@code HOST[:PORT]} under a policy
 * ({@link Explanation}; without {@code --policy}, the embedded default policy): whether network policy admits it and
 * which policy does, whether SSRF protection then refuses it (with the gateway's {@code [openshell.supervisor.network]}
 * settings: {@code allow_loopback_upstreams}, {@code static_hosts}; and the endpoint's {@code allowed_ips}), and the
 * chain that would run, with each stage's config key, binding ID, owner, {@code on_error}, order and effective body
 * limit, and why every other config would not run. A DNS name is resolved for the SSRF check only with
 * {@code --resolve}; IP literals and static hosts always are checked. With {@code --format json} it prints one object:
 * <pre>{@code
 * {"admitted": true, "binary": "/usr/bin/curl", "network_policy": "model_api", "ssrf": "passed", "refusal": null,
 *  "policies": [{"network_policy": "model_api", "binaries": ["/usr/bin/curl"], "admits_binary": true,
 *                "matching_entry": "/usr/bin/curl"}],
 *  "l7": {"outcome": "deny", "protocol": "rest", "engine": "l7", "policy": "model_api",
 *         "rule": "DELETE /v1/models", "reason": "DELETE /v1/models not permitted by policy", "path": "/v1/models"},
 *  "chain": [{"config_key": "redact", "binding_id": "openshell/regex", "owner": "built-in dev.openshell.builtin.regex",
 *             "on_error": "fail_closed", "order": 10, "max_body_bytes": 4194304}],
 *  "response_stages": [{"config_key": "guard", "binding_id": "acme/guard", "owner": "external service guard",
 *             "on_error": "fail_closed", "order": 20, "max_payload_bytes": 1048576}],
 *  "not_selected": [{"config_key": "pii", "reason": "no endpoints.include pattern matches api.example.com"}]}
 * }</pre>
 * {@code admitted} is whether the request would be forwarded past network policy and SSRF protection;
 * {@code network_policy} is {@code null} when no network policy admits it; {@code binary} is {@code null} without
 * {@code --binary PATH}, which decides admission (and which policies' L7 rules govern) for a process running that
 * executable (its path as the kernel reports it: symbolic links resolved), as the running supervisor does for an
 * identified process; {@code ssrf} is {@code passed}, {@code refused}, {@code not_resolved} or {@code not_reached};
 * {@code refusal} is {@code null} or {@code {"error": "ssrf_blocked", "status": 403, "detail": "..."}} (the code and
 * detail the client would get). {@code l7} is {@code null} when the request is not admitted or no endpoint with an L7
 * {@code protocol} governs the destination (its {@code outcome} is {@code body} when a GraphQL, JSON-RPC or MCP
 * endpoint decides on each request body). The port defaults to 443. The L7 decision reads {@code --method} and
 * {@code --path} (the path canonicalized as the proxy does); chain selection depends only on the host (RFC 0009,
 * "Policy integration"). Exit codes: 0 the request was explained (admitted or not), 1 the policy or gateway
 * configuration is invalid (every problem is printed on standard error), 2 usage error.
 */
@Command(name = "explain", description = {
        "Explain how the supervisor would treat a request to HOST[:PORT].",
        "Whether network policy admits it (default port 443) and which policy does, whether SSRF protection "
                + "blocks it (with the gateway's network settings), the middleware chain that would run, in "
                + "order, with owners, on_error and body limits, and why each other config would not run.",
        "Without --policy it explains the embedded default policy."})
final class ExplainCommand implements Callable<Integer> {
    private static final Pattern PATH = Pattern.compile("/[\\x21-\\x7e]*");
    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9._-]+");
    private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]+");

    @Spec
    CommandSpec spec;

    @Option(names = "--policy", paramLabel = "FILE",
            description = "Sandbox policy (YAML); default: the embedded default policy of 'supervisor run'.")
    Path policy;

    @Option(names = "--resolve",
            description = "Resolve a DNS name for the SSRF check, as the proxy would (default: only IP literals and "
                    + "the gateway's static_hosts are checked; nothing is ever connected to).")
    boolean resolve;

    @Option(names = "--gateway-config", paramLabel = "FILE", description = "Gateway configuration (TOML).")
    Path gateway;

    @Option(names = "--plugins", paramLabel = "DIR",
            description = "Plugins directory (default: the gateway's plugins_dir, else the image's plugins/).")
    Path plugins;

    @Option(names = "--skip-services",
            description = "Do not contact registered external services (their bindings' owners are not known).")
    boolean skipServices;

    @Option(names = "--method", paramLabel = "M", defaultValue = "GET",
            description = "Request method (default: ${DEFAULT-VALUE}) for the L7 decision; chain selection does not"
                    + " depend on it.")
    String method;

    @Option(names = "--path", paramLabel = "P", defaultValue = "/",
            description = "Request path and query (default: ${DEFAULT-VALUE}) for the L7 decision; chain selection"
                    + " does not depend on it.")
    String path;

    @Option(names = "--binary", paramLabel = "PATH",
            description = "Decide admission for a process running this executable (absolute path): which binary-scoped"
                    + " network policies it would match.")
    String binary;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "text",
            description = "Output format: text or json (default: ${DEFAULT-VALUE}).")
    Format format;

    @Parameters(arity = "1..2", paramLabel = "[METHOD] HOST[:PORT][/PATH]",
            description = {"The destination, as in a CONNECT request: host or IP literal ([v6] in brackets with a",
                "port), optionally followed by the path (/PATH overrides --path) and preceded by the method",
                "(overrides --method), as in: explain DELETE api.github.com/repos/o/r"})
    java.util.List<String> request;

    enum Format { text, json }

    /** A parsed destination. */
    record Destination(String host, int port) {
    }

    ExplainCommand() {
    }

    @Override
    public Integer call() {
        String destination = request.get(request.size() - 1);
        if (request.size() == 2) {
            method = request.get(0);
        }
        int slash = destination.indexOf('/');
        if (slash >= 0) {
            path = destination.substring(slash);
            destination = destination.substring(0, slash);
        }
        Destination d = parseDestination(destination);
        if (!Syntax.isToken(method)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--method must be an HTTP method token");
        }
        if (!PATH.matcher(path).matches()) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--path must start with / and contain only visible ASCII");
        }
        if (binary != null && (!binary.startsWith("/") || binary.chars().anyMatch(c -> c < 0x20 || c == 0x7f))) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--binary must be an absolute path without control characters");
        }
        Main.logLevel("dev.openshell", java.util.logging.Level.SEVERE);
        Main.logLevel("io.grpc", java.util.logging.Level.SEVERE);
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Optional<Loaded<GatewayConfig>> gatewayFile;
        try {
            gatewayFile = Optional.ofNullable(gateway).map(GatewayConfigLoader::load);
        } catch (PolicyException e) {
            return invalid(err, e);
        }
        GatewayConfig gw = gatewayFile.map(Loaded::value).orElseGet(ConnectedRegistry::defaultGateway);
        Explanation x;
        try (ConnectedRegistry registry = ConnectedRegistry.forTools(gatewayFile,
                Supervisor.pluginsDirectory(Optional.ofNullable(plugins), gw), !skipServices, tokens(gw))) {
            Loaded<SandboxPolicy> loaded;
            try {
                loaded = policy != null ? SandboxPolicyLoader.load(policy, registry.catalogAllowingUnchecked())
                        : SandboxPolicyLoader.parse(Supervisor.DEFAULT_POLICY_NAME, Supervisor.defaultPolicyText(),
                                registry.catalogAllowingUnchecked());
            } catch (PolicyException e) {
                return invalid(err, e);
            }
            try {
                x = Explanation.of(loaded.value(), registry.gateway(), registry.registry(), d.host(), d.port(),
                        Optional.ofNullable(binary), method, path, resolve);
            } catch (IllegalArgumentException e) {
                throw usage("HOST[:PORT]: " + e.getMessage());
            }
        }
        if (format == Format.json) {
            out.println(json(x));
        } else {
            text(out, x);
        }
        out.flush();
        return 0;
    }

    private int invalid(PrintWriter err, PolicyException e) {
        err.println("supervisor: cannot explain: " + e.file() + " is invalid (" + e.errors().size() + " error(s))");
        for (ConfigProblem p : e.problems()) {
            err.println("  " + p.describe());
        }
        err.flush();
        return 1;
    }

    private Destination parseDestination(String text) {
        String host;
        String port = null;
        if (text.startsWith("[")) {
            int close = text.indexOf(']');
            if (close < 0) {
                throw usage("HOST[:PORT]: missing ] after the IPv6 literal");
            }
            host = text.substring(1, close);
            String rest = text.substring(close + 1);
            if (!rest.isEmpty()) {
                if (!rest.startsWith(":")) {
                    throw usage("HOST[:PORT]: expected :PORT after ]");
                }
                port = rest.substring(1);
            }
            if (!IPV6.matcher(host).matches() || !host.contains(":")) {
                throw usage("HOST[:PORT]: not an IPv6 literal inside [ ]");
            }
        } else {
            int colon = text.indexOf(':');
            boolean v6 = false;
            if (colon < 0) {
                host = text;
            } else if (colon == text.lastIndexOf(':')) {
                host = text.substring(0, colon);
                port = text.substring(colon + 1);
            } else {
                host = text; // an IPv6 literal without brackets, so without a port
                v6 = true;
                if (!IPV6.matcher(host).matches()) {
                    throw usage("HOST[:PORT]: write an IPv6 literal with a port as [v6]:PORT");
                }
            }
            if (!v6 && (!HOST.matcher(host).matches() || host.length() > 253)) {
                throw usage("HOST[:PORT]: the host must be a DNS name or IP literal (letters, digits, . - _)");
            }
        }
        int p = 443;
        if (port != null) {
            if (!port.matches("[0-9]{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
                throw usage("HOST[:PORT]: the port must be 1 to 65535");
            }
            p = Integer.parseInt(port);
        }
        return new Destination(host, p);
    }

    private CommandLine.ParameterException usage(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }

    private void text(PrintWriter out, Explanation x) {
        String where = x.host().contains(":") ? "[" + x.host() + "]:" + x.port() : x.host() + ":" + x.port();
        out.println("policy:    " + (policy == null ? Supervisor.DEFAULT_POLICY_NAME : policy.toString()));
        out.println("request:   " + method + " " + path + " to " + where);
        String forWhom = x.binary().map(b -> " for " + b).orElse("");
        out.println("admission: " + (x.networkPolicy().isPresent() ? "admitted by network policy '"
                + x.networkPolicy().get() + "'" + forWhom : "NOT admitted" + forWhom + ": no network policy allows "
                + where + (x.policies().isEmpty() ? "" : " for this binary") + " (403 policy_denied)"));
        if (!x.policies().isEmpty()) {
            out.println("network policies for " + where + " (binary scoping):");
            for (Explanation.PolicyMatch m : x.policies()) {
                String scope = m.binaries().isEmpty() ? "any process"
                        : "only binaries " + String.join(", ", m.binaries());
                String verdict = x.binary().isEmpty() ? ""
                        : m.binaries().isEmpty() ? "  -> admits " + x.binary().get()
                        : m.matchingEntry().map(e -> "  -> admits " + x.binary().get() + " (entry " + e + ")")
                                .orElse("  -> does not admit " + x.binary().get());
                out.println("  " + m.key() + ": " + scope + verdict);
            }
            if (x.binary().isEmpty() && x.policies().stream().anyMatch(m -> !m.binaries().isEmpty())) {
                out.println("  (binary-scoped policies admit only their binaries or ancestors of them; --binary PATH"
                        + " decides for one)");
            }
        }
        switch (x.ssrf()) {
            case "passed" -> out.println("ssrf:      passed (no blocked address)");
            case "not_resolved" -> out.println("ssrf:      not checked: " + x.host() + " was not resolved (--resolve "
                    + "resolves it); the proxy refuses it if any address is loopback, private, link-local or "
                    + "metadata");
            case "refused" -> {
                Explanation.Refusal r = x.refusal().orElseThrow();
                out.println("ssrf:      BLOCKED (" + r.status() + " " + r.error() + "): " + r.detail());
            }
            default -> out.println("ssrf:      not reached");
        }
        if (x.l7().isPresent()) {
            Explanation.L7 l = x.l7().get();
            out.println("l7:        " + l.outcome() + " (" + l.protocol() + ", engine " + l.engine() + ", policy '"
                    + l.policyKey() + "', path " + l.path() + ")" + l.rule().map(r -> " rule: " + r).orElse("")
                    + "; " + l.reason());
        } else if (x.admitted()) {
            out.println("l7:        none (no endpoint with an L7 protocol governs " + where + "; admitted at L4)");
        }
        out.println("chain (selected by host only; the method and path do not change it):");
        if (x.chain().isEmpty()) {
            out.println("  (none: " + (x.admitted() ? "the request streams straight through, unbuffered)"
                    : "nothing runs)"));
        }
        int i = 1;
        for (Explanation.Stage s : x.chain()) {
            out.printf("  %d. %s  order %d  binding %s  owner %s  on_error %s  max body %d bytes%s%s%n", i++,
                    s.configKey(), s.order(), s.bindingId(), s.owner(), s.onError(), s.maxBodyBytes(),
                    s.postCredentials() ? "  (after credential injection)" : "",
                    s.websocketMessages().isEmpty() ? "" : "  websocket messages " + String.join(",",
                            s.websocketMessages()));
        }
        if (!x.responses().isEmpty()) {
            out.println("response stages (HTTP_RESPONSE/PRE_RETURN, on the final response):");
            int j = 1;
            for (Explanation.Stage s : x.responses()) {
                out.printf("  %d. %s  order %d  binding %s  owner %s  on_error %s  max payload %d bytes%n", j++,
                        s.configKey(), s.order(), s.bindingId(), s.owner(), s.onError(), s.maxBodyBytes());
            }
        }
        if (!x.notSelected().isEmpty()) {
            out.println("not selected:");
            for (Explanation.NotSelected n : x.notSelected()) {
                out.println("  " + n.configKey() + ": " + n.reason());
            }
        }
    }

    static String json(Explanation x) {
        JsonArrayBuilder chain = Json.createArrayBuilder();
        for (Explanation.Stage s : x.chain()) {
            chain.add(Json.createObjectBuilder()
                    .add("config_key", s.configKey())
                    .add("binding_id", s.bindingId())
                    .add("owner", s.owner())
                    .add("on_error", s.onError())
                    .add("order", s.order())
                    .add("max_body_bytes", s.maxBodyBytes())
                    .add("websocket_messages", Json.createArrayBuilder(s.websocketMessages())));
        }
        JsonArrayBuilder responses = Json.createArrayBuilder();
        for (Explanation.Stage s : x.responses()) {
            responses.add(Json.createObjectBuilder()
                    .add("config_key", s.configKey())
                    .add("binding_id", s.bindingId())
                    .add("owner", s.owner())
                    .add("on_error", s.onError())
                    .add("order", s.order())
                    .add("max_payload_bytes", s.maxBodyBytes()));
        }
        JsonArrayBuilder not = Json.createArrayBuilder();
        for (Explanation.NotSelected n : x.notSelected()) {
            not.add(Json.createObjectBuilder().add("config_key", n.configKey()).add("reason", n.reason()));
        }
        JsonArrayBuilder policies = Json.createArrayBuilder();
        for (Explanation.PolicyMatch m : x.policies()) {
            JsonObjectBuilder pm = Json.createObjectBuilder().add("network_policy", m.key())
                    .add("binaries", Json.createArrayBuilder(m.binaries())).add("admits_binary", m.admitsBinary());
            m.matchingEntry().ifPresentOrElse(e -> pm.add("matching_entry", e), () -> pm.addNull("matching_entry"));
            policies.add(pm);
        }
        JsonObjectBuilder o = Json.createObjectBuilder().add("admitted", x.admitted());
        x.binary().ifPresentOrElse(b -> o.add("binary", b), () -> o.addNull("binary"));
        if (x.networkPolicy().isPresent()) {
            o.add("network_policy", x.networkPolicy().get());
        } else {
            o.addNull("network_policy");
        }
        o.add("ssrf", x.ssrf());
        if (x.refusal().isPresent()) {
            Explanation.Refusal r = x.refusal().get();
            o.add("refusal", Json.createObjectBuilder().add("error", r.error()).add("status", r.status())
                    .add("detail", r.detail()));
        } else {
            o.addNull("refusal");
        }
        if (x.l7().isPresent()) {
            Explanation.L7 l = x.l7().get();
            JsonObjectBuilder l7 = Json.createObjectBuilder().add("outcome", l.outcome()).add("protocol", l.protocol())
                    .add("engine", l.engine()).add("policy", l.policyKey());
            if (l.rule().isPresent()) {
                l7.add("rule", l.rule().get());
            } else {
                l7.addNull("rule");
            }
            o.add("l7", l7.add("reason", l.reason()).add("path", l.path()));
        } else {
            o.addNull("l7");
        }
        return o.add("policies", policies).add("chain", chain).add("response_stages", responses)
                .add("not_selected", not).build().toString();
    }

    /** The supervisor's extension tokens when services registered over TLS are contacted, else none. */
    private CallerTokens tokens(GatewayConfig gw) {
        if (skipServices || gw.middleware().stream().allMatch(r -> r.insecure())) {
            return CallerTokens.NONE;
        }
        try {
            return ExtensionAuth.open(gw, Supervisor.stateDirectory(Optional.empty(), gw));
        } catch (java.io.IOException | RuntimeException e) {
            spec.commandLine().getErr().println("supervisor: the extension token keys cannot be opened ("
                    + e.getMessage() + "); services registered over TLS are contacted without a token");
            return CallerTokens.NONE;
        }
    }
}
