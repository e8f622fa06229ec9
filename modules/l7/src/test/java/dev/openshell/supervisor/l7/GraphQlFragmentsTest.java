package dev.openshell.supervisor.l7;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A GraphQL operation's root fields through fragment spreads (attacker pass 5, F1): each fragment is expanded once per
 * operation, so a document of {@code D} fragments each spreading the next twice costs work in proportion to {@code D}
 * (it cost {@code 2^D}: two 1.4 KB requests held both carrier threads for hours), and the fields are those of every
 * fragment the operation reaches, cycles included.
 */
class GraphQlFragmentsTest {
    /** {@code query{...F0}}, each {@code Fi} spreading {@code F(i+1)} twice, the last one holding {@code last}. */
    private static String fanOut(int depth, String last) {
        StringBuilder d = new StringBuilder("query{...F0}");
        for (int i = 0; i < depth; i++) {
            d.append(" fragment F").append(i).append(" on Query{...F").append(i + 1).append(" ...F").append(i + 1)
                    .append('}');
        }
        return d.append(" fragment F").append(depth).append(" on Query{").append(last).append("{id}}").toString();
    }

    /**
     * A termination guard, not a performance figure: expanded per spread, 60 levels are 2^60 expansions, which no
     * machine finishes; expanded once each, they take milliseconds.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aFragmentFanOutIsExpandedOncePerFragment() throws GraphQl.Invalid {
        assertEquals(List.of("secretKeys"), GraphQl.document(fanOut(60, "secretKeys"), null, false).fields());
        assertEquals(List.of("viewer"), GraphQl.document(fanOut(60, "viewer"), null, false).fields());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void theFanOutIsDeniedByAFieldRuleAtTheEnd() {
        L7Engine e = L7EngineTest.engine(L7EngineTest.GRAPHQL);
        assertEquals(L7Decision.Outcome.DENY, L7EngineTest.decide(e, "POST", "/graphql",
                L7EngineTest.gql(fanOut(60, "secretKeys"))).outcome());
        assertEquals(L7Decision.Outcome.ALLOW, L7EngineTest.decide(e, "POST", "/graphql",
                L7EngineTest.gql(fanOut(60, "viewer"))).outcome());
    }

    @Test
    void anUnknownFragmentIsStillRefused() {
        assertThrows(GraphQl.Invalid.class, () -> GraphQl.document(
                "query{...A} fragment A on Query{...B ...B x} fragment B on Query{...C}", null, false));
    }

    /**
     * Random fragment graphs (spreads repeated, cycles, fragments the operation never reaches): the root fields are
     * the fields of the operation and of every fragment reachable from it, found here by a plain graph search.
     */
    @Property(tries = 300)
    void theRootFieldsAreThoseOfEveryReachableFragment(
            @ForAll @Size(min = 1, max = 10) List<@Size(max = 4) List<@IntRange(min = 0, max = 9) Integer>> spreads,
            @ForAll @Size(max = 4) List<@IntRange(min = 0, max = 9) Integer> root) throws GraphQl.Invalid {
        int n = spreads.size();
        StringBuilder doc = new StringBuilder("query{r");
        root.forEach(t -> doc.append(" ...F").append(t % n));
        doc.append('}');
        for (int i = 0; i < n; i++) {
            doc.append(" fragment F").append(i).append(" on Query{f").append(i);
            spreads.get(i).forEach(t -> doc.append(" ...F").append(t % n));
            doc.append('}');
        }
        Set<String> expected = new TreeSet<>(Set.of("r"));
        Set<Integer> seen = new HashSet<>();
        ArrayDeque<Integer> todo = new ArrayDeque<>();
        root.forEach(t -> todo.add(t % n));
        while (!todo.isEmpty()) {
            int f = todo.poll();
            if (seen.add(f)) {
                expected.add("f" + f);
                spreads.get(f).forEach(t -> todo.add(t % n));
            }
        }
        assertEquals(List.copyOf(expected), GraphQl.document(doc.toString(), null, false).fields(), doc.toString());
    }
}
