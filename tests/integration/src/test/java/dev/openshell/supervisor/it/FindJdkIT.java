package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code scripts/find-jdk.sh}, which the Quick start commands rely on: it picks the newest JDK >= 21 even when the
 * default {@code java} is older and {@code JAVA_HOME} is unset, and fails with a clear message when there is none.
 */
class FindJdkIT {
    private static final Path SCRIPT = Paths.get(System.getProperty("supervisor.root", "../.."))
            .resolve("scripts/find-jdk.sh");

    @TempDir
    Path tmp;

    record Result(int exit, String out, String err) {
    }

    private Result run(String search) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder("bash", SCRIPT.toString());
        Map<String, String> env = pb.environment();
        env.remove("JAVA_HOME");
        env.put("PATH", tmp.resolve("path").toString() + ":/bin");
        env.put("SUPERVISOR_JDK_SEARCH", search);
        Path out = tmp.resolve("out");
        Path err = tmp.resolve("err");
        Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "find-jdk.sh did not finish");
        return new Result(p.exitValue(), Files.readString(out).trim(), Files.readString(err));
    }

    /** A fake JDK home whose {@code release} file says {@code version} and whose tools are stubs. */
    private Path fakeJdk(String dir, String version) throws IOException {
        Path home = Files.createDirectories(tmp.resolve("jvms").resolve(dir));
        Files.writeString(home.resolve("release"), "JAVA_VERSION=\"" + version + "\"\n", StandardCharsets.UTF_8);
        Path bin = Files.createDirectories(home.resolve("bin"));
        for (String tool : new String[] {"java", "javac", "jlink"}) {
            Path t = Files.writeString(bin.resolve(tool), "#!/bin/sh\nexit 0\n");
            Files.setPosixFilePermissions(t, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        return home;
    }

    @Test
    void picksTheNewestJdkAtLeast21() throws Exception {
        Files.createDirectories(tmp.resolve("path"));
        fakeJdk("jdk-17", "17.0.15");
        fakeJdk("jdk-21", "21.0.5");
        Path newest = fakeJdk("jdk-25", "25.0.3");
        Result r = run(tmp.resolve("jvms").toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals(newest.toRealPath().toString(), r.out());
    }

    @Test
    void failsClearlyWhenOnlyOlderJdksExist() throws Exception {
        Files.createDirectories(tmp.resolve("path"));
        fakeJdk("jdk-17", "17.0.15");
        Result r = run(tmp.resolve("jvms").toString());
        assertEquals(1, r.exit());
        assertEquals("", r.out());
        assertTrue(r.err().startsWith("error: no JDK 21 or newer found"), r.err());
        assertTrue(r.err().contains("set JAVA_HOME"), r.err());
    }
}
