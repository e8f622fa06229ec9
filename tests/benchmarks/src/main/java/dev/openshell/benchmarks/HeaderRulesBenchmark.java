package dev.openshell.benchmarks;

import dev.openshell.middleware.spi.ExistingHeaderAction;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.supervisor.engine.chain.HeaderMutationError;
import dev.openshell.supervisor.engine.chain.HeaderRules;
import dev.openshell.supervisor.engine.chain.MutationOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The cost of the header rules of RFC 0009 ("The middleware contract": input filtering, and atomic validation and
 * application of a stage's header mutations) on a typical request of 16 header lines (issue 10, item 2 "header
 * rules"; part of the per-stage cost behind the item 3 targets with {@code openshell/regex} selected). Average time
 * per call, in nanoseconds.
 *
 * <ul>
 *   <li>{@link #visible}: what the chain engine does once per request before the first stage: the
 *       {@code Connection}-nominated names, then the header lines a stage may see ({@link HeaderRules#visible}
 *       drops {@code authorization}, {@code host}, {@code content-length}, {@code connection} and the nominated
 *       {@code x-trace-hop}).</li>
 *   <li>{@link #apply}: {@link HeaderRules#apply} with one stage's mutation list, as the engine calls it after every
 *       {@code ALLOW}: {@code mutations=0} (the common case), {@code 3} (an overwrite, an append and a removal),
 *       {@code 20} (10 writes mixing {@code APPEND}, {@code OVERWRITE} and {@code SKIP}, 10 removals, one of an
 *       absent header), and {@code 20-rejected}: the same list with its last entry replaced by a removal of the
 *       protected {@code authorization}, so all 20 are validated and nothing is applied (the rejection counter is
 *       incremented).</li>
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HeaderRulesBenchmark {
    /** A chat-completion request as an SDK sends it: 16 lines, one credential, one nominated hop-by-hop header. */
    static final List<HttpHeader> REQUEST = List.of(
            new HttpHeader("host", "api.openai.com"),
            new HttpHeader("user-agent", "OpenAI/Python 1.40.0"),
            new HttpHeader("accept", "application/json"),
            new HttpHeader("accept-encoding", "gzip, deflate"),
            new HttpHeader("accept-language", "en-US,en;q=0.9"),
            new HttpHeader("content-type", "application/json"),
            new HttpHeader("content-length", "2048"),
            new HttpHeader("authorization", "Bearer placeholder-not-a-key"),
            new HttpHeader("connection", "keep-alive, x-trace-hop"),
            new HttpHeader("x-trace-hop", "1"),
            new HttpHeader("openai-organization", "org-placeholder"),
            new HttpHeader("x-request-id", "7f3c2a9e-4b1d-4c8e-9a2f-0d6b5e1c3a7f"),
            new HttpHeader("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
            new HttpHeader("x-stainless-lang", "python"),
            new HttpHeader("x-stainless-os", "Linux"),
            new HttpHeader("x-stainless-runtime-version", "3.12.4"));

    private List<HttpHeader> request;
    private HeaderRules rules;
    private Set<String> nominated;

    /** One stage's mutation list, chosen by {@code mutations}. */
    @State(Scope.Benchmark)
    public static class Mutations {
        /** {@code 0}, {@code 3}, {@code 20} or {@code 20-rejected}: see the class comment. */
        @Param({"0", "3", "20", "20-rejected"})
        public String mutations;

        List<HeaderMutation> list;

        /** Builds the list once per trial. */
        @Setup
        public void setUp() {
            list = switch (mutations) {
                case "0" -> List.of();
                case "3" -> List.of(
                        HeaderMutation.write("x-openshell-middleware-verdict", "redacted",
                                ExistingHeaderAction.OVERWRITE),
                        HeaderMutation.write("x-openshell-middleware-findings", "secret.openai_key=1",
                                ExistingHeaderAction.APPEND),
                        HeaderMutation.remove("x-stainless-os"));
                case "20" -> twenty();
                case "20-rejected" -> {
                    List<HeaderMutation> l = new ArrayList<>(twenty());
                    l.set(l.size() - 1, HeaderMutation.remove("Authorization"));
                    yield List.copyOf(l);
                }
                default -> throw new IllegalArgumentException("unknown mutations case " + mutations);
            };
        }

        private static List<HeaderMutation> twenty() {
            String p = HeaderRules.MIDDLEWARE_PREFIX;
            return List.of(
                    HeaderMutation.write(p + "verdict", "redacted", ExistingHeaderAction.OVERWRITE),
                    HeaderMutation.write(p + "findings", "secret.openai_key=1", ExistingHeaderAction.APPEND),
                    HeaderMutation.remove("x-stainless-os"),
                    HeaderMutation.write(p + "findings", "secret.aws_access_key_id=1", ExistingHeaderAction.APPEND),
                    HeaderMutation.remove("X-Stainless-Lang"),
                    HeaderMutation.write(p + "stage", "regex-redactor", ExistingHeaderAction.SKIP),
                    HeaderMutation.remove("x-stainless-runtime-version"),
                    HeaderMutation.write(p + "score", "0.93", ExistingHeaderAction.OVERWRITE),
                    HeaderMutation.remove("traceparent"),
                    HeaderMutation.write(p + "Labels", "pii,secrets", ExistingHeaderAction.APPEND),
                    HeaderMutation.remove("x-request-id"),
                    HeaderMutation.write(p + "policy", "default", ExistingHeaderAction.SKIP),
                    HeaderMutation.remove("accept-language"),
                    HeaderMutation.write(p + "verdict", "redacted-twice", ExistingHeaderAction.OVERWRITE),
                    HeaderMutation.remove("openai-organization"),
                    HeaderMutation.write(p + "findings", "pii.email=2", ExistingHeaderAction.APPEND),
                    HeaderMutation.remove("user-agent"),
                    HeaderMutation.write(p + "stage", "ignored-as-present", ExistingHeaderAction.SKIP),
                    HeaderMutation.remove("accept-encoding"),
                    HeaderMutation.remove("x-not-sent"));
        }
    }

    /** Fresh rules (a rejection counter per trial) and the request's nominated names. */
    @Setup
    public void setUp() {
        // an instance field, not the constant, so the JIT cannot fold the input
        request = List.copyOf(new ArrayList<>(REQUEST));
        rules = new HeaderRules();
        nominated = HeaderRules.connectionNominated(request);
        if (!nominated.equals(Set.of("keep-alive", "x-trace-hop"))) {
            throw new IllegalStateException("unexpected nominated names " + nominated);
        }
        // each case behaves as described before anything is measured
        Mutations m = new Mutations();
        for (String c : List.of("0", "3", "20", "20-rejected")) {
            m.mutations = c;
            m.setUp();
            MutationOutcome o = rules.apply(request, nominated, m.list);
            boolean ok = switch (o) {
                case MutationOutcome.Applied a -> !c.endsWith("rejected") && a.changed() == !c.equals("0");
                case MutationOutcome.Rejected r -> c.endsWith("rejected")
                        && r.error().kind() == HeaderMutationError.Kind.PROTECTED;
            };
            if (!ok) {
                throw new IllegalStateException("mutations=" + c + " gave " + o);
            }
        }
        if (HeaderRules.visible(request, nominated).size() != request.size() - 5) {
            throw new IllegalStateException("unexpected visible header count");
        }
    }

    /** {@return the header lines a stage may see} */
    @Benchmark
    public List<HttpHeader> visible() {
        return HeaderRules.visible(request, HeaderRules.connectionNominated(request));
    }

    /** {@return the outcome of one stage's mutations} @param m the mutation list */
    @Benchmark
    public MutationOutcome apply(Mutations m) {
        return rules.apply(request, nominated, m.list);
    }
}
