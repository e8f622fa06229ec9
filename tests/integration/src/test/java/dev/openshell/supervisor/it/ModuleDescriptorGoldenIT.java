package dev.openshell.supervisor.it;

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
import java.util.List;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Every first-party JAR under {@code modules/} and {@code plugins/} is an explicit module whose
 * {@code jar --describe-module} output matches the golden {@code module-info-docs/<module>.describe.txt}, and whose
 * packages all start with its module name. A change to the module graph is therefore always deliberate: regenerate
 * with {@code ./dev.sh goldens} and review the diff.
 */
class ModuleDescriptorGoldenIT {
    private static final Path ROOT = Paths.get(System.getProperty("supervisor.root", "../.."));
    private static final Path DOCS = ROOT.resolve("module-info-docs");
    private static final boolean UPDATE = Boolean.getBoolean("goldens.update");

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
