package dev.openshell.supervisor.policy;

import dev.openshell.middleware.spi.internal.OnError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.BindingId;

import java.util.List;

import org.eclipse.collections.api.list.ImmutableList;
import org.junit.jupiter.api.Test;

/** The OpenShell example policies and the benchmark policies load unchanged, with warnings only. */
class ReferencePolicyTest {
    private static Loaded<SandboxPolicy> load(String relative) {
        try {
            return SandboxPolicyLoader.load(SharedFiles.require(relative));
        } catch (PolicyException e) {
            throw new AssertionError("expected " + relative + " to load: " + e.getMessage(), e);
        }
    }

    private static List<String> warnings(Loaded<?> loaded) {
        return loaded.warnings().collect(p -> p.keyPath() + ": " + p.message()).castToList();
    }

    @Test
    void contentGuardExampleLoadsWithoutWarnings() {
        Loaded<SandboxPolicy> loaded = load("reference/openshell-policies/policy_example_content_guard.yaml");
        SandboxPolicy policy = loaded.value();
        String audits = ": enforcement is not given, so this supervisor enforces the L7 rules (OpenShell audits here;"
                + " write enforcement: audit to match it)";
        assertEquals(List.of(
                "network_middlewares.prototype-content-guard.endpoints: selects host 'httpbin.org' of"
                        + " network_policies.httpbin.endpoints[0] (host 'httpbin.org'), where protocol upgrades"
                        + " (WebSocket) will be refused: this config is fail_closed and the bytes after an upgrade are"
                        + " not inspected; set protocol: websocket or upgrades: allow_uninspected on the endpoint to"
                        + " allow them",
                "network_policies.httpbin.endpoints[0]" + audits,
                "network_policies.httpbingo.endpoints[0]" + audits), warnings(loaded),
                "binaries and L7 rules are enforced: only the omitted enforcement and the upgrade warnings");
        assertTrue(loaded.warnings().allSatisfy(w -> w.location().hasLine()));

        NetworkMiddlewareConfig guard = policy.networkMiddlewares().get("prototype-content-guard");
        assertEquals("Prototype content guard", guard.name());
        assertEquals(new BindingId("content-guard-example"), guard.middleware());
        assertEquals(10, guard.order());
        assertEquals(OnError.FAIL_CLOSED, guard.onError());
        assertEquals("redact", guard.config().getString("mode"));
        assertEquals(List.of("prototype-secret", "internal-only"),
                guard.config().getJsonArray("terms").getValuesAs(jakarta.json.JsonString::getString));
        assertEquals("[FILTERED]", guard.config().getString("replacement"));
        assertEquals("include=httpbin.org;exclude=", guard.endpoints().toString());

        NetworkPolicy httpbin = policy.networkPolicies().get("httpbin");
        assertEquals(List.of("/usr/bin/curl"), httpbin.binaries().collect(BinaryPattern::source).castToList());
        NetworkEndpoint ep = httpbin.endpoints().getOnly();
        assertEquals("httpbin.org", ep.host().orElseThrow().source());
        assertEquals(443, ep.ports().get(0));
        assertEquals(EndpointProtocol.REST, ep.protocol().orElseThrow());
        assertEquals(1, ep.l7().orElseThrow().allow().size());
        assertEquals("POST", ep.l7().orElseThrow().allow().getOnly().method().orElseThrow());
        assertTrue(ep.inspectable());

        ImmutableList<NetworkMiddlewareConfig> chain = policy.middlewaresFor("httpbin.org");
        assertEquals(List.of("prototype-content-guard"), chain.collect(NetworkMiddlewareConfig::key).castToList());
        assertTrue(policy.middlewaresFor("httpbingo.org").isEmpty());
    }

    @Test
    void quickstartExampleLoadsWithUnusedSectionWarnings() {
        Loaded<SandboxPolicy> loaded = load("reference/openshell-policies/policy_example_quickstart.yaml");
        assertEquals(List.of(
                "filesystem_policy: not enforced by this supervisor, which mediates network egress only; the section"
                        + " is ignored",
                "landlock: not enforced by this supervisor, which mediates network egress only; the section is"
                        + " ignored"), warnings(loaded), "L7 rules are enforced: no warning for them");
        NetworkEndpoint ep = loaded.value().networkPolicies().get("github_api").endpoints().getOnly();
        assertEquals("github-api-readonly", loaded.value().networkPolicies().get("github_api").name());
        assertEquals(List.of("GET **", "HEAD **", "OPTIONS **"),
                ep.l7().orElseThrow().allow().collect(L7Rule::source).castToList());
        assertEquals(Enforcement.ENFORCE, ep.enforcement());
        assertFalse(loaded.value().hasMiddleware());
    }

    @Test
    void benchmarkPoliciesLoadWithOnlyTheRefusedUpgradeWarning() {
        Loaded<SandboxPolicy> withMiddleware = load("bench-peers/conf/sup-policy.yaml");
        Loaded<SandboxPolicy> without = load("bench-peers/conf/sup-policy-nomw.yaml");
        assertEquals(List.of("network_middlewares.secrets.endpoints: selects host '127.0.0.1' of"
                + " network_policies.upstream.endpoints[0] (host '127.0.0.1'), where protocol upgrades (WebSocket) will"
                + " be refused: this config is fail_closed and the bytes after an upgrade are not inspected; set"
                + " protocol: websocket or upgrades: allow_uninspected on the endpoint to allow them"),
                warnings(withMiddleware));
        assertTrue(without.warnings().isEmpty());
        NetworkMiddlewareConfig secrets = withMiddleware.value().networkMiddlewares().get("secrets");
        assertEquals(new BindingId("openshell/regex"), secrets.middleware());
        assertEquals("secrets", secrets.name(), "the name defaults to the config key");
        assertTrue(secrets.selects("127.0.0.1"));
        assertEquals(18080, without.value().networkPolicies().get("upstream").endpoints().getOnly().ports().get(0));
        assertEquals(withMiddleware.value().networkPolicies(), without.value().networkPolicies(),
                "the two files differ only in their middleware");
    }
}
