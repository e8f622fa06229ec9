package dev.openshell.supervisor.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code supervisor explain}: the JSON shape the issue fixes, the text form, and errors. */
class ExplainCommandTest {
    @TempDir
    Path dir;

    private Path plugins;
    private Path policy;

    @BeforeEach
    void setUp() throws IOException {
        plugins = Cli.pluginsWithTagger(dir);
        policy = dir.resolve("policy.yaml");
        Files.writeString(policy, Cli.POLICY);
    }

    private Cli.Run explain(String... rest) {
        List<String> args = new java.util.ArrayList<>(List.of("explain", "--policy", policy.toString(),
                "--plugins", plugins.toString(), "--gateway-config", Cli.pins(dir).toString()));
        args.addAll(List.of(rest));
        return Cli.run(args.toArray(String[]::new));
    }

    @Test
    void theL7DecisionNamesTheRuleBeforeTheChain() throws IOException {
        Files.writeString(policy, """
                version: 1
                network_policies:
                  github:
                    endpoints:
                      - {host: api.github.com, port: 443, protocol: rest, enforcement: enforce, access: read-only,
                         deny_rules: [{method: GET, path: /admin/**}]}
                      - {host: api.github.com, port: 443, path: /graphql, protocol: graphql, enforcement: audit,
                         access: read-only}
                """);
        JsonObject denied = explain("DELETE", "api.github.com/repos/o/r", "--format", "json").json();
        JsonObject l7 = denied.getJsonObject("l7");
        assertEquals("deny", l7.getString("outcome"));
        assertEquals("rest", l7.getString("protocol"));
        assertEquals("l7", l7.getString("engine"));
        assertEquals("github", l7.getString("policy"));
        assertEquals("DELETE /repos/o/r", l7.getString("rule"));
        assertEquals("DELETE /repos/o/r not permitted by policy", l7.getString("reason"));

        JsonObject allowed = explain("api.github.com:443", "--method", "HEAD", "--path", "/a/./b/../c",
                "--format", "json").json().getJsonObject("l7");
        assertEquals("allow", allowed.getString("outcome"));
        assertEquals("GET **", allowed.getString("rule"), "HEAD satisfies a GET rule");
        assertEquals("/a/c", allowed.getString("path"), "the canonical path");

        JsonObject deny = explain("HEAD", "api.github.com/admin/x", "--format", "json").json().getJsonObject("l7");
        assertEquals("GET /admin/**", deny.getString("rule"), "a deny rule on GET also denies HEAD");

        JsonObject body = explain("POST", "api.github.com/graphql", "--format", "json").json().getJsonObject("l7");
        assertEquals("body", body.getString("outcome"));
        assertEquals("l7-graphql", body.getString("engine"));

        Cli.Run text = explain("DELETE", "api.github.com/repos/o/r");
        assertTrue(text.out().contains("l7:        deny (rest, engine l7, policy 'github', path /repos/o/r) rule:"
                + " DELETE /repos/o/r; DELETE /repos/o/r not permitted by policy"), text.out());
    }

    @Test
    void jsonIsOneObjectOfExactlyTheDocumentedShape() {
        Cli.Run r = explain("api.example.com", "--format", "json");
        assertEquals(0, r.exit(), r.toString());
        JsonObject o = r.json();
        assertEquals(Set.of("admitted", "binary", "network_policy", "ssrf", "refusal", "policies", "l7", "chain",
                "response_stages", "not_selected"), o.keySet());
        assertEquals(0, o.getJsonArray("response_stages").size(), "no response binding in this policy");
        assertEquals(JsonValue.NULL, o.get("binary"));
        assertEquals(JsonValue.NULL, o.get("l7"), "no endpoint of the policy declares an L7 protocol");
        assertTrue(o.getBoolean("admitted"));
        assertEquals("not_resolved", o.getString("ssrf"), "a DNS name is resolved only with --resolve");
        assertEquals(JsonValue.NULL, o.get("refusal"));
        assertEquals("api", o.getString("network_policy"));
        assertEquals(1, o.getJsonArray("chain").size());
        JsonObject stage = o.getJsonArray("chain").getJsonObject(0);
        assertEquals(Set.of("config_key", "binding_id", "owner", "on_error", "order", "max_body_bytes",
                "websocket_messages"),
                stage.keySet());
        assertEquals("tag", stage.getString("config_key"));
        assertEquals("examples/tagger", stage.getString("binding_id"));
        assertEquals("plugin com.example.tagger", stage.getString("owner"));
        assertEquals("fail_closed", stage.getString("on_error"));
        assertEquals(10, stage.getInt("order"));
        assertEquals(65536, stage.getJsonNumber("max_body_bytes").longValue());
        JsonObject other = o.getJsonArray("not_selected").getJsonObject(0);
        assertEquals(Set.of("config_key", "reason"), other.keySet());
        assertEquals("other", other.getString("config_key"));
        assertEquals("no endpoints.include pattern matches api.example.com", other.getString("reason"));
    }

    @Test
    void aDestinationNoPolicyAdmitsHasANullNetworkPolicyAndNoChain() {
        Cli.Run r = explain("api.example.com:8443", "--format", "json");
        assertEquals(0, r.exit(), r.toString());
        JsonObject o = r.json();
        assertFalse(o.getBoolean("admitted"));
        assertEquals(JsonValue.NULL, o.get("network_policy"));
        assertEquals(0, o.getJsonArray("chain").size());
        assertEquals(2, o.getJsonArray("not_selected").size());
    }

    @Test
    void anExcludedHostNamesTheExcludePattern() {
        JsonObject o = explain("internal.example.com", "--format", "json").json();
        assertTrue(o.getJsonArray("not_selected").getValuesAs(JsonObject.class).stream()
                .anyMatch(n -> n.getString("config_key").equals("tag") && n.getString("reason")
                        .equals("endpoints.exclude pattern 'internal.example.com' removes internal.example.com")),
                o.toString());
    }

    @Test
    void textSaysTheSameForPeople() {
        Cli.Run r = explain("API.example.com:443", "--method", "POST", "--path", "/v1/chat");
        assertEquals(0, r.exit(), r.toString());
        List<String> lines = r.out().lines().toList();
        assertEquals("policy:    " + policy, lines.get(0));
        assertEquals("request:   POST /v1/chat to api.example.com:443", lines.get(1));
        assertEquals("admission: admitted by network policy 'api'", lines.get(2));
        assertEquals("network policies for api.example.com:443 (binary scoping):", lines.get(3));
        assertEquals("  api: any process", lines.get(4));
        assertTrue(lines.get(5).startsWith("ssrf:      not checked"), lines.get(5));
        assertEquals("l7:        none (no endpoint with an L7 protocol governs api.example.com:443; admitted at L4)",
                lines.get(6));
        assertTrue(lines.get(8).startsWith("  1. tag  order 10  binding examples/tagger  owner plugin "
                + "com.example.tagger  on_error fail_closed  max body 65536 bytes"), lines.get(8));
        assertTrue(r.out().contains("  other: no endpoints.include pattern matches api.example.com"), r.out());

        Cli.Run denied = explain("[2001:db8::1]:443");
        assertEquals(0, denied.exit(), denied.toString());
        assertTrue(denied.out().contains("NOT admitted: no network policy allows [2001:db8::1]:443"), denied.out());
    }

    @Test
    void binaryShowsWhichScopedPoliciesABinaryMatches() throws IOException {
        Path scoped = dir.resolve("scoped.yaml");
        Files.writeString(scoped, """
                version: 1
                network_policies:
                  gh_git:
                    endpoints: [{ host: github.com, port: 443 }]
                    binaries: [{ path: /opt/test/bin/git }]
                  gh_tools:
                    endpoints: [{ host: github.com, port: 443 }]
                    binaries: [{ path: "/opt/tools/*/bin/*" }]
                """);
        Cli.Run git = Cli.run("explain", "--policy", scoped.toString(), "--plugins", plugins.toString(),
                "github.com", "--binary", "/opt/test/bin/git");
        assertEquals(0, git.exit(), git.toString());
        assertTrue(git.out().contains("admission: admitted by network policy 'gh_git' for /opt/test/bin/git"),
                git.out());
        assertTrue(git.out().contains("  gh_git: only binaries /opt/test/bin/git  -> admits /opt/test/bin/git (entry"
                + " /opt/test/bin/git)"), git.out());
        assertTrue(git.out().contains("  gh_tools: only binaries /opt/tools/*/bin/*  -> does not admit"
                + " /opt/test/bin/git"), git.out());

        Cli.Run tool = Cli.run("explain", "--policy", scoped.toString(), "--plugins", plugins.toString(),
                "github.com", "--binary", "/opt/tools/gh/bin/gh", "--format", "json");
        JsonObject o = tool.json();
        assertTrue(o.getBoolean("admitted"));
        assertEquals("gh_tools", o.getString("network_policy"));
        assertEquals("/opt/tools/gh/bin/gh", o.getString("binary"));
        JsonObject first = o.getJsonArray("policies").getJsonObject(0);
        assertEquals("gh_git", first.getString("network_policy"));
        assertFalse(first.getBoolean("admits_binary"));
        assertEquals(JsonValue.NULL, first.get("matching_entry"));
        assertEquals("/opt/tools/*/bin/*", o.getJsonArray("policies").getJsonObject(1).getString("matching_entry"));

        Cli.Run python = Cli.run("explain", "--policy", scoped.toString(), "--plugins", plugins.toString(),
                "github.com", "--binary", "/opt/python/bin/python3");
        assertTrue(python.out().contains("admission: NOT admitted for /opt/python/bin/python3: no network policy"
                + " allows github.com:443 for this binary (403 policy_denied)"), python.out());

        Cli.Run any = Cli.run("explain", "--policy", scoped.toString(), "--plugins", plugins.toString(), "github.com");
        assertTrue(any.out().contains("admission: admitted by network policy 'gh_git'\n"), any.out());
        assertTrue(any.out().contains("--binary PATH decides for one"), any.out());
        assertEquals(2, Cli.run("explain", "--policy", scoped.toString(), "github.com", "--binary", "git").exit(),
                "a relative binary is a usage error");
    }

    @Test
        void ssrfProtectionIsAppliedWithTheGatewaysNetworkSettings() throws IOException {
        Files.writeString(policy, """
                version: 1
                network_policies:
                  local:
                    name: local
                    endpoints:
                      - host: localhost
                        port: 8080
                      - host: 127.0.0.1
                        port: 8080
                      - host: lan.test
                        port: 443
                      - host: 169.254.169.254
                        port: 80
                """);
        JsonObject loopback = explain("127.0.0.1:8080", "--format", "json").json();
        assertFalse(loopback.getBoolean("admitted"), loopback.toString());
        assertEquals("local", loopback.getString("network_policy"), "network policy admits it; SSRF refuses it");
        assertEquals("refused", loopback.getString("ssrf"));
        JsonObject refusal = loopback.getJsonObject("refusal");
        assertEquals("ssrf_blocked", refusal.getString("error"));
        assertEquals(403, refusal.getInt("status"));
        assertTrue(refusal.getString("detail").contains("loopback")
                && refusal.getString("detail").contains("allow_loopback_upstreams")
                && refusal.getString("detail").contains("docs/operators.md#try-it-locally"), refusal.toString());

        Cli.Run text = explain("127.0.0.1:8080");
        assertTrue(text.out().contains("ssrf:      BLOCKED (403 ssrf_blocked): the destination resolves to a "
                + "loopback address"), text.out());

        // the network settings go into the gateway configuration explain() passes (it pins the test plugin)
        Path gateway = Cli.pins(dir);
        Files.writeString(gateway, Files.readString(gateway) + """

                [openshell.supervisor.network]
                allow_loopback_upstreams = true

                [openshell.supervisor.network.static_hosts]
                "lan.test" = "10.1.2.3"
                """);
        Cli.Run withGateway = explain("127.0.0.1:8080", "--format", "json");
        assertEquals(0, withGateway.exit(), withGateway.toString());
        JsonObject allowed = withGateway.json();
        assertTrue(allowed.getBoolean("admitted"), allowed.toString());
        assertEquals("passed", allowed.getString("ssrf"));

        JsonObject lan = explain("lan.test", "--format", "json").json();
        assertEquals("refused", lan.getString("ssrf"), "a static host is checked as its address: " + lan);
        assertTrue(lan.getJsonObject("refusal").getString("detail").contains("private address"), lan.toString());

        JsonObject metadata = explain("169.254.169.254:80", "--format", "json").json();
        assertEquals("refused", metadata.getString("ssrf"), "metadata is never admitted: " + metadata);
    }

    @Test
    void theDefaultPolicyIsPrinted() throws IOException {
        Cli.Run printed = Cli.run("policy", "print-default");
        assertEquals(0, printed.exit());
        assertEquals(dev.openshell.supervisor.runtime.Supervisor.defaultPolicyText(), printed.out());
        Path out = dir.resolve("start.yaml");
        assertEquals(0, Cli.run("policy", "print-default", "--out", out.toString()).exit());
        assertEquals(printed.out(), Files.readString(out));
        Cli.Run again = Cli.run("policy", "print-default", "--out", out.toString());
        assertEquals(1, again.exit(), "an existing file is not replaced");
        assertTrue(again.err().contains("exists"), again.err());
    }

    @Test
    void anInvalidPolicyExitsOneWithEveryProblem() throws IOException {
        Files.writeString(policy, Cli.POLICY.replace("order: 20", "order: 10"));
        Cli.Run r = explain("api.example.com");
        assertEquals(1, r.exit(), r.toString());
        assertEquals("", r.out());
        assertTrue(r.err().startsWith("supervisor: cannot explain: " + policy + " is invalid"), r.err());
        assertTrue(r.err().contains(policy + ":"), r.err());
    }

    @Test
    void badDestinationsMethodsAndPathsAreUsageErrors() {
        for (String bad : List.of("api.example.com:0", "api.example.com:99999", "api.example.com:x", "/b",
                "[2001:db8::1", "[nothost]:443", "bad host")) {
            Cli.Run r = explain(bad);
            assertEquals(2, r.exit(), bad + ": " + r);
            assertTrue(r.err().contains("HOST[:PORT]"), r.err());
        }
        assertEquals(2, explain("api.example.com", "--method", "GET POST").exit());
        assertEquals(2, explain("api.example.com", "--path", "no-slash").exit());
        assertEquals(2, Cli.run("explain", "--policy", policy.toString()).exit(), "the destination is required");
    }
}
