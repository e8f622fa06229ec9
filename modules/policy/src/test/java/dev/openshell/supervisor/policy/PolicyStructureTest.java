package dev.openshell.supervisor.policy;

import static dev.openshell.supervisor.policy.PolicyValidationTest.assertProblem;
import static dev.openshell.supervisor.policy.PolicyValidationTest.load;
import static dev.openshell.supervisor.policy.PolicyValidationTest.onlyError;
import static dev.openshell.supervisor.policy.PolicyValidationTest.rejected;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.net.IpRange;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The document, network policies and endpoints: structure, defaults, warnings and the model's value equality. */
class PolicyStructureTest {
    static String endpoint(String fields) {
        return "version: 1\nnetwork_policies:\n  p:\n    endpoints:\n      - " + fields + "\n";
    }

    @Test
    void versionIsRequiredAndMustBeOne() {
        assertProblem(onlyError(rejected("network_policies: {}\n")), "", 1, 1,
                "version is required; this supervisor reads version: 1");
        assertProblem(onlyError(rejected("version: 2\n")), "version", 1, 10,
                "unsupported policy version 2; this supervisor reads version 1");
        assertProblem(onlyError(rejected("version: one\n")), "version", 1, 10, "expected an integer, found 'one'");
        assertProblem(onlyError(rejected("version: '1'\n")), "version", 1, 10, "expected an integer, found '1'");
    }

    @Test
    void theDocumentMustBeOneMapping() {
        assertProblem(onlyError(rejected("")), "", 0, 0, "the policy is empty; it must at least declare version: 1");
        assertProblem(onlyError(rejected("# only a comment\n")), "", 0, 0,
                "the policy is empty; it must at least declare version: 1");
        assertProblem(onlyError(rejected("- version: 1\n")), "", 1, 1, "expected a mapping, found a list");
        assertProblem(onlyError(rejected("version: 1\n---\nversion: 1\n")), "", 2, 1,
                "YAML syntax error: but found another document");
    }

    @Test
    void syntaxErrorsPointAtTheLine() {
        ConfigProblem p = onlyError(rejected("version: 1\nnetwork_policies:\n  p: {endpoints: [\n"));
        assertEquals(4, p.location().line());
        assertTrue(p.message().startsWith("YAML syntax error: "), p.message());
        ConfigProblem tab = onlyError(rejected("version: 1\nnetwork_policies:\n\tp: {}\n"));
        assertEquals(3, tab.location().line());
    }

    @Test
    void duplicateKeysAreErrors() {
        assertProblem(onlyError(rejected("version: 1\nversion: 1\n")), "version", 2, 1,
                "duplicate key 'version' (first given at line 1)");
    }

    @Test
    void unknownTopLevelKeysAreErrorsWithASuggestion() {
        assertProblem(onlyError(rejected("version: 1\nnetwork_policy: {}\n")), "network_policy", 2, 1,
                "unknown key 'network_policy' (did you mean 'network_policies'?); allowed keys: version,"
                        + " network_policies, network_middlewares, filesystem_policy, landlock, process");
    }

    @Test
    void unusedOpenShellSectionsAreWarningsWhateverTheyHold() {
        Loaded<SandboxPolicy> loaded = load("""
                version: 1
                filesystem_policy: {anything: [goes, here]}
                landlock: 42
                process: {run_as_user: sandbox}
                """);
        assertEquals(List.of("filesystem_policy", "landlock", "process"),
                loaded.warnings().collect(ConfigProblem::keyPath).castToList());
        assertTrue(loaded.warnings().allSatisfy(w -> w.message().equals(
                "not enforced by this supervisor, which mediates network egress only; the section is ignored")));
        assertEquals("p.yaml:3:1: warning: landlock: not enforced by this supervisor, which mediates network egress"
                + " only; the section is ignored", loaded.warnings().get(1).describe());
    }

    @Test
    void endpointDefaults() {
        NetworkEndpoint ep = load(endpoint("{ host: API.Example.com, port: 443 }")).value()
                .networkPolicies().get("p").endpoints().get(0);
        assertEquals("api.example.com", ep.host().orElseThrow().source());
        assertEquals(Enforcement.ENFORCE, ep.enforcement());
        assertEquals(TlsMode.TERMINATE, ep.tls());
        assertTrue(ep.protocol().isEmpty());
        assertTrue(ep.l7().isEmpty());
        assertTrue(ep.allowedIps().isEmpty());
        assertTrue(ep.admits("api.example.com", 443));
        assertTrue(!ep.admits("api.example.com", 80));
        assertEquals("p", load(endpoint("{ host: a.com, port: 1 }")).value().networkPolicies().get("p").name());
    }

    @Test
    void portsAreOneToFiftyFiveThousandAndGivenOnce() {
        assertProblem(onlyError(rejected(endpoint("{ host: a.com, port: 0 }"))),
                "network_policies.p.endpoints[0].port", 5, 30, "0 is outside 1..65535");
        assertProblem(onlyError(rejected(endpoint("{ host: a.com, port: 443, ports: [80] }"))),
                "network_policies.p.endpoints[0].ports", 5, 35, "give either port or ports, not both");
        assertProblem(onlyError(rejected(endpoint("{ host: a.com }"))), "network_policies.p.endpoints[0]", 5, 9,
                "port or ports is required");
        assertProblem(onlyError(rejected(endpoint("{ host: a.com, ports: [] }"))),
                "network_policies.p.endpoints[0].ports", 5, 31, "ports must list at least one port");
        assertProblem(onlyError(rejected(endpoint("{ host: a.com, ports: [80, 70000] }"))),
                "network_policies.p.endpoints[0].ports[1]", 5, 36, "70000 is outside 1..65535");
        assertEquals(List.of(80, 443), load(endpoint("{ host: a.com, ports: [443, 80, 443] }")).value()
                .networkPolicies().get("p").endpoints().get(0).ports().collect(i -> i).castToList());
    }

    @Test
    void enumeratedEndpointValues() {
        assertProblem(onlyError(rejected(endpoint("{ host: a.com, port: 1, protocol: ftp }"))),
                "network_policies.p.endpoints[0].protocol", 5, 43,
                "unknown protocol 'ftp'; expected one of: rest, graphql, json-rpc, mcp, websocket, sql, tcp");
        assertProblem(onlyError(rejected(endpoint("{ host: a.com, port: 1, tls: skp }"))),
                "network_policies.p.endpoints[0].tls", 5, 38,
                "unknown tls value 'skp'; expected skip (terminate and passthrough are deprecated and have no effect)");
        assertProblem(onlyError(rejected(endpoint("{ host: a.com, port: 1, protocol: rest, enforcement: block,"
                        + " access: full }"))),
                "network_policies.p.endpoints[0].enforcement", 5, 62,
                "unknown enforcement value 'block'; expected enforce or audit");
        assertProblem(onlyError(rejected(endpoint("{ host: a.com, port: 1, protocol: rest, enforcement: audit,"
                        + " access: read }"))),
                "network_policies.p.endpoints[0].access", 5, 77,
                "unknown access value 'read'; expected read-only, read-write or full");
        NetworkEndpoint ep = load(endpoint("{ host: a.com, port: 1, protocol: JSON-RPC, enforcement: audit,"
                + " rules: [{allow: {method: '*'}}] }")).value().networkPolicies().get("p").endpoints()
                .get(0);
        assertEquals(EndpointProtocol.JSON_RPC, ep.protocol().orElseThrow());
        assertEquals(Enforcement.AUDIT, ep.enforcement());
        assertEquals("*", ep.l7().orElseThrow().allow().getOnly().source());
        assertEquals(TlsMode.SKIP, load(endpoint("{ host: a.com, port: 1, tls: skip }")).value().networkPolicies()
                .get("p").endpoints().get(0).tls());
    }

    @Test
    void deprecatedTlsModesWarn() {
        Loaded<SandboxPolicy> loaded = load(endpoint("{ host: a.com, port: 1, tls: passthrough }"));
        assertEquals("tls: passthrough is deprecated and has no effect: the supervisor terminates TLS unless tls: skip",
                loaded.warnings().getOnly().message());
        assertEquals(TlsMode.TERMINATE, loaded.value().networkPolicies().get("p").endpoints().get(0).tls());
    }

    @Test
    void allowedIpsAreCidrsOutsideLoopbackLinkLocalAndUnspecified() {
        NetworkEndpoint ep = load(endpoint("{ host: db.internal, port: 5432, allowed_ips: [10.0.0.0/8, 192.168.1.7,"
                + " 'fd00::/8'] }")).value().networkPolicies().get("p").endpoints().get(0);
        assertEquals(List.of("10.0.0.0/8", "192.168.1.7/32", "fd00:0:0:0:0:0:0:0/8"),
                ep.allowedIps().collect(IpRange::toString).castToList());
        assertProblem(onlyError(rejected(endpoint("{ host: a.com, port: 1, allowed_ips: [127.0.0.1] }"))),
                "network_policies.p.endpoints[0].allowed_ips[0]", 5, 47, "address range '127.0.0.1' includes loopback"
                        + " addresses (127.0.0.0/8), which allowed_ips never exempts");
        assertProblem(onlyError(rejected(endpoint("{ host: a.com, port: 1, allowed_ips: [0.0.0.0/0] }"))),
                "network_policies.p.endpoints[0].allowed_ips[0]", 5, 47, "address range '0.0.0.0/0' includes loopback"
                        + " addresses (127.0.0.0/8), which allowed_ips never exempts");
        assertProblem(onlyError(rejected(endpoint("{ host: a.com, port: 1, allowed_ips: ['fe80::1'] }"))),
                "network_policies.p.endpoints[0].allowed_ips[0]", 5, 47, "address range 'fe80::1' includes link-local"
                        + " addresses (fe80::/10), which allowed_ips never exempts");
        assertProblem(onlyError(rejected(endpoint("{ host: a.com, port: 1, allowed_ips: [10.0.0.0/33] }"))),
                "network_policies.p.endpoints[0].allowed_ips[0]", 5, 47,
                "invalid address range '10.0.0.0/33': the prefix length must be a number from 0 to 32");
        assertProblem(onlyError(rejected(endpoint("{ host: a.com, port: 1, allowed_ips: [intranet] }"))),
                "network_policies.p.endpoints[0].allowed_ips[0]", 5, 47,
                "invalid address range 'intranet': it is not an IPv4 or IPv6 address");
    }

    @Test
    void hostlessEndpointsNeedAllowedIps() {
        assertProblem(onlyError(rejected(endpoint("{ port: 443 }"))), "network_policies.p.endpoints[0]", 5, 9,
                "host is required unless allowed_ips names the destination addresses");
        NetworkEndpoint ep = load(endpoint("{ port: 443, allowed_ips: [10.1.0.0/16] }")).value()
                .networkPolicies().get("p").endpoints().get(0);
        assertTrue(ep.host().isEmpty());
        assertEquals("**", ep.reachableHosts().source());
    }

    @Test
    void openShellL7SettingsAreInterpretedWithoutWarnings() {
        Loaded<SandboxPolicy> loaded = load(endpoint("{ host: a.com, port: 443, protocol: mcp, path: /mcp,"
                + " enforcement: enforce, mcp: { max_body_bytes: 131072 }, rules: [{allow: {method: initialize}}],"
                + " deny_rules: [{method: tools/call, tool: drop_*}] }"));
        NetworkEndpoint ep = loaded.value().networkPolicies().get("p").endpoints().get(0);
        L7Endpoint l7 = ep.l7().orElseThrow();
        assertEquals("/mcp", l7.path().orElseThrow().source());
        assertEquals(131072, l7.maxBodyBytes());
        assertEquals("tools/call tool=drop_*", l7.deny().getOnly().source());
        assertTrue(loaded.warnings().isEmpty(), () -> loaded.warnings().toString());
    }

    @Test
    void unknownEndpointKeysAreErrors() {
        assertTrue(onlyError(rejected(endpoint("{ host: a.com, port: 1, hots: b.com }"))).message()
                .startsWith("unknown key 'hots' (did you mean 'host'?); allowed keys: host, port, ports, protocol,"));
    }

    @Test
    void binariesLoadWithoutWarnings() {
        Loaded<SandboxPolicy> loaded = load("""
                version: 1
                network_policies:
                  gh:
                    endpoints: [{ host: api.github.com, port: 443 }]
                    binaries:
                      - { path: /nonexistent/bin/curl }
                      - { path: /nonexistent/bin/git, harness: true }
                      - { path: "/home/*/.local/bin/copilot" }
                """);
        NetworkPolicy gh = loaded.value().networkPolicies().get("gh");
        assertEquals(List.of("/nonexistent/bin/curl", "/nonexistent/bin/git", "/home/*/.local/bin/copilot"),
                gh.binaries().collect(BinaryPattern::source).castToList());
        assertTrue(gh.binaryScoped());
        assertTrue(gh.binaries().get(2).isGlob());
        assertTrue(loaded.warnings().isEmpty(), () -> loaded.warnings().toString());
        assertProblem(onlyError(rejected("""
                version: 1
                network_policies:
                  gh:
                    binaries: [{ harness: true }]
                """)), "network_policies.gh.binaries[0]", 4, 16, "path is required");
    }

    @Test
    void badBinaryPathsAreErrorsAtTheirValue() {
        assertProblem(onlyError(rejected("""
                version: 1
                network_policies:
                  gh:
                    binaries: [{ path: curl }]
                """)), "network_policies.gh.binaries[0].path", 4, 24, "a binary path must be absolute, as the kernel"
                + " reports executables (or a glob such as **/curl)");
        assertProblem(onlyError(rejected("""
                version: 1
                network_policies:
                  gh:
                    binaries: [{ path: "/usr/bin/[ab*" }]
                """)), "network_policies.gh.binaries[0].path", 4, 24,
                "invalid binary glob: unclosed '[' at character 10");
        assertProblem(onlyError(rejected("""
                version: 1
                network_policies:
                  gh:
                    binaries: [{ path: "" }]
                """)), "network_policies.gh.binaries[0].path", 4, 24, "a binary path must not be empty");
    }

    @Test
    void aSymlinkedBinaryPathIsResolvedAndBothAreKept(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws java.io.IOException {
        java.nio.file.Path real = java.nio.file.Files.writeString(dir.resolve("python3.11"), "#!");
        java.nio.file.Path link = java.nio.file.Files.createSymbolicLink(dir.resolve("python3"), real.getFileName());
        Loaded<SandboxPolicy> loaded = load("""
                version: 1
                network_policies:
                  py:
                    endpoints: [{ host: pypi.org, port: 443 }]
                    binaries: [{ path: "%s" }]
                """.formatted(link));
        BinaryPattern b = loaded.value().networkPolicies().get("py").binaries().getOnly();
        assertEquals(link.toString(), b.source());
        assertEquals(java.util.Optional.of(real.toRealPath().toString()), b.resolved());
        assertTrue(b.matches(link.toString()));
        assertTrue(b.matches(real.toRealPath().toString()));
        assertFalse(b.matches(dir.resolve("python3.12").toString()));
    }

    @Test
    void equalPoliciesCompareEqualWhateverTheirLayout() {
        String block = """
                version: 1
                # comment
                network_policies:
                  api:
                    endpoints:
                      - host: api.example.com
                        ports: [443, 80]
                network_middlewares:
                  redact:
                    middleware: openshell/regex
                    order: 10
                    config: {mode: redact, terms: [a, b]}
                    endpoints:
                      include: ["*.Example.com"]
                """;
        String flow = """
                network_middlewares: {redact: {order: 10, endpoints: {include: ["*.example.com"]},
                  config: {terms: [a, b], mode: redact}, middleware: openshell/regex, on_error: fail_closed}}
                network_policies: {api: {name: api, endpoints: [{host: API.example.com, ports: [80, 443]}]}}
                version: 1
                """;
        SandboxPolicy a = load(block).value();
        SandboxPolicy b = load(flow).value();
        assertEquals(a, b);
        assertEquals(a.hashCode(), b.hashCode());

        SandboxPolicy changedMiddleware = load(block.replace("mode: redact", "mode: block")).value();
        assertNotEquals(a, changedMiddleware);
        assertEquals(a.networkPolicies(), changedMiddleware.networkPolicies());
        assertNotEquals(a.networkMiddlewares(), changedMiddleware.networkMiddlewares());
    }

    @Test
    void chainsAreSelectedByHostAndSortedByOrder() {
        SandboxPolicy p = load("""
                version: 1
                network_middlewares:
                  export-traces: {middleware: acme/trace-exporter, order: 30, on_error: fail_open,
                                  endpoints: {include: [api.example.com]}}
                  regex-redactor: {middleware: openshell/regex, order: 10,
                                   endpoints: {include: ["*.example.com"], exclude: [trusted.example.com]}}
                  anonymize: {middleware: acme/anonymizer, order: 20, endpoints: {include: [api.example.com]}}
                """).value();
        assertEquals(List.of("regex-redactor", "anonymize", "export-traces"),
                p.middlewaresFor("api.example.com").collect(NetworkMiddlewareConfig::key).castToList());
        assertTrue(p.middlewaresFor("trusted.example.com").isEmpty());
        assertEquals(List.of("regex-redactor"),
                p.middlewaresFor("www.example.com").collect(NetworkMiddlewareConfig::key).castToList());
        assertEquals(List.of("regex-redactor"),
                p.middlewaresFor(HostPattern.canonicalHost("WWW.example.com.")).collect(NetworkMiddlewareConfig::key)
                        .castToList());
        assertTrue(p.networkMiddlewares().get("anonymize").toString().contains("acme/anonymizer"));
    }

    @Test
    void filesAreReadStrictly(@TempDir Path dir) throws IOException {
        Path missing = dir.resolve("missing.yaml");
        PolicyException e = assertThrows(PolicyException.class, () -> SandboxPolicyLoader.load(missing));
        assertEquals(missing + ": error: cannot read the file: it does not exist", e.errors().getOnly().describe());

        Path latin1 = dir.resolve("latin1.yaml");
        Files.write(latin1, "version: 1\n# caf\u00e9\n".getBytes(StandardCharsets.ISO_8859_1));
        assertEquals("the file is not valid UTF-8",
                assertThrows(PolicyException.class, () -> SandboxPolicyLoader.load(latin1)).errors().getOnly()
                        .message());

        Path bom = dir.resolve("bom.yaml");
        Files.writeString(bom, "\uFEFFversion: 1\n");
        assertEquals(1, SandboxPolicyLoader.load(bom).value().version());

        Path big = dir.resolve("big.yaml");
        Files.write(big, new byte[4 * 1024 * 1024 + 1]);
        assertEquals("the file is 4194305 bytes; the limit is 4194304 bytes",
                assertThrows(PolicyException.class, () -> SandboxPolicyLoader.load(big)).errors().getOnly()
                        .message());

        assertEquals("cannot read the file: it is a directory",
                assertThrows(PolicyException.class, () -> SandboxPolicyLoader.load(dir)).errors().getOnly()
                        .message());
    }

    @Test
    void aliasBombsAreRefused() {
        ConfigProblem tooManyAliases = onlyError(rejected(aliasBomb(8)));
        assertEquals("YAML error: Number of aliases for non-scalar nodes exceeds the specified max=50",
                tooManyAliases.message());
        ConfigProblem tooManyValues = onlyError(rejected(aliasBomb(5)));
        assertEquals("expands to more than 100000 values (through aliases)", tooManyValues.message());
        assertTrue(tooManyValues.keyPath().startsWith("network_middlewares.a.config.l4["), tooManyValues::keyPath);
    }

    /** A config where each level lists the previous level ten times: 10^levels leaves from 10 * levels aliases. */
    private static String aliasBomb(int levels) {
        StringBuilder yaml = new StringBuilder("version: 1\nnetwork_middlewares:\n  a:\n    middleware: m\n"
                + "    endpoints: {include: [a.com]}\n    config:\n      l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
        for (int i = 1; i < levels; i++) {
            yaml.append("      l").append(i).append(": &l").append(i).append(" [");
            for (int k = 0; k < 10; k++) {
                yaml.append(k == 0 ? "" : ", ").append("*l").append(i - 1);
            }
            yaml.append("]\n");
        }
        return yaml.toString();
    }
}
