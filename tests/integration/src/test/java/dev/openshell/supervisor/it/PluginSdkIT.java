package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A plugin builds from outside the repository with only what the image ships ({@code lib/sdk/}, installed with
 * {@code supervisor sdk install}) and Maven Central: {@code plugins/example-tagger}, copied away from the reactor,
 * is built with {@code -Dmaven.repo.local} pointing at an empty repository. So that the test needs no network and is
 * quick, "Maven Central" is the developer's own local repository served as a {@code file:} mirror, with this
 * project's group ({@code dev/openshell}) left out of it: the SPI can come only from the SDK.
 */
class PluginSdkIT {
    static final Path ROOT = Paths.get(System.getProperty("supervisor.root", "../.."));

    @TempDir
    Path tmp;

    @Test
    void examplePluginBuildsAgainstAnEmptyRepositoryWithTheSdk() throws Exception {
        Path repo = Files.createDirectories(tmp.resolve("empty-repo"));
        Image.Run install = Image.run(Image.HOME, "sdk", "install", "--maven-repo", repo.toString());
        assertEquals(0, install.exit(), install.err());
        assertTrue(install.out().startsWith("installed dev.openshell.supervisor:middleware-spi:"), install.out());
        try (Stream<Path> s = Files.walk(repo)) {
            assertEquals(4, s.filter(Files::isRegularFile).count(),
                    "the SDK holds the SPI's JAR, POM, sources and Javadoc");
        }

        Path project = tmp.resolve("example-tagger");
        copyTree(ROOT.resolve("plugins/example-tagger"), project);
        Path central = mirrorWithoutThisProject(tmp.resolve("central"));
        Path settings = Files.writeString(tmp.resolve("settings.xml"), """
                <settings>
                  <mirrors>
                    <mirror>
                      <id>central-on-disk</id>
                      <mirrorOf>*</mirrorOf>
                      <url>%s</url>
                    </mirror>
                  </mirrors>
                </settings>
                """.formatted(central.toUri()));
        ProcessBuilder pb = new ProcessBuilder(ROOT.resolve("mvnw").toAbsolutePath().toString(), "-B", "-q", "-ntp",
                "-s", settings.toString(), "-Dmaven.repo.local=" + repo, "-DskipTests", "package")
                .directory(project.toFile()).redirectErrorStream(true)
                .redirectOutput(tmp.resolve("mvn.log").toFile());
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        pb.environment().remove("MAVEN_OPTS");
        Process p = pb.start();
        if (!p.waitFor(300, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("the plugin build did not finish within 300 s");
        }
        String log = Files.readString(tmp.resolve("mvn.log"), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), log);
        Path jar = project.resolve("target/example-tagger-0.1.0-SNAPSHOT.jar");
        assertTrue(Files.isRegularFile(jar), log);
        assertFalse(Files.exists(repo.resolve("dev/openshell/supervisor/supervisor-parent")),
                "no parent POM was needed");

        Path plugins = Files.createDirectories(tmp.resolve("plugins"));
        Files.copy(jar, plugins.resolve("example-tagger.jar"));
        Path gateway = Files.writeString(tmp.resolve("gateway.toml"), Image.pins(plugins.resolve("example-tagger.jar")));
        Image.Run listed = Image.run(Image.HOME, "plugins", "--plugins", plugins.toString(), "--gateway-config",
                gateway.toString());
        assertEquals(0, listed.exit(), listed.err());
        assertTrue(listed.out().contains("examples/tagger"), "the plugin built from outside loads:\n" + listed.out());
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : s.toList()) {
                Path rel = from.relativize(p);
                if (rel.startsWith("target")) {
                    continue;
                }
                Path dest = to.resolve(rel.toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(dest);
                } else {
                    Files.copy(p, dest);
                }
            }
        }
    }

    /**
     * {@return a directory that shows the local repository (links, nothing copied) without dev/openshell}
     *
     * @param mirror where to make it
     */
    static Path mirrorWithoutThisProject(Path mirror) throws IOException {
        Path local = Paths.get(System.getProperty("user.home"), ".m2", "repository");
        Files.createDirectories(mirror);
        List<Path> top;
        try (Stream<Path> s = Files.list(local)) {
            top = s.toList();
        }
        for (Path t : top) {
            if (t.getFileName().toString().equals("dev")) {
                Path dev = Files.createDirectories(mirror.resolve("dev"));
                try (Stream<Path> s = Files.list(t)) {
                    for (Path g : s.toList()) {
                        if (!g.getFileName().toString().equals("openshell")) {
                            Files.createSymbolicLink(dev.resolve(g.getFileName().toString()), g);
                        }
                    }
                }
            } else {
                Files.createSymbolicLink(mirror.resolve(t.getFileName().toString()), t);
            }
        }
        return mirror;
    }
}
