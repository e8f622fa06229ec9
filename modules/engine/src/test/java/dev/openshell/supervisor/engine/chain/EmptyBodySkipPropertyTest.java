package dev.openshell.supervisor.engine.chain;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;

/**
 * Skipping stages that declare {@code skip_empty_body} changes nothing a client or upstream can see: for any chain of
 * stages that keep their declaration (a plain allow on an empty body), the outcome, headers and body are those of the
 * same chain run without any declaration, and a declaring stage is invoked exactly when a non-empty body reaches it.
 */
class EmptyBodySkipPropertyTest {
    private static final ChainEngine ENGINE = ChainEngine.builder().build();

    /**
     * One stage: whether it declares the skip, and what it does with a non-empty body ({@code replace}: -1 keeps it,
     * 0 empties it, n puts n bytes in place) or, when it does not declare, with any body; {@code deny} denies instead.
     */
    record Behaviour(boolean declares, int replace, boolean deny) {
        HttpRequestResult answer(HttpRequestEvaluation e) {
            if (declares && e.body().isEmpty()) {
                return HttpRequestResult.allow(); // the declaration's promise
            }
            if (deny) {
                return HttpRequestResult.deny("denied", "denied");
            }
            HttpRequestResult.Builder r = HttpRequestResult.builder(Decision.ALLOW).metadata("seen", "yes")
                    .finding(dev.openshell.middleware.spi.Finding.of("test.seen", "seen", 1));
            return replace < 0 ? r.build() : r.body(Body.ofUtf8("b".repeat(replace))).build();
        }
    }

    @Provide
    Arbitrary<Behaviour> behaviour() {
        return Combinators.combine(Arbitraries.of(true, false), Arbitraries.integers().between(-1, 3),
                Arbitraries.integers().between(0, 9).map(n -> n == 0)).as(Behaviour::new);
    }

    @Provide
    Arbitrary<String> body() {
        return Arbitraries.of("", "", "x", "secret");
    }

    private static ChainResult run(List<Behaviour> behaviours, String body, boolean honourDeclarations,
                                   List<Stages.Scripted> providers) {
        List<StageSpec> specs = new ArrayList<>();
        for (int i = 0; i < behaviours.size(); i++) {
            Behaviour b = behaviours.get(i);
            Function<HttpRequestEvaluation, HttpRequestResult> script = b::answer;
            Stages.Scripted p = new Stages.Scripted("openshell/test", script, honourDeclarations && b.declares());
            providers.add(p);
            specs.add(Stages.spec("s" + i, 10L * (i + 1), p).build());
        }
        ChainRequest request = Stages.request(List.of(new HttpHeader("accept", "*/*")), Body.ofUtf8(body));
        return ENGINE.run(Stages.chain(specs.toArray(StageSpec[]::new)), request);
    }

    @Property(tries = 400)
    void skippingIsInvisibleToClientAndUpstream(@ForAll @Size(min = 1, max = 5) List<@net.jqwik.api.From("behaviour") Behaviour> behaviours,
                                                 @ForAll("body") String body) {
        List<Stages.Scripted> skipping = new ArrayList<>();
        List<Stages.Scripted> invoked = new ArrayList<>();
        ChainResult withSkips = run(behaviours, body, true, skipping);
        ChainResult withoutSkips = run(behaviours, body, false, invoked);

        assertEquals(withoutSkips.forwarded(), withSkips.forwarded());
        assertEquals(withoutSkips.denial(), withSkips.denial());
        assertEquals(withoutSkips.headers(), withSkips.headers());
        assertEquals(withoutSkips.body(), withSkips.body());
        assertEquals(withoutSkips.metadata().flat(), withSkips.metadata().flat(),
                "no stage that would have said something was skipped");
        assertEquals(withoutSkips.findings(), withSkips.findings());
        for (int i = 0; i < behaviours.size(); i++) {
            List<HttpRequestEvaluation> seen = invoked.get(i).seen;
            long nonEmpty = seen.stream().filter(e -> !e.body().isEmpty()).count();
            int expected = behaviours.get(i).declares() ? (int) nonEmpty : seen.size();
            assertEquals(expected, skipping.get(i).calls(), "stage s" + i + " invoked exactly when it had a body");
        }
        assertEquals(withoutSkips.stages().size(), withSkips.stages().size() + withSkips.skipped().size(),
                "each stage either ran or was skipped");
    }
}
