package dev.openshell.supervisor.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareManifest;
import dev.openshell.middleware.spi.Operation;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.host.HostCapabilities;
import dev.openshell.middleware.spi.host.OutboundRequest;
import dev.openshell.middleware.spi.host.RestrictedMiddlewareProvider;
import dev.openshell.supervisor.engine.PluginFailure;
import dev.openshell.supervisor.engine.ProviderOrigin;
import dev.openshell.supervisor.engine.ProviderRegistry;
import dev.openshell.supervisor.engine.RegisteredBinding;
import dev.openshell.supervisor.policy.SandboxPolicy;
import dev.openshell.supervisor.policy.SandboxPolicyLoader;
import dev.openshell.supervisor.policy.gateway.GatewayConfig;
import dev.openshell.supervisor.policy.gateway.GatewayConfigLoader;
import jakarta.json.JsonObject;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@code supervisor explain}'s model: admission, the chain in run order, and why other configs do not run. */
class ExplanationTest {
    /** A provider that accepts any config and allows every request. */
    private static class Fake implements dev.openshell.middleware.spi.MiddlewareProvider {
        private final MiddlewareBinding binding;

        Fake(MiddlewareBinding binding) {
            this.binding = binding;
        }

        @Override
        public MiddlewareManifest manifest() {
            return new MiddlewareManifest("fake", "1", List.of(binding));
        }

        @Override
        public ConfigValidation validateConfig(BindingId bindingId, JsonObject config) {
            return ConfigValidation.ok();
        }

        @Override
        public HttpRequestResult evaluate(HttpRequestEvaluation evaluation) {
            return HttpRequestResult.builder(Decision.ALLOW).build();
        }
    }

    /** A restricted post-credentials provider, as a signing built-in is. */
    private static final class Signer extends Fake implements RestrictedMiddlewareProvider {
        Signer(MiddlewareBinding b) {
            super(b);
        }

        @Override
        public void bind(HostCapabilities capabilities) {
        }

        @Override
        public OutboundRequest evaluatePostCredentials(BindingId bindingId, JsonObject config,
                                                       OutboundRequest request) {
            return request;
        }
    }

    private static final GatewayConfig GATEWAY = GatewayConfigLoader.parse("gateway.toml", """
            [[openshell.supervisor.middleware]]
            name = "pii-svc"
            grpc_endpoint = "https://pii.internal:443"
            max_body_bytes = 65536
            """, Path.of("/")).value();

    private static final ProviderRegistry REGISTRY;

    static {
        List<RegisteredBinding> claims = new ArrayList<>();
        MiddlewareBinding regex = MiddlewareBinding.httpRequest("openshell/regex", 4 * 1024 * 1024);
        claims.add(new RegisteredBinding(regex, new Fake(regex), "regex", ProviderOrigin.builtIn("dev.openshell.builtin.regex")));
        MiddlewareBinding sign = new MiddlewareBinding(new BindingId("openshell/sign"), Operation.HTTP_REQUEST,
                Phase.POST_CREDENTIALS, 1024 * 1024, Optional.empty());
        claims.add(new RegisteredBinding(sign, new Signer(sign), "sign", ProviderOrigin.builtIn("dev.openshell.builtin.sigv4")));
        MiddlewareBinding tagger = MiddlewareBinding.httpRequest("examples/tagger", 64 * 1024);
        claims.add(new RegisteredBinding(tagger, new Fake(tagger), "tagger",
                ProviderOrigin.plugin("com.example.tagger", "example-tagger.jar")));
        MiddlewareBinding pii = MiddlewareBinding.httpRequest("acme/pii", 1024 * 1024);
        claims.add(new RegisteredBinding(pii, new Fake(pii), "pii", new ProviderOrigin(ProviderOrigin.Kind.EXTERNAL,
                "pii-svc", Optional.of("https://pii.internal:443"))));
        MiddlewareBinding piiResponse = MiddlewareBinding.httpResponse("acme/pii", 1024 * 1024);
        claims.add(new RegisteredBinding(piiResponse, new Fake(piiResponse), "pii", new ProviderOrigin(
                ProviderOrigin.Kind.EXTERNAL, "pii-svc", Optional.of("https://pii.internal:443"))));
        List<PluginFailure> failures = new ArrayList<>();
        REGISTRY = ProviderRegistry.assemble(claims, failures);
        assertEquals(List.of(), failures);
    }

    private static final SandboxPolicy POLICY = SandboxPolicyLoader.parse("policy.yaml", """
            version: 1
            network_policies:
              models:
                name: model APIs
                endpoints:
                  - host: "*.model.example"
                    port: 443
              storage:
                name: storage
                endpoints:
                  - host: s3.example
                    port: 443
            network_middlewares:
              sign:
                middleware: openshell/sign
                order: 5
                endpoints:
                  include: ["s3.example"]
              pii:
                middleware: acme/pii
                order: 30
                on_error: fail_open
                config: { level: strict }
                endpoints:
                  include: ["*.model.example"]
              secrets:
                middleware: openshell/regex
                order: 10
                config: { mode: redact }
                endpoints:
                  include: ["**"]
              tag:
                middleware: examples/tagger
                order: 20
                config: { tag: t }
                endpoints:
                  include: ["*.model.example"]
                  exclude: ["internal.model.example"]
            """, ConnectedRegistry.catalog(REGISTRY)).value();

    @Test
    void anAdmittedHostGetsEverySelectedStageInOrderWithOwnersAndEffectiveLimits() {
        Explanation x = Explanation.of(POLICY, GATEWAY, REGISTRY, "API.Model.Example.", 443);
        assertTrue(x.admitted());
        assertEquals(Optional.of("models"), x.networkPolicy());
        assertEquals("api.model.example", x.host(), "canonicalised as the proxy does");
        assertEquals(List.of(
                new Explanation.Stage("secrets", "openshell/regex", "built-in dev.openshell.builtin.regex",
                        "fail_closed", 10, 4 * 1024 * 1024, false),
                new Explanation.Stage("tag", "examples/tagger", "plugin com.example.tagger", "fail_closed", 20,
                        64 * 1024, false),
                new Explanation.Stage("pii", "acme/pii", "external service pii-svc", "fail_open", 30, 65536, false)),
                x.chain(), "the registration's max_body_bytes lowers the service's 1 MiB");
        assertEquals(List.of(new Explanation.NotSelected("sign", "no endpoints.include pattern matches "
                + "api.model.example")), x.notSelected());
    }

    @Test
    void aBindingIdWithAResponseBindingAddsAResponseStageBesideItsRequestStage() {
        Explanation x = Explanation.of(POLICY, GATEWAY, REGISTRY, "api.model.example", 443);
        assertEquals(List.of(new Explanation.Stage("pii", "acme/pii", "external service pii-svc", "fail_open", 30,
                65536, false)), x.responses(), "the response binding of acme/pii, with the registration's limit");
        assertTrue(x.chain().stream().anyMatch(st -> st.configKey().equals("pii")), "and its request binding");
        assertEquals(List.of(), Explanation.of(POLICY, GATEWAY, REGISTRY, "s3.example", 443).responses());
    }

    @Test
    void anExcludePatternIsNamed() {
        Explanation x = Explanation.of(POLICY, GATEWAY, REGISTRY, "internal.model.example", 443);
        assertEquals(List.of("secrets", "pii"), x.chain().stream().map(Explanation.Stage::configKey).toList());
        assertTrue(x.notSelected().contains(new Explanation.NotSelected("tag",
                "endpoints.exclude pattern 'internal.model.example' removes internal.model.example")), x.toString());
    }

    @Test
    void postCredentialsStagesComeAfterThePreCredentialsStagesWhateverTheirOrder() {
        Explanation x = Explanation.of(POLICY, GATEWAY, REGISTRY, "s3.example", 443);
        assertEquals(Optional.of("storage"), x.networkPolicy());
        assertEquals(List.of("secrets", "sign"), x.chain().stream().map(Explanation.Stage::configKey).toList());
        assertTrue(x.chain().get(1).postCredentials());
        assertEquals(5, x.chain().get(1).order());
    }

    @Test
    void aHostNoNetworkPolicyAdmitsRunsNothingAndSaysWhy() {
        Explanation x = Explanation.of(POLICY, GATEWAY, REGISTRY, "api.model.example", 8443);
        assertFalse(x.admitted());
        assertEquals(Optional.empty(), x.networkPolicy());
        assertEquals(List.of(), x.chain());
        assertEquals(List.of("sign", "secrets", "tag", "pii"),
                x.notSelected().stream().map(Explanation.NotSelected::configKey).toList(), "every config, in order");
        assertTrue(x.notSelected().get(1).reason().contains("no network policy admits api.model.example:8443"),
                x.notSelected().get(1).reason());
        assertTrue(x.notSelected().get(0).reason().startsWith("no endpoints.include"), "selector reasons first");
    }

    @Test
    void aBindingOnlyASkippedServiceCouldProvideIsReportedAsUnchecked() {
        Explanation x = Explanation.of(POLICY, GATEWAY, ProviderRegistry.empty(), "api.model.example", 443);
        assertTrue(x.chain().stream().allMatch(s -> s.owner().equals("external service "
                + ConnectedRegistry.UNCHECKED_OWNER)), x.chain().toString());
    }

    @Test
    void badPortsAndHostsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> Explanation.of(POLICY, GATEWAY, REGISTRY, "a.b", 0));
        assertThrows(IllegalArgumentException.class, () -> Explanation.of(POLICY, GATEWAY, REGISTRY, "a.b", 65536));
        assertThrows(IllegalArgumentException.class, () -> Explanation.of(POLICY, GATEWAY, REGISTRY, "", 443));
    }
}
