package dev.openshell.supervisor.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code bin/supervisor privacy-guard} from the runtime image, as a separate process on 127.0.0.1. Started with port 0
 * (the OS picks a free port) or a given port (a restart); ready once it prints {@code privacy-guard listening on
 * HOST:PORT}. Stopped with SIGTERM, forcibly after 30 s.
 */
final class PrivacyGuardProcess implements AutoCloseable {
    private static final Pattern READY = Pattern.compile("privacy-guard listening on 127\\.0\\.0\\.1:(\\d+)");

    private final Process process;
    private final int port;
    private final Path stderr;

    private PrivacyGuardProcess(Process process, int port, Path stderr) {
        this.process = process;
        this.port = port;
        this.stderr = stderr;
    }

    static PrivacyGuardProcess start(int port, String... tlsArgs) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Image.launcher(Image.HOME).toString(), "privacy-guard",
                "--listen", "127.0.0.1:" + port));
        cmd.addAll(List.of(tlsArgs));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        Map<String, String> env = pb.environment();
        env.remove("JAVA_HOME");
        env.put("PATH", "/usr/bin:/bin");
        Path err = Files.createTempFile("privacy-guard-err", ".txt");
        pb.redirectError(err.toFile());
        Process p = pb.start();
        CompletableFuture<Integer> ready = CompletableFuture.supplyAsync(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    Matcher m = READY.matcher(line);
                    if (m.find()) {
                        return Integer.parseInt(m.group(1));
                    }
                }
                return -1;
            } catch (IOException e) {
                return -1;
            }
        });
        int bound;
        try {
            bound = ready.get(60, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            bound = -1;
        }
        if (bound <= 0) {
            p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            String message = Files.readString(err);
            Files.deleteIfExists(err);
            throw new AssertionError("privacy-guard did not start: " + message);
        }
        return new PrivacyGuardProcess(p, bound, err);
    }

    int port() {
        return port;
    }

    String stderr() throws IOException {
        return Files.readString(stderr);
    }

    /** SIGTERM, then wait for the exit (the port is free afterwards); its stderr file is deleted. */
    @Override
    public void close() {
        try {
            if (process.isAlive()) {
                process.destroy();
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
                }
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        } finally {
            try {
                Files.deleteIfExists(stderr);
            } catch (IOException e) {
                // best effort: the process has ended
            }
        }
    }
}
