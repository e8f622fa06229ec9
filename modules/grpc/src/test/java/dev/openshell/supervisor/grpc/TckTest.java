package dev.openshell.supervisor.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.proto.v1.Finding;
import dev.openshell.middleware.proto.v1.HeaderMutation;
import dev.openshell.middleware.proto.v1.HttpRequestEvaluation;
import dev.openshell.middleware.proto.v1.HttpRequestResult;
import dev.openshell.middleware.proto.v1.MiddlewareBinding;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewarePhase;
import dev.openshell.middleware.proto.v1.ValidateConfigResponse;
import dev.openshell.middleware.proto.v1.WriteHeader;
import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.supervisor.engine.chain.ChainEngine;
import dev.openshell.supervisor.engine.chain.ChainRequest;
import dev.openshell.supervisor.engine.chain.ChainSelector;
import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.supervisor.engine.chain.PlatformCodes;
import dev.openshell.supervisor.engine.chain.Provenance;
import dev.openshell.supervisor.engine.chain.StageLimits;
import dev.openshell.supervisor.engine.chain.StageRecord;
import dev.openshell.supervisor.engine.chain.StageSpec;
import dev.openshell.supervisor.grpc.tck.Check;
import dev.openshell.supervisor.grpc.tck.Tck;
import dev.openshell.supervisor.grpc.tck.TckOptions;
import dev.openshell.supervisor.grpc.tck.TckReport;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Context;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import jakarta.json.JsonObject;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * {@code supervisor tck} against deliberately broken grpc-java services on 127.0.0.1: each defect makes exactly the
 * checks that name it fail. And the limits the kit checks are the chain engine's: tightening one moves the supervisor's
 * validation and the kit together.
 */
class TckTest {
    private static final String ID = "acme/broken";
    private static final int SMALL = 64 * 1024;

    /** A grpc-java server on a free port; {@code maxInbound} 0 keeps grpc-java's default of 4 MiB. */
    private record Broken(Server server, ExecutorService workers) implements AutoCloseable {
        static Broken start(ServerServiceDefinition service, int maxInbound, boolean oneWorker) throws IOException {
            ExecutorService workers = oneWorker ? Executors.newSingleThreadExecutor() : Executors.newCachedThreadPool();
            NettyServerBuilder b = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                    .executor(workers).addService(service);
            if (maxInbound > 0) {
                b.maxInboundMessageSize(maxInbound);
            }
            return new Broken(b.build().start(), workers);
        }

        URI endpoint() {
            return URI.create("http://127.0.0.1:" + server.getPort());
        }

        @Override
        public void close() {
            server.shutdownNow();
            workers.shutdownNow();
            try {
                server.awaitTermination(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static TckReport tck(URI endpoint, Duration timeout, StageLimits limits) {
        return Tck.run(new TckOptions(Fixtures.plaintext("broken", endpoint, 0, timeout), Optional.empty(),
                JsonObject.EMPTY_JSON_OBJECT, 2, 0, TckOptions.DEFAULT_LOAD_DURATION, limits));
    }

    private static Set<String> failed(TckReport r) {
        return r.checks().stream().filter(c -> c.status() == Check.Status.FAIL).map(Check::name)
                .collect(Collectors.toCollection(java.util.TreeSet::new));
    }

    private static HttpRequestResult allow() {
        return HttpRequestResult.newBuilder().setDecisionValue(1).build();
    }

    private static ValidateConfigResponse strict(dev.openshell.middleware.proto.v1.ValidateConfigRequest v) {
        boolean unknown = v.getConfig().getFieldsMap().keySet().stream()
                .anyMatch(k -> k.startsWith("openshell_tck_"));
        return ValidateConfigResponse.newBuilder().setValid(!unknown).setReason(unknown ? "unknown key" : "").build();
    }

    @Test
    void aCorrectServicePassesEveryCheck() throws Exception {
        ScriptedService ok = ScriptedService.withBinding(ID).answering(e -> allow()).validating(TckTest::strict);
        try (TestServer s = TestServer.start(ok)) {
            TckReport r = tck(s.endpoint(), Duration.ofSeconds(5), StageLimits.DEFAULT);
            assertTrue(r.passed(), r.toText());
            assertEquals(Set.of(), failed(r), r.toText());
            assertEquals(Optional.of(ID), r.bindingId());
            assertEquals(EnvelopeLimits.MAX_BODY_BYTES, r.maxBodyBytes());
            // it refuses the padding key, as it should: the 64 KiB config is untested, and the kit says so
            assertEquals(Check.Status.SKIP, r.check("evaluate.full_envelope").orElseThrow().status(), r.toText());
            assertTrue(r.check("evaluate.full_envelope").orElseThrow().reason().contains("openshell_tck_padding"),
                    r.toText());
            for (String probe : List.of("probe_email", "probe_secret", "probe_image")) {
                assertEquals(Check.Status.PASS, r.check("evaluate." + probe).orElseThrow().status(), r.toText());
            }
            assertTrue(r.toJson().getBoolean("passed"));
            assertEquals("PASS", r.toJson().getJsonArray("checks").getJsonObject(0).getString("status"));
        }
    }

    @Test
    void theMessageBindingIsCheckedInEachPhaseAndAWrongSequenceEchoFails() throws Exception {
        ScriptedService ws = new ScriptedService(ScriptedService.manifest(ScriptedService.binding(ID, 4L << 20, ""),
                ScriptedService.messages(ID, SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS),
                ScriptedService.messages(ID, SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_RETURN)))
                .answering(e -> allow()).validating(TckTest::strict);
        try (TestServer s = TestServer.start(ws)) {
            TckReport r = tck(s.endpoint(), Duration.ofSeconds(5), StageLimits.DEFAULT);
            assertEquals(Set.of(), failed(r), r.toText());
            Set<String> passed = r.checks().stream().filter(c -> c.status() == Check.Status.PASS).map(Check::name)
                    .collect(Collectors.toSet());
            assertTrue(passed.containsAll(Set.of("websocket.pre_credentials.preflight",
                    "websocket.pre_credentials.messages", "websocket.pre_credentials.after_end",
                    "websocket.pre_return.preflight", "websocket.pre_return.messages")), r.toText());
            ws.sequenceOffset = 1;
            TckReport wrong = tck(s.endpoint(), Duration.ofSeconds(5), StageLimits.DEFAULT);
            assertTrue(failed(wrong).contains("websocket.pre_credentials.messages"), wrong.toText());
            assertTrue(wrong.toText().contains("middleware_sequence_mismatch"), wrong.toText());
            assertFalse(wrong.passed());
        }
    }

    @Test
    void aServiceThatResetsTheStreamAfterASessionsEndPassesAfterEndByTheAdaptersOneRetry() throws Exception {
        ScriptedService ws = new ScriptedService(ScriptedService.manifest(ScriptedService.binding(ID, 4L << 20, ""),
                ScriptedService.messages(ID, SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS)))
                .answering(e -> allow()).validating(TckTest::strict);
        // session 1 is the preflight and messages check; the next stream, right after its end, is reset
        ws.failingSessionNumbers = Set.of(2);
        try (TestServer s = TestServer.start(ws)) {
            TckReport r = tck(s.endpoint(), Duration.ofSeconds(5), StageLimits.DEFAULT);
            assertEquals(Check.Status.PASS, r.check("websocket.pre_credentials.after_end").orElseThrow().status(),
                    r.toText());
            assertEquals(3, ws.sessionsOpened.get(), "the reset stream and one retry by the adapter, no other");
        }
        ScriptedService twice = new ScriptedService(ScriptedService.manifest(
                ScriptedService.binding(ID, 4L << 20, ""),
                ScriptedService.messages(ID, SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS)))
                .answering(e -> allow()).validating(TckTest::strict);
        twice.failingSessionNumbers = Set.of(2, 3);
        try (TestServer s = TestServer.start(twice)) {
            TckReport r = tck(s.endpoint(), Duration.ofSeconds(5), StageLimits.DEFAULT);
            assertEquals(Check.Status.FAIL, r.check("websocket.pre_credentials.after_end").orElseThrow().status(),
                    r.toText());
            assertEquals(3, twice.sessionsOpened.get(), "the adapter retries once; the kit does not retry again");
        }
    }

    @Test
    void manifestDefectsAreEachNamedAndStopTheRun() throws Exception {
        MiddlewareBinding post = ScriptedService.binding("acme/post", 1024, "").toBuilder()
                .setPhase(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_POST_CREDENTIALS).build();
        ScriptedService bad = new ScriptedService(ScriptedService.manifest(
                ScriptedService.binding("openshell/evil", 4L << 20, ""),
                ScriptedService.binding("acme/slow", 8L << 20, "5m"), post));
        try (TestServer s = TestServer.start(bad)) {
            TckReport r = tck(s.endpoint(), Duration.ofSeconds(5), StageLimits.DEFAULT);
            assertFalse(r.passed());
            assertEquals(Set.of("describe.manifest", "describe.binding_ids", "describe.operation_phase",
                    "describe.timeouts"), failed(r), r.toText());
            assertEquals(Check.Status.SKIP, r.checks().get(r.checks().size() - 1).status());
            assertTrue(r.check("describe.binding_ids").orElseThrow().reason().contains("openshell/"), r.toText());
            assertTrue(r.check("describe.timeouts").orElseThrow().reason().contains("'5m'"), r.toText());
            assertTrue(bad.evaluations.isEmpty(), "nothing is evaluated after a refused manifest");
        }
    }

    @Test
    void aBindingThatDeclaresSkipEmptyBodyMustAllowAnEmptyBodyUnchanged() throws Exception {
        MiddlewareBinding skipping = ScriptedService.binding(ID, 4L << 20, "").toBuilder().setSkipEmptyBody(true)
                .build();
        ScriptedService keeps = new ScriptedService(ScriptedService.manifest(skipping)).answering(e -> allow())
                .validating(TckTest::strict);
        try (TestServer s = TestServer.start(keeps)) {
            TckReport r = tck(s.endpoint(), Duration.ofSeconds(5), StageLimits.DEFAULT);
            assertEquals(Set.of(), failed(r), r.toText());
            assertEquals("PASS", r.check("evaluate.skip_empty_body").orElseThrow().status().name(), r.toText());
        }
        // the kit asks although the supervisor would not: an empty body answered with metadata breaks the promise
        ScriptedService breaks = new ScriptedService(ScriptedService.manifest(skipping))
                .answering(e -> e.getBody().isEmpty() ? allow().toBuilder().putMetadata("seen", "empty").build()
                        : allow())
                .validating(TckTest::strict);
        try (TestServer s = TestServer.start(breaks)) {
            TckReport r = tck(s.endpoint(), Duration.ofSeconds(5), StageLimits.DEFAULT);
            assertEquals(Set.of("evaluate.skip_empty_body"), failed(r), r.toText());
            assertTrue(r.check("evaluate.skip_empty_body").orElseThrow().reason().contains("1 metadata entry"),
                    r.toText());
        }
        // a policy service that denies DELETE without a body: it must not declare the skip
        ScriptedService denies = new ScriptedService(ScriptedService.manifest(skipping))
                .answering(e -> e.getTarget().getMethod().equals("DELETE")
                        ? HttpRequestResult.newBuilder().setDecisionValue(2).setReasonCode("no_delete").build()
                        : allow())
                .validating(TckTest::strict);
        try (TestServer s = TestServer.start(denies)) {
            TckReport r = tck(s.endpoint(), Duration.ofSeconds(5), StageLimits.DEFAULT);
            assertEquals(Set.of("evaluate.skip_empty_body"), failed(r), r.toText());
            assertTrue(r.check("evaluate.skip_empty_body").orElseThrow().reason().contains("DELETE /admin: a denial"),
                    r.toText());
        }
        // a binding that does not declare it gets no such check
        ScriptedService plain = ScriptedService.withBinding(ID).answering(e -> allow()).validating(TckTest::strict);
        try (TestServer s = TestServer.start(plain)) {
            assertTrue(tck(s.endpoint(), Duration.ofSeconds(5), StageLimits.DEFAULT)
                    .check("evaluate.skip_empty_body").isEmpty());
        }
    }

    @Test
    void aServiceThatAcceptsThePaddedConfigHasItsFullEnvelopeChecked() throws Exception {
        ScriptedService lenient = ScriptedService.withBinding(ID).answering(e -> allow())
                .validating(v -> ValidateConfigResponse.newBuilder().setValid(!v.getConfig().getFieldsMap()
                        .containsKey("openshell_tck_unknown_key")).setReason("unknown key").build());
        try (TestServer s = TestServer.start(lenient)) {
            TckReport r = tck(s.endpoint(), Duration.ofSeconds(5), StageLimits.DEFAULT);
            assertEquals(Check.Status.PASS, r.check("evaluate.full_envelope").orElseThrow().status(), r.toText());
            assertTrue(r.check("evaluate.full_envelope").orElseThrow().reason().contains("config 65536"), r.toText());
        }
    }

    /**
     * A redactor that passes every generated body (nothing in them to redact) but marks what it redacts with a header
     * outside {@code x-openshell-middleware-*}: the probes provoke the redaction, and the supervisor's header rules
     * fail it, as production would with {@code header_mutation_write_namespace}.
     */
    @Test
    void aRedactorThatWritesOutsideTheNamespaceFailsOnTheProbes() throws Exception {
        ScriptedService redactor = ScriptedService.withBinding(ID).validating(TckTest::strict).answering(e -> {
            String body = e.getBody().toStringUtf8();
            if (!body.contains("@")) {
                return allow();
            }
            return allow().toBuilder().setHasBody(true).setBody(com.google.protobuf.ByteString.copyFromUtf8(
                    body.replaceAll("[A-Za-z0-9._-]+@[A-Za-z0-9.-]+", "[email]")))
                    .addHeaderMutations(HeaderMutation.newBuilder().setWrite(WriteHeader.newBuilder()
                            .setName("x-redacted").setValue("email").setOnExistingValue(2)))
                    .addFindings(Finding.newBuilder().setType("pii.email").setCount(2)).build();
        });
        try (TestServer s = TestServer.start(redactor)) {
            TckReport r = tck(s.endpoint(), Duration.ofSeconds(5), StageLimits.DEFAULT);
            assertFalse(r.passed(), r.toText());
            assertEquals(Set.of("evaluate.probe_email", "result.header_mutations"), failed(r), r.toText());
            assertTrue(r.check("result.header_mutations").orElseThrow().reason()
                    .contains("probe_email: header_mutation_write_namespace"), r.toText());
        }
        // the same redactor, writing in the namespace: every check passes, and the report shows the transform
        ScriptedService fixed = ScriptedService.withBinding(ID).validating(TckTest::strict).answering(e -> {
            String body = e.getBody().toStringUtf8();
            if (!body.contains("@")) {
                return allow();
            }
            return allow().toBuilder().setHasBody(true).setBody(com.google.protobuf.ByteString.copyFromUtf8(
                    body.replaceAll("[A-Za-z0-9._-]+@[A-Za-z0-9.-]+", "[email]")))
                    .addHeaderMutations(HeaderMutation.newBuilder().setWrite(WriteHeader.newBuilder()
                            .setName("x-openshell-middleware-redacted").setValue("email").setOnExistingValue(2)))
                    .build();
        });
        try (TestServer s = TestServer.start(fixed)) {
            TckReport r = tck(s.endpoint(), Duration.ofSeconds(5), StageLimits.DEFAULT);
            assertEquals(Set.of(), failed(r), r.toText());
            assertTrue(r.check("evaluate.probe_email").orElseThrow().figure().contains("body replaced"), r.toText());
        }
    }

    @Test
    void bodyFilesAreSentAfterTheProbesAndTooLargeOnesAreSkipped() throws Exception {
        ScriptedService denier = new ScriptedService(ScriptedService.manifest(ScriptedService.binding(ID, SMALL, "")))
                .validating(TckTest::strict).answering(e -> e.getBody().toStringUtf8().contains("forbidden")
                        ? HttpRequestResult.newBuilder().setDecisionValue(2).setReasonCode("forbidden_word").build()
                        : allow());
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("tck-bodies");
        try (TestServer s = TestServer.start(denier)) {
            java.nio.file.Path small = java.nio.file.Files.writeString(dir.resolve("mine.txt"), "a forbidden word");
            java.nio.file.Path big = java.nio.file.Files.write(dir.resolve("big.json"), new byte[SMALL + 1]);
            TckReport r = Tck.run(new TckOptions(Fixtures.plaintext("broken", s.endpoint(), 0, Duration.ofSeconds(5)),
                    Optional.empty(), JsonObject.EMPTY_JSON_OBJECT, 2, 0, TckOptions.DEFAULT_LOAD_DURATION,
                    StageLimits.DEFAULT, List.of(dev.openshell.supervisor.grpc.tck.Probe.ofFile(small, 1),
                    dev.openshell.supervisor.grpc.tck.Probe.ofFile(big, 2))));
            assertEquals(Set.of(), failed(r), r.toText());
            Check mine = r.check("evaluate.body_1").orElseThrow();
            assertEquals(Check.Status.PASS, mine.status(), r.toText());
            assertTrue(mine.reason().contains("--body mine.txt") && mine.reason().contains("text/plain"), r.toText());
            assertTrue(mine.figure().contains("denied (forbidden_word)"), r.toText());
            assertEquals(Check.Status.SKIP, r.check("evaluate.body_2").orElseThrow().status(), r.toText());
        } finally {
            try (var files = java.nio.file.Files.walk(dir)) {
                for (java.nio.file.Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    java.nio.file.Files.delete(p);
                }
            }
        }
    }

    @Test
    void invalidResultsAreNamedByTheRuleTheyBreak() throws Exception {
        // capability 64 KiB keeps the run small; each body size gets its own defect
        ScriptedService broken = new ScriptedService(ScriptedService.manifest(ScriptedService.binding(ID, SMALL, "")))
                .validating(TckTest::strict).answering(TckTest::brokenBySize);
        try (TestServer s = TestServer.start(broken)) {
            TckReport r = tck(s.endpoint(), Duration.ofSeconds(5), StageLimits.DEFAULT);
            assertEquals(Set.of("evaluate.empty_body", "evaluate.json_2k", "evaluate.max_body",
                    "evaluate.full_envelope", "result.decision", "result.header_mutations", "result.findings",
                    "result.reason_code", "result.has_body", "latency.empty_body", "latency.json_2k",
                    "latency.max_body", "deadline.recovers"), failed(r), r.toText());
            assertTrue(r.check("result.decision").orElseThrow().reason().contains("empty_body: invalid_decision"),
                    r.toText());
            assertTrue(r.check("result.header_mutations").orElseThrow().reason()
                    .contains("json_2k: header_mutation_write_namespace"), r.toText());
            assertTrue(r.check("result.findings").orElseThrow().reason()
                    .contains("max_body: " + PlatformCodes.FINDING_COUNT_OVER_CAPACITY), r.toText());
            assertTrue(r.check("result.reason_code").orElseThrow().reason()
                    .contains("full_envelope: " + PlatformCodes.RESULT_INVALID_REASON_CODE), r.toText());
            assertTrue(r.check("result.has_body").orElseThrow().reason().contains("has_body = false"), r.toText());
            assertEquals("PASS", r.check("evaluate.message_limit").orElseThrow().status().name(), r.toText());
        }
    }

    /** 0 bytes: no decision; 2 KiB: a write outside the namespace; max body: 33 findings; full envelope: a bad code. */
    private static HttpRequestResult brokenBySize(HttpRequestEvaluation e) {
        int size = e.getBody().size();
        if (e.getHeadersCount() > 100) {
            return HttpRequestResult.newBuilder().setDecisionValue(1).setReasonCode("Not A Code")
                    .setBody(com.google.protobuf.ByteString.copyFromUtf8("lost")).build();
        }
        if (size == 0) {
            return HttpRequestResult.newBuilder().build();
        }
        if (size == 2048) {
            return HttpRequestResult.newBuilder().setDecisionValue(1).addHeaderMutations(HeaderMutation.newBuilder()
                    .setWrite(WriteHeader.newBuilder().setName("x-custom").setValue("1").setOnExistingValue(2)))
                    .build();
        }
        if (size < 2048) {
            return allow();                                     // the probes: their own test below
        }
        HttpRequestResult.Builder b = HttpRequestResult.newBuilder().setDecisionValue(1);
        for (int i = 0; i < 33; i++) {
            b.addFindings(Finding.newBuilder().setType("pii.email").setCount(1));
        }
        return b.build();
    }

    @Test
    void aServerWithGrpcDefaultMessageLimitFailsWhereTheSupervisorSendsMore() throws Exception {
        ScriptedService s = ScriptedService.withBinding(ID).answering(e -> allow()).validating(TckTest::strict);
        try (Broken b = Broken.start(s.bindService(), 0, false)) {
            TckReport r = tck(b.endpoint(), Duration.ofSeconds(5), StageLimits.DEFAULT);
            assertEquals(Set.of("evaluate.max_body", "evaluate.full_envelope", "evaluate.message_limit",
                    "latency.max_body"), failed(r), r.toText());
            assertTrue(r.check("evaluate.message_limit").orElseThrow().reason().contains("RESOURCE_EXHAUSTED"),
                    r.toText());
            assertTrue(r.check("evaluate.max_body").orElseThrow().reason().contains("service_error"), r.toText());
        }
    }

    @Test
    void acceptingMalformedConfigsAndHoldingAWorkerPastTheDeadlineAreNamed() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ScriptedService s = new ScriptedService(ScriptedService.manifest(ScriptedService.binding(ID, SMALL, "")))
                .validating(v -> ValidateConfigResponse.newBuilder().setValid(true).build())
                .answering(e -> allow());
        // a call with less than a second left takes the only worker and keeps it, ignoring the cancellation
        ServerInterceptor holdsTheWorker = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                               ServerCallHandler<Q, R> next) {
                var deadline = Context.current().getDeadline();
                if (deadline != null && deadline.timeRemaining(TimeUnit.MILLISECONDS) < 1000) {
                    try {
                        release.await();
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                    }
                }
                return next.startCall(call, headers);
            }
        };
        try (Broken b = Broken.start(ServerInterceptors.intercept(s, holdsTheWorker),
                EnvelopeLimits.MIN_GRPC_MESSAGE_BYTES, true)) {
            TckReport r = tck(b.endpoint(), Duration.ofSeconds(2), StageLimits.DEFAULT);
            assertEquals(Set.of("validate_config.rejects_malformed", "deadline.recovers"), failed(r), r.toText());
        } finally {
            release.countDown();
        }
    }

    @Test
    void tighteningALimitMovesTheSupervisorsValidationAndTheKitTogether() throws Exception {
        AtomicInteger mostHeaders = new AtomicInteger();
        ScriptedService s = new ScriptedService(ScriptedService.manifest(ScriptedService.binding(ID, SMALL, "")))
                .validating(TckTest::strict).answering(e -> {
                    mostHeaders.accumulateAndGet(e.getHeadersCount(), Math::max);
                    HttpRequestResult.Builder r = HttpRequestResult.newBuilder().setDecisionValue(1);
                    for (int i = 0; i < 5; i++) {
                        r.putMetadata("k" + i, "v");
                    }
                    return r.build();
                });
        StageLimits tight = StageLimits.DEFAULT.with(StageLimits.Limit.METADATA_ENTRIES, 4);
        try (TestServer server = TestServer.start(s);
             ExternalServices registry = ExternalServices.connect(List.of(Fixtures.plaintext("broken",
                     server.endpoint(), SMALL, Duration.ofSeconds(5))))) {
            GrpcMiddlewareProvider provider = registry.providers().getOnly();
            // the supervisor's own path: the registry's adapter in a chain engine with the contract's limits ...
            assertEquals(Optional.empty(), supervisorStage(provider, StageLimits.DEFAULT).failure());
            TckReport contract = tck(server.endpoint(), Duration.ofSeconds(5), StageLimits.DEFAULT);
            assertEquals(Set.of(), failed(contract), contract.toText());
            // ... and with one limit tightened: both refuse the same result, with the same code
            assertEquals(PlatformCodes.METADATA_COUNT_OVER_CAPACITY,
                    supervisorStage(provider, tight).failure().orElseThrow().code());
            TckReport tightened = tck(server.endpoint(), Duration.ofSeconds(5), tight);
            assertTrue(failed(tightened).contains("result.metadata"), tightened.toText());
            assertTrue(tightened.check("result.metadata").orElseThrow().reason()
                    .contains(PlatformCodes.METADATA_COUNT_OVER_CAPACITY), tightened.toText());
            // the generated envelope follows the limits the engine checks: 16 header lines, accepted as input
            mostHeaders.set(0);
            TckReport fewer = tck(server.endpoint(), Duration.ofSeconds(5),
                    StageLimits.DEFAULT.with(StageLimits.Limit.HEADER_LINES, 16));
            assertEquals(Set.of(), failed(fewer), fewer.toText());
            assertEquals(16, mostHeaders.get());
            assertTrue(fewer.check("evaluate.full_envelope").orElseThrow().reason().contains("16 visible header"),
                    fewer.toText());
        }
    }

    private static StageRecord supervisorStage(GrpcMiddlewareProvider provider, StageLimits limits) {
        BindingId id = new BindingId(ID);
        StageSpec spec = new StageSpec("cfg", id, provider, Provenance.THIRD_PARTY, 1, OnError.FAIL_CLOSED, SMALL,
                provider.timeout(id).toMillis(), JsonObject.EMPTY_JSON_OBJECT, h -> true);
        ChainRequest request = new ChainRequest(new HttpRequestTarget("https", "api.example.com", 443, "POST", "/",
                ""), List.of(new HttpHeader("content-type", "application/json")), Body.ofUtf8("{}"),
                RequestContext.of("r-1"));
        return ChainEngine.builder().limits(limits).build().run(ChainSelector.of(List.of(spec))
                .select("api.example.com"), request).stages().get(0);
    }

    @Test
    void anUnreachableServiceFailsDescribeAndSkipsTheRest() {
        TckReport r = tck(URI.create("http://127.0.0.1:1"), Duration.ofMillis(200), StageLimits.DEFAULT);
        assertEquals(Set.of("describe.answer"), failed(r), r.toText());
        assertTrue(r.check("describe.answer").orElseThrow().reason().contains("UNAVAILABLE"), r.toText());
        assertFalse(r.toJson().getBoolean("passed"));
    }
}
