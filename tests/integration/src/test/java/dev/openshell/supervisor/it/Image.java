package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** The built runtime image, run as a process the way an operator runs it. */
final class Image {
    static final Path HOME = Paths.get(System.getProperty("it.image", "../../jlink/target/image"));
    static final Path PLUGINS = Paths.get(System.getProperty("it.plugins", "target/it-plugins"));

    private Image() {
    }

    /** The outcome of one run. */
    record Run(int exit, String out, String err) {
    }

    static Path launcher(Path home) {
        Path bin = home.resolve("bin/supervisor");
        assertTrue(Files.isExecutable(bin), "runtime image missing: " + bin.toAbsolutePath()
                + " (build it: ./dev.sh build)");
        return bin;
    }

    /**
     * Runs {@code bin/supervisor} with no JDK on the PATH and no JAVA_HOME: the image must carry its own runtime.
     */
    static Run run(Path home, String... args) throws IOException, InterruptedException {
        return run(home, Map.of(), args);
    }

    /** {@link #run(Path, String...)} with more environment variables. */
    static Run run(Path home, Map<String, String> extraEnv, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(launcher(home).toString());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        Map<String, String> env = pb.environment();
        env.remove("JAVA_HOME");
        env.put("PATH", "/usr/bin:/bin");
        env.putAll(extraEnv);
        Path out = Files.createTempFile("supervisor-out", ".txt");
        Path err = Files.createTempFile("supervisor-err", ".txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = pb.start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("supervisor " + String.join(" ", args) + " did not finish within 60 s");
        }
        Run r = new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
        Files.deleteIfExists(out);
        Files.deleteIfExists(err);
        return r;
    }

    static Path plugin(String name) {
        Path jar = PLUGINS.resolve(name + ".jar");
        assertTrue(Files.isRegularFile(jar), "plugin JAR missing: " + jar.toAbsolutePath());
        return jar;
    }

    /**
     * {@return gateway TOML that pins each JAR file by the SHA-256 of its bytes (computed here, independently of the
     * supervisor's own digest code)}
     *
     * @param jars plugin JAR files, pinned under their file names
     */
    static String pins(Path... jars) throws IOException {
        StringBuilder b = new StringBuilder();
        for (Path jar : jars) {
            try {
                byte[] d = java.security.MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(jar));
                b.append("\n[[openshell.supervisor.plugin_pins]]\nentry = \"").append(jar.getFileName())
                        .append("\"\nsha256 = \"").append(java.util.HexFormat.of().formatHex(d)).append("\"\n");
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
        }
        return b.toString();
    }
}
