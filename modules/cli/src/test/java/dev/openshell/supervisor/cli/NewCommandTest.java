package dev.openshell.supervisor.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code supervisor new}: every template is filled in (no placeholder left), each kind gets its files, and bad input
 * is refused. That the projects build and run is {@code QuickStartIT}'s (tests/integration).
 */
class NewCommandTest {
    private static final Pattern PLACEHOLDER = Pattern.compile("@[A-Z_]+@");

    @TempDir
    Path tmp;

    @Test
    void eachKindGetsItsFilesWithEveryPlaceholderFilledIn() throws Exception {
        assertFiles(new String[] {"new", "plugin", tmp.resolve("My Tagger").toString()}, tmp.resolve("My Tagger"),
                List.of("pom.xml", "src/main/java/module-info.java",
                        "src/main/java/com/example/mytagger/MyTaggerProvider.java", "policy.yaml", "gateway.toml",
                        "upstream.py", "try.sh", "README.md", ".gitignore"));
        assertTrue(Files.readString(tmp.resolve("My Tagger/policy.yaml")).contains("middleware: example/my-tagger"));
        assertTrue(Files.readString(tmp.resolve("My Tagger/pom.xml"))
                .contains("<project.build.outputTimestamp>"));
        assertFiles(new String[] {"new", "service", tmp.resolve("py").toString(), "--lang", "python", "--id",
                "acme/scan", "--service-port", "50123"}, tmp.resolve("py"), List.of("service.py", "build.sh",
                "serve.sh", "proto/openshell/middleware/v1/middleware.proto", "gateway.toml", "config.json",
                "policy.yaml", "try.sh", "README.md"));
        assertTrue(Files.readString(tmp.resolve("py/service.py")).contains("BINDING_ID = \"acme/scan\""));
        assertTrue(Files.readString(tmp.resolve("py/gateway.toml")).contains("http://127.0.0.1:50123"));
        assertTrue(Files.isExecutable(tmp.resolve("py/try.sh")));
        assertFiles(new String[] {"new", "service", tmp.resolve("jv").toString(), "--lang", "java"}, tmp.resolve("jv"),
                List.of("pom.xml", "src/main/java/com/example/jv/JvService.java",
                        "src/main/proto/openshell/middleware/v1/middleware.proto", "build.sh", "serve.sh"));
        assertTrue(Files.readString(tmp.resolve("jv/pom.xml")).matches("(?s).*<grpc.version>[0-9.]+</grpc.version>.*"));
    }

    private static void assertFiles(String[] args, Path dir, List<String> expected) throws Exception {
        Cli.Run r = Cli.run(args);
        assertEquals(0, r.exit(), r.toString());
        assertTrue(r.out().startsWith("created "), r.toString());
        for (String f : expected) {
            assertTrue(Files.isRegularFile(dir.resolve(f)), "missing " + f);
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.filter(Files::isRegularFile).toList()) {
                String text = Files.readString(p, StandardCharsets.ISO_8859_1);
                assertFalse(PLACEHOLDER.matcher(text).find(), p + " keeps a placeholder");
            }
        }
    }

    @Test
    void aNonEmptyDirectoryAndBadNamesAreRefused() throws Exception {
        Files.writeString(Files.createDirectories(tmp.resolve("taken")).resolve("x"), "x");
        Cli.Run taken = Cli.run("new", "plugin", tmp.resolve("taken").toString());
        assertEquals(1, taken.exit(), taken.toString());
        assertTrue(taken.err().contains("exists and is not empty"), taken.toString());

        Cli.Run reserved = Cli.run("new", "plugin", tmp.resolve("p").toString(), "--id", "openshell/mine");
        assertEquals(2, reserved.exit(), reserved.toString());
        assertTrue(reserved.err().contains("openshell/ is reserved"), reserved.toString());

        Cli.Run digit = Cli.run("new", "plugin", tmp.resolve("9lives").toString());
        assertEquals(2, digit.exit(), digit.toString());

        Cli.Run noLang = Cli.run("new", "service", tmp.resolve("s").toString());
        assertEquals(2, noLang.exit(), noLang.toString());
        assertFalse(Files.exists(tmp.resolve("p")));
    }
}
