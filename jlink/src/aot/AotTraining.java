import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The training run that makes the runtime image's AOT cache ({@code lib/supervisor.aot}; JEP 483 and 514: the
 * classes loaded and linked; no method profiles, see {@link #TRAINING_OPTIONS}). Run by {@code link-image.sh} with
 * the build JDK, as a single-file program: {@code java AotTraining.java IMAGE CACHE WORK [REQUESTS [SECONDS]]}.
 *
 * <p>It starts {@code IMAGE/bin/supervisor run} exactly as an operator would (the same launcher, so the same JVM
 * options and module graph as at run time) with {@code -XX:AOTCacheOutput=CACHE}, in front of two loopback upstreams
 * it serves itself (plain HTTP, and HTTPS trusted through {@code upstream_ca_bundle}), sends REQUESTS proxied
 * requests (default 3000; at most SECONDS seconds, default 30) on 4 connections: {@code openshell/regex} redacting a
 * fake key over HTTP and over an intercepted CONNECT tunnel (the upstream answers chat completions with a chunked
 * body, as nginx and streaming API servers do, and the other paths with a Content-Length), a clean POST, a GET on a
 * host with no middleware, a denied host, a method the endpoint's L7 rules deny (the training endpoint is
 * {@code protocol: rest} with allow rules, so start-up compiles L7 policy and each request runs the L7 route); then
 * stops it with SIGTERM, and the JVM writes the cache as it exits.
 *
 * <p>The run is a smoke test as well: it fails (exit 1, with the supervisor's output) when a response has an
 * unexpected status or the upstream ever receives the fake key. Everything it writes is under WORK (state directory,
 * audit log, {@code user.home}, {@code java.io.tmpdir}), never the user's home. Bounded: 60 s to start, the request
 * budget above, 120 s to write the cache; past 300 s in all, a watchdog ends the supervisor and exits 3.
 */
public final class AotTraining {
    /** A fake key in the OpenAI format (never a real secret); openshell/regex must redact it. */
    private static final String FAKE_KEY = "sk-proj-" + "AOTtraining0123456789abcdefghijklmnopqrstuvwxyz";
    private static final String HOST = "train.example";
    private static final String PLAIN_HOST = "plain.train.example";
    private static final String DENIED_HOST = "denied.example";
    private static final Duration START_LIMIT = Duration.ofSeconds(60);
    private static final Duration EXIT_LIMIT = Duration.ofSeconds(120);
    private static final Duration OVERALL_LIMIT = Duration.ofSeconds(300);
    /** Per request: generous, so a build on a loaded machine (other builds on both cores) does not fail here. */
    private static final Duration REQUEST_LIMIT = Duration.ofSeconds(60);
    private static final int CONNECTIONS = 4;
    /**
     * No adapter code in the cache: with it, JDK 25 warns on every start that an adapter blob's saved name differs
     * from the expected one (a fingerprint collision; the JVM then makes the adapter itself, as without a cache).
     * No method profiles (JEP 515) either: replayed at start-up, they sent the JIT's C2 compiler at the hot methods of
     * the training early, on the second of two cores, while the start-up ran on the first; without them the start
     * to the listening line took about 0.1 s less, the cache is 4 MB smaller, and the JIT's warm-up under load took
     * as long as with them. Measured again for the first 5 s after start (docs/BENCHMARKS.md, "Issue 41: the first 5 s
     * after start"): with them the request threads spent about a fifth less CPU per request over the 5 s, but the
     * compilers' replayed work held back the first second, whose requests are the window's p99.
     */
    private static final String TRAINING_OPTIONS = "-XX:+UnlockDiagnosticVMOptions -XX:-AOTAdapterCaching"
            + " -XX:-AOTRecordTraining";

    private final Path image;
    private final Path cache;
    private final Path work;
    private final int requests;
    private final Duration budget;
    private final List<Process> processes = new ArrayList<>();
    private final AtomicLong leaks = new AtomicLong();
    private final AtomicLong redacted = new AtomicLong();

    private AotTraining(Path image, Path cache, Path work, int requests, Duration budget) {
        this.image = image;
        this.cache = cache;
        this.work = work;
        this.requests = requests;
        this.budget = budget;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3 || args.length > 5) {
            System.err.println("usage: java AotTraining.java IMAGE CACHE WORK [REQUESTS [SECONDS]]");
            System.exit(2);
        }
        int requests = args.length > 3 ? Integer.parseInt(args[3]) : 3000;
        int seconds = args.length > 4 ? Integer.parseInt(args[4]) : 30;
        if (requests < 1 || requests > 1_000_000 || seconds < 1 || seconds > 120) {
            System.err.println("REQUESTS must be 1..1000000 and SECONDS 1..120");
            System.exit(2);
        }
        AotTraining t = new AotTraining(Path.of(args[0]).toAbsolutePath(), Path.of(args[1]).toAbsolutePath(),
                Path.of(args[2]).toAbsolutePath(), requests, Duration.ofSeconds(seconds));
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(OVERALL_LIMIT.toMillis());
            } catch (InterruptedException e) {
                return;
            }
            System.err.println("AOT training: still running after " + OVERALL_LIMIT.toSeconds() + " s; stopped");
            t.killAll();
            Runtime.getRuntime().halt(3);
        }, "aot-training-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        int rc;
        try {
            rc = t.run();
        } finally {
            t.killAll();
        }
        System.exit(rc);
    }

    private int run() throws Exception {
        Path home = Files.createDirectories(work.resolve("home"));
        Path tmp = Files.createDirectories(work.resolve("tmp"));
        Path state = work.resolve("state");
        String jvmPaths = "-Duser.home=" + home + " -Djava.io.tmpdir=" + tmp;

        // the CA exists before the trained run starts, as on every start but the first: the run trains the load path
        Path caPem = work.resolve("supervisor-ca.pem");
        Files.deleteIfExists(cache); // never trained with (or alongside) an older cache
        if (exec(List.of(image.resolve("bin/supervisor").toString(), "ca", "export", "--state-dir", state.toString(),
                "--out", caPem.toString()), jvmPaths, work.resolve("ca-export.log")) != 0) {
            return fail("supervisor ca export failed", work.resolve("ca-export.log"));
        }
        SSLContext upstreamTls = upstreamTls();

        HttpServer plain = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        HttpsServer tls = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        tls.setHttpsConfigurator(new HttpsConfigurator(upstreamTls));
        ExecutorService upstreamThreads = Executors.newVirtualThreadPerTaskExecutor();
        for (HttpServer s : List.of(plain, tls)) {
            s.createContext("/", this::upstream);
            s.setExecutor(upstreamThreads);
            s.start();
        }
        try {
            return train(plain.getAddress().getPort(), tls.getAddress().getPort(), caPem, jvmPaths);
        } finally {
            plain.stop(0);
            tls.stop(0);
            upstreamThreads.shutdownNow();
        }
    }

    private int train(int port, int tlsPort, Path caPem, String jvmPaths) throws Exception {
        Path policy = Files.writeString(work.resolve("policy.yaml"), """
                version: 1
                network_policies:
                  training:
                    name: AOT training upstreams
                    endpoints:
                      - host: %s
                        ports: [%d, %d]
                        protocol: rest
                        enforcement: enforce
                        rules:
                          - allow: { method: GET, path: "/v1/**" }
                          - allow: { method: POST, path: "/v1/**" }
                      - host: %s
                        port: %d
                network_middlewares:
                  secrets:
                    name: Redact known secret formats
                    middleware: openshell/regex
                    order: 10
                    config: { mode: redact }
                    on_error: fail_closed
                    endpoints:
                      include: ["%s"]
                """.formatted(HOST, port, tlsPort, PLAIN_HOST, port, HOST));
        Path gateway = Files.writeString(work.resolve("gateway.toml"), """
                [openshell.supervisor.network]
                allow_loopback_upstreams = true   # the training upstreams run on loopback

                [openshell.supervisor.network.static_hosts]
                "%s" = "127.0.0.1"
                "%s" = "127.0.0.1"
                "%s" = "127.0.0.1"

                [openshell.supervisor.tls]
                upstream_ca_bundle = "%s"
                """.formatted(HOST, PLAIN_HOST, DENIED_HOST, work.resolve("upstream.pem")));
        Path out = work.resolve("supervisor.out");
        Path err = work.resolve("supervisor.err");
        Files.deleteIfExists(cache);
        ProcessBuilder pb = new ProcessBuilder(image.resolve("bin/supervisor").toString(), "run",
                "--policy", policy.toString(), "--gateway-config", gateway.toString(), "--listen", "127.0.0.1:0",
                "--admin-listen", "127.0.0.1:0", "--state-dir", work.resolve("state").toString(),
                "--audit-log", work.resolve("audit.jsonl").toString());
        environment(pb, "-XX:AOTCacheOutput=" + cache + " " + TRAINING_OPTIONS + " " + jvmPaths);
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = start(pb);

        int proxyPort = awaitPort(p, out, Pattern.compile("supervisor listening on 127\\.0\\.0\\.1:(\\d+)"));
        if (proxyPort < 0) {
            return fail("the supervisor did not print its listening line within " + START_LIMIT.toSeconds() + " s",
                    err);
        }
        long started = System.nanoTime();
        String problem = load(proxyPort, port, tlsPort, caPem, admin(err));
        double seconds = (System.nanoTime() - started) / 1e9;

        p.destroy(); // SIGTERM: the JVM writes the AOT configuration, then a child JVM assembles the cache
        if (!p.waitFor(EXIT_LIMIT.toSeconds(), TimeUnit.SECONDS)) {
            return fail("the supervisor did not exit within " + EXIT_LIMIT.toSeconds() + " s of SIGTERM", err);
        }
        if (problem != null) {
            return fail(problem, err);
        }
        if (leaks.get() != 0 || redacted.get() == 0) {
            return fail("openshell/regex did not redact: the upstream received the fake key " + leaks.get()
                    + " times, a redacted body " + redacted.get() + " times", err);
        }
        if (!Files.isRegularFile(cache) || Files.size(cache) == 0) {
            return fail("the supervisor exited (" + p.exitValue() + ") without writing " + cache, out);
        }
        System.out.printf("AOT training: %d proxied requests in %.1f s (%d redacted bodies); %s: %d MiB%n",
                requests, seconds, redacted.get(), cache.getFileName(), Files.size(cache) >> 20);
        return 0;
    }

    /** Sends the requests; {@return null, or the first unexpected outcome} */
    private String load(int proxyPort, int port, int tlsPort, Path caPem, int adminPort) throws Exception {
        SSLContext trustSupervisor = SSLContext.getInstance("TLS");
        trustSupervisor.init(null, trustManagers(caPem), null);
        HttpClient client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", proxyPort)))
                .sslContext(trustSupervisor)
                .connectTimeout(Duration.ofSeconds(10))
                .build();
        HttpClient direct = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .proxy(HttpClient.Builder.NO_PROXY).connectTimeout(Duration.ofSeconds(10)).build();
        String chat = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"Deploy with this key: "
                + FAKE_KEY + "\"}]}";
        String clean = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}";
        String large = "{\"notes\":\"" + "lorem ipsum dolor sit amet ".repeat(2400) + FAKE_KEY + "\"}";
        String http = "http://" + HOST + ":" + port;
        String https = "https://" + HOST + ":" + tlsPort;
        record Call(String method, String uri, String body, int status) {
        }
        List<Call> calls = List.of(
                new Call("POST", http + "/v1/chat/completions", chat, 200),
                new Call("POST", https + "/v1/chat/completions", chat, 200),
                new Call("POST", http + "/v1/chat/completions", clean, 200),
                new Call("GET", "http://" + PLAIN_HOST + ":" + port + "/v1/models", null, 200),
                new Call("POST", https + "/v1/files", large, 200),
                new Call("GET", "http://" + DENIED_HOST + ":" + port + "/upload", null, 403),
                // no L7 rule allows DELETE; without a body, so the denial's close never resets unread bytes
                new Call("DELETE", http + "/v1/files/file-1", null, 403));
        AtomicInteger next = new AtomicInteger();
        Map<String, Boolean> problems = new ConcurrentHashMap<>();
        long deadline = System.nanoTime() + budget.toNanos();
        List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < CONNECTIONS; w++) {
            workers.add(Thread.ofPlatform().name("aot-training-" + w).start(() -> {
                int i;
                while (problems.isEmpty() && System.nanoTime() < deadline && (i = next.getAndIncrement()) < requests) {
                    Call c = calls.get(i % calls.size());
                    HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(c.uri())).timeout(REQUEST_LIMIT)
                            .header("Content-Type", "application/json");
                    r = r.method(c.method(), c.body() == null ? HttpRequest.BodyPublishers.noBody()
                            : HttpRequest.BodyPublishers.ofString(c.body()));
                    try {
                        int status = client.send(r.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
                        if (status != c.status()) {
                            problems.put(c.method() + " " + c.uri() + ": HTTP " + status + ", expected " + c.status(),
                                    true);
                        }
                        if (adminPort > 0 && i % 500 == 0) {
                            for (String path : List.of("/metrics", "/health/ready", "/health/live")) {
                                direct.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + path))
                                        .timeout(REQUEST_LIMIT).build(),
                                        HttpResponse.BodyHandlers.discarding());
                            }
                        }
                    } catch (IOException e) {
                        problems.put(c.method() + " " + c.uri() + ": " + e, true);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
            }));
        }
        for (Thread t : workers) {
            t.join();
        }
        client.close();
        direct.close();
        if (!problems.isEmpty()) {
            return problems.keySet().iterator().next();
        }
        return null;
    }

    private void upstream(HttpExchange exchange) throws IOException {
        try (exchange; InputStream in = exchange.getRequestBody()) {
            String body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            if (body.contains(FAKE_KEY)) {
                leaks.incrementAndGet();
            }
            if (body.contains("[REDACTED")) {
                redacted.incrementAndGet();
            }
            byte[] reply = "{\"id\":\"chatcmpl-training\",\"choices\":[{\"message\":{\"content\":\"ok\"}}]}"
                    .getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            // chat completions answer in chunks, as streaming API upstreams and nginx do (the supervisor's chunked
            // response relay); every other path with a Content-Length
            boolean chunked = exchange.getRequestURI().getPath().endsWith("/completions");
            exchange.sendResponseHeaders(200, chunked ? 0 : reply.length);
            exchange.getResponseBody().write(reply);
        }
    }

    /** A self-signed certificate for the HTTPS upstream, made with keytool; the supervisor trusts its PEM. */
    private SSLContext upstreamTls() throws Exception {
        Path store = work.resolve("upstream.p12");
        Path pem = work.resolve("upstream.pem");
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        char[] password = "training".toCharArray();
        List<List<String>> steps = List.of(
                List.of(keytool, "-genkeypair", "-alias", "upstream", "-keyalg", "EC", "-groupname", "secp256r1",
                        "-dname", "CN=" + HOST, "-ext", "san=dns:" + HOST, "-validity", "2",
                        "-keystore", store.toString(), "-storetype", "PKCS12", "-storepass", new String(password)),
                List.of(keytool, "-exportcert", "-rfc", "-alias", "upstream", "-keystore", store.toString(),
                        "-storetype", "PKCS12", "-storepass", new String(password), "-file", pem.toString()));
        for (List<String> step : steps) {
            if (exec(step, null, work.resolve("keytool.log")) != 0) {
                throw new IOException("keytool failed: " + Files.readString(work.resolve("keytool.log")));
            }
        }
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, password);
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, password);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), null, null);
        return ctx;
    }

    private static javax.net.ssl.TrustManager[] trustManagers(Path caPem) throws Exception {
        KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
        ks.load(null, null);
        try (InputStream in = Files.newInputStream(caPem)) {
            ks.setCertificateEntry("supervisor-ca",
                    (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        return tmf.getTrustManagers();
    }

    /** {@return the admin listener's port from the supervisor's log, or -1 (the admin endpoints are then skipped)} */
    private static int admin(Path err) throws IOException {
        Matcher m = Pattern.compile("admin listener on port (\\d+)").matcher(Files.readString(err));
        return m.find() ? Integer.parseInt(m.group(1)) : -1;
    }

    private int awaitPort(Process p, Path out, Pattern line) throws Exception {
        long deadline = System.nanoTime() + START_LIMIT.toNanos();
        while (System.nanoTime() < deadline && p.isAlive()) {
            Matcher m = line.matcher(Files.readString(out));
            if (m.find()) {
                return Integer.parseInt(m.group(1));
            }
            Thread.sleep(50);
        }
        return -1;
    }

    /** Runs a short command (bounded by START_LIMIT) with its output in {@code log}; {@return its exit code} */
    private int exec(List<String> command, String javaOpts, Path log) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        environment(pb, javaOpts);
        Process p = start(pb);
        if (!p.waitFor(START_LIMIT.toSeconds(), TimeUnit.SECONDS)) {
            return -1;
        }
        return p.exitValue();
    }

    /** The child sees no JVM options from the build's environment, and its home is under WORK. */
    private void environment(ProcessBuilder pb, String supervisorJavaOpts) {
        Map<String, String> env = pb.environment();
        env.remove("JAVA_TOOL_OPTIONS");
        env.remove("JDK_JAVA_OPTIONS");
        env.remove("_JAVA_OPTIONS");
        env.put("HOME", work.resolve("home").toString());
        if (supervisorJavaOpts == null) {
            env.remove("SUPERVISOR_JAVA_OPTS");
        } else {
            env.put("SUPERVISOR_JAVA_OPTS", supervisorJavaOpts);
        }
    }

    private synchronized Process start(ProcessBuilder pb) throws IOException {
        Process p = pb.start();
        processes.add(p);
        return p;
    }

    private synchronized void killAll() {
        for (Process p : processes) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    private static int fail(String why, Path log) throws IOException {
        System.err.println("AOT training failed: " + why);
        if (Files.exists(log)) {
            List<String> lines = Files.readAllLines(log);
            System.err.println("--- last lines of " + log + ":");
            lines.subList(Math.max(0, lines.size() - 40), lines.size()).forEach(System.err::println);
        }
        return 1;
    }
}
