package dev.openshell.supervisor.runtime;

import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.host.RestrictedMiddlewareProvider;
import dev.openshell.supervisor.engine.ProviderOrigin;
import dev.openshell.supervisor.engine.ProviderRegistry;
import dev.openshell.supervisor.engine.RegisteredBinding;
import dev.openshell.supervisor.engine.chain.ChainEngine;
import dev.openshell.supervisor.engine.chain.ChainSelector;
import dev.openshell.supervisor.engine.chain.Provenance;
import dev.openshell.supervisor.engine.chain.StageSpec;
import dev.openshell.supervisor.engine.credentials.Credential;
import dev.openshell.supervisor.engine.credentials.CredentialInjector;
import dev.openshell.supervisor.engine.credentials.CredentialSources;
import dev.openshell.supervisor.policy.NetworkMiddlewareConfig;
import dev.openshell.supervisor.policy.SandboxPolicy;
import dev.openshell.supervisor.policy.gateway.CredentialRule;
import dev.openshell.supervisor.policy.gateway.CredentialSource;
import dev.openshell.supervisor.policy.gateway.GatewayConfig;
import dev.openshell.supervisor.policy.gateway.MiddlewareRegistration;
import dev.openshell.supervisor.proxy.AdmissionDecision;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * One complete, immutable runtime: the sandbox policy, the gateway configuration and the provider registry, compiled
 * into what the hot path needs (RFC 0009, "Registration and delivery": runtime changes are prepared off to the side
 * and swapped as one generation only after the complete candidate is ready).
 *
 * <ul>
 *   <li>Pre-credentials stages: one {@link StageSpec} per {@code network_middlewares} entry whose binding runs at
 *       {@code PRE_CREDENTIALS}, with the effective body limit (the binding's capability, and for an external
 *       service the registration's {@code max_body_bytes}) and the effective timeout (the binding's own, else the
 *       registration's, else 500 ms).</li>
 *   <li>Post-credentials stages: entries bound to a restricted built-in's {@code POST_CREDENTIALS} binding, as
 *       {@link StageSpec}s with the same limits, run by {@link ChainEngine#runPostCredentials}.</li>
 *   <li>Admission over {@code network_policies}; credential injection over the gateway's credentials.</li>
 * </ul>
 *
 * @param number the generation number, from 1
 * @param policy the sandbox policy
 * @param gateway the gateway configuration
 * @param registry the provider registry the policy was validated against
 * @param selector the pre-credentials chain selector
 * @param postCredentials the post-credentials chain selector (restricted built-ins only)
 * @param admission L4 admission
 * @param credentials credential injection
 * @param engine the chain engine
 * @param l7 the L7 policy decision over the policy's L7 endpoints
 * @param responses the response-stage selector: entries whose binding ID names an {@code HTTP_RESPONSE/PRE_RETURN}
 *     binding (besides or instead of a request binding), run on the final response
 */
public record Generation(long number, SandboxPolicy policy, GatewayConfig gateway, ProviderRegistry registry,
                         ChainSelector selector, ChainSelector postCredentials, PolicyAdmissionView admission,
                         CredentialInjector credentials, ChainEngine engine,
                         dev.openshell.supervisor.l7.L7Engine l7, ChainSelector responses) {
    private static final AtomicLong COUNTER = new AtomicLong();

    /** Admission, as a public view of the package-private implementation. */
    public interface PolicyAdmissionView {
        /**
         * {@return the verdict for {@code host:port} without a caller: binary-scoped policies do not admit}
         *
         * @param host the host
         * @param port the port
         */
        AdmissionDecision admit(String host, int port);

        /**
         * {@return the verdict for {@code host:port} and a caller: binary-scoped policies admit only the binaries
         * they list}
         *
         * @param host the host
         * @param port the port
         * @param caller who opened the connection
         */
        AdmissionDecision admit(String host, int port,
                                                               dev.openshell.supervisor.policy.Caller caller);

        /**
         * {@return whether a binary-scoped policy has an endpoint admitting {@code host:port}: only then does the
         * caller's identity change the verdict}
         *
         * @param host the host
         * @param port the port
         */
        boolean scoped(String host, int port);
    }

    /**
     * Prepares a generation. The policy must already be validated against {@code registry} (every binding exists,
     * configs accepted by {@code ValidateConfig}).
     *
     * @param policy the sandbox policy
     * @param gateway the gateway configuration
     * @param registry the provider registry
     * @param sources where credential values come from
     * @param engine the chain engine to run chains with
     * @return the generation
     * @throws IllegalArgumentException with a safe message when a binding is missing, a credential cannot be
     *     resolved, or limits do not fit
     */
    public static Generation prepare(SandboxPolicy policy, GatewayConfig gateway, ProviderRegistry registry,
                                     CredentialSources sources, ChainEngine engine) {
        Stages stages = compile(policy, gateway, registry);
        List<StageSpec> specs = stages.pre();
        List<Credential> creds = new ArrayList<>();
        for (CredentialRule rule : gateway.credentials()) {
            creds.add(new Credential(rule.name(), sources.resolve(rule.name(), source(rule)), rule::appliesTo,
                    rule.hosts().stream().map(Object::toString).collect(Collectors.joining(", ", "[", "]")),
                    new Credential.Placement(rule.headers().castToList().stream().collect(Collectors.toSet()),
                            rule.queryParams().castToList().stream().collect(Collectors.toSet()),
                            rule.basic().contains("user"), rule.basic().contains("password"), rule.allowPlaintext(),
                            rule.ports().castToList().stream().collect(Collectors.toSet())),
                    rule.allowUnscannedResponses()));
        }
        PolicyAdmission admission = new PolicyAdmission(policy);
        CredentialInjector injector = new CredentialInjector(creds);
        long number = COUNTER.incrementAndGet();
        PolicyAdmissionView view = new PolicyAdmissionView() {
            @Override
            public AdmissionDecision admit(String host, int port) {
                return unscannable(admission.admit(host, port), host, injector);
            }

            @Override
            public AdmissionDecision admit(String host, int port,
                                                                          dev.openshell.supervisor.policy.Caller c) {
                return unscannable(admission.admit(host, port, c), host, injector);
            }

            @Override
            public boolean scoped(String host, int port) {
                return admission.scoped(host, port);
            }
        };
        return new Generation(number, policy, gateway, registry, ChainSelector.of(specs),
                ChainSelector.of(stages.post()), view, injector, engine,
                new dev.openshell.supervisor.l7.L7Engine(policy), ChainSelector.of(stages.responses()));
    }

    /**
     * {@return the admission, or a denial when it admits a {@code tls: skip} tunnel to a host a credential is bound
     * to} A response from such a host is scrubbed of every credential bound to it, placed in the request or not (a
     * stateful upstream hands back what it stored earlier; {@code docs/credentials.md} section 4), and a tunnel
     * relayed without termination cannot be scrubbed; unless every such credential allows unscanned responses
     * ({@code allow_unscanned_responses}), the tunnel is refused as any response that cannot be scanned is.
     *
     * @param decision the network policy's decision
     * @param host the requested host
     * @param injector the generation's credentials
     */
    static AdmissionDecision unscannable(
            AdmissionDecision decision, String host, CredentialInjector injector) {
        if (!(decision instanceof AdmissionDecision.Allowed a)
                || !a.endpoint().tlsSkip()) {
            return decision;
        }
        boolean scanned = injector.boundTo(host).stream().map(injector::declared).flatMap(Optional::stream)
                .anyMatch(c -> !c.allowUnscannedResponses());
        return scanned ? AdmissionDecision.deny("a credential is bound to this host,"
                + " and its endpoint (" + a.endpoint().policyName() + ") relays without inspection (tls: skip), so"
                + " its responses could not be scrubbed of it") : decision;
    }

    /** {@return a credential rule's source as {@link CredentialSources#resolve} reads it} @param rule the rule */
    static String source(CredentialRule rule) {
        return switch (rule.source()) {
            case CredentialSource.Environment env -> "env:" + env.variable();
            case CredentialSource.SecretFile file -> "file:" + file.path().toAbsolutePath();
        };
    }

    /** The compiled stages of a policy: pre-credentials and post-credentials specs, both in policy order. */
    record Stages(List<StageSpec> pre, List<StageSpec> post, List<StageSpec> responses) {
    }

    /** A middleware config that cannot be compiled; the message is safe and names the config key. */
    static final class StageException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;
        private final String configKey;

        StageException(String configKey, String message) {
            super(message);
            this.configKey = configKey;
        }

        /** {@return the config key of the entry} */
        String configKey() {
            return configKey;
        }
    }

    /**
     * The effective limits of one stage: the binding's body capability, lowered to the platform maximum and, for an
     * external service, to the registration's {@code max_body_bytes}; the timeout from the binding, else the
     * registration, else {@link EnvelopeLimits#DEFAULT_TIMEOUT_MILLIS} (RFC 0009, "Registration and delivery").
     *
     * @param maxBodyBytes the effective body limit, in bytes
     * @param timeoutMillis the effective timeout, in milliseconds
     */
    record Limits(long maxBodyBytes, long timeoutMillis) {
        static Limits of(RegisteredBinding rb, GatewayConfig gateway) {
            MiddlewareBinding b = rb.binding();
            long maxBody = Math.min(b.maxBodyBytes(), EnvelopeLimits.MAX_BODY_BYTES);
            long timeout = EnvelopeLimits.DEFAULT_TIMEOUT_MILLIS;
            if (rb.origin().kind() == ProviderOrigin.Kind.EXTERNAL) {
                Optional<MiddlewareRegistration> reg = gateway.registration(rb.origin().name());
                if (reg.isPresent()) {
                    maxBody = Math.min(maxBody, reg.get().maxBodyBytes());
                    timeout = reg.get().timeout().toMillis();
                }
            }
            if (b.timeout().isPresent()) {
                timeout = b.timeout().get().toMillis();
            }
            return new Limits(maxBody, timeout);
        }
    }

    /**
     * Compiles the policy's middleware configs against the registry.
     *
     * @throws StageException for the first config whose binding is missing, or post-credentials but not restricted
     */
    static Stages compile(SandboxPolicy policy, GatewayConfig gateway, ProviderRegistry registry) {
        return compile(policy, gateway, registry, null);
    }

    /**
     * Compiles the policy's middleware configs against the registry.
     *
     * @param problems receives every config that cannot be compiled, which is then left out; {@code null} to throw
     *     at the first one instead
     * @throws StageException when {@code problems} is {@code null}, for the first config whose binding is missing,
     *     or post-credentials but not restricted
     */
    static Stages compile(SandboxPolicy policy, GatewayConfig gateway, ProviderRegistry registry,
                          List<StageException> problems) {
        List<StageSpec> specs = new ArrayList<>();
        List<StageSpec> post = new ArrayList<>();
        List<StageSpec> responses = new ArrayList<>();
        for (NetworkMiddlewareConfig c : policy.middlewaresInOrder()) {
            Optional<RegisteredBinding> response = registry.lookupResponse(c.middleware());
            response.ifPresent(rb -> responses.add(spec(c, rb, gateway)));
            Optional<RegisteredBinding> found = registry.lookup(c.middleware());
            if (found.isEmpty()) {
                fail(problems, new StageException(c.key(), "middleware config '%s': binding '%s' is not provided "
                        .formatted(c.key(), c.middleware()) + "by any built-in, plugin or registered service"));
                continue;
            }
            RegisteredBinding rb = found.get();
            MiddlewareBinding b = rb.binding();
            if (ProviderRegistry.isResponse(rb)) {
                continue; // a response binding only: added above
            }
            boolean postCredentials = b.phase() == Phase.POST_CREDENTIALS;
            if (postCredentials && !(rb.provider() instanceof RestrictedMiddlewareProvider)) {
                fail(problems, new StageException(c.key(), "middleware config '%s': binding '%s' is "
                        .formatted(c.key(), c.middleware())
                        + "post-credentials but its provider is not a restricted built-in"));
                continue;
            }
            Limits limits = Limits.of(rb, gateway);
            Provenance provenance = rb.origin().kind() == ProviderOrigin.Kind.BUILT_IN ? Provenance.BUILT_IN
                    : Provenance.THIRD_PARTY;
            (postCredentials ? post : specs).add(new StageSpec(c.key(), c.middleware(), rb.provider(), provenance, c.order(),
                    c.onError(), (int) limits.maxBodyBytes(), limits.timeoutMillis(), c.config(),
                    c::selects));
        }
        return new Stages(specs, List.copyOf(post), List.copyOf(responses));
    }

    private static StageSpec spec(NetworkMiddlewareConfig c, RegisteredBinding rb, GatewayConfig gateway) {
        Limits limits = Limits.of(rb, gateway);
        Provenance provenance = rb.origin().kind() == ProviderOrigin.Kind.BUILT_IN ? Provenance.BUILT_IN
                : Provenance.THIRD_PARTY;
        return new StageSpec(c.key(), c.middleware(), rb.provider(), provenance, c.order(), c.onError(),
                (int) limits.maxBodyBytes(), limits.timeoutMillis(), c.config(), c::selects);
    }

    private static void fail(List<StageException> problems, StageException e) {
        if (problems == null) {
            throw e;
        }
        problems.add(e);
    }

    /** {@return a short description for logs: counts only} */
    public String summary() {
        Map<String, Long> byKind = new java.util.TreeMap<>(registry.bindings().stream()
                .collect(Collectors.groupingBy(b -> b.origin().kind().word(), Collectors.counting())));
        String bindings = byKind.isEmpty() ? "none" : byKind.entrySet().stream()
                .map(e -> e.getValue() + " " + e.getKey()).collect(Collectors.joining(", "));
        return "generation %d: %s, %s (%d after credential injection); bindings: %s".formatted(number,
                count(policy.networkPolicies().size(), "network policy", "network policies"),
                count(policy.networkMiddlewares().size(), "middleware config", "middleware configs"),
                postCredentials.specs().size(), bindings);
    }

    private static String count(int n, String one, String many) {
        return n + " " + (n == 1 ? one : many);
    }
}
