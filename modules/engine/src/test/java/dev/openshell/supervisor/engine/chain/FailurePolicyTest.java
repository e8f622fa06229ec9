package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.internal.StageResult;
import dev.openshell.middleware.spi.internal.OnError;
import static dev.openshell.supervisor.engine.chain.Stages.chain;
import static dev.openshell.supervisor.engine.chain.Stages.provider;
import static dev.openshell.supervisor.engine.chain.Stages.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.ExistingHeaderAction;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareException;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every failure kind of RFC 0009 ("Failure behavior") under {@code fail_closed} and under {@code fail_open}. Each
 * failing stage also tries to transform the request, so a bypass that leaked any part of its result would show.
 */
class FailurePolicyTest {
    private final CountDownLatch release = new CountDownLatch(1);

    /** One way for a stage to fail, with the category and code it must produce. */
    enum Kind {
        EXCEPTION(FailureCategory.STAGE_ERROR, "stage_exception"),
        MIDDLEWARE_EXCEPTION(FailureCategory.STAGE_ERROR, "upstream_unavailable"),
        TIMEOUT(FailureCategory.TIMEOUT, "stage_timeout"),
        MISSING_RESULT(FailureCategory.INVALID_RESULT, "result_missing"),
        INVALID_REASON_CODE(FailureCategory.INVALID_RESULT, "result_invalid_reason_code"),
        INVALID_METADATA_KEY(FailureCategory.INVALID_RESULT, "metadata_invalid_key"),
        OVER_CAP_BODY(FailureCategory.BODY_OVER_CAPACITY, "body_bytes_over_capacity"),
        INVALID_MUTATION(FailureCategory.INVALID_HEADER_MUTATION, "header_mutation_write_namespace"),
        ENVELOPE_VIOLATION(FailureCategory.ENVELOPE_VIOLATION, "finding_count_over_capacity");

        final FailureCategory category;
        final String code;

        Kind(FailureCategory category, String code) {
            this.category = category;
            this.code = code;
        }

        /** A transforming result with one defect, or a throw, or a wait. */
        HttpRequestResult answer(CountDownLatch release) {
            HttpRequestResult.Builder b = HttpRequestResult.builder(Decision.ALLOW).body(Body.ofUtf8("transformed"))
                    .mutation(HeaderMutation.write("x-openshell-middleware-tag", "t", ExistingHeaderAction.APPEND))
                    .metadata("seen", "yes");
            switch (this) {
                case EXCEPTION -> throw new IllegalStateException("boom");
                case MIDDLEWARE_EXCEPTION -> throw new MiddlewareException("upstream_unavailable", "service down");
                case TIMEOUT -> {
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                case MISSING_RESULT -> {
                    return null;
                }
                case INVALID_REASON_CODE -> b.reasonCode("Not-A-Code");
                case INVALID_METADATA_KEY -> b.metadata("bad key", "v");
                case OVER_CAP_BODY -> { }
                case INVALID_MUTATION -> b.mutation(HeaderMutation.write("x-trace", "t", ExistingHeaderAction.APPEND));
                case ENVELOPE_VIOLATION -> {
                    for (int i = 0; i < 33; i++) {
                        b.finding(Finding.of("f", "f", 1));
                    }
                }
            }
            return b.build();
        }
    }

    static Stream<Arguments> kindsAndPolicies() {
        return Stream.of(Kind.values()).flatMap(k -> Stream.of(OnError.values()).map(e -> Arguments.of(k, e)));
    }

    @AfterEach
    void releaseSlowStages() {
        // a TIMEOUT stage waits on this latch; the engine interrupted it already, this only guarantees it ends
        release.countDown();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("kindsAndPolicies")
    void eachFailureFollowsTheStagesOnError(Kind kind, OnError onError) {
        Stages.Scripted failing = provider(e -> kind.answer(release));
        Stages.Scripted later = Stages.identity();
        StageSpec failingSpec = spec("failing", 1, failing).onError(onError)
                .timeout(kind == Kind.TIMEOUT ? 10 : 30_000)
                .maxBody(kind == Kind.OVER_CAP_BODY ? 3 : 1024).build();
        ChainRequest request = Stages.request(List.of(new HttpHeader("accept", "*/*"),
                new HttpHeader("authorization", "Bearer s")), Body.ofUtf8("orig"));

        ChainResult result = ChainEngine.builder().build().run(chain(failingSpec, spec("later", 2, later).build()),
                request);

        StageRecord record = result.stages().getFirst();
        StageFailure failure = record.failure().orElseThrow();
        assertEquals(kind.category, failure.category());
        assertEquals(kind.code, failure.code());
        if (kind != Kind.TIMEOUT) { // a timed-out stage's thread may not even have started
            assertEquals(kind == Kind.OVER_CAP_BODY ? 0 : 1, failing.calls(), "an over-cap body is never sent");
        }
        assertFalse(record.transformed());
        assertTrue(result.metadata().isEmpty(), "a failed result's metadata is not kept");
        if (onError == OnError.FAIL_CLOSED) {
            assertEquals(StageResult.FAILED_CLOSED, record.outcome());
            assertEquals(0, later.calls());
            DenyResponse deny = result.denial().orElseThrow();
            assertEquals("middleware_failed", deny.error());
            assertEquals(kind.code, deny.reasonCode());
            assertEquals("failing", deny.configKey().orElseThrow());
            assertEquals(List.of(), record.findings());
        } else {
            assertEquals(StageResult.BYPASSED, record.outcome());
            assertTrue(result.forwarded());
            assertEquals(1, later.calls());
            assertEquals("orig", later.seen.getFirst().body().utf8().orElseThrow());
            assertEquals(List.of(new HttpHeader("accept", "*/*")), later.seen.getFirst().headers());
            assertEquals(request.headers(), result.headers());
            assertEquals(request.body(), result.body());
            assertEquals(List.of("openshell.middleware.bypass"),
                    record.findings().stream().map(Finding::type).toList());
        }
    }
}
