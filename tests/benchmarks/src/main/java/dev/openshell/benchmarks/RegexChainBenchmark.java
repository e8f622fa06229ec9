package dev.openshell.benchmarks;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.MiddlewareProvider;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.supervisor.engine.chain.Chain;
import dev.openshell.supervisor.engine.chain.ChainEngine;
import dev.openshell.supervisor.engine.chain.ChainRequest;
import dev.openshell.supervisor.engine.chain.ChainResult;
import dev.openshell.supervisor.engine.chain.ChainSelector;
import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.supervisor.engine.chain.Provenance;
import dev.openshell.supervisor.engine.chain.StageSpec;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.util.List;
import java.util.ServiceLoader;
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
 * The cost of a chain with one {@code openshell/regex} stage ({@code mode: redact}) on bodies of 2 KiB, 64 KiB and
 * 1 MiB (issue 4, "Done when").
 *
 * <ul>
 *   <li>{@link #chain}: the full fold, {@link ChainEngine#run}: envelope checks, the virtual-thread hand-off with
 *       its timeout, the scan, result validation and records;</li>
 *   <li>{@link #regexOnly}: the provider alone, called on the benchmark thread, to show what the engine adds.</li>
 * </ul>
 * {@code content=clean} bodies hold no secret (the stage allows without a replacement); {@code content=secrets}
 * bodies hold one AWS access key ID and one OpenAI key per 2 KiB, all redacted; {@code content=escaped} bodies are
 * clean prose broken into lines by JSON {@code \n} escapes, as pasted text is (the stage decodes the escapes before
 * scanning, issue 17).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class RegexChainBenchmark {
    private static final String REGEX_PROVIDER = "dev.openshell.builtin.regex.RegexProvider";
    private static final HttpRequestTarget TARGET =
            new HttpRequestTarget("https", "api.example.com", 443, "POST", "/v1/chat/completions", "");

    /** Body size in bytes. */
    @Param({"2048", "65536", "1048576"})
    public int bodyBytes;

    /** {@code clean}, {@code secrets} or {@code escaped}. */
    @Param({"clean", "secrets", "escaped"})
    public String content;

    private ChainEngine engine;
    private Chain chain;
    private ChainRequest request;
    private MiddlewareProvider regex;
    private HttpRequestEvaluation evaluation;

    /** Builds the body, the stage and the chain once per trial. */
    @Setup
    public void setUp() throws ReflectiveOperationException {
        regex = loadRegex();
        JsonObject config = Json.createObjectBuilder().add("mode", "redact").build();
        StageSpec stage = new StageSpec("regex-redactor", new BindingId("openshell/regex"), regex,
                Provenance.BUILT_IN, 10, OnError.FAIL_CLOSED, EnvelopeLimits.MAX_BODY_BYTES, 500, config,
                "api.example.com"::equals);
        chain = ChainSelector.of(List.of(stage)).select(TARGET.host());
        engine = ChainEngine.builder().build();
        Body body = Body.ofUtf8(content.equals("escaped") ? escaped(bodyBytes)
                : body(bodyBytes, content.equals("secrets")));
        List<HttpHeader> headers = List.of(new HttpHeader("content-type", "application/json"),
                new HttpHeader("authorization", "Bearer placeholder"), new HttpHeader("accept", "*/*"));
        request = new ChainRequest(TARGET, headers, body, RequestContext.of("bench"));
        evaluation = new HttpRequestEvaluation(stage.bindingId(), Phase.PRE_CREDENTIALS, request.context(), config,
                TARGET, headers, body);
        ChainResult check = engine.run(chain, request);
        if (!check.forwarded() || check.transformed() != content.equals("secrets")) {
            throw new IllegalStateException("unexpected benchmark setup result: " + check);
        }
    }

    /** {@return the fold's result} */
    @Benchmark
    public ChainResult chain() {
        return engine.run(chain, request);
    }

    /** {@return the provider's result, without the engine} */
    @Benchmark
    public HttpRequestResult regexOnly() {
        return regex.evaluate(evaluation);
    }

    /** A chat-completion-like JSON body of exactly {@code size} bytes. */
    static String body(int size, boolean secrets) {
        String prose = "The quick brown fox jumps over the lazy dog while the agent drafts a reply. ";
        StringBuilder b = new StringBuilder(size + 128).append("{\"messages\":[{\"role\":\"user\",\"content\":\"");
        int chunk = 0;
        while (b.length() < size - 2) {
            if (secrets && b.length() / 2048 >= chunk) {
                b.append("key AKIAIOSFODNN7EXAMPLE and sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z ");
                chunk++;
            }
            b.append(prose);
        }
        b.setLength(size - 4);
        return b.append("\"}]}").toString();
    }

    /** A JSON body of exactly {@code size} bytes whose one string is prose in lines ending in a {@code \n} escape. */
    static String escaped(int size) {
        String line = "The quick brown fox jumps over the lazy dog while the agent drafts a reply.\\n";
        StringBuilder b = new StringBuilder(size + 128).append("{\"messages\":[{\"role\":\"user\",\"content\":\"");
        while (b.length() < size - 2) {
            b.append(line);
        }
        b.setLength(size - 4);
        while (b.charAt(b.length() - 1) == '\\') {
            b.setCharAt(b.length() - 1, '.');
        }
        return b.append("\"}]}").toString();
    }

    static MiddlewareProvider loadRegex() throws ReflectiveOperationException {
        for (MiddlewareProvider p : ServiceLoader.load(MiddlewareProvider.class)) {
            if (p.getClass().getName().equals(REGEX_PROVIDER)) {
                return p;
            }
        }
        // on the class path, where module-info `provides` is not read
        return (MiddlewareProvider) Class.forName(REGEX_PROVIDER).getConstructor().newInstance();
    }
}
