package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.internal.StageResult;
import static dev.openshell.supervisor.engine.chain.Stages.chain;
import static dev.openshell.supervisor.engine.chain.Stages.provider;
import static dev.openshell.supervisor.engine.chain.Stages.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.ExistingHeaderAction;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.RequestContext;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongFunction;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;

/**
 * Each public envelope limit of RFC 0009 ("The middleware contract") at the limit (accepted) and one byte or one item
 * over (a stage failure with its platform code). Sizes are computed with {@link Wire}, which
 * {@link WirePropertyTest} checks against protobuf-java.
 */
class EnvelopeLimitsTest {
    private final ChainEngine engine = ChainEngine.builder().build();

    /** Finds the parameter n whose built value measures exactly {@code target}, searching near {@code guess}. */
    private static <T> T exactly(long target, long guess, LongFunction<T> build, ToLongFunction<T> size) {
        for (long n = Math.max(0, guess - 64); n < guess + 64; n++) {
            T value = build.apply(n);
            if (size.applyAsLong(value) == target) {
                return value;
            }
        }
        throw new AssertionError("no value of size " + target + " near " + guess);
    }

    private ChainResult runOne(StageSpec spec, ChainRequest request) {
        return engine.run(chain(spec), request);
    }

    private static void accepted(ChainResult r) {
        assertTrue(r.forwarded() || r.stages().getFirst().outcome() == StageResult.DENIED,
                () -> "expected acceptance, got " + r.stages());
        assertTrue(r.stages().getFirst().failure().isEmpty(), () -> "unexpected " + r.stages().getFirst().failure());
    }

    private static void failed(ChainResult r, String code) {
        assertEquals(code, r.stages().getFirst().failure().orElseThrow().code());
        assertEquals(code, r.denial().orElseThrow().reasonCode());
    }

    private ChainResult withResult(HttpRequestResult result) {
        return runOne(spec("k", 1, provider(e -> result)).build(), Stages.request("x"));
    }

    // ------------------------------------------------------------------ inputs

    @Test
    void config64KiBEncoded() {
        LongFunction<JsonObject> build = n -> Json.createObjectBuilder().add("k", "x".repeat((int) n)).build();
        JsonObject at = exactly(EnvelopeLimits.MAX_CONFIG_BYTES, EnvelopeLimits.MAX_CONFIG_BYTES, build, Wire::struct);
        JsonObject over = exactly(EnvelopeLimits.MAX_CONFIG_BYTES + 1, EnvelopeLimits.MAX_CONFIG_BYTES, build,
                Wire::struct);
        accepted(runOne(spec("k", 1, Stages.identity()).config(at).build(), Stages.request("x")));
        failed(runOne(spec("k", 1, Stages.identity()).config(over).build(), Stages.request("x")),
                "config_bytes_over_capacity");
    }

    @Test
    void context4KiBEncoded() {
        LongFunction<RequestContext> build = n -> RequestContext.of("r".repeat((int) n));
        for (long target : new long[] {EnvelopeLimits.MAX_CONTEXT_BYTES, EnvelopeLimits.MAX_CONTEXT_BYTES + 1}) {
            RequestContext ctx = exactly(target, target, build, Wire::context);
            ChainResult r = runOne(spec("k", 1, Stages.identity()).build(),
                    new ChainRequest(Stages.TARGET, List.of(), Body.empty(), ctx));
            if (target == EnvelopeLimits.MAX_CONTEXT_BYTES) {
                accepted(r);
            } else {
                failed(r, "context_bytes_over_capacity");
            }
        }
    }

    @Test
    void target32KiBEncoded() {
        LongFunction<HttpRequestTarget> build = n -> new HttpRequestTarget("https", "api.example.com", 443, "GET",
                "/" + "p".repeat((int) n), "");
        for (long target : new long[] {EnvelopeLimits.MAX_TARGET_BYTES, EnvelopeLimits.MAX_TARGET_BYTES + 1}) {
            HttpRequestTarget t = exactly(target, target, build, Wire::target);
            ChainResult r = runOne(spec("k", 1, Stages.identity()).build(),
                    new ChainRequest(t, List.of(), Body.empty(), Stages.CONTEXT));
            if (target == EnvelopeLimits.MAX_TARGET_BYTES) {
                accepted(r);
            } else {
                failed(r, "target_bytes_over_capacity");
            }
        }
    }

    @Test
    void headerLines128VisibleLines() {
        for (int lines : new int[] {EnvelopeLimits.MAX_HEADER_LINES, EnvelopeLimits.MAX_HEADER_LINES + 1}) {
            List<HttpHeader> headers = new ArrayList<>();
            headers.add(new HttpHeader("authorization", "protected lines do not count"));
            for (int i = 0; i < lines; i++) {
                headers.add(new HttpHeader("x-h", Integer.toString(i)));
            }
            ChainResult r = runOne(spec("k", 1, Stages.identity()).build(), Stages.request(headers, Body.empty()));
            if (lines == EnvelopeLimits.MAX_HEADER_LINES) {
                accepted(r);
            } else {
                failed(r, "header_count_over_capacity");
            }
        }
    }

    @Test
    void headers64KiBEncoded() {
        LongFunction<List<HttpHeader>> build = n -> List.of(new HttpHeader("x-big", "v".repeat((int) n)),
                new HttpHeader("cookie", "protected lines do not count".repeat(100)));
        ToLongFunction<List<HttpHeader>> visibleSize = h -> Wire.headers(HeaderRules.visible(h, java.util.Set.of()));
        for (long target : new long[] {EnvelopeLimits.MAX_HEADER_BYTES, EnvelopeLimits.MAX_HEADER_BYTES + 1}) {
            List<HttpHeader> headers = exactly(target, target, build, visibleSize);
            ChainResult r = runOne(spec("k", 1, Stages.identity()).build(), Stages.request(headers, Body.empty()));
            if (target == EnvelopeLimits.MAX_HEADER_BYTES) {
                accepted(r);
            } else {
                failed(r, "header_bytes_over_capacity");
            }
        }
    }

    @Test
    void bodyWithinTheStageLimit() {
        StageSpec limited = spec("k", 1, Stages.identity()).maxBody(1000).build();
        accepted(runOne(limited, Stages.request(List.of(), Body.ofOwned(new byte[1000]))));
        failed(runOne(limited, Stages.request(List.of(), Body.ofOwned(new byte[1001]))), "body_bytes_over_capacity");
    }

    @Test
    void body4MiBPlatformMaximum() {
        accepted(runOne(spec("k", 1, Stages.identity()).maxBody(EnvelopeLimits.MAX_BODY_BYTES).build(),
                Stages.request(List.of(), Body.ofOwned(new byte[EnvelopeLimits.MAX_BODY_BYTES]))));
        assertThrows(IllegalArgumentException.class,
                () -> Body.ofOwned(new byte[EnvelopeLimits.MAX_BODY_BYTES + 1]));
        assertThrows(IllegalArgumentException.class, () -> spec("k", 1, Stages.identity())
                .maxBody(EnvelopeLimits.MAX_BODY_BYTES + 1).build());
    }

    // ------------------------------------------------------------------ results

    @Test
    void reason4KiBOfUtf8() {
        String atLimit = "\u00e9".repeat(EnvelopeLimits.MAX_REASON_BYTES / 2);
        accepted(withResult(HttpRequestResult.deny(atLimit, "too_big")));
        failed(withResult(HttpRequestResult.deny(atLimit + "x", "too_big")), "reason_bytes_over_capacity");
    }

    private static HttpRequestResult withMutations(int count, String name, String value) {
        HttpRequestResult.Builder b = HttpRequestResult.builder(Decision.ALLOW);
        for (int i = 0; i < count; i++) {
            b.mutation(HeaderMutation.write(name, value, ExistingHeaderAction.APPEND));
        }
        return b.build();
    }

    @Test
    void mutations64() {
        accepted(withResult(withMutations(64, "x-openshell-middleware-n", "v")));
        failed(withResult(withMutations(65, "x-openshell-middleware-n", "v")), "header_mutation_count_over_capacity");
    }

    @Test
    void mutations32KiBValidated() {
        String name = "x-openshell-middleware-n";
        int value = EnvelopeLimits.MAX_HEADER_MUTATION_BYTES / 2 - name.length();
        accepted(withResult(withMutations(2, name, "v".repeat(value))));
        failed(withResult(withMutations(2, name, "v".repeat(value) + "w")), "header_mutation_bytes_over_capacity");
    }

    @Test
    void mutations64KiBEncoded() {
        // Past 32 KiB of validated data nothing can be accepted, so the boundary shows in which check reports: at
        // exactly 64 KiB encoded the validation runs (and rejects the invalid name); one byte more and the envelope
        // check stops the result first.
        LongFunction<List<HeaderMutation>> build = n -> List.of(HeaderMutation.remove("bad name " + "x".repeat((int) n)));
        for (long target : new long[] {EnvelopeLimits.MAX_HEADER_MUTATION_ENCODED_BYTES,
            EnvelopeLimits.MAX_HEADER_MUTATION_ENCODED_BYTES + 1}) {
            List<HeaderMutation> ms = exactly(target, target, build, Wire::mutations);
            HttpRequestResult.Builder b = HttpRequestResult.builder(Decision.ALLOW);
            ms.forEach(b::mutation);
            StageFailure f = withResult(b.build()).stages().getFirst().failure().orElseThrow();
            if (target == EnvelopeLimits.MAX_HEADER_MUTATION_ENCODED_BYTES) {
                assertEquals("header_mutation_invalid_name", f.code());
            } else {
                assertEquals("header_mutation_bytes_over_capacity", f.code());
                assertEquals(FailureCategory.ENVELOPE_VIOLATION, f.category());
                assertEquals("middleware header mutations exceed 65536 encoded bytes", f.message());
            }
        }
    }

    @Test
    void findings32PerStage() {
        HttpRequestResult.Builder b = HttpRequestResult.builder(Decision.ALLOW);
        for (int i = 0; i < EnvelopeLimits.MAX_FINDINGS; i++) {
            b.finding(Finding.of("t", "l", i));
        }
        ChainResult at = withResult(b.build());
        accepted(at);
        assertEquals(32, at.findings().size());
        failed(withResult(b.finding(Finding.of("t", "l", 1)).build()), "finding_count_over_capacity");
    }

    @Test
    void finding4KiBEncoded() {
        LongFunction<Finding> build = n -> Finding.of("secret.x", "l".repeat((int) n), 1);
        for (long target : new long[] {EnvelopeLimits.MAX_FINDING_BYTES, EnvelopeLimits.MAX_FINDING_BYTES + 1}) {
            Finding f = exactly(target, target, build, Wire::finding);
            ChainResult r = withResult(HttpRequestResult.builder(Decision.ALLOW).finding(f).build());
            if (target == EnvelopeLimits.MAX_FINDING_BYTES) {
                accepted(r);
            } else {
                failed(r, "finding_bytes_over_capacity");
            }
        }
    }

    @Test
    void metadata64Entries() {
        HttpRequestResult.Builder b = HttpRequestResult.builder(Decision.ALLOW);
        for (int i = 0; i < EnvelopeLimits.MAX_METADATA_ENTRIES; i++) {
            b.metadata("k" + i, "v");
        }
        ChainResult at = withResult(b.build());
        accepted(at);
        assertEquals(64, at.metadata().size());
        failed(withResult(b.metadata("one-more", "v").build()), "metadata_count_over_capacity");
    }

    @Test
    void metadata32KiBOfKeysAndValues() {
        int value = EnvelopeLimits.MAX_METADATA_BYTES - "a".length() - "b".length() - "v".length();
        accepted(withResult(HttpRequestResult.builder(Decision.ALLOW).metadata("a", "v".repeat(value))
                .metadata("b", "v").build()));
        failed(withResult(HttpRequestResult.builder(Decision.ALLOW).metadata("a", "v".repeat(value + 1))
                .metadata("b", "v").build()), "metadata_bytes_over_capacity");
    }

    @Test
    void metadataKeysAndValuesFollowTheirGrammar() {
        accepted(withResult(HttpRequestResult.builder(Decision.ALLOW).metadata("Ok_key.v-1", "any text \u00e9")
                .metadata("k".repeat(128), "v").build()));
        for (String key : List.of("", ".lead", "a b", "a/b", "k".repeat(129), "\u00e9")) {
            failed(withResult(HttpRequestResult.builder(Decision.ALLOW).metadata(key, "v").build()),
                    "metadata_invalid_key");
        }
        failed(withResult(HttpRequestResult.builder(Decision.ALLOW).metadata("k", "line\nbreak").build()),
                "metadata_invalid_value");
    }

    @Test
    void chainOf10StagesRunsAnd11IsRefused() {
        for (int n : new int[] {EnvelopeLimits.MAX_CHAIN_STAGES, EnvelopeLimits.MAX_CHAIN_STAGES + 1}) {
            Stages.Scripted p = Stages.identity();
            List<StageSpec> specs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                specs.add(spec("k" + i, i, p).build());
            }
            ChainResult r = engine.run(ChainSelector.of(specs).select("h"), Stages.request("x"));
            if (n == EnvelopeLimits.MAX_CHAIN_STAGES) {
                assertTrue(r.forwarded());
                assertEquals(10, p.calls());
            } else {
                assertEquals("chain_stage_count_over_capacity", r.denial().orElseThrow().reasonCode());
                assertEquals(0, p.calls());
            }
        }
    }
}
