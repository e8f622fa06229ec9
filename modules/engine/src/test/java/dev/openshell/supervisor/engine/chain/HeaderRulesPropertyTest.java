package dev.openshell.supervisor.engine.chain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.openshell.middleware.spi.ExistingHeaderAction;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.internal.Syntax;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/** Laws of {@link HeaderRules#apply} over generated header lists and mutation lists (issue 4, item 8). */
class HeaderRulesPropertyTest {
    private static final Set<String> NOMINATED = Set.of("x-hop", "x-openshell-middleware-hop");
    private final HeaderRules rules = new HeaderRules();

    @Provide
    Arbitrary<String> names() {
        return Arbitraries.oneOf(
                Arbitraries.of("authorization", "Authorization", "PROXY-AUTHORIZATION", "proxy-authenticate", "Cookie",
                        "host", "Content-Length", "transfer-encoding", "connection", "Proxy-Connection", "keep-alive",
                        "TE", "trailer", "upgrade", "x-amz-date", "X-Amz-Security-Token", "x-openshell-credential",
                        "X-OpenShell-Credential-Token", "x-hop", "X-OpenShell-Middleware-Hop"),
                Arbitraries.of("x-openshell-middleware-a", "X-OpenShell-Middleware-B", "x-openshell-middleware-",
                        "accept", "x-trace", "X-Api-Key", "set-cookie"),
                Arbitraries.of("bad name", "", "x@y", "x-openshell-middleware-\u00e9"),
                Arbitraries.strings().withCharRange('a', 'z').withChars('-').ofMinLength(1).ofMaxLength(12),
                Arbitraries.strings().withCharRange('a', 'z').ofMinLength(1).ofMaxLength(8)
                        .map(s -> "x-openshell-middleware-" + s));
    }

    @Provide
    Arbitrary<String> values() {
        return Arbitraries.oneOf(Arbitraries.strings().ofMaxLength(20),
                Arbitraries.strings().withCharRange(' ', '~').ofMaxLength(20),
                Arbitraries.of("ok\r\nAuthorization: Bearer evil", "a\u0000b", "\t tab ", "caf\u00e9"));
    }

    @Provide
    Arbitrary<HeaderMutation> mutations() {
        Arbitrary<HeaderMutation> writes = Combinators.combine(names(), values(),
                Arbitraries.of(ExistingHeaderAction.class)).as(HeaderMutation::write);
        return Arbitraries.oneOf(writes, writes, names().map(HeaderMutation::remove));
    }

    @Provide
    Arbitrary<List<HttpHeader>> headers() {
        return Combinators.combine(names().filter(Syntax::isToken).map(HeaderRules::asciiLower),
                        Arbitraries.strings().withCharRange(' ', '~').ofMaxLength(10))
                .as(HttpHeader::new).list().ofMaxSize(12);
    }

    @Provide
    Arbitrary<List<HeaderMutation>> validMutations() {
        Arbitrary<String> writable = Arbitraries.of("x-openshell-middleware-a", "X-OpenShell-Middleware-B",
                "x-openshell-middleware-c");
        Arbitrary<HeaderMutation> writes = Combinators.combine(writable,
                Arbitraries.strings().withCharRange(' ', '~').ofMaxLength(10),
                Arbitraries.of(ExistingHeaderAction.APPEND, ExistingHeaderAction.OVERWRITE, ExistingHeaderAction.SKIP))
                .as(HeaderMutation::write);
        Arbitrary<HeaderMutation> removes = Arbitraries.of("accept", "x-trace", "X-Api-Key", "x-openshell-middleware-a")
                .map(HeaderMutation::remove);
        return Arbitraries.oneOf(writes, removes).list().ofMaxSize(10);
    }

    private static boolean guarded(HttpHeader h) {
        String lower = HeaderRules.asciiLower(h.name());
        return HeaderRules.isProtected(lower) || NOMINATED.contains(lower);
    }

    @Property(tries = 2000)
    void aProtectedOrNominatedHeaderIsNeverChangedWhateverTheMutations(
            @ForAll("headers") List<HttpHeader> existing, @ForAll("mutationLists") List<HeaderMutation> mutations) {
        MutationOutcome outcome = rules.apply(existing, NOMINATED, mutations);
        List<HttpHeader> after = outcome instanceof MutationOutcome.Applied a ? a.headers() : existing;
        assertEquals(existing.stream().filter(HeaderRulesPropertyTest::guarded).toList(),
                after.stream().filter(HeaderRulesPropertyTest::guarded).toList());
    }

    @Provide
    Arbitrary<List<HeaderMutation>> mutationLists() {
        return mutations().list().ofMaxSize(8);
    }

    @Property(tries = 1000)
    void anInvalidMutationAnywhereRejectsTheWholeList(@ForAll("headers") List<HttpHeader> existing,
                                                      @ForAll("validMutations") List<HeaderMutation> valid,
                                                      @ForAll("invalidMutations") HeaderMutation invalid,
                                                      @ForAll @IntRange(max = 10) int at) {
        assertInstanceOf(MutationOutcome.Applied.class, rules.apply(existing, NOMINATED, valid));
        List<HeaderMutation> withInvalid = new ArrayList<>(valid);
        withInvalid.add(Math.min(at, valid.size()), invalid);
        assertInstanceOf(MutationOutcome.Rejected.class, rules.apply(existing, NOMINATED, withInvalid));
    }

    @Provide
    Arbitrary<HeaderMutation> invalidMutations() {
        return Arbitraries.of(
                HeaderMutation.write("authorization", "x", ExistingHeaderAction.APPEND),
                HeaderMutation.remove("Host"),
                HeaderMutation.remove("x-hop"),
                HeaderMutation.write("x-trace", "x", ExistingHeaderAction.APPEND),
                HeaderMutation.write("x-openshell-middleware-a", "a\r\nb", ExistingHeaderAction.APPEND),
                HeaderMutation.write("x-openshell-middleware-a", "x", ExistingHeaderAction.UNSPECIFIED),
                HeaderMutation.write("x-openshell-middleware-a", "x", ExistingHeaderAction.UNRECOGNIZED),
                HeaderMutation.write("bad name", "x", ExistingHeaderAction.APPEND),
                HeaderMutation.write("x-openshell-middleware-big", "v".repeat(40_000), ExistingHeaderAction.SKIP));
    }

    @Property(tries = 1000)
    void skipIsIdempotent(@ForAll("headers") List<HttpHeader> existing, @ForAll("writableValue") String value) {
        List<HeaderMutation> skip = List.of(HeaderMutation.write("X-OpenShell-Middleware-S", value,
                ExistingHeaderAction.SKIP));
        List<HttpHeader> once = applied(existing, skip);
        assertEquals(once, applied(once, skip));
        if (existing.stream().anyMatch(h -> h.name().equals("x-openshell-middleware-s"))) {
            assertEquals(existing, once);
        }
    }

    @Property(tries = 1000)
    void overwriteLeavesExactlyOneLineAtTheEndAndOthersInOrder(@ForAll("headers") List<HttpHeader> existing,
                                                              @ForAll("writableValue") String value) {
        String name = "x-openshell-middleware-a";
        List<HttpHeader> after = applied(existing, List.of(HeaderMutation.write("X-OpenShell-Middleware-A", value,
                ExistingHeaderAction.OVERWRITE)));
        assertEquals(List.of(new HttpHeader(name, value)),
                after.stream().filter(h -> h.name().equals(name)).toList());
        assertEquals(new HttpHeader(name, value), after.getLast());
        assertEquals(existing.stream().filter(h -> !h.name().equals(name)).toList(),
                after.subList(0, after.size() - 1));
    }

    @Property(tries = 1000)
    void appendKeepsEveryEarlierLineInOrderAndAddsOneAtTheEnd(@ForAll("headers") List<HttpHeader> existing,
                                                             @ForAll("writableValue") String value) {
        List<HttpHeader> after = applied(existing, List.of(HeaderMutation.write("X-OpenShell-Middleware-A", value,
                ExistingHeaderAction.APPEND)));
        assertEquals(existing, after.subList(0, existing.size()));
        assertEquals(List.of(new HttpHeader("x-openshell-middleware-a", value)), after.subList(existing.size(),
                after.size()));
    }

    @Property(tries = 1000)
    void applyingIsDeterministicAndNeverTouchesTheInput(@ForAll("headers") List<HttpHeader> existing,
                                                        @ForAll("validMutations") List<HeaderMutation> mutations) {
        List<HttpHeader> copy = List.copyOf(existing);
        assertEquals(applied(existing, mutations), applied(existing, mutations));
        assertEquals(copy, existing);
    }

    @Provide
    Arbitrary<String> writableValue() {
        return Arbitraries.strings().withCharRange(' ', '~').withChars('\t', '\u00e9').ofMaxLength(30);
    }

    private List<HttpHeader> applied(List<HttpHeader> existing, List<HeaderMutation> mutations) {
        return assertInstanceOf(MutationOutcome.Applied.class, rules.apply(existing, NOMINATED, mutations)).headers();
    }
}
