package dev.openshell.supervisor.engine.chain;

import static dev.openshell.supervisor.engine.chain.Stages.chain;
import static dev.openshell.supervisor.engine.chain.Stages.request;
import static dev.openshell.supervisor.engine.chain.Stages.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareManifest;
import dev.openshell.middleware.spi.MiddlewareProvider;
import jakarta.json.JsonObject;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Stages whose binding declares {@link MiddlewareBinding#skipEmptyBody()} are not invoked where the body reaching
 * them is empty, and nothing else changes (issue 23: a chain that costs nothing when there is nothing to scan).
 */
class EmptyBodySkipTest {
    private static final String ID = "openshell/test";
    private final ChainEngine engine = ChainEngine.builder().build();

    /** A provider that allows everything, with the manifest its supplier gives (or throws). */
    private static final class Allowing implements MiddlewareProvider {
        final List<HttpRequestEvaluation> seen = new CopyOnWriteArrayList<>();
        private final java.util.function.Supplier<MiddlewareManifest> manifest;

        Allowing(java.util.function.Supplier<MiddlewareManifest> manifest) {
            this.manifest = manifest;
        }

        @Override
        public MiddlewareManifest manifest() {
            return manifest.get();
        }

        @Override
        public ConfigValidation validateConfig(BindingId bindingId, JsonObject config) {
            return ConfigValidation.ok();
        }

        @Override
        public HttpRequestResult evaluate(HttpRequestEvaluation evaluation) {
            seen.add(evaluation);
            return HttpRequestResult.allow();
        }
    }

    private static Stages.Scripted skipping() {
        return new Stages.Scripted(ID, e -> HttpRequestResult.allow(), true);
    }

    private static StageSpec stage(String key, long order, MiddlewareProvider p) {
        return spec(key, order, p).binding(ID).build();
    }

    private static ChainRequest empty() {
        return request(List.of(new HttpHeader("accept", "*/*")), Body.empty());
    }

    @Test
    void aSkippingStageIsNotInvokedOnAnEmptyBodyAndRecordsNothing() {
        Stages.Scripted scan = skipping();
        ChainRequest request = empty();
        ChainResult r = engine.run(chain(stage("scan", 10, scan)), request);
        assertEquals(0, scan.calls());
        assertTrue(r.forwarded());
        assertEquals(List.of(), r.stages(), "no invocation, so no record and no per-stage event");
        assertEquals(List.of("scan"), r.skipped().stream().map(StageSpec::configKey).toList());
        assertEquals(request.headers(), r.headers());
        assertTrue(r.body().isEmpty());
    }

    @Test
    void aSkippingStageRunsOnEveryNonEmptyBody() {
        Stages.Scripted scan = skipping();
        ChainResult r = engine.run(chain(stage("scan", 10, scan)), request("x"));
        assertEquals(1, scan.calls());
        assertEquals(1, r.stages().size());
        assertEquals(List.of(), r.skipped());
    }

    @Test
    void aBindingThatDoesNotDeclareItIsInvokedOnAnEmptyBody() {
        Stages.Scripted plain = new Stages.Scripted(ID, e -> HttpRequestResult.allow(), false);
        ChainResult r = engine.run(chain(stage("plain", 10, plain)), empty());
        assertEquals(1, plain.calls());
        assertEquals(1, r.stages().size());
        assertEquals(List.of(), r.skipped());
    }

    @Test
    void anEarlierStageThatPutsABodyInPlaceMakesItRunOnThatBody() {
        Stages.Scripted adds = new Stages.Scripted(ID, e -> HttpRequestResult.builder(
                dev.openshell.middleware.spi.Decision.ALLOW).body(Body.ofUtf8("added")).build(), false);
        Stages.Scripted scan = skipping();
        ChainResult r = engine.run(chain(stage("adds", 10, adds), stage("scan", 20, scan)), empty());
        assertEquals(1, scan.calls());
        assertEquals("added", scan.seen.getFirst().body().utf8().orElseThrow());
        assertEquals(List.of(), r.skipped());
    }

    @Test
    void anEarlierStageThatEmptiesTheBodyMakesItSkip() {
        Stages.Scripted empties = new Stages.Scripted(ID, e -> HttpRequestResult.builder(
                dev.openshell.middleware.spi.Decision.ALLOW).body(Body.empty()).build(), false);
        Stages.Scripted scan = skipping();
        ChainResult r = engine.run(chain(stage("empties", 10, empties), stage("scan", 20, scan)), request("secret"));
        assertEquals(0, scan.calls());
        assertEquals(List.of("empties"), r.stages().stream().map(StageRecord::configKey).toList());
        assertEquals(List.of("scan"), r.skipped().stream().map(StageSpec::configKey).toList());
        assertTrue(r.body().isEmpty());
    }

    @Test
    void anEnvelopeOverALimitStillFailsTheStageItWouldSkip() {
        // review of issue 23: the skip changes nothing else, so the input envelope is checked as for an invocation
        List<HttpHeader> many = new java.util.ArrayList<>();
        for (int i = 0; i < 129; i++) {
            many.add(new HttpHeader("x-h" + i, "v"));
        }
        Stages.Scripted scan = skipping();
        ChainResult r = engine.run(chain(stage("scan", 10, scan)), request(many, Body.empty()));
        assertEquals(0, scan.calls());
        assertEquals(List.of(), r.skipped());
        assertTrue(r.denial().isPresent(), "fail_closed: 129 visible header lines exceed 128");
        assertEquals(PlatformCodes.HEADER_COUNT_OVER_CAPACITY,
                r.stages().getFirst().failure().orElseThrow().code());
    }

    @Test
    void aStageAfterASkippedOneStillRuns() {
        Stages.Scripted scan = skipping();
        Stages.Scripted after = new Stages.Scripted(ID, e -> HttpRequestResult.deny("no", "nope"), false);
        ChainResult r = engine.run(chain(stage("scan", 10, scan), stage("after", 20, after)), empty());
        assertEquals(0, scan.calls());
        assertEquals(1, after.calls());
        assertTrue(r.denial().isPresent(), "the later stage's denial stands");
    }

    @Test
    void theDeclarationIsReadForTheStagesOwnBindingOnly() {
        // the provider declares it for another of its bindings: this stage's binding runs
        Stages.Scripted other = new Stages.Scripted("openshell/other", e -> HttpRequestResult.allow(), true);
        ChainResult r = engine.run(chain(stage("k", 10, other)), empty());
        assertEquals(1, other.calls());
        assertEquals(List.of(), r.skipped());
    }

    @Test
    void aProviderWithoutAReadableManifestIsInvoked() {
        Allowing broken = new Allowing(() -> {
            throw new IllegalStateException("no manifest");
        });
        engine.run(chain(stage("k", 10, broken)), empty());
        assertEquals(1, broken.seen.size());
    }

    @Test
    void aBodyThatDecodesToNothingIsEmptyForTheStageThatAskedForTheDecoding() throws Exception {
        Allowing decodingSkipper = new Allowing(() -> new MiddlewareManifest("d", "0", List.of(
                MiddlewareBinding.httpRequest(ID, EnvelopeLimits.MAX_BODY_BYTES).decoding("gzip").skippingEmptyBody())));
        List<HttpRequestEvaluation> seen = decodingSkipper.seen;
        Body gzipOfNothing = Body.of(ContentDecodingTest.gzip(new byte[0]));
        ChainRequest request = request(List.of(new HttpHeader("content-encoding", "gzip")), gzipOfNothing);
        ChainResult r = engine.run(chain(stage("k", 10, decodingSkipper)), request);
        assertEquals(0, seen.size());
        assertEquals(List.of("k"), r.skipped().stream().map(StageSpec::configKey).toList());
        assertTrue(r.body().isEmpty(), "forwarded as inspected: decoded, empty");
        assertEquals(List.of(), r.headers(), "without its Content-Encoding");

        ChainRequest bodiless = request(List.of(new HttpHeader("content-encoding", "gzip")), Body.empty());
        ChainResult nothing = engine.run(chain(stage("k", 10, decodingSkipper)), bodiless);
        assertEquals(List.of("k"), nothing.skipped().stream().map(StageSpec::configKey).toList(),
                "no body, nothing to decode: not a decoding failure");
        assertTrue(nothing.forwarded());

        ChainRequest invalid = request(List.of(new HttpHeader("content-encoding", "gzip")), Body.ofUtf8("not gzip"));
        ChainResult failed = engine.run(chain(stage("k", 10, decodingSkipper)), invalid);
        assertEquals(List.of(), failed.skipped(), "a body that cannot be decoded is no empty body");
        assertTrue(failed.denial().isPresent(), "fail_closed on the decoding failure");
    }
}
