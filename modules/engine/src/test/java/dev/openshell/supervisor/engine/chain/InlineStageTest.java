package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.internal.StageResult;
import dev.openshell.middleware.spi.internal.OnError;
import static dev.openshell.supervisor.engine.chain.Stages.chain;
import static dev.openshell.supervisor.engine.chain.Stages.provider;
import static dev.openshell.supervisor.engine.chain.Stages.request;
import static dev.openshell.supervisor.engine.chain.Stages.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Stages run on the calling thread ({@link ChainEngine.Builder#inlineStages}) keep the fold's failure semantics. */
class InlineStageTest {
    private final ChainEngine inline = ChainEngine.builder().inlineStages(s -> true).build();

    @Test
    void byDefaultOnlyTheBoundedBuiltInRunsInline() {
        AtomicReference<Thread> ran = new AtomicReference<>();
        Stages.Scripted p = provider(e -> {
            ran.set(Thread.currentThread());
            return HttpRequestResult.allow();
        });
        ChainEngine engine = ChainEngine.builder().build();
        engine.run(chain(spec("k", 1, p).binding("openshell/regex").build()), request("x"));
        assertSame(Thread.currentThread(), ran.get(), "openshell/regex (built-in) runs on the caller's thread");

        engine.run(chain(spec("k", 1, p).build()), request("x"));
        assertTrue(ran.get() != Thread.currentThread() && ran.get().getName().startsWith("middleware-stage-"),
                "another built-in gets its own thread");

        StageSpec claimed = new StageSpec("k", new dev.openshell.middleware.spi.BindingId("openshell/regex"), p,
                Provenance.THIRD_PARTY, 1, OnError.FAIL_CLOSED, 1024, 500, jakarta.json.JsonValue.EMPTY_JSON_OBJECT,
                h -> true);
        assertFalse(ChainEngine.BOUNDED_BUILT_IN_STAGES.test(claimed), "only a built-in's provenance qualifies");
        engine.run(chain(claimed), request("x"));
        assertTrue(ran.get() != Thread.currentThread());
    }

    @Test
    void aLateInlineResultIsATimeoutAndIsDiscarded() {
        AtomicLong now = new AtomicLong();
        ChainEngine engine = ChainEngine.builder().inlineStages(s -> true).nanoClock(now::get).build();
        Stages.Scripted slow = provider(e -> {
            now.addAndGet(11_000_000L); // the stage took 11 ms of a 10 ms budget
            return HttpRequestResult.builder(Decision.ALLOW).body(Body.ofUtf8("replaced")).build();
        });
        Stages.Scripted later = Stages.identity();
        ChainResult result = engine.run(chain(spec("slow", 1, slow).open().timeout(10).build(),
                spec("later", 2, later).build()), request("original"));
        StageRecord r = result.stages().getFirst();
        assertEquals(StageResult.BYPASSED, r.outcome());
        assertEquals(FailureCategory.TIMEOUT, r.failure().orElseThrow().category());
        assertEquals("stage_timeout", r.failure().orElseThrow().code());
        assertEquals("original", later.seen.getFirst().body().utf8().orElseThrow(), "the late body is not used");
        assertEquals("original", result.body().utf8().orElseThrow());

        ChainResult closed = engine.run(chain(spec("slow", 1, slow).timeout(10).build()), request("original"));
        assertEquals("middleware_failed: stage did not answer within 10 ms", closed.denial().orElseThrow().detail());
    }

    @Test
    void aResultWithinTheTimeoutIsUsed() {
        AtomicLong now = new AtomicLong();
        ChainEngine engine = ChainEngine.builder().inlineStages(s -> true).nanoClock(now::get).build();
        Stages.Scripted quick = provider(e -> {
            now.addAndGet(10_000_000L); // exactly the budget
            return HttpRequestResult.builder(Decision.ALLOW).body(Body.ofUtf8("replaced")).build();
        });
        ChainResult result = engine.run(chain(spec("quick", 1, quick).timeout(10).build()), request("original"));
        assertTrue(result.forwarded());
        assertEquals("replaced", result.body().utf8().orElseThrow());
    }

    @Test
    void anInlineStageThatThrowsFollowsOnErrorAndVirtualMachineErrorsPropagate() {
        Stages.Scripted throwing = provider(e -> {
            throw new MiddlewareException("body_not_utf8", "request body is not well-formed UTF-8");
        });
        ChainResult result = inline.run(chain(spec("k", 1, throwing).build()), request("x"));
        assertEquals("body_not_utf8", result.denial().orElseThrow().reasonCode());
        ChainResult open = inline.run(chain(spec("k", 1, throwing).open().build()), request("x"));
        assertTrue(open.forwarded());
        assertEquals(StageResult.BYPASSED, open.stages().getFirst().outcome());

        Stages.Scripted oom = provider(e -> {
            throw new OutOfMemoryError("stage ran out");
        });
        assertThrows(OutOfMemoryError.class, () -> inline.run(chain(spec("k", 1, oom).open().build()), request("x")));
    }

    @Test
    void anInterruptedCallerDeniesEvenForAFailOpenInlineStageAndKeepsItsInterruptStatus() throws Exception {
        Stages.Scripted interrupting = provider(e -> {
            Thread.currentThread().interrupt(); // the caller is interrupted while the stage runs
            return HttpRequestResult.allow();
        });
        Stages.Scripted never = Stages.identity();
        AtomicReference<ChainResult> result = new AtomicReference<>();
        AtomicReference<Boolean> stillInterrupted = new AtomicReference<>();
        Thread caller = Thread.ofVirtual().start(() -> {
            result.set(inline.run(chain(spec("k", 1, interrupting).open().build(), spec("n", 2, never).build()),
                    request("x")));
            stillInterrupted.set(Thread.currentThread().isInterrupted());
        });
        caller.join();
        assertEquals("chain_interrupted", result.get().denial().orElseThrow().reasonCode());
        assertEquals(StageResult.FAILED_CLOSED, result.get().stages().getFirst().outcome());
        assertTrue(stillInterrupted.get());
        assertEquals(0, never.calls());

        Thread already = Thread.ofVirtual().unstarted(() -> {
            Thread.currentThread().interrupt();
            result.set(inline.run(chain(spec("n", 1, never).open().build()), request("x")));
        });
        already.start();
        already.join();
        assertEquals("chain_interrupted", result.get().denial().orElseThrow().reasonCode());
        assertEquals(0, never.calls(), "an interrupted caller does not start an inline stage");
    }
}
