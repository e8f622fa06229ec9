package dev.openshell.supervisor.engine.chain;

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
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/** Laws of the fold over generated chains and requests (issue 4, item 8). */
class ChainPropertyTest {
    private final ChainEngine engine = ChainEngine.builder().build();

    @Provide
    Arbitrary<List<HttpHeader>> headers() {
        Arbitrary<String> names = Arbitraries.oneOf(
                Arbitraries.of("Authorization", "cookie", "Host", "connection", "x-hop", "X-Amz-Date", "accept",
                        "X-Api-Key", "x-openshell-middleware-tag", "content-type"),
                Arbitraries.strings().withCharRange('a', 'z').withChars('-').ofMinLength(1).ofMaxLength(10));
        Arbitrary<String> values = Arbitraries.strings().withCharRange(' ', '~').ofMaxLength(16);
        return Combinators.combine(names, values).as(HttpHeader::new).list().ofMaxSize(10);
    }

    @Provide
    Arbitrary<byte[]> bodies() {
        return Arbitraries.bytes().array(byte[].class).ofMaxSize(200);
    }

    private static ChainRequest request(List<HttpHeader> headers, byte[] body) {
        return Stages.request(headers, Body.of(body));
    }

    @Property(tries = 300)
    void aChainOfIdentityStagesReturnsItsInput(@ForAll("headers") List<HttpHeader> headers,
                                              @ForAll("bodies") byte[] body,
                                              @ForAll @IntRange(min = 1, max = 10) int stages,
                                              @ForAll boolean thirdParty) {
        List<StageSpec> specs = new ArrayList<>();
        for (int i = 0; i < stages; i++) {
            Stages.Spec s = spec("k" + i, i * 10L, Stages.identity());
            specs.add((thirdParty ? s.thirdParty() : s).build());
        }
        ChainRequest request = request(headers, body);
        ChainResult result = engine.run(ChainSelector.of(specs).select("h"), request);
        assertTrue(result.forwarded());
        assertEquals(request.headers(), result.headers());
        assertEquals(request.body(), result.body());
        assertFalse(result.transformed());
        assertEquals(stages, result.stages().size());
        assertTrue(result.metadata().isEmpty());
    }

    @Property(tries = 300)
    void aDenyAtStageKMeansLaterStagesNeverRun(@ForAll @IntRange(min = 1, max = 10) int stages,
                                              @ForAll @IntRange(min = 0, max = 9) int k,
                                              @ForAll boolean denierIsFailOpen) {
        int denyAt = k % stages;
        List<Stages.Scripted> providers = new ArrayList<>();
        List<StageSpec> specs = new ArrayList<>();
        for (int i = 0; i < stages; i++) {
            Stages.Scripted p = i == denyAt ? provider(e -> HttpRequestResult.deny("no", "denied_here"))
                    : provider(e -> HttpRequestResult.builder(Decision.ALLOW).body(Body.ofUtf8("x")).build());
            providers.add(p);
            Stages.Spec s = spec("k" + i, 100 - i, p);
            specs.add((i == denyAt && denierIsFailOpen ? s.open() : s).build());
        }
        // orders descend with i, so the run order is the reverse of the list
        ChainResult result = engine.run(ChainSelector.of(specs).select("h"), Stages.request("b"));
        assertEquals("k" + denyAt, result.denial().orElseThrow().configKey().orElseThrow());
        for (int i = 0; i < stages; i++) {
            assertEquals(i >= denyAt ? 1 : 0, providers.get(i).calls(), "stage " + i);
        }
        assertEquals(stages - denyAt, result.stages().size());
    }

    /** A failure that also carries a transformation, so leaking any of it would show. */
    @Provide
    Arbitrary<Integer> failureKinds() {
        return Arbitraries.integers().between(0, 6);
    }

    private static HttpRequestResult failing(int kind) {
        HttpRequestResult.Builder b = HttpRequestResult.builder(Decision.ALLOW).body(Body.ofUtf8("changed"))
                .mutation(HeaderMutation.write("x-openshell-middleware-tag", "changed", ExistingHeaderAction.OVERWRITE))
                .mutation(HeaderMutation.remove("accept"))
                .metadata("k", "v");
        return switch (kind) {
            case 0 -> throw new IllegalStateException("boom");
            case 1 -> throw new MiddlewareException("stage_down", "down");
            case 2 -> null;
            case 3 -> b.reasonCode("BAD").build();
            case 4 -> b.mutation(HeaderMutation.remove("authorization")).build();
            case 5 -> {
                for (int i = 0; i < 33; i++) {
                    b.finding(Finding.of("t", "l", 1));
                }
                yield b.build();
            }
            default -> b.reason("r".repeat(5000)).build();
        };
    }

    @Property(tries = 300)
    void failOpenFailuresNeverChangeTheRepresentation(@ForAll("headers") List<HttpHeader> headers,
                                                     @ForAll("bodies") byte[] body,
                                                     @ForAll("failureKinds") int kind,
                                                     @ForAll @IntRange(min = 0, max = 3) int failingStages) {
        List<StageSpec> specs = new ArrayList<>();
        List<Stages.Scripted> observers = new ArrayList<>();
        for (int i = 0; i < failingStages + 1; i++) {
            if (i < failingStages) {
                specs.add(spec("fail" + i, i * 2L, provider(e -> failing(kind))).open().build());
            }
            Stages.Scripted observer = Stages.identity();
            observers.add(observer);
            specs.add(spec("obs" + i, i * 2L + 1, observer).build());
        }
        ChainRequest request = request(headers, body);
        ChainResult result = engine.run(ChainSelector.of(specs).select("h"), request);
        assertTrue(result.forwarded());
        assertEquals(request.headers(), result.headers());
        assertEquals(request.body(), result.body());
        assertTrue(result.metadata().isEmpty());
        List<HttpHeader> visible = HeaderRules.visible(request.headers(), request.connectionNominated());
        for (Stages.Scripted o : observers) {
            assertEquals(visible, o.seen.getFirst().headers());
            assertEquals(request.body(), o.seen.getFirst().body());
        }
        assertEquals(failingStages, result.stages().stream().filter(StageRecord::bypassed).count());
    }

    @Property(tries = 300)
    void anInvalidMutationAnywhereInAStageLeavesHeadersExactlyAsBefore(
            @ForAll("headers") List<HttpHeader> headers, @ForAll @IntRange(max = 5) int at) {
        List<HeaderMutation> mutations = new ArrayList<>(List.of(
                HeaderMutation.write("x-openshell-middleware-a", "1", ExistingHeaderAction.APPEND),
                HeaderMutation.remove("accept"),
                HeaderMutation.write("x-openshell-middleware-tag", "2", ExistingHeaderAction.OVERWRITE),
                HeaderMutation.remove("x-api-key")));
        mutations.add(Math.min(at, mutations.size()), HeaderMutation.write("Cookie", "stolen",
                ExistingHeaderAction.APPEND));
        HttpRequestResult.Builder b = HttpRequestResult.builder(Decision.ALLOW);
        mutations.forEach(b::mutation);
        HttpRequestResult result = b.build();
        Stages.Scripted observer = Stages.identity();
        ChainRequest request = request(headers, new byte[0]);
        ChainResult r = engine.run(Stages.chain(spec("m", 1, provider(e -> result)).open().build(),
                spec("o", 2, observer).build()), request);
        assertEquals(request.headers(), r.headers());
        assertEquals(HeaderRules.visible(request.headers(), request.connectionNominated()),
                observer.seen.getFirst().headers());
        assertEquals("header_mutation_protected_header",
                r.stages().getFirst().failure().orElseThrow().code());
    }
}
