package dev.openshell.benchmarks;

import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareProvider;
import dev.openshell.supervisor.engine.PluginFailure;
import dev.openshell.supervisor.engine.ProviderOrigin;
import dev.openshell.supervisor.engine.ProviderRegistry;
import dev.openshell.supervisor.engine.RegisteredBinding;
import dev.openshell.supervisor.engine.chain.Chain;
import dev.openshell.supervisor.engine.chain.ChainEngine;
import dev.openshell.supervisor.engine.chain.ChainSelector;
import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.supervisor.engine.credentials.CredentialSources;
import dev.openshell.supervisor.policy.HostPattern;
import dev.openshell.supervisor.policy.Loaded;
import dev.openshell.supervisor.policy.SandboxPolicy;
import dev.openshell.supervisor.policy.SandboxPolicyLoader;
import dev.openshell.supervisor.policy.gateway.GatewayConfig;
import dev.openshell.supervisor.policy.gateway.SupervisorSettings;
import dev.openshell.supervisor.runtime.Generation;
import dev.openshell.supervisor.runtime.Supervisor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.eclipse.collections.api.factory.Lists;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The per-request cost of choosing the middleware chain for an admitted host (RFC 0009, "Policy integration" and
 * "Middleware ordering"; issue 10, item 2 "chain assembly for a host", and the item 3 target "GET, no middleware
 * selected: at least 1.5 times Squid's throughput", which this cost is part of). Average time per request, in
 * nanoseconds.
 *
 * <p>The set-up takes the runtime's own path, once per trial and outside the measurement: a generated sandbox policy
 * (YAML) is parsed and validated by {@link SandboxPolicyLoader} against the binding catalog of a provider registry
 * holding the {@code openshell/regex} built-in ({@link Supervisor#catalog}, which calls the built-in's
 * {@code validateConfig}), then compiled by {@link Generation#prepare} into the generation's {@link ChainSelector},
 * exactly as {@code Supervisor} does at start-up and on every reload.
 *
 * <ul>
 *   <li>{@link #select}: {@code ChainSelector.select(host)}, the call the runtime makes per request (one pass over
 *       the configs sorted by {@code order}; each config's {@code endpoints} selector tries its include patterns,
 *       then its exclude patterns).</li>
 *   <li>{@link #selectForRequest}: the selection steps of the runtime's request hook ({@code SupervisorHook.plan},
 *       package-private, so repeated here call for call): canonical host, {@code select}, the post-credentials
 *       stages that apply (none in this policy), and for a non-empty chain the body buffer limit and the
 *       "every stage fail_open" check. Left out: admission, which has its own cost, the thread-local plan and the
 *       metrics counter.</li>
 * </ul>
 *
 * <p>{@code scenario} is {@code <configs>x<patterns>-<matching>}: the policy holds {@code configs} entries of
 * {@code network_middlewares}, each with {@code patterns} include patterns mixing the three kinds (exact
 * {@code h0.c1.example.com}, single-label {@code *.w1.c1.example.com}, multi-label {@code **.d2.c1.example.com}),
 * and the host {@code api.llm.example.com} is selected by {@code matching} of them (none, one, three or ten; the
 * matching configs select it through their last pattern, in turn exact {@code api.llm.example.com},
 * {@code *.llm.example.com} and {@code **.example.com}). A policy holds at most 10 configs with at most 32 patterns
 * each ({@link EnvelopeLimits#MAX_CHAIN_STAGES}, {@link EnvelopeLimits#MAX_SELECTOR_PATTERNS}), so {@code 10x32} is the
 * largest selection a request can cost and {@code -ten} the longest chain it can get (the 10-stage cap). With no
 * match, {@code select} returns the shared {@link Chain#empty()} and allocates nothing.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ChainAssemblyBenchmark {
    /** The admitted host every scenario asks for. */
    static final String HOST = "api.llm.example.com";
    private static final String[] SHARED = {HOST, "*.llm.example.com", "**.example.com"};
    private static final List<String> MATCHING = List.of("none", "one", "three", "ten");

    /** {@code <configs>x<patterns>-<none|one|three|ten>}: see the class comment. */
    @Param({"1x3-none", "1x3-one", "10x3-none", "10x3-one", "10x3-three", "10x3-ten", "10x32-none", "10x32-ten"})
    public String scenario;

    private Generation generation;
    private ChainSelector selector;
    private String host;

    /** Parses and validates the policy and prepares the generation, once per trial. */
    @Setup
    public void setUp() throws ReflectiveOperationException {
        int x = scenario.indexOf('x');
        int dash = scenario.indexOf('-');
        int configs = Integer.parseInt(scenario.substring(0, x));
        int patterns = Integer.parseInt(scenario.substring(x + 1, dash));
        int matching = new int[] {0, 1, 3, 10}[MATCHING.indexOf(scenario.substring(dash + 1))];
        if (matching > configs) {
            throw new IllegalArgumentException("scenario " + scenario + ": more matching configs than configs");
        }
        MiddlewareProvider regex = RegexChainBenchmark.loadRegex();
        List<RegisteredBinding> claims = new ArrayList<>();
        for (MiddlewareBinding b : regex.manifest().bindings()) {
            claims.add(new RegisteredBinding(b, regex, regex.manifest().name(),
                    ProviderOrigin.builtIn("dev.openshell.builtin.regex")));
        }
        List<PluginFailure> failures = new ArrayList<>();
        ProviderRegistry registry = ProviderRegistry.assemble(claims, failures);
        if (!failures.isEmpty()) {
            throw new IllegalStateException("registry refused a claim: " + failures);
        }
        Loaded<SandboxPolicy> policy = SandboxPolicyLoader.parse("benchmark-policy.yaml",
                policyYaml(configs, patterns, matching), Supervisor.catalog(registry));
        GatewayConfig gateway = new GatewayConfig(SupervisorSettings.defaults(), Lists.immutable.empty(),
                Lists.immutable.empty());
        generation = Generation.prepare(policy.value(), gateway, registry, new CredentialSources(Map.of()),
                ChainEngine.builder().build());
        selector = generation.selector();
        // a fresh String, as a request's host would be, so nothing relies on identity with the policy's text
        host = new String(HOST.toCharArray());
        Chain chain = selector.select(host);
        if (chain.size() != matching || (matching == 0) != (chain == Chain.empty())) {
            throw new IllegalStateException("scenario " + scenario + " selected " + chain);
        }
    }

    /** {@return the chain for the host} */
    @Benchmark
    public Chain select() {
        return selector.select(host);
    }

    /**
     * {@return the request hook's selection: 0 for no chain, else the body buffer limit in bytes, negated when every
     * stage is {@code fail_open}}
     */
    @Benchmark
    public long selectForRequest() {
        Generation g = generation;
        String h = HostPattern.canonicalHost(host);
        Chain chain = g.selector().select(h);
        Chain post = g.postCredentials().select(h);
        if (chain.isEmpty() && post.isEmpty()) {
            return 0;
        }
        long cap = chain.refused() ? 0 : chain.bodyBufferLimit();
        boolean allFailOpen = chain.stages().stream().allMatch(s -> s.onError() == OnError.FAIL_OPEN);
        return allFailOpen ? -cap : cap;
    }

    /**
     * A policy with {@code configs} middleware entries of {@code patterns} include patterns each, the first
     * {@code matching} of which select {@link #HOST}; one network policy admits every host on 80 and 443.
     */
    static String policyYaml(int configs, int patterns, int matching) {
        StringBuilder y = new StringBuilder(4096).append("""
                version: 1
                network_policies:
                  default:
                    name: default
                    endpoints:
                      - host: "**"
                        ports: [80, 443]
                network_middlewares:
                """);
        for (int c = 0; c < configs; c++) {
            List<String> include = new ArrayList<>(patterns);
            int fillers = c < matching ? patterns - 1 : patterns;
            for (int k = 0; k < fillers; k++) {
                include.add(switch (k % 3) {
                    case 0 -> "h%d.c%d.example.com".formatted(k, c);
                    case 1 -> "*.w%d.c%d.example.com".formatted(k, c);
                    default -> "**.d%d.c%d.example.com".formatted(k, c);
                });
            }
            if (c < matching) {
                include.add(SHARED[c % SHARED.length]);
            }
            y.append("  config").append(c).append(":\n")
                    .append("    middleware: openshell/regex\n")
                    .append("    order: ").append(10 * (c + 1)).append('\n')
                    .append("    config:\n      mode: redact\n")
                    .append("    on_error: ").append(c % 2 == 0 ? "fail_closed" : "fail_open").append('\n')
                    .append("    endpoints:\n      include: [")
                    .append(String.join(", ", include.stream().map(p -> '"' + p + '"').toList()))
                    .append("]\n");
        }
        return y.toString();
    }
}
