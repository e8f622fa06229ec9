package dev.openshell.supervisor.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/** The shared host-pattern conformance vectors ({@code conformance/host_patterns.tsv}), read in place. */
class HostPatternConformanceTest {
    private record Vector(int line, String kind, String pattern, String host, String expected) {
        String name() {
            return "line " + line + ": " + kind + " '" + pattern + "' vs '" + host + "' -> " + expected;
        }
    }

    private static List<Vector> vectors() throws IOException {
        List<String> lines = Files.readAllLines(SharedFiles.require("conformance/host_patterns.tsv"),
                StandardCharsets.UTF_8);
        List<Vector> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\t", -1);
            if (f.length != 4) {
                throw new IllegalStateException("host_patterns.tsv line " + (i + 1) + " has " + f.length + " fields");
            }
            out.add(new Vector(i + 1, f[0], f[1], f[2], f[3]));
        }
        return out;
    }

    @Test
    void theFileHasBothKindsOfVector() throws IOException {
        List<Vector> all = vectors();
        assertTrue(all.stream().filter(v -> v.kind().equals("match")).count() >= 20, "match vectors");
        assertTrue(all.stream().anyMatch(v -> v.kind().equals("selector")), "selector vectors");
    }

    @TestFactory
    Stream<DynamicTest> everyVectorHolds() throws IOException {
        return vectors().stream().map(v -> DynamicTest.dynamicTest(v.name(), () -> check(v)));
    }

    private static void check(Vector v) {
        switch (v.kind()) {
            case "match" -> {
                switch (v.expected()) {
                    case "error" -> {
                        assertNotNull(HostPattern.problem(v.pattern()), "pattern must be rejected");
                        assertThrows(IllegalArgumentException.class, () -> HostPattern.parse(v.pattern()));
                    }
                    case "true" -> assertTrue(HostPattern.parse(v.pattern()).matches(v.host()));
                    case "false" -> assertFalse(HostPattern.parse(v.pattern()).matches(v.host()));
                    default -> throw new IllegalStateException("unknown expectation " + v.expected());
                }
            }
            case "selector" -> {
                HostSelector selector = parseSelector(v.pattern());
                assertEquals(Boolean.parseBoolean(v.expected()), selector.matches(v.host()));
                assertEquals(selector.matches(v.host()),
                        selector.include().anySatisfy(p -> p.matches(v.host()))
                                && selector.exclude().noneSatisfy(p -> p.matches(v.host())));
            }
            default -> throw new IllegalStateException("unknown vector kind " + v.kind());
        }
    }

    /** {@code include=P1,P2;exclude=P3} */
    static HostSelector parseSelector(String text) {
        List<String> include = List.of();
        List<String> exclude = List.of();
        for (String part : text.split(";", -1)) {
            int eq = part.indexOf('=');
            String key = part.substring(0, eq);
            List<String> values = part.substring(eq + 1).isEmpty()
                    ? List.of()
                    : Arrays.asList(part.substring(eq + 1).split(",", -1));
            switch (key) {
                case "include" -> include = values;
                case "exclude" -> exclude = values;
                default -> throw new IllegalStateException("unknown selector part " + key);
            }
        }
        return HostSelector.of(include, exclude);
    }
}
