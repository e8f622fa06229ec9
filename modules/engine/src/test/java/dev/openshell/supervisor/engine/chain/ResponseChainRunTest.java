package dev.openshell.supervisor.engine.chain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.ExistingHeaderAction;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.HttpResponseBodyMode;
import dev.openshell.middleware.spi.HttpResponseBodyResult;
import dev.openshell.middleware.spi.HttpResponseBodyUnit;
import dev.openshell.middleware.spi.HttpResponsePreflight;
import dev.openshell.middleware.spi.HttpResponsePreflightDecision;
import dev.openshell.middleware.spi.HttpResponseStage;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareManifest;
import dev.openshell.middleware.spi.MiddlewareProvider;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.middleware.spi.SessionEndReason;
import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.middleware.spi.internal.StageResult;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * {@link ResponseChainRun}: preflights in order on the head as earlier stages left it, body modes checked against the
 * permitted list, one protected response-header set applied atomically, whole bodies over the limit, streamed units
 * within their cap, a chain of two where the second sees the first's output, and {@code on_error} for failures but
 * never for a block.
 */
class ResponseChainRunTest {
    static final Set<HttpResponseBodyMode> ALL = EnumSet.allOf(HttpResponseBodyMode.class);
    static final HttpRequestTarget TARGET = new HttpRequestTarget("http", "api.test", 80, "GET", "/", "");

    /**
     * A response-only provider whose sessions decide with {@code decide} and transform units with {@code f}, answering
     * each unit with its sequence plus {@code sequenceShift} (0: a correct echo).
     */
    record Stage(String id, Function<HttpResponsePreflight, HttpResponsePreflightDecision> decide,
                 UnaryOperator<String> f, List<String> log, long sequenceShift) implements MiddlewareProvider {
        Stage(String id, Function<HttpResponsePreflight, HttpResponsePreflightDecision> decide, UnaryOperator<String> f) {
            this(id, decide, f, new CopyOnWriteArrayList<>(), 0);
        }

        @Override
        public MiddlewareManifest manifest() {
            return new MiddlewareManifest(id, "1", List.of(MiddlewareBinding.httpResponse(id, 1 << 20)));
        }

        @Override
        public ConfigValidation validateConfig(BindingId bindingId, JsonObject config) {
            return ConfigValidation.ok();
        }

        @Override
        public HttpRequestResult evaluate(HttpRequestEvaluation evaluation) {
            throw new UnsupportedOperationException();
        }

        @Override
        public HttpResponseStage openResponse(BindingId bindingId) {
            return new HttpResponseStage() {
                @Override
                public HttpResponsePreflightDecision preflight(HttpResponsePreflight p) {
                    log.add("preflight " + p.headers());
                    return decide.apply(p);
                }

                @Override
                public HttpResponseBodyResult body(HttpResponseBodyUnit u) {
                    String in = u.data().utf8().orElseThrow();
                    log.add("unit " + u.sequence() + " " + in + (u.endOfStream() ? " end" : ""));
                    return HttpResponseBodyResult.transform(u.sequence() + sequenceShift, Body.ofUtf8(f.apply(in)));
                }

                @Override
                public void end(SessionEndReason reason) {
                    log.add("end " + reason);
                }
            };
        }
    }

    static StageSpec spec(Stage s, OnError onError, int limit) {
        return new StageSpec("cfg-" + s.id().replace('/', '-'), new BindingId(s.id()), s, Provenance.THIRD_PARTY, 10,
                onError, limit, 2000, Json.createObjectBuilder().build(), h -> true);
    }

    static ResponseChainRun run(StageSpec... specs) {
        return new ResponseChainRun(List.of(specs), RequestContext.of("r1"), TARGET);
    }

    static String text(List<Body> out) {
        StringBuilder sb = new StringBuilder();
        out.forEach(b -> sb.append(new String(b.toByteArray(), StandardCharsets.UTF_8)));
        return sb.toString();
    }

    static final List<HttpHeader> HEAD = List.of(new HttpHeader("content-type", "text/html"),
            new HttpHeader("set-cookie", "s=1"), new HttpHeader("content-length", "5"));

    @Test
    void theSecondStageSeesTheFirstStagesHeadAndBody() throws Exception {
        Stage a = new Stage("acme/a", p -> HttpResponsePreflightDecision.inspect(
                HttpResponseBodyMode.WHOLE_BODY_BYTES, new HeaderMutation.WriteHeader("x-a", "1",
                        ExistingHeaderAction.OVERWRITE)), s -> s.replace("evil", "[a]"));
        Stage b = new Stage("acme/b", p -> HttpResponsePreflightDecision.inspect(HttpResponseBodyMode.STREAM_BYTES),
                s -> s + "+b");
        ResponseChainRun run = run(spec(a, OnError.FAIL_CLOSED, 1 << 20), spec(b, OnError.FAIL_CLOSED, 1 << 20));
        var o = assertInstanceOf(ResponseChainRun.Opened.Proceed.class, run.open(200, HEAD, Set.of(), l -> ALL));
        assertTrue(o.headers().contains(new HttpHeader("x-a", "1")));
        assertTrue(b.log().get(0).contains("x-a"), "the second preflight sees the first's mutation");
        assertTrue(!a.log().get(0).contains("set-cookie"), "credential fields are hidden from stages");
        assertTrue(run.holdsHead());
        assertEquals("", text(run.unit(Body.ofUtf8("an evil "), false)));
        assertEquals("an [a] page+b", text(run.unit(Body.ofUtf8("page"), true)));
        assertTrue(b.log().contains("unit 1 an [a] page end"), b.log().toString());
        run.end(SessionEndReason.NORMAL);
        assertEquals(2, run.records().size());
        assertTrue(run.records().stream().allMatch(r -> r.outcome() == StageResult.ALLOWED && r.bodyReplaced()));
    }

    @Test
    void aModeOutsideThePermittedListFailsPerOnError() {
        Stage whole = new Stage("acme/w", p -> HttpResponsePreflightDecision.inspect(
                HttpResponseBodyMode.WHOLE_BODY_BYTES), s -> s);
        Set<HttpResponseBodyMode> noWhole = EnumSet.of(HttpResponseBodyMode.HEADERS_ONLY,
                HttpResponseBodyMode.STREAM_BYTES);
        var open = run(spec(whole, OnError.FAIL_OPEN, 100)).open(200, HEAD, Set.of(), l -> noWhole);
        assertInstanceOf(ResponseChainRun.Opened.Proceed.class, open, "fail_open: bypassed");
        var closed = run(spec(whole, OnError.FAIL_CLOSED, 100)).open(200, HEAD, Set.of(), l -> noWhole);
        var f = assertInstanceOf(ResponseChainRun.Opened.FailedClosed.class, closed);
        assertEquals(ResponseChainRun.BODY_MODE_NOT_PERMITTED, f.failure().code());
    }

    @Test
    void aProtectedHeaderWriteRejectsEveryMutationOfTheStage() {
        for (String name : List.of("content-length", "content-encoding", "content-range", "set-cookie", "connection",
                "transfer-encoding", "etag")) {
            Stage s = new Stage("acme/h", p -> HttpResponsePreflightDecision.inspect(
                    HttpResponseBodyMode.HEADERS_ONLY,
                    new HeaderMutation.WriteHeader("x-fine", "1", ExistingHeaderAction.APPEND),
                    new HeaderMutation.WriteHeader(name, "2", ExistingHeaderAction.OVERWRITE)), x -> x);
            ResponseChainRun run = run(spec(s, OnError.FAIL_OPEN, 100));
            var o = assertInstanceOf(ResponseChainRun.Opened.Proceed.class, run.open(200, HEAD, Set.of(), l -> ALL));
            assertEquals(HEAD, o.headers(), name + ": nothing applied");
            assertEquals(StageResult.BYPASSED, run.records().get(0).outcome());
        }
        Stage removesEtag = new Stage("acme/e", p -> HttpResponsePreflightDecision.inspect(
                HttpResponseBodyMode.HEADERS_ONLY, new HeaderMutation.RemoveHeader("etag")), x -> x);
        var o = run(spec(removesEtag, OnError.FAIL_CLOSED, 100)).open(200,
                List.of(new HttpHeader("etag", "\"1\"")), Set.of(), l -> ALL);
        assertEquals(List.of(), assertInstanceOf(ResponseChainRun.Opened.Proceed.class, o).headers(),
                "integrity fields are removable");
    }

    @Test
    void aBlockWinsWhateverOnErrorSaysAndLaterStagesAreNotOpened() {
        Stage block = new Stage("acme/block", p -> HttpResponsePreflightDecision.blockDelivery("injection"), s -> s);
        Stage later = new Stage("acme/later", p -> HttpResponsePreflightDecision.skip(), s -> s);
        var o = run(spec(block, OnError.FAIL_OPEN, 100), spec(later, OnError.FAIL_OPEN, 100))
                .open(200, HEAD, Set.of(), l -> ALL);
        assertEquals("injection", assertInstanceOf(ResponseChainRun.Opened.Blocked.class, o).reasonCode());
        assertEquals(List.of(), later.log());
        assertTrue(block.log().contains("end MIDDLEWARE_DENIAL"));
    }

    @Test
    void aWholeBodyOverTheLimitFailsClosedOrIsReleasedUnchangedWhenFailOpen() throws Exception {
        Stage whole = new Stage("acme/w", p -> HttpResponsePreflightDecision.inspect(
                HttpResponseBodyMode.WHOLE_BODY_BYTES), s -> "changed");
        ResponseChainRun closed = run(spec(whole, OnError.FAIL_CLOSED, 8));
        closed.open(200, HEAD, Set.of(), l -> ALL);
        var e = assertThrows(ResponseChainRun.Failed.class, () -> closed.unit(Body.ofUtf8("0123456789"), false));
        assertEquals(ResponseChainRun.WHOLE_BODY_OVER_CAPACITY, e.failure().code());
        ResponseChainRun open = run(spec(whole, OnError.FAIL_OPEN, 8));
        open.open(200, HEAD, Set.of(), l -> ALL);
        assertEquals("", text(open.unit(Body.ofUtf8("0123"), false)));
        assertEquals("0123456789", text(open.unit(Body.ofUtf8("456789"), false)));
        assertEquals("ab", text(open.unit(Body.ofUtf8("ab"), true)));
        open.end(SessionEndReason.NORMAL);
        assertEquals(StageResult.BYPASSED, open.records().get(0).outcome());
    }

    @Test
    void theAccumulationDeadlineFailsAHoldingStage() throws Exception {
        Stage whole = new Stage("acme/w", p -> HttpResponsePreflightDecision.inspect(
                HttpResponseBodyMode.WHOLE_BODY_BYTES), s -> "changed");
        ResponseChainRun closed = run(spec(whole, OnError.FAIL_CLOSED, 100));
        closed.open(200, HEAD, Set.of(), l -> ALL);
        closed.unit(Body.ofUtf8("part"), false);
        var e = assertThrows(ResponseChainRun.Failed.class, closed::accumulationTimedOut);
        assertEquals(ResponseChainRun.WHOLE_BODY_ACCUMULATION_TIMEOUT, e.failure().code());
    }

    @Test
    void streamedUnitsAreAtMostHalfTheLimitAndNumberedFromOne() throws Exception {
        Stage s = new Stage("acme/s", p -> HttpResponsePreflightDecision.inspect(HttpResponseBodyMode.STREAM_BYTES),
                x -> x);
        ResponseChainRun run = run(spec(s, OnError.FAIL_CLOSED, 8));
        run.open(200, HEAD, Set.of(), l -> ALL);
        assertEquals("0123456789", text(run.unit(Body.ofUtf8("0123456789"), false)));
        assertEquals("", text(run.unit(Body.empty(), true)));
        assertEquals(List.of("unit 1 0123", "unit 2 4567", "unit 3 89", "unit 4  end"),
                s.log().subList(1, 5));
    }

    @Test
    void aWrongSequenceIsAStageFailure() throws Exception {
        Stage wrong = new Stage("acme/s", p -> HttpResponsePreflightDecision.inspect(HttpResponseBodyMode.STREAM_BYTES),
                x -> x, new CopyOnWriteArrayList<>(), 1);
        StageSpec spec = spec(wrong, OnError.FAIL_CLOSED, 100);
        ResponseChainRun run = run(spec);
        run.open(200, HEAD, Set.of(), l -> ALL);
        var e = assertThrows(ResponseChainRun.Failed.class, () -> run.unit(Body.ofUtf8("x"), false));
        assertEquals(ResponseChainRun.SEQUENCE_MISMATCH, e.failure().code());
    }
}
