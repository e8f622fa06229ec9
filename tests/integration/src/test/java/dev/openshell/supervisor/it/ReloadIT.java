package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 9, item 5, against the image run as a process: the policy is swapped under load, on SIGHUP and on a change of
 * the policy file; no request sees a mix of generations and none is lost; a broken policy leaves the old one serving.
 * Two example-tagger stages tag every request with its generation's name, and the loopback upstream records them.
 */
class ReloadIT {
    @TempDir
    Path tmp;

    private RecordingUpstream upstream;
    private Path policy;
    private Path gateway;
    private Path plugins;
    private Path audit;

    @BeforeEach
    void setUp() throws IOException {
        upstream = new RecordingUpstream();
        plugins = Files.createDirectories(tmp.resolve("plugins"));
        Files.copy(Image.plugin("example-tagger"), plugins.resolve("example-tagger.jar"));
        policy = Files.createDirectories(tmp.resolve("config")).resolve("policy.yaml");
        Files.writeString(policy, tagged("a"));
        gateway = tmp.resolve("gateway.toml");
        Files.writeString(gateway, """
                [openshell.supervisor.network]
                allow_loopback_upstreams = true

                [openshell.supervisor.network.static_hosts]
                "api.test" = "127.0.0.1"
                """ + Image.pins(plugins.resolve("example-tagger.jar")));
        audit = tmp.resolve("audit.jsonl");
    }

    @AfterEach
    void tearDown() {
        upstream.close();
    }

    private String tagged(String generation) {
        return """
                version: 1
                network_policies:
                  api:
                    name: test API
                    endpoints:
                      - host: api.test
                        port: %d
                network_middlewares:
                  first:
                    middleware: examples/tagger
                    order: 10
                    config: { tag: %s1 }
                    endpoints:
                      include: ["api.test"]
                  second:
                    middleware: examples/tagger
                    order: 20
                    config: { tag: %s2 }
                    endpoints:
                      include: ["api.test"]
                """.formatted(upstream.port(), generation, generation);
    }

    private void replacePolicy(String text) throws IOException {
        Path next = policy.resolveSibling(".policy.yaml.next");
        Files.writeString(next, text);
        Files.move(next, policy, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private ImageProcess start(String... extra) throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("--policy", policy.toString(), "--gateway-config",
                gateway.toString(), "--plugins", plugins.toString(), "--listen", "127.0.0.1:0", "--admin-listen",
                "off", "--state-dir", tmp.resolve("state").toString(), "--audit-log", audit.toString()));
        args.addAll(List.of(extra));
        return ImageProcess.run(Image.HOME, args.toArray(String[]::new));
    }

    /** Clients that send requests until stopped: at most 3,000 requests and 120 s in all. */
    private static final class Load implements AutoCloseable {
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicInteger sent = new AtomicInteger();
        final AtomicInteger ok = new AtomicInteger();
        final List<String> failures = Collections.synchronizedList(new ArrayList<>());
        final List<Thread> workers = new ArrayList<>();

        Load(int proxyPort, int upstreamPort, int clients) {
            HttpClient client = HttpClient.newBuilder()
                    .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", proxyPort)))
                    .connectTimeout(Duration.ofSeconds(5)).build();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            for (int i = 0; i < clients; i++) {
                workers.add(Thread.ofVirtual().start(() -> {
                    while (!stop.get() && sent.incrementAndGet() <= 3_000 && System.nanoTime() < deadline) {
                        try {
                            HttpResponse<String> r = client.send(HttpRequest.newBuilder(
                                    URI.create("http://api.test:" + upstreamPort + "/load"))
                                    .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
                            if (r.statusCode() == 200) {
                                ok.incrementAndGet();
                            } else {
                                failures.add(r.statusCode() + " " + r.body());
                            }
                        } catch (IOException | InterruptedException e) {
                            failures.add(e.toString());
                        }
                    }
                }));
            }
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            for (Thread t : workers) {
                assertTrue(t.join(Duration.ofSeconds(30)), "a client did not finish");
            }
        }
    }

    /** Waits until the upstream has received {@code n} more requests (at most 60 s). */
    private void traffic(int n) throws InterruptedException {
        upstream.arrivals.drainPermits();
        assertTrue(upstream.arrivals.tryAcquire(n, 60, TimeUnit.SECONDS), "traffic stopped flowing");
    }

    private void assertConsistent(Load load, Set<String> generations) {
        assertEquals(List.of(), load.failures, "every request is answered 200");
        List<RecordingUpstream.Hit> hits = upstream.hits("/load");
        assertEquals(load.ok.get(), hits.size(), "every request answered 200 reached the upstream once");
        for (RecordingUpstream.Hit h : hits) {
            assertEquals(2, h.tags().size(), "both stages ran: " + h.tags());
            String g = h.tags().get(0).substring(0, 1);
            assertEquals(List.of(g + "1", g + "2"), h.tags(), "one request saw a mix of generations");
        }
        for (String g : generations) {
            assertTrue(hits.stream().anyMatch(h -> h.tags().get(0).equals(g + "1")), "generation " + g + " served");
        }
    }

    @Test
    void aSupervisorStartedWithSighupIgnoredSaysItCannotReloadOnIt() throws Exception {
        List<String> args = new ArrayList<>(List.of("--policy", policy.toString(), "--gateway-config",
                gateway.toString(), "--plugins", plugins.toString(), "--listen", "127.0.0.1:0", "--admin-listen",
                "off", "--state-dir", tmp.resolve("state").toString(), "--audit-log", audit.toString(),
                "--no-watch-policy"));
        try (ImageProcess s = ImageProcess.runIgnoringHangup(Image.HOME, args.toArray(String[]::new))) {
            String warning = s.awaitLog("SIGHUP cannot be handled here", 1);
            assertTrue(warning.contains("started with SIGHUP ignored") && warning.contains("not reloaded"), warning);
            assertFalse(s.errText().contains("the policy is reloaded on SIGHUP"), s.errText());
        }
    }

    @Test
    void sighupReloadsUnderLoadAndABrokenPolicyKeepsTheOldOneServing() throws Exception {
        try (ImageProcess s = start("--no-watch-policy")) {
            Load load = new Load(s.port(), upstream.port(), 4);
            try (load) {
                traffic(30);
                replacePolicy(tagged("b"));
                traffic(30);
                List<RecordingUpstream.Hit> before = upstream.hits("/load");
                assertEquals("a1", before.get(before.size() - 1).tags().get(0),
                        "without the watcher, a changed file waits for SIGHUP");
                s.signal("HUP");
                s.awaitLog("policy reloaded from " + policy, 1);
                traffic(30);

                replacePolicy("version: 1\nnetwork_middlewares:\n  first: {order: [\n");
                s.signal("HUP");
                String failure = s.awaitLog("policy reload failed", 1);
                assertTrue(failure.contains("generation") && failure.contains("keeps serving"), failure);
                assertTrue(s.errText().contains(policy + ":"), "each problem with file, line and column:\n"
                        + s.errText());
                traffic(30);
                assertTrue(s.alive(), "neither SIGHUP nor a broken policy stops the supervisor");
            }
            assertConsistent(load, Set.of("a", "b"));
            List<RecordingUpstream.Hit> hits = upstream.hits("/load");
            assertEquals("b1", hits.get(hits.size() - 1).tags().get(0), "the last good policy kept serving");
        }
        List<String> events = Files.readAllLines(audit);
        assertTrue(events.stream().anyMatch(e -> e.contains("\"change\":\"registry_reload\"")
                && e.contains("\"status\":\"Failure\"")), "the failed reload is audited");
    }

    @Test
    void aChangedPolicyFileIsPickedUpUnderLoad() throws Exception {
        try (ImageProcess s = start()) {
            Load load = new Load(s.port(), upstream.port(), 4);
            try (load) {
                traffic(30);
                replacePolicy(tagged("b"));
                s.awaitLog("policy reloaded from " + policy, 1);
                traffic(30);
                replacePolicy(tagged("c"));
                s.awaitLog("policy reloaded from " + policy, 2);
                traffic(30);
                replacePolicy("version: 1\nnetwork_policies: {\n");
                s.awaitLog("policy reload failed", 1);
                traffic(30);
            }
            assertConsistent(load, Set.of("a", "b", "c"));
            List<RecordingUpstream.Hit> hits = upstream.hits("/load");
            assertEquals("c1", hits.get(hits.size() - 1).tags().get(0), "the last good policy kept serving");
        }
    }
}
