package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.internal.StageResult;
import static dev.openshell.supervisor.engine.chain.Stages.chain;
import static dev.openshell.supervisor.engine.chain.Stages.provider;
import static dev.openshell.supervisor.engine.chain.Stages.request;
import static dev.openshell.supervisor.engine.chain.Stages.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.ExistingHeaderAction;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.Phase;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ChainEngineTest {
    private final ChainEngine engine = ChainEngine.builder().build();

    private static HttpRequestResult.Builder allow() {
        return HttpRequestResult.builder(Decision.ALLOW);
    }

    private static String text(Body b) {
        return b.utf8().orElseThrow();
    }

    @Test
    void anEmptyChainForwardsTheRequestUnchanged() {
        Chain chain = ChainSelector.of(List.of(spec("k", 1, Stages.identity()).hosts("other.example").build()))
                .select("api.example.com");
        assertSame(Chain.empty(), chain);
        assertFalse(chain.requiresBody());
        ChainRequest request = request("{\"a\":1}");
        ChainResult result = engine.run(chain, request);
        assertTrue(result.forwarded());
        assertEquals(List.of(), result.stages());
        assertEquals(request.headers(), result.headers());
        assertSame(request.body(), result.body());
    }

    @Test
    void stagesRunInAscendingOrderAndEachSeesThePreviousAcceptedBodyAndHeaders() {
        List<String> order = new CopyOnWriteArrayList<>();
        Stages.Scripted first = provider(e -> {
            order.add("first");
            return allow().body(Body.ofUtf8(text(e.body()) + "+first"))
                    .mutation(HeaderMutation.write("X-OpenShell-Middleware-Seen", "first", ExistingHeaderAction.APPEND))
                    .build();
        });
        Stages.Scripted second = provider(e -> {
            order.add("second");
            return allow().body(Body.ofUtf8(text(e.body()) + "+second")).build();
        });
        ChainResult result = engine.run(chain(spec("b", 20, second).build(), spec("a", 10, first).build()),
                request("body"));
        assertEquals(List.of("first", "second"), order);
        assertEquals("body+first", text(second.seen.getFirst().body()));
        assertTrue(second.seen.getFirst().headers().contains(new HttpHeader("x-openshell-middleware-seen", "first")));
        assertEquals("body+first+second", text(result.body()));
        assertEquals(new HttpHeader("x-openshell-middleware-seen", "first"), result.headers().getLast());
        assertTrue(result.transformed());
        assertEquals(List.of(true, false), result.stages().stream().map(StageRecord::headersMutated).toList());
    }

    @Test
    void aStageThatReturnsWhatItWasGivenTransformedNothing() {
        // issue 19, item 10: transformed only when the body or the headers actually changed
        Stages.Scripted writes = provider(e -> allow().mutation(HeaderMutation.write("X-OpenShell-Middleware-Seen",
                "v", ExistingHeaderAction.APPEND)).build());
        Stages.Scripted echoes = provider(e -> allow().body(Body.ofUtf8(text(e.body())))
                .mutation(HeaderMutation.write("X-OpenShell-Middleware-Seen", "v", ExistingHeaderAction.OVERWRITE))
                .build());
        ChainResult result = engine.run(chain(spec("a", 10, writes).build(), spec("b", 20, echoes).build()),
                request("body"));
        assertEquals(List.of(true, false), result.stages().stream().map(StageRecord::transformed).toList());
        assertEquals(List.of(false, false), result.stages().stream().map(StageRecord::bodyReplaced).toList());
        ChainResult same = engine.run(chain(spec("b", 20, echoes).build()), request("body"));
        assertEquals(List.of(true), same.stages().stream().map(StageRecord::headersMutated).toList(),
                "the field was absent: writing it is a change");
        assertFalse(same.stages().getFirst().bodyReplaced(), "the same body is no replacement");
    }

    @Test
    void anAbsentBodyKeepsThePreviousOneAndAPresentEmptyBodyReplacesItWithNothing() {
        Stages.Scripted keep = provider(e -> HttpRequestResult.allow());
        Stages.Scripted observer1 = Stages.identity();
        Stages.Scripted empty = provider(e -> allow().body(Body.empty()).build());
        Stages.Scripted observer2 = Stages.identity();
        ChainResult result = engine.run(chain(spec("keep", 1, keep).build(), spec("o1", 2, observer1).build(),
                spec("empty", 3, empty).build(), spec("o2", 4, observer2).build()), request("original"));
        assertEquals("original", text(observer1.seen.getFirst().body()));
        assertTrue(observer2.seen.getFirst().body().isEmpty());
        assertTrue(result.body().isEmpty());
        assertEquals(List.of(false, false, true, false),
                result.stages().stream().map(StageRecord::bodyReplaced).toList());
    }

    @Test
    void aStageSeesOnlyVisibleHeadersButTheForwardedListKeepsProtectedOnes() {
        Stages.Scripted p = Stages.identity();
        List<HttpHeader> headers = List.of(new HttpHeader("Authorization", "Bearer secret"),
                new HttpHeader("X-Hop", "hop"), new HttpHeader("Connection", "x-hop"),
                new HttpHeader("X-Api-Key", "k1"), new HttpHeader("Accept", "*/*"), new HttpHeader("X-Api-Key", "k2"),
                new HttpHeader("X-Amz-Date", "20150830T123600Z"), new HttpHeader("Host", "api.example.com"));
        ChainResult result = engine.run(chain(spec("k", 1, p).build()), request(headers, Body.empty()));
        assertEquals(List.of(new HttpHeader("x-api-key", "k1"), new HttpHeader("accept", "*/*"),
                new HttpHeader("x-api-key", "k2")), p.seen.getFirst().headers());
        assertEquals(8, result.headers().size());
        assertEquals(new HttpHeader("authorization", "Bearer secret"), result.headers().getFirst());
    }

    @Test
    void theEvaluationCarriesBindingPhaseContextConfigAndTarget() {
        Stages.Scripted p = Stages.identity();
        var config = Stages.json("{\"mode\":\"redact\"}");
        engine.run(chain(spec("k", 1, p).config(config).build()), request("x"));
        HttpRequestEvaluation e = p.seen.getFirst();
        assertEquals("openshell/test", e.bindingId().value());
        assertEquals(Phase.PRE_CREDENTIALS, e.phase());
        assertEquals(Stages.CONTEXT, e.context());
        assertEquals(config, e.config());
        assertEquals(Stages.TARGET, e.target());
    }

    @Test
    void aDenyStopsTheChainAndItsTransformationIsNotApplied() {
        Stages.Scripted denier = provider(e -> HttpRequestResult.builder(Decision.DENY)
                .reason("blocked: contains \"secret\" <token>\r\n").reasonCode("secret_detected")
                .body(Body.ofUtf8("replaced"))
                .finding(Finding.of("secret.openai_api_key", "OpenAI API key", 2)).build());
        Stages.Scripted later = Stages.identity();
        ChainResult result = engine.run(chain(spec("regex", 1, denier).build(), spec("later", 2, later).build()),
                request("original"));
        assertEquals(0, later.calls());
        assertEquals("original", text(result.body()));
        DenyResponse deny = result.denial().orElseThrow();
        assertEquals(403, deny.status());
        assertEquals("middleware_denied", deny.error());
        assertEquals("blocked: contains secret token", deny.detail());
        assertEquals("secret_detected", deny.reasonCode());
        assertEquals("regex", deny.configKey().orElseThrow());
        StageRecord r = result.stages().getFirst();
        assertEquals(StageResult.DENIED, r.outcome());
        assertEquals(Decision.DENY, r.decision().orElseThrow());
        assertFalse(r.bodyReplaced());
        assertEquals(List.of(Finding.of("secret.openai_api_key", "OpenAI API key", 2)), r.findings());
    }

    @Test
    void aThirdPartyDenyReasonIsReplacedByPlatformTextAndAMissingCodeByTheDefault() {
        Stages.Scripted denier = provider(e -> HttpRequestResult.builder(Decision.DENY)
                .reason("your key sk-abc is bad").build());
        DenyResponse deny = engine.run(chain(spec("anon", 1, denier).thirdParty().build()), request("x"))
                .denial().orElseThrow();
        assertEquals("request denied by middleware acme/test", deny.detail());
        assertEquals("middleware_denied", deny.reasonCode());
        assertEquals("{\"error\":\"middleware_denied\",\"detail\":\"request denied by middleware acme/test\","
                + "\"config_key\":\"anon\",\"binding_id\":\"acme/test\",\"reason_code\":\"middleware_denied\"}",
                deny.toJson());
    }

    @Test
    void metadataIsNamespacedByConfigKeyEvenForTheSameBinding() {
        Stages.Scripted p = provider(e -> allow().metadata("sensitivity",
                e.config().getString("level")).build());
        ChainResult result = engine.run(chain(
                spec("anonymize", 1, p).config(Stages.json("{\"level\":\"restricted\"}")).build(),
                spec("budget", 2, p).config(Stages.json("{\"level\":\"public\"}")).build()), request("x"));
        assertEquals(Map.of("anonymize.sensitivity", "restricted", "budget.sensitivity", "public"),
                result.metadata().flat());
        assertEquals("restricted", result.metadata().get("anonymize", "sensitivity").orElseThrow());
        assertEquals(List.of("anonymize", "budget"), List.copyOf(result.metadata().configKeys()));
    }

    @Test
    void untrustedMetadataValuesAreWithheldInTheAuditViewOnly() {
        Stages.Scripted p = provider(e -> allow().metadata("sensitivity", "restricted")
                .metadata("modalities", "text,image").metadata("note", "Contains Bob's SSN 123-45-6789").build());
        ChainResult result = engine.run(chain(spec("ext", 1, p).thirdParty().build(),
                spec("builtin", 2, p).build()), request("x"));
        Map<String, String> audit = result.metadata().auditView();
        assertEquals("restricted", audit.get("ext.sensitivity"));
        assertEquals("text,image", audit.get("ext.modalities"));
        assertEquals(ChainMetadata.WITHHELD, audit.get("ext.note"));
        assertEquals("Contains Bob's SSN 123-45-6789", audit.get("builtin.note"));
        assertEquals("Contains Bob's SSN 123-45-6789", result.metadata().flat().get("ext.note"));
        assertFalse(result.metadata().toString().contains("restricted"));
    }

    @Test
    void thirdPartyFindingsAreSanitizedAndBuiltInFindingsKept() {
        Finding raw = new Finding("PII Email <b>", "found alice@example.com", 3, "0.9 (high)", "high");
        Finding clean = new Finding("pii.email", "found alice@example.com", 1, "high", "medium");
        Stages.Scripted p = provider(e -> allow().finding(raw).finding(clean).build());
        ChainResult result = engine.run(chain(spec("ext", 1, p).thirdParty().build(), spec("bi", 2, p).build()),
                request("x"));
        assertEquals(List.of(
                new Finding("middleware.unclassified", "finding reported by acme/test", 3, "", "high"),
                new Finding("pii.email", "finding reported by acme/test", 1, "high", "medium")),
                result.stages().get(0).findings());
        assertEquals(List.of(raw, clean), result.stages().get(1).findings());
    }

    @Test
    void latencyIsMeasuredWithTheEngineClockAroundEachStage() {
        AtomicLong now = new AtomicLong();
        ChainEngine timed = ChainEngine.builder().nanoClock(() -> now.getAndAdd(1_000)).build();
        ChainResult result = timed.run(chain(spec("a", 1, Stages.identity()).build(),
                spec("b", 2, Stages.identity()).build()), request("x"));
        assertEquals(List.of(1_000L, 1_000L), result.stages().stream().map(StageRecord::latencyNanos).toList());
    }

    // ------------------------------------------------------------------ body-aware re-check

    @Test
    void theRecheckRunsAfterEveryBodyReplacementAndOnlyThen() {
        List<String> rechecked = new CopyOnWriteArrayList<>();
        ChainEngine withRecheck = ChainEngine.builder().bodyRecheck(r -> {
            rechecked.add(r.configKey() + "=" + text(r.body()));
            return BodyRecheck.Verdict.PASS;
        }).build();
        Stages.Scripted replace = provider(e -> allow().body(Body.ofUtf8(text(e.body()) + "+new")).build());
        ChainResult result = withRecheck.run(chain(spec("a", 1, Stages.identity()).build(), spec("b", 2, replace).build(),
                spec("c", 3, Stages.identity()).build(), spec("d", 4, replace).build()), request("old"));
        assertEquals(List.of("b=old+new", "d=old+new+new"), rechecked);
        assertEquals(List.of(RecheckRecord.Result.PASSED, RecheckRecord.Result.PASSED),
                result.rechecks().stream().map(RecheckRecord::result).toList());
        assertTrue(result.forwarded());
    }

    @Test
    void anEnforcedRecheckDenialStopsAndDenies() {
        ChainEngine withRecheck = ChainEngine.builder().bodyRecheck(r -> new BodyRecheck.Verdict.Deny("mcp_tool_denied"))
                .build();
        Stages.Scripted later = Stages.identity();
        ChainResult result = withRecheck.run(chain(spec("a", 1, provider(e -> allow().body(Body.ofUtf8("n")).build()))
                .open().build(), spec("b", 2, later).build()), request("o"));
        assertEquals(0, later.calls());
        DenyResponse deny = result.denial().orElseThrow();
        assertEquals("middleware_policy_denied", deny.error());
        assertEquals("mcp_tool_denied", deny.reasonCode());
        assertEquals("a", deny.configKey().orElseThrow());
    }

    @Test
    void anAuditRecheckDenialStopsTheChainAndForwardsTheTransformedRequest() {
        ChainEngine withRecheck = ChainEngine.builder().bodyRecheck(r -> new BodyRecheck.Verdict.AuditDeny("Bad Code!"))
                .build();
        Stages.Scripted later = Stages.identity();
        ChainResult result = withRecheck.run(chain(spec("a", 1, provider(e -> allow().body(Body.ofUtf8("n")).build()))
                .build(), spec("b", 2, later).build()), request("o"));
        assertEquals(0, later.calls());
        assertTrue(result.forwarded());
        assertEquals("n", text(result.body()));
        assertEquals(new RecheckRecord("a", result.stages().getFirst().bindingId(), RecheckRecord.Result.AUDIT_DENIED,
                "body_recheck_denied"), result.rechecks().getFirst());
    }

    @Test
    void aFailingOrSilentRecheckIsAHardDenialEvenForAFailOpenStage() {
        for (BodyRecheck broken : List.<BodyRecheck>of(r -> {
            throw new IllegalStateException("unparseable replacement");
        }, r -> null)) {
            ChainEngine withRecheck = ChainEngine.builder().bodyRecheck(broken).build();
            ChainResult result = withRecheck.run(chain(spec("a", 1,
                    provider(e -> allow().body(Body.ofUtf8("n")).build())).open().build()), request("o"));
            DenyResponse deny = result.denial().orElseThrow();
            assertEquals("middleware_policy_failed", deny.error());
            assertEquals("body_recheck_failed", deny.reasonCode());
            assertEquals(RecheckRecord.Result.FAILED, result.rechecks().getFirst().result());
        }
    }

    // ------------------------------------------------------------------ threads, timeouts, errors

    @Test
    void aLateStageTimesOutAndItsThreadIsInterrupted() throws InterruptedException {
        CountDownLatch never = new CountDownLatch(1);
        CountDownLatch interrupted = new CountDownLatch(1);
        Stages.Scripted slow = provider(e -> {
            try {
                never.await();
            } catch (InterruptedException ie) {
                interrupted.countDown();
            }
            return HttpRequestResult.allow();
        });
        List<Thread> threads = new CopyOnWriteArrayList<>();
        ChainEngine recording = ChainEngine.builder().threadFactory(r -> {
            Thread t = Thread.ofVirtual().unstarted(r);
            threads.add(t);
            return t;
        }).build();
        try {
            ChainResult result = recording.run(chain(spec("slow", 1, slow).timeout(10).build()), request("x"));
            DenyResponse deny = result.denial().orElseThrow();
            assertEquals("stage_timeout", deny.reasonCode());
            assertEquals("middleware_failed: stage did not answer within 10 ms", deny.detail());
            assertEquals(FailureCategory.TIMEOUT, result.stages().getFirst().failure().orElseThrow().category());
            threads.getFirst().join();
            // the stage either never started (cancelled before it ran) or was interrupted while waiting
            assertEquals(slow.calls() == 0 ? 1 : 0, interrupted.getCount());
        } finally {
            never.countDown();
        }
    }

    @Test
    void stagesRunOnTheEngineThreadFactory() {
        AtomicReference<Thread> ran = new AtomicReference<>();
        Stages.Scripted p = provider(e -> {
            ran.set(Thread.currentThread());
            return HttpRequestResult.allow();
        });
        engine.run(chain(spec("k", 1, p).build()), request("x"));
        assertTrue(ran.get().isVirtual());
        assertTrue(ran.get().getName().startsWith("middleware-stage-"), ran.get().getName());
    }

    @Test
    void anInterruptedCallerDeniesEvenForAFailOpenStageAndKeepsItsInterruptStatus() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        Stages.Scripted blocking = provider(e -> {
            started.countDown();
            try {
                never.await();
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
            return HttpRequestResult.allow();
        });
        AtomicReference<ChainResult> result = new AtomicReference<>();
        AtomicReference<Boolean> stillInterrupted = new AtomicReference<>();
        Thread caller = Thread.ofVirtual().start(() -> {
            result.set(engine.run(chain(spec("k", 1, blocking).open().timeout(30_000).build()), request("x")));
            stillInterrupted.set(Thread.currentThread().isInterrupted());
        });
        try {
            started.await();
            caller.interrupt();
            caller.join();
        } finally {
            never.countDown();
        }
        assertEquals("chain_interrupted", result.get().denial().orElseThrow().reasonCode());
        assertEquals(StageResult.FAILED_CLOSED, result.get().stages().getFirst().outcome());
        assertTrue(stillInterrupted.get());
    }

    @Test
    void aVirtualMachineErrorFromAStageIsRethrown() {
        Stages.Scripted p = provider(e -> {
            throw new OutOfMemoryError("stage ran out");
        });
        assertThrows(OutOfMemoryError.class, () -> engine.run(chain(spec("k", 1, p).open().build()), request("x")));
    }

    @Test
    void aMiddlewareExceptionKeepsItsCodeAndOnlyBuiltInsKeepTheirMessage() {
        Stages.Scripted p = provider(e -> {
            throw new MiddlewareException("body_not_utf8", "request body is not valid UTF-8 (byte 0xff at 12)");
        });
        StageFailure builtIn = engine.run(chain(spec("k", 1, p).build()), request("x")).stages().getFirst()
                .failure().orElseThrow();
        assertEquals(new StageFailure(FailureCategory.STAGE_ERROR, "body_not_utf8",
                "request body is not valid UTF-8 byte 0xff at 12"), builtIn);
        StageFailure external = engine.run(chain(spec("k", 1, p).thirdParty().build()), request("x")).stages()
                .getFirst().failure().orElseThrow();
        assertEquals(new StageFailure(FailureCategory.STAGE_ERROR, "body_not_utf8", "body_not_utf8"), external);
    }

    @Test
    void anExceptionWithoutAValidCodeIsAStageException() {
        Stages.Scripted bad = provider(e -> {
            throw new MiddlewareException("Not A Code", "x");
        });
        Stages.Scripted npe = provider(e -> {
            throw new NullPointerException();
        });
        for (Stages.Scripted p : List.of(bad, npe)) {
            StageFailure f = engine.run(chain(spec("k", 1, p).build()), request("x")).stages().getFirst().failure()
                    .orElseThrow();
            assertEquals("stage_exception", f.code());
        }
    }

    @Test
    void aRefusedChainDeniesWithoutRunningAnyStage() {
        Stages.Scripted p = Stages.identity();
        StageSpec[] specs = new StageSpec[11];
        for (int i = 0; i < specs.length; i++) {
            specs[i] = spec("k" + i, i, p).build();
        }
        ChainResult result = engine.run(chain(specs), request("x"));
        assertEquals(0, p.calls());
        DenyResponse deny = result.denial().orElseThrow();
        assertEquals("middleware_chain_refused", deny.error());
        assertEquals("chain_stage_count_over_capacity", deny.reasonCode());
        assertEquals("{\"error\":\"middleware_chain_refused\",\"detail\":\"middleware chain has 11 matching stages, "
                + "more than 10\",\"reason_code\":\"chain_stage_count_over_capacity\"}", deny.toJson());
    }

    @Test
    void aBypassedStageRecordsAFindingAndTheChainGoesOn() {
        Stages.Scripted failing = provider(e -> null);
        Stages.Scripted later = Stages.identity();
        ChainResult result = engine.run(chain(spec("k", 1, failing).open().build(), spec("l", 2, later).build()),
                request("x"));
        assertTrue(result.forwarded());
        assertTrue(result.bypassed());
        assertEquals(1, later.calls());
        StageRecord r = result.stages().getFirst();
        assertEquals(StageResult.BYPASSED, r.outcome());
        Finding f = r.findings().getFirst();
        assertEquals("openshell.middleware.bypass", f.type());
        assertEquals("middleware openshell/test bypassed after invalid result", f.label());
        assertEquals(1, f.count());
    }

    @Test
    void resultRecordsAreSafeToPrint() {
        Stages.Scripted p = provider(e -> allow().metadata("k", "secret-value").body(Body.ofUtf8("secret-body"))
                .build());
        ChainResult result = engine.run(chain(spec("k", 1, p).build()), request("x"));
        String printed = result.toString();
        assertFalse(printed.contains("secret-value") || printed.contains("secret-body")
                || printed.contains("origin-secret"), printed);
        assertInstanceOf(ChainOutcome.Forward.class, result.outcome());
    }
}
