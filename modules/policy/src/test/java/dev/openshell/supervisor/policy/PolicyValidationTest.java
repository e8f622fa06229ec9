package dev.openshell.supervisor.policy;

import dev.openshell.middleware.spi.internal.OnError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.ConfigValidation;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.json.JsonObject;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Every RFC 0009 policy rule, each with a failing input and its exact message, key path and position (issue 3,
 * item 4).
 */
class PolicyValidationTest {
    static Loaded<SandboxPolicy> load(String yaml) {
        return SandboxPolicyLoader.parse("p.yaml", yaml);
    }

    static PolicyException rejected(String yaml) {
        return assertThrows(PolicyException.class, () -> load(yaml));
    }

    static PolicyException rejected(String yaml, BindingCatalog catalog) {
        return assertThrows(PolicyException.class, () -> SandboxPolicyLoader.parse("p.yaml", yaml, catalog));
    }

    static ConfigProblem onlyError(PolicyException e) {
        assertEquals(1, e.errors().size(), e::getMessage);
        return e.errors().get(0);
    }

    static void assertProblem(ConfigProblem p, String keyPath, int line, int column, String message) {
        assertEquals(message, p.message());
        assertEquals(keyPath, p.keyPath());
        assertEquals(new SourceLocation("p.yaml", line, column), p.location(), p::describe);
    }

    /** A valid one-config policy with {@code entry} as the body of config {@code a} (indented by 4). */
    static String middleware(String entry) {
        return "version: 1\nnetwork_middlewares:\n  a:\n" + entry.indent(4);
    }

    @Nested
    class MiddlewareConfigs {
        @Test
        void atMostTenConfigs() {
            StringBuilder yaml = new StringBuilder("version: 1\nnetwork_middlewares:\n");
            for (int i = 1; i <= 11; i++) {
                yaml.append("  c").append(i).append(": {middleware: openshell/regex, order: ").append(i)
                        .append(", endpoints: {include: [a.com]}}\n");
            }
            assertProblem(onlyError(rejected(yaml.toString())), "network_middlewares", 2, 1,
                    "11 middleware configs; a policy may declare at most 10");
            String ten = yaml.substring(0, yaml.lastIndexOf("  c11"));
            assertEquals(10, load(ten).value().networkMiddlewares().size());
        }

        @Test
        void orderIsUniqueAcrossThePolicyAndNamesBothKeys() {
            String yaml = """
                    version: 1
                    network_middlewares:
                      first:
                        middleware: openshell/regex
                        order: 10
                        endpoints: {include: [a.example.com]}
                      second:
                        middleware: acme/anonymizer
                        order: 10
                        endpoints: {include: [b.example.com]}
                    """;
            assertProblem(onlyError(rejected(yaml)), "network_middlewares.second.order", 9, 12,
                    "order 10 is also used by network_middlewares.first; order values must be unique across the"
                            + " policy");
        }

        @Test
        void theDefaultOrderCountsToo() {
            String yaml = """
                    version: 1
                    network_middlewares:
                      first: {middleware: openshell/regex, endpoints: {include: [a.example.com]}}
                      second: {middleware: openshell/regex, endpoints: {include: [b.example.com]}}
                    """;
            assertProblem(onlyError(rejected(yaml)), "network_middlewares.second.order", 4, 3,
                    "order 0 (the default) is also used by network_middlewares.first; order values must be unique"
                            + " across the policy");
        }

        @Test
        void atMost32IncludeAndExcludePatterns() {
            List<String> include = new ArrayList<>();
            List<String> exclude = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                include.add("h" + i + ".example.com");
            }
            for (int i = 0; i < 13; i++) {
                exclude.add("x" + i + ".example.com");
            }
            String yaml = middleware("middleware: openshell/regex\nendpoints:\n  include: " + include
                    + "\n  exclude: " + exclude);
            assertProblem(onlyError(rejected(yaml)), "network_middlewares.a.endpoints", 5, 5,
                    "33 host patterns in include and exclude; a config may have at most 32");
            String atLimit = middleware("middleware: openshell/regex\nendpoints:\n  include: " + include
                    + "\n  exclude: " + exclude.subList(0, 12));
            assertEquals(12, load(atLimit).value().networkMiddlewares().get("a").endpoints().exclude().size());
        }

        @Test
        void includeMustNotBeEmpty() {
            assertProblem(onlyError(rejected(middleware("middleware: openshell/regex\nendpoints: {include: []}"))),
                    "network_middlewares.a.endpoints.include", 5, 26, "include must list at least one host pattern");
            assertProblem(onlyError(rejected(middleware("middleware: openshell/regex\nendpoints: {exclude: [a.com]}"))),
                    "network_middlewares.a.endpoints", 5, 16, "include must list at least one host pattern");
            assertProblem(onlyError(rejected(middleware("middleware: openshell/regex"))), "network_middlewares.a", 4,
                    5, "endpoints is required: give endpoints.include with at least one host pattern");
        }

        @Test
        void bindingIdsFollowTheRfcGrammar() {
            for (String[] c : new String[][] {
                    {"acme//redactor", "path segments must not be empty"},
                    {"/acme", "path segments must not be empty"},
                    {"acme/", "path segments must not be empty"},
                    {"'acme/pii redactor'", "segments may only contain letters, digits, '.', '_' and '-'"}}) {
                String id = c[0].replace("'", "");
                assertProblem(onlyError(rejected(middleware("middleware: " + c[0] + "\nendpoints: {include: [a.com]}"))),
                        "network_middlewares.a.middleware", 4, 17, "invalid binding ID '" + id + "': " + c[1]);
            }
            assertProblem(onlyError(rejected(middleware("endpoints: {include: [a.com]}"))), "network_middlewares.a", 4,
                    5, "middleware is required: give the binding ID to run, such as openshell/regex");
            assertEquals(new BindingId("acme/security/pii-redactor"), load(middleware(
                    "middleware: acme/security/pii-redactor\nendpoints: {include: [a.com]}"))
                    .value().networkMiddlewares().get("a").middleware());
        }

        @Test
        void onErrorIsFailClosedOrFailOpen() {
            assertProblem(onlyError(rejected(middleware(
                            "middleware: openshell/regex\non_error: fail-open\nendpoints: {include: [a.com]}"))),
                    "network_middlewares.a.on_error", 5, 15,
                    "unknown on_error value 'fail-open'; expected fail_closed or fail_open");
            assertEquals(OnError.FAIL_CLOSED, load(middleware("middleware: m\nendpoints: {include: [a.com]}"))
                    .value().networkMiddlewares().get("a").onError(), "fail_closed is the default");
            assertEquals(OnError.FAIL_OPEN, load(middleware(
                    "middleware: m\non_error: fail_open\nendpoints: {include: [a.com]}"))
                    .value().networkMiddlewares().get("a").onError());
        }

        @Test
        void unknownKeysInAMiddlewareEntryAreErrors() {
            String yaml = middleware("middleware: openshell/regex\nordr: 5\nendpoints: {include: [a.com], exlude: [b.com]}");
            PolicyException e = rejected(yaml);
            assertEquals(2, e.errors().size(), e::getMessage);
            assertProblem(e.errors().get(0), "network_middlewares.a.ordr", 5, 5,
                    "unknown key 'ordr' (did you mean 'order'?); allowed keys: name, middleware, order, config,"
                            + " on_error, endpoints");
            assertProblem(e.errors().get(1), "network_middlewares.a.endpoints.exlude", 6, 35,
                    "unknown key 'exlude' (did you mean 'exclude'?); allowed keys: include, exclude");
        }

        @Test
        void invalidHostPatternsInSelectors() {
            PolicyException e = rejected(middleware(
                    "middleware: m\nendpoints:\n  include: [a.com, '*.{prod,staging}.example.com']\n"
                            + "  exclude: ['api..example.com']"));
            assertEquals(2, e.errors().size(), e::getMessage);
            assertProblem(e.errors().get(0), "network_middlewares.a.endpoints.include[1]", 6, 24,
                    "invalid host pattern '*.{prod,staging}.example.com': brace alternates are not supported: list"
                            + " each alternative as its own pattern");
            assertProblem(e.errors().get(1), "network_middlewares.a.endpoints.exclude[0]", 7, 17,
                    "invalid host pattern 'api..example.com': it has an empty DNS label (a leading, trailing or"
                            + " doubled '.')");
        }

        @Test
        void configMustBeAMappingOfAtMost64KiB() {
            assertProblem(onlyError(rejected(middleware("middleware: m\nconfig: [a, b]\nendpoints: {include: [a.com]}"))),
                    "network_middlewares.a.config", 5, 13, "expected a mapping, found a list");
            String big = "x".repeat(70_000);
            assertProblem(onlyError(rejected(middleware("middleware: m\nconfig: {blob: " + big
                            + "}\nendpoints: {include: [a.com]}"))),
                    "network_middlewares.a.config", 5, 5, "config is 70011 bytes as JSON; the limit is 65536 bytes");
            assertProblem(onlyError(rejected(middleware("middleware: m\nconfig: {limit: .inf}\nendpoints: {include: [a.com]}"))),
                    "network_middlewares.a.config.limit", 5, 21,
                    "this number cannot be represented in JSON (infinity, NaN, or too long)");
            assertProblem(onlyError(rejected(middleware("middleware: m\nconfig: {blob: !!binary aGk=}\nendpoints: {include: [a.com]}"))),
                    "network_middlewares.a.config.blob", 5, 20,
                    "unsupported YAML tag 'tag:yaml.org,2002:binary'; use plain strings, numbers, booleans, lists"
                            + " and mappings");
        }

        @Test
        void configValuesBecomeJson() {
            JsonObject config = load(middleware("""
                    middleware: m
                    config:
                      mode: redact
                      count: 0x10
                      ratio: 1.5
                      big: 123456789012345678901234567890
                      on: true
                      none: ~
                      nested: {list: [1, "2", {k: v}]}
                      anchor: &a {x: 1}
                      alias: *a
                    endpoints: {include: [a.com]}""")).value().networkMiddlewares().get("a").config();
            assertEquals("redact", config.getString("mode"));
            assertEquals(16, config.getInt("count"));
            assertEquals(new java.math.BigDecimal("1.5"), config.getJsonNumber("ratio").bigDecimalValue());
            assertEquals(new java.math.BigInteger("123456789012345678901234567890"),
                    config.getJsonNumber("big").bigIntegerValueExact());
            assertTrue(config.getBoolean("on"));
            assertTrue(config.isNull("none"));
            assertEquals("v", config.getJsonObject("nested").getJsonArray("list").getJsonObject(2).getString("k"));
            assertEquals(config.get("anchor"), config.get("alias"));
        }

        @Test
        void recursiveAliasesInConfigAreRejected() {
            assertProblem(onlyError(rejected(middleware("middleware: m\nconfig: {self: &r [*r]}\nendpoints: {include: [a.com]}"))),
                    "network_middlewares.a.config.self[0]", 5, 20,
                    "nested deeper than 64 levels (or a recursive alias)");
        }

        @Test
        void configKeysArePlainWords() {
            String yaml = "version: 1\nnetwork_middlewares:\n  'pii.redact': {middleware: m, endpoints: {include: [a.com]}}\n";
            assertProblem(onlyError(rejected(yaml)), "network_middlewares.\"pii.redact\"", 3, 3,
                    "config key 'pii.redact' must be 1 to 64 letters, digits, '-' or '_' (it namespaces the config's"
                            + " metadata)");
        }

        @Test
        void nameDefaultsToTheKeyAndMustNotBeEmpty() {
            assertEquals("a", load(middleware("middleware: m\nendpoints: {include: [a.com]}")).value()
                    .networkMiddlewares().get("a").name());
            assertProblem(onlyError(rejected(middleware("name: ''\nmiddleware: m\nendpoints: {include: [a.com]}"))),
                    "network_middlewares.a.name", 4, 11, "name must not be empty; leave it out to use the config key");
        }
    }

    @Nested
    class UninspectedEndpoints {
        static final String CDN = """
                version: 1
                network_policies:
                  cdn:
                    endpoints:
                      - { host: "*.cdn.example.com", port: 443, tls: skip }
                network_middlewares:
                  redact:
                    middleware: openshell/regex
                    on_error: %s
                    endpoints:
                      include: ["**.example.com"]
                      exclude: [%s]
                """;

        @Test
        void aSelectorThatCanReachATlsSkipEndpointIsRejected() {
            assertProblem(onlyError(rejected(CDN.formatted("fail_closed", ""))), "network_middlewares.redact.endpoints",
                    10, 5, "selects host 'a.cdn.example.com', which network_policies.cdn.endpoints[0] (host"
                            + " '*.cdn.example.com', tls: skip) relays without inspection, so this middleware would be"
                            + " bypassed; exclude those hosts or remove tls: skip");
        }

        @Test
        void failOpenConfigsAreRejectedToo() {
            assertEquals(1, rejected(CDN.formatted("fail_open", "")).errors().size());
        }

        @Test
        void anExclusionCoveringTheEndpointRemovesTheConflict() {
            assertTrue(load(CDN.formatted("fail_closed", "\"**.cdn.example.com\"")).warnings().isEmpty());
            PolicyException partial = rejected(CDN.formatted("fail_closed", "\"a*.cdn.example.com\""));
            assertTrue(onlyError(partial).message().startsWith("selects host 'b.cdn.example.com', which"),
                    partial::getMessage);
        }

        @Test
        void tcpAndHostlessEndpointsCount() {
            String tcp = """
                    version: 1
                    network_policies:
                      db:
                        endpoints: [{ host: db.example.com, port: 5432, protocol: tcp }]
                      raw:
                        endpoints: [{ allowed_ips: [10.0.0.0/8], port: 443, tls: skip }]
                    network_middlewares:
                      redact: { middleware: m, endpoints: { include: ["db.example.com"] } }
                    """;
            PolicyException e = rejected(tcp);
            assertEquals(List.of(
                    "selects host 'db.example.com', which network_policies.db.endpoints[0] (host 'db.example.com',"
                            + " protocol: tcp) relays without inspection, so this middleware would be bypassed;"
                            + " exclude those hosts or remove protocol: tcp",
                    "selects host 'db.example.com', which network_policies.raw.endpoints[0] (no host, tls: skip)"
                            + " relays without inspection, so this middleware would be bypassed; exclude those hosts"
                            + " or remove tls: skip"), e.errors().collect(ConfigProblem::message).castToList());
        }

        @Test
        void aSelectorTooComplexToDecideIsRejectedWithAMessage() {
            // ten exclusions over disjoint letters: about 4^10 joint label states, past the analysis budget
            StringBuilder exclude = new StringBuilder();
            String letters = "abcdefghijklmnopqrstuvwxyz0123";
            for (int i = 0; i < 10; i++) {
                exclude.append(i == 0 ? "" : ", ").append("'*").append(letters.charAt(3 * i)).append('*')
                        .append(letters.charAt(3 * i + 1)).append('*').append(letters.charAt(3 * i + 2))
                        .append("*.x'");
            }
            String yaml = "version: 1\nnetwork_policies:\n  raw:\n    endpoints: [{ host: '**', port: 443, tls: skip }]\n"
                    + "network_middlewares:\n  m:\n    middleware: m\n    endpoints:\n      include: ['**.x']\n"
                    + "      exclude: [" + exclude + "]\n";
            assertProblem(onlyError(rejected(yaml)), "network_middlewares.m.endpoints", 8, 5,
                    "could not decide within the analysis budget whether this selector overlaps"
                            + " network_policies.raw.endpoints[0] (host '**', tls: skip); simplify the wildcard"
                            + " patterns");
        }

        @Test
        void disjointSelectorsLoad() {
            SandboxPolicy p = load(CDN.replace("**.example.com", "api.example.com").formatted("fail_closed", ""))
                    .value();
            assertFalse(p.networkPolicies().get("cdn").endpoints().get(0).inspectable());
        }
    }

    @Nested
    class RefusedUpgrades {
        static final String API = """
                version: 1
                network_policies:
                  api:
                    endpoints:
                      - { host: "api.example.com", port: 443%s }
                network_middlewares:
                  redact:
                    middleware: openshell/regex
                    on_error: %s
                    endpoints:
                      include: ["**.example.com"]
                """;

        @Test
        void aFailClosedSelectorCoveringAnOrdinaryEndpointWarnsThatUpgradesWillBeRefused() {
            Loaded<SandboxPolicy> loaded = load(API.formatted("", "fail_closed"));
            assertProblem(loaded.warnings().getOnly(), "network_middlewares.redact.endpoints", 10, 5,
                    "selects host 'api.example.com' of network_policies.api.endpoints[0] (host 'api.example.com'),"
                            + " where protocol upgrades (WebSocket) will be refused: this config is fail_closed and"
                            + " the bytes after an upgrade are not inspected; set protocol: websocket or upgrades:"
                            + " allow_uninspected on the endpoint to allow them");
            NetworkEndpoint ep = loaded.value().networkPolicies().get("api").endpoints().getFirst();
            assertFalse(ep.upgradesAllowed());
        }

        @Test
        void websocketEndpointsOptedInEndpointsAndFailOpenConfigsDoNotWarn() {
            String ws = ", protocol: websocket, enforcement: enforce, access: read-write";
            for (String[] c : new String[][] {{ws, "fail_closed"},
                {", upgrades: allow_uninspected", "fail_closed"}, {"", "fail_open"}}) {
                Loaded<SandboxPolicy> loaded = load(API.formatted(c[0], c[1]));
                assertTrue(loaded.warnings().isEmpty(), () -> c[0] + " " + loaded.warnings());
            }
            NetworkEndpoint opted = load(API.formatted(", upgrades: allow_uninspected", "fail_closed")).value()
                    .networkPolicies().get("api").endpoints().getFirst();
            assertTrue(opted.upgradesAllowed());
            assertTrue(opted.upgradesOptedIn());
            NetworkEndpoint websocket = load(API.formatted(ws, "fail_closed")).value()
                    .networkPolicies().get("api").endpoints().getFirst();
            assertTrue(websocket.upgradesAllowed());
            assertFalse(websocket.upgradesOptedIn());
        }

        @Test
        void anUnknownUpgradesValueIsAnErrorAtItsPlace() {
            assertProblem(onlyError(rejected(API.formatted(", upgrades: allow", "fail_closed"))),
                    "network_policies.api.endpoints[0].upgrades", 5, 57, "unknown upgrades value 'allow'; expected"
                            + " allow_uninspected (without it, upgrades under a fail_closed middleware are refused)");
        }
    }

    @Nested
    class TraceOptIn {
        @Test
        void traceAllowIsKeptAndAnythingElseIsAnErrorAtItsPlace() {
            NetworkEndpoint opted = load(RefusedUpgrades.API.formatted(", trace: allow", "fail_open")).value()
                    .networkPolicies().get("api").endpoints().getFirst();
            assertTrue(opted.traceAllowed());
            NetworkEndpoint plain = load(RefusedUpgrades.API.formatted("", "fail_open")).value()
                    .networkPolicies().get("api").endpoints().getFirst();
            assertFalse(plain.traceAllowed(), "TRACE is answered 405 unless the endpoint opts in");
            assertProblem(onlyError(rejected(RefusedUpgrades.API.formatted(", trace: yes", "fail_open"))),
                    "network_policies.api.endpoints[0].trace", 5, 54, "unknown trace value 'yes'; expected allow"
                            + " (without it, TRACE is answered 405 by the supervisor)");
        }
    }

    @Nested
    class WithABindingCatalog {
        final AtomicReference<JsonObject> seen = new AtomicReference<>();
        final BindingCatalog catalog = BindingCatalog.of(
                BindingFacts.of(new BindingId("openshell/regex"), BindingFacts.OwnerKind.BUILTIN,
                        "dev.openshell.builtin.regex", 4_194_304, config -> {
                            seen.set(config);
                            return config.getString("mode", "redact").equals("redact")
                                    ? ConfigValidation.ok()
                                    : ConfigValidation.invalid("mode must be redact or block");
                        }),
                BindingFacts.of(new BindingId("openshell/rogue"), BindingFacts.OwnerKind.EXTERNAL, "rogue-svc",
                        1024, c -> ConfigValidation.ok()),
                BindingFacts.of(new BindingId("acme/anonymizer"), BindingFacts.OwnerKind.EXTERNAL, "anonymizer",
                        1024, c -> ConfigValidation.invalid("\u001b[31mbad pii level")),
                BindingFacts.of(new BindingId("acme/broken"), BindingFacts.OwnerKind.PLUGIN, "acme.broken",
                        1024, c -> {
                            throw new IllegalStateException("secret detail");
                        }));

        String policy(String id, String config) {
            return middleware("middleware: " + id + "\nconfig: " + config + "\nendpoints: {include: [a.com]}");
        }

        @Test
        void validConfigsLoadAndReachValidateConfig() {
            Loaded<SandboxPolicy> loaded = SandboxPolicyLoader.parse("p.yaml", policy("openshell/regex",
                    "{mode: redact}"), catalog);
            assertEquals("redact", seen.get().getString("mode"));
            assertTrue(loaded.warnings().isEmpty());
        }

        @Test
        void unknownBindingsAreRejected() {
            assertProblem(onlyError(rejected(policy("acme/missing", "{}"), catalog)),
                    "network_middlewares.a.middleware", 4, 17,
                    "no built-in, plugin or registered middleware service provides binding 'acme/missing'");
        }

        @Test
        void theOpenshellNamespaceIsOnlyForBuiltIns() {
            assertProblem(onlyError(rejected(policy("openshell/unknown", "{}"), catalog)),
                    "network_middlewares.a.middleware", 4, 17,
                    "binding 'openshell/unknown' is not a built-in of this supervisor; the openshell/ namespace is"
                            + " reserved for built-ins");
            assertProblem(onlyError(rejected(policy("openshell/rogue", "{}"), catalog)),
                    "network_middlewares.a.middleware", 4, 17,
                    "binding 'openshell/rogue' is provided by external service 'rogue-svc', but the openshell/"
                            + " namespace is reserved for built-ins");
        }

        @Test
        void builtInRejectionsShowTheirReason() {
            assertProblem(onlyError(rejected(policy("openshell/regex", "{mode: shout}"), catalog)),
                    "network_middlewares.a.config", 5, 5,
                    "rejected by built-in 'openshell/regex': mode must be redact or block");
        }

        @Test
        void externalRejectionsKeepTheirReasonApart() {
            ConfigProblem p = onlyError(rejected(policy("acme/anonymizer", "{pii: everything}"), catalog));
            assertProblem(p, "network_middlewares.a.config", 5, 5, "rejected by binding 'acme/anonymizer' of external"
                    + " service 'anonymizer' (its reason is untrusted text, shown separately)");
            assertEquals(Optional.of("[31mbad pii level"), p.untrustedDetail(), "control characters removed");
            assertFalse(p.describe().contains("bad pii level"));
        }

        @Test
        void aFailingValidatorIsAnErrorWithoutItsMessage() {
            ConfigProblem p = onlyError(rejected(policy("acme/broken", "{}"), catalog));
            assertProblem(p, "network_middlewares.a.config", 5, 5, "binding 'acme/broken' of plugin 'acme.broken' could"
                    + " not validate the config (IllegalStateException)");
        }

        @Test
        void withoutACatalogOnlyStructureIsChecked() {
            assertEquals(new BindingId("openshell/unknown"), load(policy("openshell/unknown", "{}")).value()
                    .networkMiddlewares().get("a").middleware());
        }
    }

    @Test
    void everyErrorInTheFileIsReportedAtOnceInFileOrder() {
        String yaml = """
                version: 1
                network_policies:
                  api:
                    endpoints:
                      - { host: "api..example.com", port: 70000 }
                network_middlewares:
                  a:
                    middleware: acme//x
                    on_error: maybe
                    endpoints: { include: [] }
                  b:
                    middleware: openshell/regex
                    endpoints: { include: ["*.example.com"] }
                """;
        PolicyException e = rejected(yaml);
        assertEquals(List.of(
                "p.yaml:5:17: error: network_policies.api.endpoints[0].host: invalid host pattern 'api..example.com':"
                        + " it has an empty DNS label (a leading, trailing or doubled '.')",
                "p.yaml:5:43: error: network_policies.api.endpoints[0].port: 70000 is outside 1..65535",
                "p.yaml:8:17: error: network_middlewares.a.middleware: invalid binding ID 'acme//x': path segments"
                        + " must not be empty",
                "p.yaml:9:15: error: network_middlewares.a.on_error: unknown on_error value 'maybe'; expected"
                        + " fail_closed or fail_open",
                "p.yaml:10:27: error: network_middlewares.a.endpoints.include: include must list at least one host"
                        + " pattern",
                "p.yaml:11:3: error: network_middlewares.b.order: order 0 (the default) is also used by"
                        + " network_middlewares.a; order values must be unique across the policy"),
                e.errors().collect(ConfigProblem::describe).castToList());
        assertTrue(e.getMessage().startsWith("p.yaml: 6 errors"), e.getMessage());
    }
}
