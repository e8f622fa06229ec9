package dev.openshell.supervisor.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/** Generators of host patterns and hosts over small alphabets, so that random pairs often overlap. */
final class HostArbitraries {
    /** Characters of generated hosts: the pattern letters plus one no pattern uses. */
    static final char[] HOST_CHARS = {'a', 'b', '-', 'c'};

    private HostArbitraries() {
    }

    /** A label glob of 1 to 3 characters over {@code a b - * ?} (never containing {@code **}), or {@code **}. */
    static Arbitrary<String> label() {
        Arbitrary<String> glob = Arbitraries.strings().withChars('a', 'b', '-', '*', '?').ofMinLength(1)
                .ofMaxLength(3).filter(s -> !s.contains("**"));
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(5, glob),
                net.jqwik.api.Tuple.of(1, Arbitraries.just("**")));
    }

    /** A valid pattern of 1 to 3 such labels. */
    static Arbitrary<HostPattern> pattern() {
        return label().list().ofMinSize(1).ofMaxSize(3).map(labels -> HostPattern.parse(String.join(".", labels)));
    }

    /** A concrete host of 1 to 4 labels of 1 to 3 characters over {@link #HOST_CHARS}. */
    static Arbitrary<String> smallHost() {
        return Arbitraries.strings().withChars(HOST_CHARS).ofMinLength(1).ofMaxLength(3)
                .list().ofMinSize(1).ofMaxSize(4).map(l -> String.join(".", l));
    }

    /** A DNS-like host name: 1 to 5 labels of letters, digits and inner hyphens, in mixed case. */
    static Arbitrary<String> dnsHost() {
        Arbitrary<String> label = Combinators.combine(
                Arbitraries.strings().withCharRange('a', 'z').withCharRange('A', 'Z').withCharRange('0', '9')
                        .ofLength(1),
                Arbitraries.strings().withCharRange('a', 'z').withCharRange('0', '9').withChars('-')
                        .ofMaxLength(10),
                Arbitraries.strings().withCharRange('a', 'z').withCharRange('A', 'Z').withCharRange('0', '9')
                        .ofLength(1))
                .as((first, middle, last) -> first + middle + last);
        return label.list().ofMinSize(1).ofMaxSize(5).map(l -> String.join(".", l));
    }

    /** A selector of 1 to 2 include and 0 to 2 exclude patterns. */
    static Arbitrary<HostSelector> selector() {
        return Combinators.combine(pattern().list().ofMinSize(1).ofMaxSize(2),
                        pattern().list().ofMaxSize(2))
                .as((in, ex) -> new HostSelector(
                        org.eclipse.collections.api.factory.Lists.immutable.withAll(in),
                        org.eclipse.collections.api.factory.Lists.immutable.withAll(ex)));
    }

    /**
     * {@return a host that {@code pattern} matches, built by filling its wildcards at random}: {@code *} with 0 to 2
     * characters, {@code ?} with one, {@code **} with 1 to 2 labels, all over {@link #HOST_CHARS}
     */
    static String instantiate(HostPattern pattern, Random random) {
        List<String> labels = new ArrayList<>();
        for (int i = 0; i < pattern.labelCount(); i++) {
            String glob = pattern.label(i);
            if (glob == null) {
                int n = 1 + random.nextInt(2);
                for (int k = 0; k < n; k++) {
                    labels.add(randomChars(random, 1 + random.nextInt(2)));
                }
                continue;
            }
            StringBuilder b = new StringBuilder();
            for (char c : glob.toCharArray()) {
                switch (c) {
                    case '*' -> b.append(randomChars(random, random.nextInt(3)));
                    case '?' -> b.append(randomChars(random, 1));
                    default -> b.append(c);
                }
            }
            if (b.isEmpty()) {
                b.append(randomChars(random, 1)); // the glob was all stars: any one character will do
            }
            labels.add(b.toString());
        }
        return String.join(".", labels);
    }

    private static String randomChars(Random random, int n) {
        StringBuilder b = new StringBuilder(n);
        for (int i = 0; i < n; i++) {
            b.append(HOST_CHARS[random.nextInt(HOST_CHARS.length)]);
        }
        return b.toString();
    }

    /** Every host of 1 to 3 labels, each label 1 to 2 characters over {@link #HOST_CHARS}: 8,420 hosts. */
    static List<String> universe() {
        List<String> labels = new ArrayList<>();
        for (char a : HOST_CHARS) {
            labels.add(String.valueOf(a));
            for (char b : HOST_CHARS) {
                labels.add("" + a + b);
            }
        }
        List<String> hosts = new ArrayList<>(labels);
        for (String x : labels) {
            for (String y : labels) {
                hosts.add(x + "." + y);
                for (String z : labels) {
                    hosts.add(x + "." + y + "." + z);
                }
            }
        }
        return hosts;
    }
}
