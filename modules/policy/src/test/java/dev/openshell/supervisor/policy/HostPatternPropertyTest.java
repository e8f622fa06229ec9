package dev.openshell.supervisor.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;

import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;

/** Properties of host patterns, selectors and the exact overlap check (issue 3, item 6). */
class HostPatternPropertyTest {
    private static final List<String> UNIVERSE = HostArbitraries.universe();

    @Provide
    Arbitrary<HostPattern> patterns() {
        return HostArbitraries.pattern();
    }

    @Provide
    Arbitrary<HostSelector> selectors() {
        return HostArbitraries.selector();
    }

    @Provide
    Arbitrary<String> smallHosts() {
        return HostArbitraries.smallHost();
    }

    @Provide
    Arbitrary<String> dnsHosts() {
        return HostArbitraries.dnsHost();
    }

    @Property
    void exclusionAlwaysWins(@ForAll("selectors") HostSelector selector, @ForAll("smallHosts") String host,
                             @ForAll Random random) {
        for (String h : List.of(host, HostArbitraries.instantiate(selector.include().get(0), random))) {
            if (selector.exclude().anySatisfy(p -> p.matches(h))) {
                assertFalse(selector.matches(h), () -> selector + " selected excluded host " + h);
            }
            assertEquals(selector.include().anySatisfy(p -> p.matches(h))
                    && selector.exclude().noneSatisfy(p -> p.matches(h)), selector.matches(h));
        }
    }

    @Property
    void matchingIsCaseInsensitive(@ForAll("patterns") HostPattern pattern, @ForAll Random random) {
        String host = HostArbitraries.instantiate(pattern, random);
        String flipped = flipCase(host, random);
        HostPattern flippedPattern = HostPattern.parse(flipCase(pattern.source(), random));
        assertTrue(pattern.matches(host));
        assertTrue(pattern.matches(flipped), () -> pattern + " vs " + flipped);
        assertTrue(flippedPattern.matches(host));
        assertEquals(pattern, flippedPattern);
        String other = HostArbitraries.smallHost().generator(1).next(random).value();
        assertEquals(pattern.matches(other), pattern.matches(flipCase(other, random)));
    }

    @Property
    void recursiveWildcardNeverMatchesItsSuffixAlone(@ForAll("dnsHosts") String host) {
        HostPattern recursive = HostPattern.parse("**." + host);
        assertFalse(recursive.matches(host));
        assertTrue(recursive.matches("x." + host));
        assertTrue(recursive.matches("x.y." + host));
    }

    @Property
    void singleStarNeverSpansADot(@ForAll("patterns") HostPattern pattern, @ForAll("smallHosts") String host) {
        boolean recursive = false;
        for (int i = 0; i < pattern.labelCount(); i++) {
            recursive |= pattern.label(i) == null;
        }
        if (!recursive && pattern.matches(host)) {
            assertEquals(pattern.labelCount(), host.split("\\.", -1).length,
                    () -> pattern + " matched " + host + " across a dot");
        }
        assertFalse(HostPattern.parse("*").matches(host.contains(".") ? host : host + ".x"));
    }

    @Property
    void everyWildcardGeneralisationOfAConcreteHostMatchesIt(@ForAll("dnsHosts") String host,
                                                             @ForAll Random random) {
        HostPattern concrete = HostPattern.parse(host);
        assertTrue(concrete.isLiteral());
        assertTrue(concrete.matches(host));
        String general = generalise(host, random);
        assertTrue(HostPattern.parse(general).matches(host), () -> general + " should match " + host);
    }

    @Property
    void overlapIsSymmetric(@ForAll("patterns") HostPattern a, @ForAll("patterns") HostPattern b) {
        assertEquals(a.overlaps(b), b.overlaps(a), () -> a + " / " + b);
        assertTrue(a.overlaps(a));
    }

    @Property
    void overlapAgreesWithBruteForce(@ForAll("patterns") HostPattern a, @ForAll("patterns") HostPattern b,
                                     @ForAll Random random) {
        Optional<String> shared = a.sharedHost(b);
        Statistics.collect(shared.isPresent() ? "overlap" : "disjoint");
        Statistics.coverage(c -> {
            c.check("overlap").percentage(p -> p > 15);
            c.check("disjoint").percentage(p -> p > 15);
        });
        shared.ifPresent(h -> {
            assertTrue(a.matches(h), () -> "witness " + h + " not matched by " + a);
            assertTrue(b.matches(h), () -> "witness " + h + " not matched by " + b);
        });
        List<String> candidates = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            candidates.add(HostArbitraries.instantiate(a, random));
            candidates.add(HostArbitraries.instantiate(b, random));
        }
        for (String h : candidates) {
            if (a.matches(h) && b.matches(h)) {
                assertTrue(shared.isPresent(), () -> a + " and " + b + " both match " + h + " yet do not overlap");
            }
        }
        if (shared.isEmpty()) {
            for (String h : UNIVERSE) {
                assertFalse(a.matches(h) && b.matches(h), () -> a + " and " + b + " both match " + h);
            }
        }
    }

    @Property
    void selectorOverlapIsExact(@ForAll("selectors") HostSelector selector, @ForAll("patterns") HostPattern candidate,
                                @ForAll Random random) {
        Optional<String> shared = selector.sharedHost(candidate);
        Statistics.collect(shared.isPresent() ? "conflict" : "none");
        Statistics.coverage(c -> {
            c.check("conflict").percentage(p -> p > 10);
            c.check("none").percentage(p -> p > 10);
        });
        shared.ifPresent(h -> {
            assertTrue(selector.matches(h), () -> selector + " does not select its witness " + h);
            assertTrue(candidate.matches(h), () -> candidate + " does not match the witness " + h);
        });
        for (int i = 0; i < 40; i++) {
            String h = HostArbitraries.instantiate(candidate, random);
            if (selector.matches(h)) {
                assertTrue(shared.isPresent(), () -> selector + " selects " + h + " of " + candidate);
            }
        }
        if (shared.isEmpty()) {
            for (String h : UNIVERSE) {
                assertFalse(selector.matches(h) && candidate.matches(h), () -> selector + " selects " + h);
            }
        }
    }

    private static String flipCase(String s, Random random) {
        StringBuilder b = new StringBuilder(s.length());
        for (char c : s.toCharArray()) {
            b.append(random.nextBoolean() ? Character.toUpperCase(c) : Character.toLowerCase(c));
        }
        return b.toString();
    }

    /**
     * Replaces parts of a concrete host by wildcards: a run of labels by {@code **}, whole labels by {@code *},
     * characters by {@code ?}, and runs of characters inside a label by {@code *}.
     */
    private static String generalise(String host, Random random) {
        List<String> labels = new ArrayList<>(List.of(host.split("\\.", -1)));
        if (random.nextInt(3) == 0) {
            int from = random.nextInt(labels.size());
            int to = from + 1 + random.nextInt(labels.size() - from);
            labels.subList(from, to).clear();
            labels.add(from, "**");
        }
        List<String> out = new ArrayList<>();
        for (String label : labels) {
            if (label.equals("**")) {
                out.add(label);
                continue;
            }
            switch (random.nextInt(4)) {
                case 0 -> out.add("*");
                case 1 -> {
                    int i = random.nextInt(label.length());
                    out.add(label.substring(0, i) + "?" + label.substring(i + 1));
                }
                case 2 -> {
                    int i = random.nextInt(label.length() + 1);
                    int j = i + random.nextInt(label.length() - i + 1);
                    out.add(label.substring(0, i) + "*" + label.substring(j));
                }
                default -> out.add(label);
            }
        }
        return String.join(".", out);
    }

    @Property(tries = 50)
    void generalisationsStayValid(@ForAll("dnsHosts") String host, @ForAll Random random) {
        String general = generalise(host, random);
        assertEquals(null, HostPattern.problem(general), general);
    }
    /**
     * The allocation-free matcher agrees with an independent oracle: the pattern translated to a regular expression
     * ({@code **} one or more whole labels, {@code *} a run within a label, {@code ?} one character), and hosts with
     * an empty label matching nothing.
     */
    @Property
    void matchingAgreesWithARegularExpressionOracle(@ForAll("patterns") HostPattern pattern,
                                                     @ForAll("smallHosts") String host) {
        assertEquals(oracle(pattern.source(), host), pattern.matches(host), pattern.source() + " vs " + host);
    }

    @Property(tries = 200)
    void matchingAgreesWithTheOracleOnUppercaseAndEmptyLabels(@ForAll("patterns") HostPattern pattern,
                                                               @ForAll("dnsHosts") String host, @ForAll Random random) {
        String variant = switch (random.nextInt(4)) {
            case 0 -> host.toUpperCase(java.util.Locale.ROOT);
            case 1 -> host + ".";
            case 2 -> "." + host;
            default -> host.replaceFirst("\\.", "..");
        };
        assertEquals(oracle(pattern.source(), variant), pattern.matches(variant), pattern.source() + " vs " + variant);
    }

    private static boolean oracle(String patternSource, String host) {
        if (host.isEmpty() || host.startsWith(".") || host.endsWith(".") || host.contains("..")) {
            return false;
        }
        StringBuilder re = new StringBuilder();
        String[] labels = patternSource.split("\\.", -1);
        for (int i = 0; i < labels.length; i++) {
            if (i > 0) {
                re.append("\\.");
            }
            if (labels[i].equals("**")) {
                re.append("[^.]+(?:\\.[^.]+)*");
                continue;
            }
            for (char c : labels[i].toCharArray()) {
                re.append(switch (c) {
                    case '*' -> "[^.]*";
                    case '?' -> "[^.]";
                    default -> java.util.regex.Pattern.quote(String.valueOf(c));
                });
            }
        }
        return java.util.regex.Pattern.compile(re.toString(), java.util.regex.Pattern.CASE_INSENSITIVE)
                .matcher(host).matches();
    }
}
