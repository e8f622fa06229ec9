package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./dev.sh container} on a machine without the OCI tools (issue 39, item 10): it says what is missing in one
 * line and exits 1 before any build starts, instead of failing minutes later inside a Maven stack trace. The script
 * runs from a copy whose Maven wrapper is a stub that records being started (and fails the way a build without
 * umoci fails), with a {@code PATH} that holds every program of this machine except the OCI tools.
 */
@EnabledOnOs(OS.LINUX)
class DevContainerIT {
    private static final Path ROOT = Paths.get(System.getProperty("supervisor.root", "../.."));
    private static final Set<String> OCI_TOOLS = Set.of("umoci", "skopeo");

    @TempDir
    Path tmp;

    record Result(int exit, String out, String err, boolean mavenStarted) {
    }

    /** Runs {@code dev.sh ARGS} from a copy whose {@code mvnw} is a stub, on a PATH without umoci and skopeo. */
    private Result run(String... args) throws IOException, InterruptedException {
        Path copy = Files.createDirectories(tmp.resolve("checkout"));
        Files.copy(ROOT.resolve("dev.sh"), copy.resolve("dev.sh"));
        Files.createDirectories(copy.resolve("scripts"));
        Files.copy(ROOT.resolve("scripts/find-jdk.sh"), copy.resolve("scripts/find-jdk.sh"));
        Path marker = tmp.resolve("maven-started");
        executable(copy.resolve("mvnw"), "#!/bin/sh\ntouch '" + marker + "'\n"
                + "echo '[ERROR] Failed to execute goal org.codehaus.mojo:exec-maven-plugin:exec (oci-archive)'\n"
                + "echo 'org.apache.maven.lifecycle.LifecycleExecutionException: Command execution failed.'\n"
                + "echo '    at org.apache.maven.lifecycle.internal.MojoExecutor.doExecute2 (MojoExecutor.java:333)'\n"
                + "exit 1\n");
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        for (String dir : List.of("/usr/local/bin", "/usr/bin", "/bin")) {
            if (!Files.isDirectory(Path.of(dir))) {
                continue;
            }
            try (Stream<Path> programs = Files.list(Path.of(dir))) {
                for (Path p : programs.toList()) {
                    Path link = bin.resolve(p.getFileName().toString());
                    if (!OCI_TOOLS.contains(p.getFileName().toString()) && !Files.exists(link,
                            java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                        Files.createSymbolicLink(link, p);
                    }
                }
            }
        }
        List<String> command = new ArrayList<>(List.of("bash", copy.resolve("dev.sh").toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        Map<String, String> env = pb.environment();
        env.put("PATH", bin.toString());
        env.put("JAVA_HOME", System.getProperty("java.home"));
        Path out = tmp.resolve("out");
        Path err = tmp.resolve("err");
        Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "dev.sh did not finish");
        return new Result(p.exitValue(), Files.readString(out), Files.readString(err), Files.exists(marker));
    }

    private static void executable(Path file, String text) throws IOException {
        Files.writeString(file, text);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @Test
    void withoutUmociItPrintsOneLineAndBuildsNothing() throws Exception {
        Result r = run("container");
        assertEquals(1, r.exit(), r.toString());
        assertEquals("", r.out(), "nothing on standard output: " + r);
        List<String> lines = r.err().lines().toList();
        assertEquals(1, lines.size(), "one line, no Maven output or stack trace: " + r.err());
        assertTrue(lines.get(0).startsWith("error: umoci is not installed"), lines.get(0));
        assertTrue(lines.get(0).contains("apt-get install umoci"), "with the install hint: " + lines.get(0));
        assertFalse(r.mavenStarted(), "no build is started that could only fail");
    }

    @Test
    void aNamedBaseAlsoNeedsSkopeoAndSaysSo() throws Exception {
        Result r = run("container", "--base", "docker://debian:bookworm-slim");
        assertEquals(1, r.exit(), r.toString());
        List<String> lines = r.err().lines().toList();
        assertEquals(1, lines.size(), r.err());
        assertTrue(lines.get(0).contains("umoci tar skopeo"), "the tools this base needs: " + lines.get(0));
        assertFalse(r.mavenStarted());
    }
}
