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
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code bin/supervisor run ...} from the runtime image as a separate process. Ready once it prints {@code supervisor
 * listening on HOST:PORT}; everything it writes to standard output is kept (for leak scans), standard error goes to a
 * file. {@link #terminate()} sends SIGTERM and waits for the exit; {@link #close()} does the same and then kills what
 * is left.
 */
final class SupervisorProcess implements AutoCloseable {
    static final Pattern LISTENING = Pattern.compile("^supervisor listening on (\\S+):(\\d+)$");
    private static final Pattern ADMIN = Pattern.compile("admin listener on port (\\d+):");
    private static final long START_SECONDS = 60;
    private static final long STOP_SECONDS = 30;

    private final Process process;
    private final String host;
    private final int port;
    private final Path stderr;
    private final StringBuffer stdout;
    private final Thread reader;

    private SupervisorProcess(Process process, String host, int port, Path stderr, StringBuffer stdout,
                              Thread reader) {
        this.process = process;
        this.host = host;
        this.port = port;
        this.stderr = stderr;
        this.stdout = stdout;
        this.reader = reader;
    }

    /** Start-up failed; {@link #stderr()} says why. */
    static final class StartFailure extends AssertionError {
        private static final long serialVersionUID = 1L;
        private final String stderr;

        StartFailure(String message, String stderr) {
            super(message + "\n--- stderr ---\n" + stderr);
            this.stderr = stderr;
        }

        String stderr() {
            return stderr;
        }
    }

    /**
     * Starts {@code bin/supervisor run} with {@code args} and waits for the listening line.
     *
     * @param args the arguments after {@code run}
     * @param env extra environment variables (for example {@code SUPERVISOR_JAVA_OPTS})
     * @throws StartFailure when the line does not come within 60 s or the process exits first
     */
    static SupervisorProcess start(List<String> args, Map<String, String> env) throws IOException,
            InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Image.launcher(Image.HOME).toString());
        cmd.add("run");
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        Map<String, String> e = pb.environment();
        e.remove("JAVA_HOME");
        for (String proxyVar : List.of("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy",
                "ALL_PROXY", "no_proxy", "NO_PROXY")) {
            e.remove(proxyVar);
        }
        e.put("PATH", "/usr/bin:/bin");
        e.putAll(env);
        Path err = Files.createTempFile("supervisor-run-err", ".txt");
        pb.redirectError(err.toFile());
        Process p = pb.start();
        p.getOutputStream().close();
        StringBuffer out = new StringBuffer();
        CompletableFuture<Matcher> ready = new CompletableFuture<>();
        Thread reader = Thread.ofPlatform().daemon().name("supervisor-stdout").start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    out.append(line).append('\n');
                    Matcher m = LISTENING.matcher(line);
                    if (!ready.isDone() && m.matches()) {
                        ready.complete(m);
                    }
                }
            } catch (IOException ex) {
                ready.completeExceptionally(ex);
            }
            ready.completeExceptionally(new IOException("standard output closed before the listening line"));
        });
        Matcher m;
        try {
            m = ready.get(START_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException ex) {
            p.destroyForcibly().waitFor(STOP_SECONDS, TimeUnit.SECONDS);
            reader.join(TimeUnit.SECONDS.toMillis(STOP_SECONDS));
            String text = Files.readString(err);
            Files.deleteIfExists(err);
            throw new StartFailure("supervisor run " + String.join(" ", args) + " did not print its listening line"
                    + " (" + ex.getClass().getSimpleName() + "); stdout:\n" + out, text);
        }
        return new SupervisorProcess(p, m.group(1), Integer.parseInt(m.group(2)), err, out, reader);
    }

    /** {@return the host of the listening line} */
    String host() {
        return host;
    }

    /** {@return the proxy port of the listening line} */
    int port() {
        return port;
    }

    /** {@return the proxy URL for {@code curl -x} and {@code HTTPS_PROXY}} */
    String proxyUrl() {
        return "http://" + host + ":" + port;
    }

    /** {@return the admin listener's port, from its start-up log line (written before the listening line)} */
    Optional<Integer> adminPort() throws IOException {
        Matcher m = ADMIN.matcher(stderr());
        return m.find() ? Optional.of(Integer.parseInt(m.group(1))) : Optional.empty();
    }

    /** {@return everything written to standard output so far} */
    String stdout() {
        return stdout.toString();
    }

    /** {@return everything written to standard error so far} */
    String stderr() throws IOException {
        return Files.readString(stderr, StandardCharsets.UTF_8);
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /**
     * Sends SIGTERM without waiting.
     */
    void signalTerm() {
        process.destroy();
    }

    /**
     * Waits for the exit (at most 30 s) and for standard output to be read to its end.
     *
     * @return the exit code
     * @throws AssertionError when the process does not exit in time
     */
    int awaitExit() throws InterruptedException {
        if (!process.waitFor(STOP_SECONDS, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(STOP_SECONDS, TimeUnit.SECONDS);
            throw new AssertionError("supervisor did not exit within " + STOP_SECONDS + " s of SIGTERM");
        }
        reader.join(TimeUnit.SECONDS.toMillis(STOP_SECONDS));
        return process.exitValue();
    }

    /** SIGTERM, then wait for the exit. @return the exit code */
    int terminate() throws InterruptedException {
        signalTerm();
        return awaitExit();
    }

    @Override
    public void close() throws IOException, InterruptedException {
        try {
            if (process.isAlive()) {
                terminate();
            }
        } finally {
            if (process.isAlive()) {
                process.destroyForcibly().waitFor(STOP_SECONDS, TimeUnit.SECONDS);
            }
            Files.deleteIfExists(stderr);
        }
    }
}
