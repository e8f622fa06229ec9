package dev.openshell.supervisor.policy.gateway;

import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.internal.RpcTimeout;
import dev.openshell.middleware.spi.internal.Syntax;
import dev.openshell.middleware.spi.net.IpRange;
import dev.openshell.supervisor.policy.HostPattern;
import dev.openshell.supervisor.policy.SourceLocation;
import dev.openshell.supervisor.policy.internal.KeyPath;
import dev.openshell.supervisor.policy.internal.Problems;
import dev.openshell.supervisor.policy.internal.Texts;

import java.net.InetAddress;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;

import org.eclipse.collections.api.factory.Lists;
import org.eclipse.collections.api.factory.SortedMaps;
import org.tomlj.Toml;
import org.tomlj.TomlParseError;
import org.tomlj.TomlParseResult;
import org.tomlj.TomlPosition;
import org.tomlj.TomlTable;
import org.tomlj.TomlVersion;

/**
 * Walks a parsed TOML document into a {@link GatewayConfig}, recording every problem with its position. Unknown keys
 * are errors everywhere under {@code openshell.supervisor} (a typo must not silently drop a setting); other
 * {@code openshell.*} tables belong to other OpenShell components and are left alone.
 */
final class GatewayReader {
    static final List<String> TOP_KEYS = List.of("openshell");
    /** Tables of an OpenShell gateway file that configure other components. */
    static final List<String> OPENSHELL_KEYS = List.of("version", "gateway", "supervisor", "drivers",
            "credential_drivers");
    static final List<String> SUPERVISOR_KEYS = List.of("listen", "plugins_dir", "state_dir", "audit_log",
            "body_buffer_budget_bytes", "limits", "network", "admin", "tls", "identity", "middleware", "credentials",
            "plugin_pins", "extension_auth");
    static final List<String> EXTENSION_AUTH_KEYS = List.of("gateway_id", "issuer", "sandbox_id",
            "token_lifetime_seconds", "key_lifetime_days");
    static final List<String> NETWORK_KEYS = List.of("allow_loopback_upstreams", "static_hosts");
    static final List<String> ADMIN_KEYS = List.of("listen");
    static final List<String> IDENTITY_KEYS = List.of("mode", "entrypoint_pid");
    static final List<String> LIMITS_KEYS = List.of("max_connections", "max_connections_per_client",
            "request_head_timeout_ms", "body_buffer_timeout_ms", "body_min_bytes_per_second",
            "body_buffer_client_share_percent", "stage_threads", "max_stuck_stages_per_binding",
            "max_concurrent_middleware_work", "max_queued_middleware_work", "max_connections_per_process");
    static final List<String> TLS_KEYS = List.of("upstream_ca_bundle", "ca_cert", "ca_key");
    static final List<String> PLUGIN_PIN_KEYS = List.of("entry", "sha256");
    static final List<String> MIDDLEWARE_KEYS = List.of("name", "grpc_endpoint", "max_body_bytes", "timeout",
            "allow_insecure", "tls_ca_bundle", "tls_client_cert", "tls_client_key", "audience",
            "max_payload_bytes", "allow_insecure_transport", "tls_ca_cert_path");
    /** The published OpenShell spellings accepted for the RFC's keys: alias to canonical. */
    static final Map<String, String> ALIASES = Map.of(
            "max_payload_bytes", "max_body_bytes",
            "allow_insecure_transport", "allow_insecure",
            "tls_ca_cert_path", "tls_ca_bundle");
    /** Credential names: request placeholders name them ({@code openshell:resolve:env:<name>}). */

    private final Problems problems;
    /** The typed getters, and where each table read was opened. */
    private final TomlValues toml;
    private final Path baseDirectory;

    GatewayReader(Problems problems, Path baseDirectory) {
        this.problems = problems;
        this.toml = new TomlValues(problems);
        this.baseDirectory = baseDirectory;
    }

    /** {@return the parse result, with every syntax error recorded} */
    TomlParseResult parse(String text) {
        TomlParseResult result = Toml.parse(text, TomlVersion.V1_0_0);
        for (TomlParseError e : result.errors()) {
            TomlPosition p = e.position();
            problems.error(p == null ? problems.nowhere() : problems.at(p.line(), p.column()), KeyPath.root(),
                    "TOML syntax error: " + Texts.printable(String.valueOf(e.getMessage())));
        }
        return result;
    }

    GatewayConfig read(TomlTable root) {
        toml.rejectUnknown(root, KeyPath.root(), TOP_KEYS);
        TomlTable openshell = toml.table(root, "openshell", KeyPath.root());
        TomlTable supervisor = null;
        if (openshell != null) {
            KeyPath os = KeyPath.of("openshell");
            toml.rejectUnknown(openshell, os, OPENSHELL_KEYS);
            if (openshell.contains(List.of("version"))) {
                toml.integer(openshell, "version", os, Long.MIN_VALUE, Long.MAX_VALUE).ifPresent(v -> {
                    if (v != 1) {
                        problems.error(toml.at(openshell, "version"), os.key("version"), "unsupported configuration"
                                + " version " + v + "; this supervisor reads version 1");
                    }
                });
            }
            supervisor = toml.table(openshell, "supervisor", os);
        }
        if (supervisor == null) {
            return new GatewayConfig(SupervisorSettings.defaults(), Lists.immutable.empty(), Lists.immutable.empty());
        }
        KeyPath sp = KeyPath.of("openshell", "supervisor");
        toml.rejectUnknown(supervisor, sp, SUPERVISOR_KEYS);
        SupervisorSettings settings = settings(supervisor, sp);
        List<MiddlewareRegistration> middleware = registrations(supervisor, sp);
        List<CredentialRule> credentials = new CredentialsReader(problems, baseDirectory).credentials(supervisor, sp);
        List<PluginPin> pins = pluginPins(supervisor, sp);
        if (settings == null) {
            settings = SupervisorSettings.defaults();
        }
        return new GatewayConfig(settings, Lists.immutable.withAll(middleware), Lists.immutable.withAll(credentials),
                Lists.immutable.withAll(pins));
    }

    // ------------------------------------------------------------------------------------ [openshell.supervisor]

    private SupervisorSettings settings(TomlTable t, KeyPath path) {
        int errors = problems.errorCount();
        ListenAddress listen = toml.string(t, "listen", path).flatMap(s -> listen(s, t, "listen", path))
                .orElse(SupervisorSettings.DEFAULT_LISTEN);
        Optional<Path> plugins = toml.string(t, "plugins_dir", path).flatMap(s -> path(s, t, "plugins_dir", path));
        Optional<Path> state = toml.string(t, "state_dir", path).flatMap(s -> path(s, t, "state_dir", path));
        Optional<Path> audit = toml.string(t, "audit_log", path).flatMap(s -> path(s, t, "audit_log", path));
        OptionalLong budget = t.contains(List.of("body_buffer_budget_bytes"))
                ? toml.integer(t, "body_buffer_budget_bytes", path, EnvelopeLimits.MAX_BODY_BYTES, Integer.MAX_VALUE)
                : OptionalLong.empty();

        NetworkSettings network = NetworkSettings.defaults();
        TomlTable net = toml.table(t, "network", path);
        if (net != null) {
            network = network(net, path.key("network"));
        }
        Optional<ListenAddress> admin = Optional.empty();
        TomlTable adm = toml.table(t, "admin", path);
        if (adm != null) {
            KeyPath ap = path.key("admin");
            toml.rejectUnknown(adm, ap, ADMIN_KEYS);
            admin = toml.string(adm, "listen", ap).flatMap(s -> listen(s, adm, "listen", ap));
        }
        LimitsSettings limits = LimitsSettings.defaults();
        TomlTable lim = toml.table(t, "limits", path);
        if (lim != null) {
            KeyPath lp = path.key("limits");
            toml.rejectUnknown(lim, lp, LIMITS_KEYS);
            limits = new LimitsSettings(toml.optionalInteger(lim, "max_connections", lp, 1, 1_000_000),
                    toml.optionalInteger(lim, "max_connections_per_client", lp, 1, 1_000_000),
                    toml.optionalInteger(lim, "request_head_timeout_ms", lp, 1, 3_600_000),
                    toml.optionalInteger(lim, "body_buffer_timeout_ms", lp, 1, 3_600_000),
                    toml.optionalInteger(lim, "body_min_bytes_per_second", lp, 0, 1_000_000_000),
                    toml.optionalInteger(lim, "body_buffer_client_share_percent", lp, 1, 100),
                    toml.optionalInteger(lim, "stage_threads", lp, 1, 4096),
                    toml.optionalInteger(lim, "max_stuck_stages_per_binding", lp, 1, 4096),
                    toml.optionalInteger(lim, "max_concurrent_middleware_work", lp, 1, 65536),
                    toml.optionalInteger(lim, "max_queued_middleware_work", lp, 0, 65536),
                    toml.optionalInteger(lim, "max_connections_per_process", lp, 0, 1_000_000));
        }
        TlsSettings tls = TlsSettings.defaults();
        TomlTable tl = toml.table(t, "tls", path);
        if (tl != null) {
            tls = tls(tl, path.key("tls"));
        }
        IdentitySettings identity = IdentitySettings.defaults();
        TomlTable id = toml.table(t, "identity", path);
        if (id != null) {
            identity = identity(id, path.key("identity"));
        }
        ExtensionAuthSettings extensionAuth = ExtensionAuthSettings.defaults();
        TomlTable ea = toml.table(t, "extension_auth", path);
        if (ea != null) {
            extensionAuth = extensionAuth(ea, path.key("extension_auth"));
        }
        if (problems.errorCount() != errors || network == null || tls == null || identity == null
                || extensionAuth == null) {
            return null;
        }
        return new SupervisorSettings(listen, plugins, state, audit, network, admin, tls, budget, identity, limits,
                extensionAuth);
    }

    /** {@code [openshell.supervisor.extension_auth]}; {@code null} after reporting a problem. */
    private ExtensionAuthSettings extensionAuth(TomlTable t, KeyPath path) {
        toml.rejectUnknown(t, path, EXTENSION_AUTH_KEYS);
        int errors = problems.errorCount();
        String gatewayId = toml.string(t, "gateway_id", path).orElse(ExtensionAuthSettings.DEFAULT_GATEWAY_ID);
        Optional<String> issuer = toml.string(t, "issuer", path);
        Optional<String> sandboxId = toml.string(t, "sandbox_id", path);
        long tokenLifetime = toml.optionalInteger(t, "token_lifetime_seconds", path, 60, 3600)
                .orElse(ExtensionAuthSettings.DEFAULT_TOKEN_LIFETIME_SECONDS);
        long keyLifetime = toml.optionalInteger(t, "key_lifetime_days", path, 1, 365)
                .orElse(ExtensionAuthSettings.DEFAULT_KEY_LIFETIME_DAYS);
        if (problems.errorCount() != errors) {
            return null;
        }
        try {
            return new ExtensionAuthSettings(gatewayId, issuer, sandboxId, tokenLifetime, keyLifetime);
        } catch (IllegalArgumentException e) {
            problems.error(toml.at(path, t), path, e.getMessage());
            return null;
        }
    }

    private NetworkSettings network(TomlTable t, KeyPath path) {
        toml.rejectUnknown(t, path, NETWORK_KEYS);
        int errors = problems.errorCount();
        boolean loopback = toml.bool(t, "allow_loopback_upstreams", path).orElse(false);
        Map<String, InetAddress> hosts = new TreeMap<>();
        TomlTable sh = toml.table(t, "static_hosts", path);
        if (sh != null) {
            KeyPath sp = path.key("static_hosts");
            for (String name : sh.keySet()) {
                KeyPath np = sp.key(name);
                Optional<String> ip = toml.string(sh, name, sp);
                if (ip.isEmpty()) {
                    continue;
                }
                String problem = HostPattern.problem(name);
                if (problem != null || !HostPattern.parse(name).isLiteral()) {
                    problems.error(toml.at(sh, name), np,
                            "static host name " + Texts.quote(name) + " is not a valid host"
                            + " name" + (problem != null ? ": " + problem : " (wildcards are not allowed)"));
                    continue;
                }
                InetAddress address = IpRange.parseAddress(ip.get());
                if (address == null) {
                    problems.error(toml.at(sh, name), np, Texts.quote(ip.get()) + " is not an IPv4 or IPv6 address");
                    continue;
                }
                String key = name.toLowerCase(Locale.ROOT);
                if (hosts.putIfAbsent(key, address) != null) {
                    problems.error(toml.at(sh, name), np, "static host " + Texts.quote(key) + " is given twice");
                }
            }
        }
        if (problems.errorCount() != errors) {
            return null;
        }
        return new NetworkSettings(loopback, SortedMaps.immutable.withSortedMap(new TreeMap<>(hosts)));
    }

    private IdentitySettings identity(TomlTable t, KeyPath path) {
        toml.rejectUnknown(t, path, IDENTITY_KEYS);
        int errors = problems.errorCount();
        IdentitySettings.Mode mode = IdentitySettings.Mode.ENFORCE;
        Optional<String> written = toml.string(t, "mode", path);
        if (written.isPresent()) {
            Optional<IdentitySettings.Mode> m = java.util.Arrays.stream(IdentitySettings.Mode.values())
                    .filter(v -> v.configName().equals(written.get())).findFirst();
            if (m.isEmpty()) {
                problems.error(toml.at(t, "mode"), path.key("mode"),
                        "unknown identity mode " + Texts.quote(written.get())
                        + "; expected enforce or endpoint-only");
            } else {
                mode = m.get();
            }
        }
        OptionalLong pid = t.contains(List.of("entrypoint_pid"))
                ? toml.integer(t, "entrypoint_pid", path, 1, IdentitySettings.MAX_PID) : OptionalLong.empty();
        if (problems.errorCount() != errors) {
            return null;
        }
        return new IdentitySettings(mode, pid);
    }

    private TlsSettings tls(TomlTable t, KeyPath path) {
        toml.rejectUnknown(t, path, TLS_KEYS);
        int errors = problems.errorCount();
        Optional<Path> upstream = toml.string(t, "upstream_ca_bundle", path)
                .flatMap(s -> path(s, t, "upstream_ca_bundle", path));
        Optional<Path> cert = toml.string(t, "ca_cert", path).flatMap(s -> path(s, t, "ca_cert", path));
        Optional<Path> key = toml.string(t, "ca_key", path).flatMap(s -> path(s, t, "ca_key", path));
        if (t.contains(List.of("ca_cert")) != t.contains(List.of("ca_key"))) {
            problems.error(toml.at(path, t), path, "ca_cert and ca_key must be given together");
        }
        if (problems.errorCount() != errors) {
            return null;
        }
        return new TlsSettings(upstream, cert, key);
    }

    // ---------------------------------------------------------------------------- [[openshell.supervisor.middleware]]

    private List<MiddlewareRegistration> registrations(TomlTable supervisor, KeyPath path) {
        List<MiddlewareRegistration> out = new ArrayList<>();
        List<TomlTable> entries = toml.tables(supervisor, "middleware", path);
        Map<String, KeyPath> names = new LinkedHashMap<>();
        for (int i = 0; i < entries.size(); i++) {
            KeyPath ep = path.key("middleware").index(i);
            TomlTable entry = entries.get(i);
            if (entry == null) {
                continue;
            }
            MiddlewareRegistration r = registration(entry, ep, names);
            if (r != null) {
                out.add(r);
            }
        }
        return out;
    }

    private MiddlewareRegistration registration(TomlTable t, KeyPath path, Map<String, KeyPath> names) {
        int errors = problems.errorCount();
        toml.rejectUnknown(t, path, MIDDLEWARE_KEYS);
        for (Map.Entry<String, String> alias : ALIASES.entrySet()) {
            if (t.contains(List.of(alias.getKey())) && t.contains(List.of(alias.getValue()))) {
                problems.error(toml.at(t, alias.getKey()), path.key(alias.getKey()), alias.getKey() + " and "
                        + alias.getValue() + " are two spellings of one setting; give only one");
            }
        }
        Optional<String> name = toml.requiredName(t, path, names,
                "the service's diagnostic name, such as \"anonymizer\"",
                Syntax::isRegistrationName, Syntax.REGISTRATION_NAME_RULE);

        Optional<GrpcEndpoint> endpoint = Optional.empty();
        if (!t.contains(List.of("grpc_endpoint"))) {
            problems.error(toml.at(path, t), path,
                    "grpc_endpoint is required: the service's address, such as \"https://pii.internal:443\"");
        } else {
            endpoint = toml.string(t, "grpc_endpoint", path).flatMap(s -> {
                try {
                    return Optional.of(GrpcEndpoint.parse(s));
                } catch (IllegalArgumentException e) {
                    problems.error(toml.at(t, "grpc_endpoint"), path.key("grpc_endpoint"), e.getMessage());
                    return Optional.empty();
                }
            });
        }

        OptionalLong maxBody = maxBody(t, path);
        Duration timeout = timeout(t, path);

        String insecureKey = spelling(t, "allow_insecure");
        boolean allowInsecure = toml.bool(t, insecureKey, path).orElse(false);
        String caKey = spelling(t, "tls_ca_bundle");
        Optional<Path> ca = toml.string(t, caKey, path).flatMap(s -> path(s, t, caKey, path));
        Optional<Path> clientCert = toml.string(t, "tls_client_cert", path)
                .flatMap(s -> path(s, t, "tls_client_cert", path));
        Optional<Path> clientKey = toml.string(t, "tls_client_key", path).flatMap(s -> path(s, t, "tls_client_key",
                path));
        if (t.contains(List.of("tls_client_cert")) != t.contains(List.of("tls_client_key"))) {
            problems.error(toml.at(path, t), path, "tls_client_cert and tls_client_key must be given together");
        }
        Optional<String> audience = toml.string(t, "audience", path);
        if (audience.isPresent() && (audience.get().isEmpty() || audience.get().length() > 256
                || audience.get().chars().anyMatch(Character::isISOControl))) {
            problems.error(toml.at(t, "audience"), path.key("audience"), "audience must be 1 to 256 characters without"
                    + " control characters");
        }

        endpoint.ifPresent(e -> checkTransport(t, path, e, allowInsecure, insecureKey, caKey));
        if (problems.errorCount() != errors) {
            return null;
        }
        return new MiddlewareRegistration(name.orElseThrow(), endpoint.orElseThrow(), maxBody.orElseThrow(), timeout,
                allowInsecure, ca, clientCert, clientKey, audience);
    }

    /** {@return the required {@code max_body_bytes} (or its alias), 0 to the platform maximum} */
    private OptionalLong maxBody(TomlTable t, KeyPath path) {
        String bodyKey = spelling(t, "max_body_bytes");
        if (!t.contains(List.of(bodyKey))) {
            problems.error(toml.at(path, t), path,
                    "max_body_bytes is required: the largest request body, in bytes, sent"
                    + " to this service (at most " + EnvelopeLimits.MAX_BODY_BYTES + ")");
            return OptionalLong.empty();
        }
        OptionalLong maxBody = toml.integer(t, bodyKey, path, Long.MIN_VALUE, Long.MAX_VALUE);
        problems.locate(path.key("max_body_bytes"), toml.at(t, bodyKey));
        if (maxBody.isPresent() && maxBody.getAsLong() < 0) {
            problems.error(toml.at(t, bodyKey), path.key(bodyKey), bodyKey + " must not be negative");
            return OptionalLong.empty();
        }
        if (maxBody.isPresent() && maxBody.getAsLong() > EnvelopeLimits.MAX_BODY_BYTES) {
            problems.error(toml.at(t, bodyKey), path.key(bodyKey), bodyKey + " " + maxBody.getAsLong()
                    + " exceeds the 4 MiB platform maximum (" + EnvelopeLimits.MAX_BODY_BYTES
                    + " bytes); it is rejected, not clamped");
            return OptionalLong.empty();
        }
        return maxBody;
    }

    /** {@return the registration's {@code timeout}, the platform default when not given} */
    private Duration timeout(TomlTable t, KeyPath path) {
        Optional<String> text = toml.string(t, "timeout", path);
        if (text.isEmpty()) {
            return RpcTimeout.DEFAULT;
        }
        String problem = RpcTimeout.problem(text.get());
        if (problem != null) {
            problems.error(toml.at(t, "timeout"), path.key("timeout"),
                    "invalid timeout " + Texts.quote(text.get()) + ": "
                    + problem);
            return RpcTimeout.DEFAULT;
        }
        return RpcTimeout.parse(text.get());
    }

    /** Plaintext endpoints need {@code allow_insecure} (and take no TLS keys); TLS ones ignore it, with a warning. */
    private void checkTransport(TomlTable t, KeyPath path, GrpcEndpoint e, boolean allowInsecure, String insecureKey,
                                String caKey) {
        SourceLocation endpointAt = toml.at(t, "grpc_endpoint");
        KeyPath endpointPath = path.key("grpc_endpoint");
        if (e.plaintext() && !allowInsecure) {
            problems.error(endpointAt, endpointPath, "plaintext endpoint " + Texts.quote(e.toString())
                    + " needs allow_insecure = true: request content would travel unencrypted and"
                    + " unauthenticated (a research-preview exception for trusted local or isolated networks)");
        } else if (e.plaintext()) {
            problems.warning(endpointAt, endpointPath, "INSECURE: plaintext endpoint " + Texts.quote(e.toString())
                    + " is allowed by " + insecureKey + " = true; request content travels unencrypted and"
                    + " unauthenticated, so use it only on a trusted local or isolated network (RFC 0009 phase 1"
                    + " exception, removed in phase 2)");
        } else if (allowInsecure) {
            problems.warning(toml.at(t, insecureKey), path.key(insecureKey),
                    insecureKey + " has no effect on an https:// endpoint");
        }
        if (e.plaintext()) {
            for (String tlsKey : List.of(caKey, "tls_client_cert", "tls_client_key")) {
                if (t.contains(List.of(tlsKey))) {
                    problems.error(toml.at(t, tlsKey), path.key(tlsKey),
                            tlsKey + " applies only to https:// endpoints");
                }
            }
        }
    }

    /** {@return the spelling of {@code canonical} this entry uses: the canonical key unless only an alias is given} */
    private static String spelling(TomlTable t, String canonical) {
        if (t.contains(List.of(canonical))) {
            return canonical;
        }
        for (Map.Entry<String, String> alias : ALIASES.entrySet()) {
            if (alias.getValue().equals(canonical) && t.contains(List.of(alias.getKey()))) {
                return alias.getKey();
            }
        }
        return canonical;
    }

    // ------------------------------------------------------------------------- [[openshell.supervisor.plugin_pins]]

    private List<PluginPin> pluginPins(TomlTable supervisor, KeyPath path) {
        List<PluginPin> out = new ArrayList<>();
        List<TomlTable> entries = toml.tables(supervisor, "plugin_pins", path);
        Map<String, KeyPath> seen = new LinkedHashMap<>();
        for (int i = 0; i < entries.size(); i++) {
            TomlTable t = entries.get(i);
            if (t == null) {
                continue;
            }
            KeyPath pp = path.key("plugin_pins").index(i);
            int errors = problems.errorCount();
            toml.rejectUnknown(t, pp, PLUGIN_PIN_KEYS);
            Optional<String> entry = Optional.empty();
            if (!t.contains(List.of("entry"))) {
                problems.error(toml.at(pp, t), pp,
                        "entry is required: the plugin's file or directory name in the plugins"
                        + " directory");
            } else {
                entry = toml.string(t, "entry", pp).filter(e -> {
                    String problem = PluginPin.entryProblem(e);
                    if (problem != null) {
                        problems.error(toml.at(t, "entry"), pp.key("entry"), problem);
                        return false;
                    }
                    KeyPath first = seen.putIfAbsent(e, pp);
                    if (first != null) {
                        problems.error(toml.at(t, "entry"), pp.key("entry"), "plugin " + Texts.quote(e)
                                + " is already pinned at " + first);
                        return false;
                    }
                    return true;
                });
            }
            Optional<String> sha = Optional.empty();
            if (!t.contains(List.of("sha256"))) {
                problems.error(toml.at(pp, t), pp, "sha256 is required: the digest `supervisor plugins --pin` prints");
            } else {
                sha = toml.string(t, "sha256", pp).filter(h -> {
                    if (!PluginPin.SHA256.matcher(h.toLowerCase(Locale.ROOT)).matches()) {
                        problems.error(toml.at(t, "sha256"), pp.key("sha256"), "sha256 must be 64 hexadecimal digits");
                        return false;
                    }
                    return true;
                });
            }
            if (problems.errorCount() == errors) {
                out.add(new PluginPin(entry.orElseThrow(), sha.orElseThrow()));
            }
        }
        return out;
    }

    // ------------------------------------------------------------------------------------------------ helpers

    private Optional<ListenAddress> listen(String text, TomlTable t, String key, KeyPath path) {
        try {
            return Optional.of(ListenAddress.parse(text));
        } catch (IllegalArgumentException e) {
            problems.error(toml.at(t, key), path.key(key), e.getMessage());
            return Optional.empty();
        }
    }

    /** A path setting: non-empty; relative paths resolve against the configuration's directory. */
    private Optional<Path> path(String text, TomlTable t, String key, KeyPath path) {
        if (text.isBlank()) {
            problems.error(toml.at(t, key), path.key(key), key + " must not be empty");
            return Optional.empty();
        }
        try {
            return Optional.of(baseDirectory.resolve(text).normalize());
        } catch (InvalidPathException e) {
            problems.error(toml.at(t, key), path.key(key), Texts.quote(text) + " is not a valid path");
            return Optional.empty();
        }
    }
}
