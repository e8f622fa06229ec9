package dev.openshell.supervisor.it;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.StringReader;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * {@code bin/supervisor run} from the runtime image as a separate process on 127.0.0.1: proxy and admin listener on
 * ports the OS picks, its own state directory, audit log file and (empty) plugins directory, and a chosen environment
 * (where {@code env:} credentials come from). Ready once it prints {@code supervisor listening on HOST:PORT}; standard
 * output and standard error are kept whole, so tests can wait for a log line (no sleeps) and scan everything the
 * process wrote. Stopped with SIGTERM, forcibly after 30 s.
 */
final class StackProcess implements AutoCloseable {
    private static final Pattern READY = Pattern.compile("supervisor listening on 127\\.0\\.0\\.1:(\\d+)");
    private static final Pattern ADMIN = Pattern.compile("admin listener on port (\\d+):");
    private static final Duration START = Duration.ofSeconds(60);

    private final Process process;
    private final Output out;
    private final Output err;
    private final Path auditLog;
    private final int port;
    private final int adminPort;
    private final HttpClient client;

    /** Lines a stream produced so far; waiters are woken on every line and at the end. */
    private static final class Output {
        private final List<String> lines = new ArrayList<>();
        private boolean ended;

        static Output drain(InputStream in, String name) {
            Output o = new Output();
            Thread t = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        o.add(line);
                    }
                } catch (IOException e) {
                    // the process is gone: what was read is kept
                } finally {
                    o.end();
                }
            }, "supervisor-" + name);
            t.setDaemon(true);
            t.start();
            return o;
        }

        synchronized void add(String line) {
            lines.add(line);
            notifyAll();
        }

        synchronized void end() {
            ended = true;
            notifyAll();
        }

        synchronized String text() {
            return String.join("\n", lines);
        }

        /** Waits for a line matching {@code p}; empty when the stream ended or the time ran out first. */
        synchronized Optional<Matcher> await(Pattern p, Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            int seen = 0;
            while (true) {
                for (; seen < lines.size(); seen++) {
                    Matcher m = p.matcher(lines.get(seen));
                    if (m.find()) {
                        return Optional.of(m);
                    }
                }
                long left = deadline - System.nanoTime();
                if (ended || left <= 0) {
                    return Optional.empty();
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        }
    }

    private StackProcess(Process process, Output out, Output err, Path auditLog, int port, int adminPort) {
        this.process = process;
        this.out = out;
        this.err = err;
        this.auditLog = auditLog;
        this.port = port;
        this.adminPort = adminPort;
        this.client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", port)))
                .connectTimeout(Duration.ofSeconds(10)).build();
    }

    /**
     * Starts {@code supervisor run} and waits until it listens.
     *
     * @param work a fresh directory for state, audit log and plugins
     * @param policy the sandbox policy
     * @param gateway the gateway configuration
     * @param environment extra environment variables (credential sources)
     * @return the running supervisor
     */
    static StackProcess start(Path work, Path policy, Path gateway, Map<String, String> environment)
            throws IOException, InterruptedException {
        return start(work, policy, gateway, environment, 0);
    }

    /**
     * Starts {@code supervisor run} with the admin listener on a given port (a service that fetches the JWKS from it
     * needs the port before the supervisor's first call), and waits until it listens.
     *
     * @param adminPort the admin listener's port on 127.0.0.1, 0 for any free one
     */
    static StackProcess start(Path work, Path policy, Path gateway, Map<String, String> environment, int adminPort)
            throws IOException, InterruptedException {
        Path plugins = Files.createDirectories(work.resolve("plugins"));
        Path audit = work.resolve("audit").resolve("audit.jsonl");
        Files.createDirectories(audit.getParent());
        ProcessBuilder pb = new ProcessBuilder(Image.launcher(Image.HOME).toString(), "run",
                "--policy", policy.toString(), "--gateway-config", gateway.toString(),
                "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:" + adminPort,
                "--state-dir", work.resolve("state").toString(), "--audit-log", audit.toString(),
                "--plugins", plugins.toString());
        Map<String, String> env = pb.environment();
        env.remove("JAVA_HOME");
        env.put("PATH", "/usr/bin:/bin");
        env.putAll(environment);
        Process p = pb.start();
        Output out = Output.drain(p.getInputStream(), "out");
        Output err = Output.drain(p.getErrorStream(), "err");
        Optional<Matcher> ready = out.await(READY, START);
        Optional<Matcher> admin = ready.isPresent() ? err.await(ADMIN, START) : Optional.empty();
        if (ready.isEmpty() || admin.isEmpty()) {
            p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            throw new AssertionError("supervisor did not start:\n" + out.text() + "\n" + err.text());
        }
        return new StackProcess(p, out, err, audit, Integer.parseInt(ready.get().group(1)),
                Integer.parseInt(admin.get().group(1)));
    }

    int port() {
        return port;
    }

    /** {@return the admin listener's port (health, metrics)} */
    int adminPort() {
        return adminPort;
    }

    /** {@return everything the process wrote to standard output so far} */
    String stdout() {
        return out.text();
    }

    /** {@return everything the process wrote to standard error so far (its log)} */
    String stderr() {
        return err.text();
    }

    /**
     * Waits for a log line (standard error) matching {@code pattern}.
     *
     * @throws AssertionError when none appears within {@code timeout}
     */
    void awaitLog(String pattern, Duration timeout) throws InterruptedException {
        if (err.await(Pattern.compile(pattern), timeout).isEmpty()) {
            throw new AssertionError("no log line matching /" + pattern + "/ within " + timeout + ":\n" + stderr());
        }
    }

    /** {@return the audit log's text: the current file and any rotated ones beside it} */
    String auditText() throws IOException {
        StringBuilder b = new StringBuilder();
        try (Stream<Path> files = Files.list(auditLog.getParent())) {
            for (Path f : files.sorted().toList()) {
                b.append(Files.readString(f, StandardCharsets.UTF_8));
            }
        }
        return b.toString();
    }

    /** {@return every audit event, in order} */
    List<JsonObject> auditEvents() throws IOException {
        List<JsonObject> events = new ArrayList<>();
        for (String line : auditText().split("\n")) {
            if (!line.isBlank()) {
                try (JsonReader r = Json.createReader(new StringReader(line))) {
                    events.add(r.readObject());
                }
            }
        }
        return events;
    }

    /** {@return the {@code unmapped.openshell} members of every audit event that has them} */
    List<JsonObject> auditDetails() throws IOException {
        return auditEvents().stream().filter(e -> e.containsKey("unmapped"))
                .map(e -> e.getJsonObject("unmapped").getJsonObject("openshell")).toList();
    }

    /** {@return the Prometheus text of the admin listener's {@code /metrics}} */
    String metrics() throws IOException, InterruptedException {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + adminPort + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new AssertionError("/metrics answered " + r.statusCode());
        }
        return r.body();
    }

    /** Sends a request through the proxy (absolute-form, HTTP/1.1). */
    HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
        return client.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** {@return a POST of a UTF-8 JSON body to {@code url}, through the proxy} */
    HttpResponse<String> postJson(String url, String json) throws IOException, InterruptedException {
        return send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8)).build());
    }

    /** {@return a response body parsed as a JSON object} */
    static JsonObject json(HttpResponse<String> r) {
        try (JsonReader reader = Json.createReader(new StringReader(r.body()))) {
            return reader.readObject();
        }
    }

    /** {@return the status of the admin listener's {@code GET path}, with a client timeout of {@code timeout}} */
    int admin(String path, Duration timeout) throws IOException, InterruptedException {
        return HttpClient.newBuilder().connectTimeout(timeout).build().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + adminPort + path)).timeout(timeout).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    /**
     * Sends SIGTERM and waits at most {@code bound} for the process to end.
     *
     * @return the exit status, or empty when it was still running at the bound (it is then killed)
     */
    Optional<Integer> terminate(Duration bound) throws InterruptedException {
        process.destroy();
        if (process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
            return Optional.of(process.exitValue());
        }
        process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        return Optional.empty();
    }

    /** SIGTERM, then wait for the exit (ports are free afterwards). */
    @Override
    public void close() {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
