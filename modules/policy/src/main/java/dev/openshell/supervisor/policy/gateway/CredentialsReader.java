package dev.openshell.supervisor.policy.gateway;

import dev.openshell.middleware.spi.HeaderTable;
import dev.openshell.middleware.spi.internal.Syntax;
import dev.openshell.supervisor.policy.HostPattern;
import dev.openshell.supervisor.policy.SourceLocation;
import dev.openshell.supervisor.policy.internal.KeyPath;
import dev.openshell.supervisor.policy.internal.Problems;
import dev.openshell.supervisor.policy.internal.Texts;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import org.eclipse.collections.api.factory.Lists;
import org.tomlj.TomlArray;
import org.tomlj.TomlTable;

/**
 * Reads {@code [[openshell.supervisor.credentials]]} into {@link CredentialRule}s ({@code docs/credentials.md}): the
 * name placeholders refer to, the secret's source, the hosts it may be sent to, where it may be placed (headers,
 * query parameters, Basic parts, OpenShell's credential-profile fields), ports, plaintext and unscanned-response
 * opt-ins. Problems are reported at their key (file:line:col).
 */
final class CredentialsReader {
    /** The keys of a credentials entry. */
    static final List<String> CREDENTIAL_KEYS = List.of("name", "source", "hosts", "headers", "query_params", "basic",
            "allow_plaintext", "ports", "allow_unscanned_responses", "auth_style", "header_name", "query_param");
    /** A credential's name: what request placeholders ({@code openshell:resolve:...}) refer to. */
    static final Pattern CREDENTIAL_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,127}");

    private final Problems problems;
    /** The typed getters, and where each table read was opened. */
    private final TomlValues toml;
    private final Path baseDirectory;

    CredentialsReader(Problems problems, Path baseDirectory) {
        this.problems = problems;
        this.toml = new TomlValues(problems);
        this.baseDirectory = baseDirectory;
    }

    /** {@return the credential rules of {@code [[openshell.supervisor.credentials]]}; invalid entries are reported} */
    List<CredentialRule> credentials(TomlTable supervisor, KeyPath path) {
        List<CredentialRule> out = new ArrayList<>();
        List<TomlTable> entries = toml.tables(supervisor, "credentials", path);
        Map<String, KeyPath> names = new LinkedHashMap<>();
        for (int i = 0; i < entries.size(); i++) {
            TomlTable t = entries.get(i);
            if (t == null) {
                continue;
            }
            KeyPath cp = path.key("credentials").index(i);
            int errors = problems.errorCount();
            toml.rejectUnknown(t, cp, CREDENTIAL_KEYS);
            Optional<String> name = toml.requiredName(t, cp, names, "how placeholders and audit events refer to it",
                    n -> CREDENTIAL_NAME.matcher(n).matches(), "a letter or '_' followed by up to 127 letters, digits or '_' (request"
                            + " placeholders refer to it)");
            Optional<CredentialSource> source = Optional.empty();
            if (!t.contains(List.of("source"))) {
                problems.error(toml.at(cp, t), cp, "source is required: env:VARIABLE or file:/path/to/secret");
            } else {
                source = toml.string(t, "source", cp).flatMap(s -> {
                    try {
                        return Optional.of(CredentialSource.parse(s, baseDirectory));
                    } catch (IllegalArgumentException e) {
                        problems.error(toml.at(t, "source"), cp.key("source"), e.getMessage());
                        return Optional.empty();
                    }
                });
            }
            List<HostPattern> hosts = hosts(t, cp);
            List<String> headers = names(t, "headers", cp, Syntax::isToken, "a header field name");
            for (String h : headers) {
                if (neverForwarded(h)) {
                    problems.error(toml.at(t, "headers"), cp.key("headers"), "header " + Texts.quote(h)
                            + " never carries a credential upstream (Proxy-* and hop-by-hop fields are not forwarded)");
                }
            }
            List<String> queryParams = names(t, "query_params", cp, q -> q.matches("[^&=#\\s]+"), "a query parameter name");
            List<String> basic = names(t, "basic", cp, b -> b.equals("user") || b.equals("password"), "user or password");
            openShellPlacement(t, cp, headers, queryParams, basic);
            boolean allowPlaintext = toml.bool(t, "allow_plaintext", cp).orElse(false);
            boolean allowUnscanned = toml.bool(t, "allow_unscanned_responses", cp).orElse(false);
            List<Integer> ports = ports(t, cp);
            if (problems.errorCount() == errors) {
                out.add(new CredentialRule(name.orElseThrow(), source.orElseThrow(), Lists.immutable.withAll(hosts),
                        Lists.immutable.withAll(headers), Lists.immutable.withAll(queryParams),
                        Lists.immutable.withAll(basic), allowPlaintext, Lists.immutable.withAll(ports),
                        allowUnscanned));
            }
        }
        return out;
    }

    /** {@return the required, non-empty {@code hosts} of an entry: the host patterns the secret may be sent to} */
    private List<HostPattern> hosts(TomlTable t, KeyPath cp) {
        List<HostPattern> hosts = new ArrayList<>();
        if (!t.contains(List.of("hosts"))) {
            problems.error(toml.at(cp, t), cp, "hosts is required: the host patterns the secret may be sent to");
            return hosts;
        }
        TomlArray array = toml.array(t, "hosts", cp);
        if (array != null && array.isEmpty()) {
            problems.error(toml.at(t, "hosts"), cp.key("hosts"), "hosts must list at least one host pattern");
        }
        for (int k = 0; array != null && k < array.size(); k++) {
            KeyPath hp = cp.key("hosts").index(k);
            Object v = array.get(k);
            SourceLocation vat = toml.position(array.inputPositionOf(k));
            if (!(v instanceof String s)) {
                problems.error(vat, hp, "expected a string, found " + TomlValues.describe(v));
                continue;
            }
            String problem = HostPattern.problem(s);
            if (problem != null) {
                problems.error(vat, hp, "invalid host pattern " + Texts.quote(s) + ": " + problem);
            } else {
                hosts.add(HostPattern.parse(s));
            }
        }
        return hosts;
    }

    /** {@return the optional {@code ports} of an entry, each 1..65535} */
    private List<Integer> ports(TomlTable t, KeyPath cp) {
        List<Integer> ports = new ArrayList<>();
        TomlArray pa = toml.array(t, "ports", cp);
        for (int k = 0; pa != null && k < pa.size(); k++) {
            Object v = pa.get(k);
            if (v instanceof Long l && l >= 1 && l <= 65535) {
                ports.add(l.intValue());
            } else {
                problems.error(toml.position(pa.inputPositionOf(k)), cp.key("ports").index(k),
                        "expected a port 1..65535, found " + TomlValues.describe(v));
            }
        }
        return ports;
    }

    /**
     * {@return whether the proxy never forwards field {@code lower} upstream as sent}: {@code Proxy-*}, the hop-by-hop
     * and the framing fields of the one header table ({@link HeaderTable}), so a credential placed there never arrives
     */
    private static boolean neverForwarded(String lower) {
        return lower.startsWith("proxy-") || HeaderTable.hopByHop(lower) || HeaderTable.framing(lower);
    }

    /** An optional array of strings, each accepted by {@code grammar}; header names come back lowercase. */
    private List<String> names(TomlTable t, String key, KeyPath path, Predicate<String> grammar, String what) {
        List<String> out = new ArrayList<>();
        TomlArray a = toml.array(t, key, path);
        for (int k = 0; a != null && k < a.size(); k++) {
            Object v = a.get(k);
            SourceLocation vat = toml.position(a.inputPositionOf(k));
            if (!(v instanceof String s) || !grammar.test(s)) {
                problems.error(vat, path.key(key).index(k), "expected " + what + ", found " + TomlValues.describe(v));
                continue;
            }
            out.add(key.equals("headers") ? s.toLowerCase(java.util.Locale.ROOT) : s);
        }
        return out;
    }

    /**
     * OpenShell's credential-profile placement fields, accepted with their meaning (a provider profile's
     * {@code credentials[]}: {@code auth_style}, {@code header_name}, {@code query_param}): {@code header_name} adds a
     * header to {@code headers}, {@code query_param} a parameter to {@code query_params}; {@code auth_style}
     * {@code bearer} or {@code header} needs {@code header_name}, {@code query} needs {@code query_param}, {@code basic}
     * allows both Basic parts; {@code path} is refused (a credential is never placed in the path here).
     */
    private void openShellPlacement(TomlTable t, KeyPath cp, List<String> headers, List<String> queryParams,
                                    List<String> basic) {
        Optional<String> headerName = toml.string(t, "header_name", cp).map(h -> h.strip().toLowerCase(Locale.ROOT));
        headerName.ifPresent(h -> {
            if (!Syntax.isToken(h)) {
                problems.error(toml.at(t, "header_name"), cp.key("header_name"), "expected a header field name, found "
                        + TomlValues.describe(h));
            } else if (neverForwarded(h)) {
                problems.error(toml.at(t, "header_name"), cp.key("header_name"), "header " + Texts.quote(h)
                        + " never carries a credential upstream (Proxy-* and hop-by-hop fields are not forwarded)");
            } else if (!headers.contains(h)) {
                headers.add(h);
            }
        });
        Optional<String> queryParam = toml.string(t, "query_param", cp).map(String::strip);
        queryParam.ifPresent(q -> {
            if (!q.matches("[^&=#\\s]+")) {
                problems.error(toml.at(t, "query_param"), cp.key("query_param"),
                        "expected a query parameter name, found "
                        + TomlValues.describe(q));
            } else if (!queryParams.contains(q)) {
                queryParams.add(q);
            }
        });
        toml.string(t, "auth_style", cp).map(a -> a.strip().toLowerCase(Locale.ROOT)).ifPresent(style -> {
            switch (style) {
                case "", "basic" -> {
                    for (String part : List.of("user", "password")) {
                        if (style.equals("basic") && !basic.contains(part)) {
                            basic.add(part);
                        }
                    }
                }
                case "bearer", "header" -> {
                    if (headerName.isEmpty()) {
                        problems.error(toml.at(t, "auth_style"), cp.key("auth_style"), "header_name is required for "
                                + style + " auth (OpenShell's credential profile field)");
                    }
                }
                case "query" -> {
                    if (queryParam.isEmpty()) {
                        problems.error(toml.at(t, "auth_style"), cp.key("auth_style"),
                                "query_param is required for query"
                                + " auth (OpenShell's credential profile field)");
                    }
                }
                case "path" -> problems.error(toml.at(t, "auth_style"), cp.key("auth_style"), "auth_style path is not"
                        + " supported: this supervisor never places a credential in the request path");
                default -> problems.error(toml.at(t, "auth_style"), cp.key("auth_style"), "unsupported auth_style "
                        + Texts.quote(style) + "; expected basic, bearer, header or query");
            }
        });
    }
}
