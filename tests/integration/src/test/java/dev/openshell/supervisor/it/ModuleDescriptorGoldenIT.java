package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertLinesMatch;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Every first-party JAR under {@code modules/} and {@code plugins/} is an explicit module whose
 * {@code jar --describe-module} output matches the golden {@code module-info-docs/<module>.describe.txt}, and whose
 * packages all start with its module name. A change to the module graph is therefore always deliberate: regenerate
 * with {@code ./dev.sh goldens} and review the diff.
 *
 * <p>The module graph in {@code module-info-docs/README.md} (between {@value #GRAPH_BEGIN} and {@value #GRAPH_END}) is
 * generated from the same descriptors, so the documented graph cannot drift from the real one.
 */
class ModuleDescriptorGoldenIT {
    private static final Path ROOT = Paths.get(System.getProperty("supervisor.root", "../.."));
    private static final Path DOCS = ROOT.resolve("module-info-docs");
    private static final boolean UPDATE = Boolean.getBoolean("goldens.update");
    static final String GRAPH_BEGIN = "<!-- module graph: begin (generated from the module descriptors) -->";
    static final String GRAPH_END = "<!-- module graph: end -->";

    static List<Path> firstPartyJars() throws IOException {
        List<Path> jars = new ArrayList<>();
        for (String group : List.of("modules", "plugins")) {
            try (Stream<Path> dirs = Files.list(ROOT.resolve(group))) {
                for (Path dir : dirs.filter(Files::isDirectory).sorted().toList()) {
                    Path target = dir.resolve("target");
                    if (!Files.isDirectory(target)) {
                        throw new AssertionError("not built: " + dir + " (run the whole build first)");
                    }
                    try (Stream<Path> s = Files.list(target)) {
                        s.filter(p -> p.getFileName().toString().endsWith(".jar"))
                                .filter(p -> !p.getFileName().toString().matches(".*-(sources|javadoc|tests)\\.jar"))
                                .forEach(jars::add);
                    }
                }
            }
        }
        assertFalse(jars.isEmpty(), "no JARs found under " + ROOT.toAbsolutePath());
        return jars;
    }

    @TestFactory
    List<DynamicTest> describeModuleMatchesTheGolden() throws IOException {
        ToolProvider jarTool = ToolProvider.findFirst("jar").orElseThrow(() -> new AssertionError("no jar tool"));
        List<DynamicTest> tests = new ArrayList<>();
        for (Path jar : firstPartyJars()) {
            tests.add(DynamicTest.dynamicTest(ROOT.relativize(jar).toString(), () -> {
                ModuleDescriptor d = ModuleFinder.of(jar).findAll().iterator().next().descriptor();
                assertFalse(d.isAutomatic(), jar + " must be an explicit module (module-info.java)");
                for (String pkg : d.packages()) {
                    assertTrue(pkg.startsWith(d.name()), "package " + pkg + " does not start with module name "
                            + d.name());
                }
                List<String> actual = describe(jarTool, jar, d.name());
                Path golden = DOCS.resolve(d.name() + ".describe.txt");
                Path page = DOCS.resolve(d.name() + ".md");
                if (UPDATE) {
                    Files.createDirectories(DOCS);
                    Files.write(golden, actual, StandardCharsets.UTF_8);
                }
                assertTrue(Files.isRegularFile(golden), "golden missing: " + golden
                        + " (run ./dev.sh goldens, review, commit)");
                assertTrue(Files.isRegularFile(page), "module page missing: " + page);
                assertTrue(Files.readString(page).contains(d.name()), page + " must name its module");
                assertLinesMatch(Files.readAllLines(golden, StandardCharsets.UTF_8), actual,
                        "module graph of " + d.name() + " changed: if deliberate, run ./dev.sh goldens and commit");
            }));
        }
        return tests;
    }

    /**
     * The README's module graph is the graph of the descriptors: for every first-party module, top (nothing requires
     * it) to bottom (requires no first-party module), its first-party {@code requires} and its qualified exports.
     */
    @Test
    void theReadmeModuleGraphIsTheDescriptorsGraph() throws IOException {
        Map<String, ModuleDescriptor> modules = new TreeMap<>();
        for (Path jar : firstPartyJars()) {
            ModuleDescriptor d = ModuleFinder.of(jar).findAll().iterator().next().descriptor();
            modules.put(d.name(), d);
        }
        List<String> generated = graph(modules);
        Path readme = DOCS.resolve("README.md");
        String text = Files.readString(readme, StandardCharsets.UTF_8);
        int begin = text.indexOf(GRAPH_BEGIN);
        int end = text.indexOf(GRAPH_END);
        assertTrue(begin >= 0 && end > begin, readme + " must hold the markers " + GRAPH_BEGIN + " and " + GRAPH_END);
        String block = "\n```\n" + String.join("\n", generated) + "\n```\n";
        if (UPDATE) {
            Files.writeString(readme, text.substring(0, begin + GRAPH_BEGIN.length()) + block + text.substring(end),
                    StandardCharsets.UTF_8);
            text = Files.readString(readme, StandardCharsets.UTF_8);
            begin = text.indexOf(GRAPH_BEGIN);
            end = text.indexOf(GRAPH_END);
        }
        assertEquals(block, text.substring(begin + GRAPH_BEGIN.length(), end),
                "the module graph in " + readme + " differs from the descriptors: run ./dev.sh goldens and commit");
    }

    /** One line per module, by depth (longest path of first-party requires to the bottom), deepest first. */
    static List<String> graph(Map<String, ModuleDescriptor> modules) {
        Map<String, Integer> depth = new TreeMap<>();
        for (String m : modules.keySet()) {
            depth(m, modules, depth);
        }
        List<String> order = new ArrayList<>(modules.keySet());
        order.sort(Comparator.comparing((String m) -> -depth.get(m)).thenComparing(m -> m));
        List<String> lines = new ArrayList<>();
        for (String m : order) {
            ModuleDescriptor d = modules.get(m);
            List<String> requires = d.requires().stream().filter(r -> modules.containsKey(r.name()))
                    .map(r -> (r.modifiers().contains(ModuleDescriptor.Requires.Modifier.TRANSITIVE) ? "transitive "
                            : "") + r.name())
                    .sorted(Comparator.comparing((String r) -> r.replace("transitive ", ""))).toList();
            lines.add(m + (requires.isEmpty() ? "" : " -> " + String.join(", ", requires)));
            d.exports().stream().filter(ModuleDescriptor.Exports::isQualified)
                    .sorted(Comparator.comparing(ModuleDescriptor.Exports::source))
                    .forEach(e -> lines.add("    exports " + e.source() + " to "
                            + String.join(", ", new TreeSet<>(e.targets()))));
        }
        return lines;
    }

    private static int depth(String m, Map<String, ModuleDescriptor> modules, Map<String, Integer> memo) {
        Integer known = memo.get(m);
        if (known != null) {
            return known;
        }
        int d = 0;
        for (ModuleDescriptor.Requires r : modules.get(m).requires()) {
            if (modules.containsKey(r.name())) {
                d = Math.max(d, 1 + depth(r.name(), modules, memo));
            }
        }
        memo.put(m, d);
        return d;
    }

    /** {@code jar --describe-module}, with the first line reduced to the module name (no version, no path). */
    static List<String> describe(ToolProvider jarTool, Path jar, String name) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = jarTool.run(new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), "--describe-module", "--file", jar.toString());
        if (rc != 0) {
            throw new AssertionError("jar --describe-module failed for " + jar + ": " + err);
        }
        List<String> lines = new ArrayList<>(out.toString(StandardCharsets.UTF_8).lines()
                .filter(l -> !l.isBlank()).toList());
        lines.set(0, lines.get(0).startsWith(name + "@") || lines.get(0).startsWith(name + " ") ? name
                : lines.get(0));
        return lines;
    }
}
